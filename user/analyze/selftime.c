// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Self time: what each event's children give back to it (selftime.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "analyze/selftime.h"
#include "lib/units.h"
#include "lib/vec.h"

/* ---- self time ----
 * A child gives its time back to its parent: by DFTracer's ids (p_idx
 * names the parent, which a trace writes after its children, and a
 * merged file before them), or, for torch's ranges, which have no ids,
 * by what encloses them on their thread (torch writes them by start). */

/* Children whose parent has not come yet: their time by their rows
 * (those of one parent fall in a few), KIDS_MAX kinds at most; the rest
 * give back Self alone (rows NO_ROW). */
struct kid {
	int64_t dur;
	bool region;
	uint32_t rows[PROFILE_MAX_GROUPINGS];
};
#define KIDS_MAX 64
#define NO_ROW UINT32_MAX

static uint64_t link_key(uint16_t input, uint32_t pid, int64_t id)
{
	return ((uint64_t)input << 48 | (uint64_t)pid << 24) ^ (uint64_t)id * 0x9e3779b97f4a7c15ull;
}

/* Entries of the link maps, checked in full (the key is a hash). */
struct link {
	uint16_t input;
	uint32_t pid;
	int64_t id;
	struct kid *kids;	/* pending: the children so far */
	uint32_t nkids, capkids, last;
	struct placed *at;	/* seen: the parent's rows */
};

static struct link *link_find(struct hmap *m, uint16_t input, uint32_t pid,
			      int64_t id, uint64_t *slot)
{
	uint64_t k = link_key(input, pid, id), v;

	for (; hmap_get(m, k, &v); k++) {
		struct link *l = (void *)(uintptr_t)v;

		if (l->input == input && l->pid == pid && l->id == id) {
			*slot = k;
			return l;
		}
	}
	*slot = k; /* a free key */
	return NULL;
}

static void link_free(struct link *l)
{
	free(l->kids);
	free(l->at);
	free(l);
}

/* A child of dur ns in rows kid (NO_ROW: unknown) is inside a parent in
 * rows parent: the parent's rows lose it from their Self (a region's
 * own time too, if it is a region), and a row that holds both from its
 * Total. */
void selftime_give_back(struct profile *p, const uint32_t *parent, const uint32_t *kid,
		      int64_t dur, bool region)
{
	for (int i = 0; i < p->nby; i++) {
		struct row *r = &p->by[i].rows[parent[i]];

		units_add(&r->self, -dur);
		if (region)
			units_add(&r->region_self, -dur);
		if (kid[i] == parent[i])
			units_add(&r->total, -dur);
	}
}

/* The child kept in rows (region or not), searched from the one found
 * last; -1 if none. */
static int64_t find_kid(const struct link *l, const uint32_t *rows, int nby, bool region)
{
	for (uint32_t j = 0; j < l->nkids; j++) {
		uint32_t i = l->last + j < l->nkids ? l->last + j : l->last + j - l->nkids;
		const struct kid *k = &l->kids[i];
		int g = 0;

		while (g < nby && k->rows[g] == rows[g])
			g++;
		if (k->region == region && g == nby)
			return i;
	}
	return -1;
}

/* A child kept until its parent comes, with those in the same rows (as
 * the one before, most often); past KIDS_MAX kinds, in the NO_ROW one. */
static int keep_kid(struct profile *p, struct link *l, const uint32_t *rows,
		    int64_t dur, bool region)
{
	struct kid k = { dur, region, { 0 } };
	int64_t i = find_kid(l, rows, p->nby, region);

	if (i < 0 && l->nkids >= KIDS_MAX) {
		memset(k.rows, 0xff, sizeof(k.rows)); /* NO_ROW */
		i = find_kid(l, k.rows, p->nby, region);
	} else if (i < 0) {
		memcpy(k.rows, rows, p->nby * sizeof(*rows));
	}
	if (i >= 0) {
		units_add(&l->kids[i].dur, dur); /* past int64: a hostile trace */
		l->last = i;
		return 0;
	}
	l->last = l->nkids;
	return VEC_PUSH(l->kids, l->nkids, l->capkids, k) ? -ENOMEM : 0;
}

/* e's own children that came before it give their time back. */
static void adopt_pending(struct profile *p, uint16_t input, const struct ev *e,
			  const uint32_t *rows)
{
	uint64_t slot;
	struct link *l = link_find(&p->pending, input, e->pid, e->id, &slot);

	if (!l)
		return;
	for (uint32_t i = 0; i < l->nkids; i++)
		selftime_give_back(p, rows, l->kids[i].rows, l->kids[i].dur, l->kids[i].region);
	hmap_del(&p->pending, slot, NULL);
	link_free(l);
}

/* e gives its time to its parent by id, or keeps it until it comes. A
 * parent with children pending has not come (it takes them when it
 * does): that is looked up first, as a trace's children come first. */
static int to_parent(struct profile *p, uint16_t input, const struct ev *e,
		     const uint32_t *rows, bool region)
{
	int64_t dur = e->end - e->start;
	struct link *l;
	uint64_t slot, free_slot;

	l = link_find(&p->pending, input, e->pid, e->parent, &free_slot);
	if (l)
		return keep_kid(p, l, rows, dur, region);
	l = link_find(&p->seen, input, e->pid, e->parent, &slot);
	if (l) {
		selftime_give_back(p, l->at->rows, rows, dur, region);
		return 0;
	}
	l = calloc(1, sizeof(*l));
	if (!l || hmap_put_ptr(&p->pending, free_slot, l)) {
		free(l);
		return -ENOMEM;
	}
	*l = (struct link){ .input = input, .pid = e->pid, .id = e->parent };
	return keep_kid(p, l, rows, dur, region);
}

static struct placed *placed_named(struct profile *p, const uint32_t *rows, int64_t end,
				   struct span cat, struct span name)
{
	size_t at = sizeof(struct placed) + p->nby * sizeof(uint32_t);
	struct placed *pl = malloc(at + cat.len + name.len);
	char *text = (char *)pl + at;

	if (!pl)
		return NULL;
	*pl = (struct placed){ .end = end, .cat = { text, cat.len },
			       .name = { text + cat.len, name.len } };
	memcpy(pl->rows, rows, p->nby * sizeof(uint32_t));
	if (cat.len)
		memcpy(text, cat.p, cat.len);
	if (name.len)
		memcpy(text + cat.len, name.p, name.len);
	return pl;
}

static struct placed *placed_new(struct profile *p, const uint32_t *rows, int64_t end)
{
	return placed_named(p, rows, end, (struct span){ 0 }, (struct span){ 0 });
}

/* by ids: a region, or a call (which has no children) */
int selftime_link_ids(struct profile *p, uint16_t input, const struct ev *e,
		       const uint32_t *rows, bool region)
{
	struct link *l;
	uint64_t slot;
	int rc;

	if (region)
		adopt_pending(p, input, e, rows);
	if (e->parent >= 0 && (rc = to_parent(p, input, e, rows, region)))
		return rc;
	if (!region)
		return 0;
	/* a merged file's children come after it, as may those of a trace
	 * written by hand (DFTracer's own come first): kept until the sweep
	 * passes its end */
	l = calloc(1, sizeof(*l));
	if (!l || !(l->at = placed_new(p, rows, e->end)))
		goto nomem;
	*l = (struct link){ .input = input, .pid = e->pid, .id = e->id, .at = l->at };
	link_find(&p->seen, input, e->pid, e->id, &slot);
	if (hmap_put_ptr(&p->seen, slot, l) || heap_push(&p->seen_by_end, e->end, l))
		goto nomem;
	return 0;
nomem:
	if (l)
		free(l->at);
	free(l);
	return -ENOMEM;
}

/* Regions that ended before now get no more children (now: the start of
 * a merged file's event, the end of a trace's). */
void selftime_forget(struct profile *p, int64_t now)
{
	const struct heap_item *top;
	struct heap_item it;

	while ((top = heap_top(&p->seen_by_end)) && top->key < now) {
		struct link *l;
		uint64_t slot;

		heap_pop(&p->seen_by_end, &it);
		l = it.val;
		if (link_find(&p->seen, l->input, l->pid, l->id, &slot) == l)
			hmap_del(&p->seen, slot, NULL);
		link_free(l);
	}
}

/* by time, on a thread of a torch trace */
struct stack {
	struct placed **open;
	uint32_t n, cap;
};

static uint64_t stack_key(uint16_t input, const struct ev *e)
{
	return (uint64_t)input << 48 ^ (uint64_t)e->pid << 24 ^ e->tid;
}

/* The ranges of a thread that end after t is: those still open then. */
static void stack_close(struct stack *st, int64_t t)
{
	while (st->n && st->open[st->n - 1]->end <= t)
		free(st->open[--st->n]);
}

/* In a merged file, the innermost torch range open on e's thread when e
 * starts is e's phase, as it is of the torch ops inside it (torch's
 * ranges sit on tracks of their own, which the anchors map to threads):
 * *inner is e with that phase. NULL if none, else the range. */
const struct placed *selftime_torch_phase(struct profile *p, uint16_t input,
					const struct ev *e, struct ev *inner)
{
	struct stack *st = hmap_get_ptr(&p->stacks, stack_key(input, e));
	const struct placed *range;

	if (!st)
		return NULL;
	stack_close(st, e->start);
	if (!st->n)
		return NULL;
	range = st->open[st->n - 1];
	*inner = *e;
	inner->phase_cat = range->cat;
	inner->phase = range->name;
	return range;
}

int selftime_link_time(struct profile *p, uint16_t input, const struct ev *e,
			const uint32_t *rows)
{
	struct stack *st = hmap_get_or_new(&p->stacks, stack_key(input, e), sizeof(*st));
	struct placed *pl;

	if (!st)
		return -ENOMEM;
	stack_close(st, e->start);
	if (st->n && e->end <= st->open[st->n - 1]->end)
		selftime_give_back(p, st->open[st->n - 1]->rows, rows, e->end - e->start, true);
	pl = placed_named(p, rows, e->end, e->cat, e->name);
	if (!pl || VEC_PUSH(st->open, st->n, st->cap, pl)) {
		free(pl);
		return -ENOMEM;
	}
	return 0;
}

void selftime_free(struct profile *p)
{
	struct heap_item hi;
	uint64_t k, v;
	size_t it = 0;

	while (heap_pop(&p->seen_by_end, &hi))
		link_free(hi.val);
	heap_free(&p->seen_by_end);
	hmap_free(&p->seen);	/* its links were all in the heap */
	while (hmap_next(&p->pending, &it, &k, &v))
		link_free((void *)(uintptr_t)v);
	it = 0;
	hmap_free(&p->pending);
	while (hmap_next(&p->stacks, &it, &k, &v)) {
		struct stack *st = (void *)(uintptr_t)v;

		while (st->n)
			free(st->open[--st->n]);
		free(st->open);
		free(st);
	}
	hmap_free(&p->stacks);
}
