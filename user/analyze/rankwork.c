// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include "analyze/hostclock.h"
#include "analyze/rankwork.h"
#include "lib/units.h"
#include "lib/vec.h"

void rank_work_add(struct rank_work *w, const struct ev_input *in, const struct ev *e)
{
	uint64_t key, was = 0;
	int rank;

	/* every event passes here: the cheap tests first */
	if (e->kind != EV_IO && e->kind != EV_REGION && e->kind != EV_GPU)
		return;
	if ((rank = ev_rank(in, e->pid)) < 0)
		return;
	if (e->kind == EV_IO) {
		hmap_get(&w->io, (uint64_t)rank, &was);
		units_add((int64_t *)&was, e->end - e->start);
		if (hmap_put(&w->io, (uint64_t)rank, was))
			w->err = -ENOMEM;
		return;
	}
	if (!hostclock_collective(e->cat, e->name, e->comm_id, &key))
		return;
	if (w->ncalls >= RANKWORK_CALLS) {
		w->calls_left_out++;
		return;
	}
	if (VEC_PUSH(w->calls, w->ncalls, w->capcalls,
		     ((struct rank_call){ rank, e->start, e->end })))
		w->err = -ENOMEM;
}

static int by_rank_start(const void *a, const void *b)
{
	const struct rank_call *x = a, *y = b;

	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

static int by_rank(const void *a, const void *b)
{
	const struct rank_figures *x = a, *y = b;

	return x->rank < y->rank ? -1 : x->rank > y->rank;
}

/* The figures of rank, made if new (by_rank order comes after). */
static struct rank_figures *figures_of(struct rank_figures **v, uint32_t *n, uint32_t *cap,
				       struct hmap *at, int32_t rank)
{
	uint64_t i = 0;

	if (hmap_get(at, (uint64_t)(uint32_t)rank, &i))
		return &(*v)[i - 1];
	if (VEC_PUSH(*v, *n, *cap, ((struct rank_figures){ .rank = rank })) ||
	    hmap_put(at, (uint64_t)(uint32_t)rank, *n))
		return NULL;
	return &(*v)[*n - 1];
}

int rank_work_figures(struct rank_work *w, struct rank_figures **out, uint32_t *n)
{
	struct rank_figures *v = NULL, *r;
	uint32_t cap = 0, i;
	int64_t last_end = 0;
	struct hmap at = { 0 };
	uint64_t rank, io;
	size_t it = 0;
	int rc = w->err;

	*n = 0;
	while (!rc && hmap_next(&w->io, &it, &rank, &io))
		if (!(r = figures_of(&v, n, &cap, &at, (int32_t)rank)))
			rc = -ENOMEM;
		else
			r->io_ns = (int64_t)io;
	if (w->calls_left_out)
		w->ncalls = 0;
	if (w->ncalls)
		qsort(w->calls, w->ncalls, sizeof(*w->calls), by_rank_start);
	for (i = 0; !rc && i < w->ncalls; i++) {
		const struct rank_call *c = &w->calls[i];

		if (!(r = figures_of(&v, n, &cap, &at, c->rank))) {
			rc = -ENOMEM;
			break;
		}
		/* from the latest end so far: a call that began before it
		 * (overlapping ones, nonblocking collectives) adds none */
		if (!r->collectives++)
			last_end = c->end;
		else if (c->start > last_end)
			units_add(&r->own_ns, c->start - last_end);
		if (c->end > last_end)
			last_end = c->end;
	}
	hmap_free(&at);
	if (rc) {
		free(v);
		*n = 0;
		return rc;
	}
	if (*n)
		qsort(v, *n, sizeof(*v), by_rank);
	*out = v;
	return 0;
}

void rank_work_free(struct rank_work *w)
{
	hmap_free(&w->io);
	free(w->calls);
	*w = (struct rank_work){ 0 };
}
