// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The data loader's waits, step by step (analyze/loader.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "analyze/events.h"
#include "analyze/loader.h"
#include "lib/units.h"

struct last_wait {
	int64_t start, end;
};

/* A thread's step by args.step, and its reads' time so far. */
struct read_step {
	int64_t step, start, reads_ns;
};

static bool is_wait(const struct ev *e)
{
	const struct span n = e->name;

	return e->kind == EV_REGION && SPAN_IS(e->cat, "dataloader") &&
	       (SPAN_IS(n, "fetch") || (n.len > 5 && !memcmp(n.p + n.len - 5, ".iter", 5)));
}

/* The block at key in m, or a new zeroed one (*made set); NULL out of
 * memory. One lookup for a key already there, the common case. */
static void *get_or_make(struct loader_waits *l, struct hmap *m, uint64_t key, size_t size,
			 bool *made)
{
	void *p = hmap_get_ptr(m, key);

	*made = !p;
	if (!p && !(p = hmap_get_or_new(m, key, size)))
		l->err = -ENOMEM;
	return p;
}

/* A step of span ns that waited wait ns, counted into s. */
static void count_step(struct loader_steps *s, int64_t span, int64_t wait)
{
	s->steps++;
	units_add(&s->step_ns, span);
	units_add(&s->wait_ns, wait);
	if (2 * wait > span) {
		s->bound++;
		units_add(&s->bound_wait_ns, wait);
	}
}

static struct loader_proc *proc_of(struct loader_waits *l, uint64_t proc)
{
	bool made;
	struct loader_proc *p = get_or_make(l, &l->procs, proc, sizeof(*p), &made);

	if (p)
		p->proc = proc;
	return p;
}

/* The step from the last wait's start to next_start. */
static void step(struct loader_waits *l, uint64_t proc, const struct last_wait *w,
		 int64_t next_start)
{
	struct loader_proc *p = proc_of(l, proc);

	if (p)
		count_step(&p->waits, next_start - w->start, w->end - w->start);
}

/* A thread's events by args.step: a new step ends the one before, from
 * its first event's start to this one's; data reads are its wait. */
static void read_step_add(struct loader_waits *l, uint64_t proc, uint64_t key,
			  const struct ev *e)
{
	bool first;
	struct read_step *s = get_or_make(l, &l->read_steps, key, sizeof(*s), &first);
	struct loader_proc *p;

	if (!s)
		return;
	if (first || e->step != s->step) {
		if (!first && e->start > s->start && (p = proc_of(l, proc)))
			count_step(&p->reads, e->start - s->start,
				   s->reads_ns < e->start - s->start ? s->reads_ns :
								       e->start - s->start);
		*s = (struct read_step){ .step = e->step, .start = e->start };
	}
	if (e->kind == EV_IO && e->bytes_kind == SC_BYTES_READ)
		units_add(&s->reads_ns, e->end - e->start);
}

void loader_add(struct loader_waits *l, uint16_t input, const struct ev *e)
{
	uint64_t proc = (uint64_t)input << 32 | e->pid;
	uint64_t key = proc * 0x9e3779b97f4a7c15ull ^ e->tid;
	struct last_wait *w;
	bool first;

	if (e->step >= 0 && e->kind != EV_REGION && e->kind != EV_COMPUTE)
		read_step_add(l, proc, key, e);
	if (!is_wait(e))
		return;
	w = get_or_make(l, &l->threads, key, sizeof(*w), &first);
	if (!w)
		return;
	if (!first && e->start < w->end && e->end > w->start) { /* one wait */
		w->start = e->start < w->start ? e->start : w->start;
		w->end = e->end > w->end ? e->end : w->end;
		return;
	}
	if (!first && e->start > w->start)
		step(l, proc, w, e->start);
	w->start = e->start;
	w->end = e->end;
}

void loader_free(struct loader_waits *l)
{
	hmap_free_ptrs(&l->threads);
	hmap_free_ptrs(&l->read_steps);
	hmap_free_ptrs(&l->procs);
}
