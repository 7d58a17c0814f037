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

static bool is_wait(const struct ev *e)
{
	const struct span n = e->name;

	return e->kind == EV_REGION && SPAN_IS(e->cat, "dataloader") &&
	       (SPAN_IS(n, "fetch") || (n.len > 5 && !memcmp(n.p + n.len - 5, ".iter", 5)));
}

static void *get_or_make(struct loader_waits *l, struct hmap *m, uint64_t key, size_t size)
{
	void *p = hmap_get_or_new(m, key, size);

	if (!p)
		l->err = -ENOMEM;
	return p;
}

/* The step from the last wait's start to next_start. */
static void step(struct loader_waits *l, uint64_t proc, const struct last_wait *w,
		 int64_t next_start)
{
	struct loader_proc *p = get_or_make(l, &l->procs, proc, sizeof(*p));
	int64_t span = next_start - w->start, wait = w->end - w->start;

	if (!p)
		return;
	p->proc = proc;
	p->steps++;
	units_add(&p->step_ns, span);
	units_add(&p->wait_ns, wait);
	if (2 * wait > span) {
		p->bound++;
		units_add(&p->bound_wait_ns, wait);
	}
}

void loader_add(struct loader_waits *l, uint16_t input, const struct ev *e)
{
	uint64_t proc = (uint64_t)input << 32 | e->pid;
	uint64_t key = proc * 0x9e3779b97f4a7c15ull ^ e->tid;
	struct last_wait *w;
	bool first;

	if (!is_wait(e))
		return;
	first = !hmap_get_ptr(&l->threads, key);
	w = get_or_make(l, &l->threads, key, sizeof(*w));
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
	hmap_free_ptrs(&l->procs);
}
