// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include "analyze/overlap.h"
#include <stdbool.h>
#include "lib/units.h"
#include "lib/vec.h"

/* Intervals held to put them in order of start: a compute region written
 * when it ends, more than this many intervals after it started, is late
 * (it still covers the calls not yet settled). */
#define WINDOW 65536

/* The tag of a compute region's interval: an I/O call's is below it. */
#define COMPUTE UINT32_MAX

/* 24 bytes: the window is the sweep's working set */
struct interval {
	int64_t start, end;
	uint32_t proc;		/* index in o->by_index */
	uint32_t tag;		/* COMPUTE, or an I/O call's tag (0: none) */
};

/* An I/O call whose end the sweep has not passed: its part not yet known
 * to be covered. */
struct pending_io {
	int64_t start, end, covered;
	uint32_t tag;
};

struct overlap_proc {
	int64_t seg_start, seg_end;	/* the open stretch of compute; empty if equal */
	struct pending_io *io;
	uint32_t n, cap;
	struct overlap_figures fig;
};

static int64_t cut(int64_t a0, int64_t a1, int64_t b0, int64_t b1)
{
	int64_t lo = a0 > b0 ? a0 : b0, hi = a1 < b1 ? a1 : b1;

	return hi > lo ? hi - lo : 0;
}

/* The index of a process's state, made if new; -ENOMEM. */
static int64_t proc_index(struct overlap *o, uint64_t key)
{
	struct overlap_proc *p;
	uint64_t idx;

	if (hmap_get(&o->procs, key, &idx))
		return idx;
	p = calloc(1, sizeof(*p));
	if (p)
		p->fig.proc = key;
	if (!p || VEC_PUSH(o->by_index, o->nprocs, o->capprocs, p) ||
	    hmap_put(&o->procs, key, o->nprocs - 1)) {
		free(p);
		return -ENOMEM;
	}
	return o->nprocs - 1;
}

/* Calls whose end the sweep has passed are settled. */
static void settle(struct overlap *o, struct overlap_proc *p, int64_t now, bool all)
{
	uint32_t kept = 0;

	for (uint32_t i = 0; i < p->n; i++) {
		struct pending_io *io = &p->io[i];

		if (all || io->end <= now) {
			int64_t open = io->end - io->start - io->covered;
			uint64_t was = 0;

			units_add(&o->unoverlapped, open);
			units_add(&p->fig.unoverlapped_ns, open);
			if (io->tag && open) {
				hmap_get(&o->tags, io->tag, &was);
				units_add((int64_t *)&was, open);
				if (hmap_put(&o->tags, io->tag, was))
					o->err = -ENOMEM;
			}
		} else
			p->io[kept++] = *io;
	}
	p->n = kept;
}

/* Compute newly covers [from, to): the calls still open lose that part. */
static void cover(struct overlap_proc *p, int64_t from, int64_t to)
{
	for (uint32_t i = 0; i < p->n && to > from; i++)
		p->io[i].covered += cut(p->io[i].start, p->io[i].end, from, to);
}

static int sweep_one(struct overlap *o, const struct interval *iv)
{
	struct overlap_proc *p = o->by_index[iv->proc];
	int64_t from;

	if (iv->start < o->sweep)
		o->late++;
	else
		o->sweep = iv->start;
	settle(o, p, iv->start, false);
	if (iv->tag == COMPUTE) {
		if (iv->start > p->seg_end) /* a new stretch */
			p->seg_start = p->seg_end = iv->start;
		from = iv->start > p->seg_end ? iv->start : p->seg_end;
		if (iv->end > from)
			cover(p, from, iv->end);
		if (iv->end > p->seg_end)
			p->seg_end = iv->end;
		if (iv->start < p->seg_start)
			p->seg_start = iv->start;
		return 0;
	}
	{
		struct pending_io io = { iv->start, iv->end,
					 cut(iv->start, iv->end, p->seg_start, p->seg_end), iv->tag };

		return VEC_PUSH(p->io, p->n, p->cap, io);
	}
}

/* The window: a binary min-heap of intervals by start, held by value
 * (one per I/O call: no allocation each). */
static bool earlier(const struct interval *a, const struct interval *b)
{
	return a->start < b->start;
}

static void sift_down(struct overlap *o, uint32_t i, struct interval item)
{
	struct interval *h = o->heap;

	for (;;) {
		uint32_t c = 2 * i + 1;

		if (c >= o->n)
			break;
		if (c + 1 < o->n && earlier(&h[c + 1], &h[c]))
			c++;
		if (!earlier(&h[c], &item))
			break;
		h[i] = h[c];
		i = c;
	}
	h[i] = item;
}

static int sweep_oldest(struct overlap *o)
{
	struct interval first;

	if (!o->n)
		return 0;
	first = o->heap[0];
	if (--o->n)
		sift_down(o, 0, o->heap[o->n]);
	return sweep_one(o, &first);
}

static int add(struct overlap *o, uint64_t proc, int64_t start, int64_t end, uint32_t tag)
{
	int64_t idx = proc_index(o, proc);
	struct interval iv = { start, end < start ? start : end, idx, tag };
	uint32_t i;

	if (idx < 0)
		return idx;
	units_add(tag == COMPUTE ? &o->by_index[idx]->fig.compute_ns :
				   &o->by_index[idx]->fig.io_ns, iv.end - iv.start);
	if (o->n == WINDOW) { /* full: the oldest of it and iv goes */
		if (earlier(&iv, &o->heap[0]))
			return sweep_one(o, &iv);
		struct interval first = o->heap[0];

		sift_down(o, 0, iv);
		return sweep_one(o, &first);
	}
	if (!o->heap && !(o->heap = malloc(WINDOW * sizeof(*o->heap))))
		return -ENOMEM;
	for (i = o->n++; i && earlier(&iv, &o->heap[(i - 1) / 2]); i = (i - 1) / 2)
		o->heap[i] = o->heap[(i - 1) / 2];
	o->heap[i] = iv;
	return 0;
}

int overlap_add_compute(struct overlap *o, uint64_t proc, int64_t start, int64_t end)
{
	return add(o, proc, start, end, COMPUTE);
}

int overlap_add_io(struct overlap *o, uint64_t proc, int64_t start, int64_t end,
		   uint32_t tag)
{
	return add(o, proc, start, end, tag < COMPUTE ? tag : 0);
}

int overlap_finish(struct overlap *o)
{
	int rc = 0;

	while (!rc && o->n)
		rc = sweep_oldest(o);
	for (uint32_t i = 0; i < o->nprocs; i++)
		settle(o, o->by_index[i], 0, true);
	return rc ? rc : o->err;
}

int64_t overlap_tag_ns(const struct overlap *o, uint32_t tag)
{
	uint64_t ns = 0;

	hmap_get(&o->tags, tag, &ns);
	return (int64_t)ns;
}

struct overlap_figures overlap_proc_figures(const struct overlap *o, uint32_t i)
{
	return o->by_index[i]->fig;
}

void overlap_free(struct overlap *o)
{
	hmap_free(&o->tags);
	free(o->heap);
	for (uint32_t i = 0; i < o->nprocs; i++) {
		free(o->by_index[i]->io);
		free(o->by_index[i]);
	}
	free(o->by_index);
	hmap_free(&o->procs);
	*o = (struct overlap){ 0 };
}
