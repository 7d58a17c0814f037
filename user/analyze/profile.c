// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "analyze/profile.h"
#include "lib/hash.h"
#include "lib/units.h"
#include "lib/vec.h"

static const char *const by_names[BY__COUNT] = {
	[BY_OP] = "op", [BY_PHASE] = "phase", [BY_FILE] = "file",
	[BY_PROCESS] = "process", [BY_RANK] = "rank", [BY_EPOCH] = "epoch",
	[BY_STEP] = "step",
};

const char *by_key_name(enum by_key k)
{
	return by_names[k];
}

int by_key_parse(const char *name, size_t len)
{
	for (int k = 0; k < BY__COUNT; k++)
		if (strlen(by_names[k]) == len && !memcmp(name, by_names[k], len))
			return k;
	return -1;
}

static int parse_spec(struct grouping *g, const char *spec, char *err, size_t errlen)
{
	const char *p = spec;

	do {
		size_t len = strcspn(p, ",");
		int k = by_key_parse(p, len);

		if (k < 0 || g->nkeys == PROFILE_MAX_KEYS) {
			snprintf(err, errlen, k < 0 ? "unknown grouping '%.*s' (op, phase, file, "
				 "process, rank, epoch, step)" : "more than %d groupings in '%s'",
				 k < 0 ? (int)len : PROFILE_MAX_KEYS, k < 0 ? p : spec);
			return -EINVAL;
		}
		g->keys[g->nkeys++] = k;
		p += len;
	} while (*p++ == ',');
	return 0;
}

int by_spec_check(const char *spec, char *err, size_t errlen)
{
	struct grouping g = { 0 };

	return parse_spec(&g, spec, err, errlen);
}

int profile_init(struct profile *p, char *const *specs, int n, char *err,
		 size_t errlen)
{
	*p = (struct profile){ .by = calloc(n, sizeof(*p->by)), .nby = n };
	if (!p->by)
		return -ENOMEM;
	p->head.t_min = INT64_MAX;
	p->head.t_max = INT64_MIN;
	for (int i = 0; i < n; i++) {
		int rc = parse_spec(&p->by[i], specs[i], err, errlen);

		if (rc)
			return rc;
	}
	return 0;
}

/* ---- keys ---- */

struct keybuf {
	char *p;
	size_t len;
	uint32_t cap;
	int err;
};

static void kb_put(struct keybuf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap && vec_reserve((void **)&b->p, &b->cap, b->len + n + 1, 1)) {
		b->err = -ENOMEM;
		return;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
}

static void kb_int(struct keybuf *b, int64_t v)
{
	char d[24];

	if (v < 0)
		kb_put(b, "-", 1);
	else
		kb_put(b, d, snprintf(d, sizeof(d), "%lld", (long long)v));
}

static void kb_span(struct keybuf *b, struct span s)
{
	if (s.len)
		kb_put(b, s.p, s.len);
	else
		kb_put(b, "-", 1);
}

/* The key material of part k: escaped text, as the file has it. */
static void key_part(struct keybuf *b, enum by_key k, const struct ev_input *in,
		     uint16_t input, const struct ev *e)
{
	switch (k) {
	case BY_OP:
		kb_span(b, e->name);
		break;
	case BY_PHASE:
		if (e->kind == EV_REGION || e->kind == EV_COMPUTE) {
			kb_span(b, e->cat);
			kb_put(b, "/", 1);
			kb_span(b, e->name);
		} else if (e->phase.len) {
			kb_span(b, e->phase_cat);
			kb_put(b, "/", 1);
			kb_span(b, e->phase);
		} else {
			kb_put(b, "-", 1);
		}
		break;
	case BY_FILE:
		kb_span(b, e->file);
		break;
	case BY_PROCESS:
		kb_int(b, ev_process(in, input, e->pid) >> 32);
		kb_put(b, ":", 1);
		kb_int(b, e->pid);
		break;
	case BY_RANK:
		kb_int(b, ev_rank(in, e->pid));
		break;
	case BY_EPOCH:
		kb_int(b, e->epoch);
		break;
	case BY_STEP:
		kb_int(b, e->step);
		break;
	default:
		break;
	}
}

/* How a part is shown: unescaped; a process as "comm [pid]". */
static void show_part(struct keybuf *b, enum by_key k, const struct ev_input *in,
		      const char *material, size_t len, const struct ev *e)
{
	char buf[4096];
	size_t n;

	if (k == BY_PROCESS) {
		const char *comm = ev_comm(in, e->pid);

		n = snprintf(buf, sizeof(buf), "%s [%u]", comm ? comm : "?", e->pid);
		kb_put(b, buf, n < sizeof(buf) ? n : sizeof(buf) - 1);
	} else {
		n = js_unescape((struct span){ material, len }, buf, sizeof(buf));
		kb_put(b, buf, n);
	}
	kb_put(b, "", 1); /* the '\0' after each part */
}

/* A new row for key material m (n bytes, parts ending at ends[]). */
static int64_t new_row(struct grouping *g, uint64_t h, const char *m, size_t n,
		       const size_t *ends, const struct ev_input *in, const struct ev *e)
{
	struct keybuf shown = { 0 };
	struct row r = { .min = INT64_MAX };

	for (int i = 0; i < g->nkeys; i++) {
		size_t from = i ? ends[i - 1] : 0;

		show_part(&shown, g->keys[i], in, m + from, ends[i] - from - 1, e);
	}
	r.key = shown.p;
	r.material = malloc(n);
	r.material_len = n;
	if (shown.err || !r.material || VEC_PUSH(g->rows, g->n, g->cap, r) ||
	    hmap_put(&g->index, h, g->n)) {
		free(shown.p);
		free(r.material);
		return -ENOMEM;
	}
	memcpy(r.material, m, n);
	return g->n - 1;
}

/* The row of e in grouping g, made if new: its index, or -ENOMEM. */
static int64_t row_of(struct profile *p, struct grouping *g, const struct ev_input *in,
		      uint16_t input, const struct ev *e)
{
	struct keybuf b = { p->scratch, 0, p->scratch_cap, 0 };
	size_t ends[PROFILE_MAX_KEYS];
	uint64_t h, idx;

	for (int i = 0; i < g->nkeys; i++) {
		key_part(&b, g->keys[i], in, input, e);
		kb_put(&b, "\x1f", 1);
		ends[i] = b.len;
	}
	p->scratch = b.p;
	p->scratch_cap = b.cap;
	if (b.err)
		return b.err;
	h = dft_hash64(b.p, b.len);
	/* equal hashes of different keys: the next hash value is tried */
	for (; hmap_get(&g->index, h, &idx); h++) {
		const struct row *r = &g->rows[idx - 1];

		if (r->material_len == b.len && !memcmp(r->material, b.p, b.len))
			return idx - 1;
	}
	return new_row(g, h, b.p, b.len, ends, in, e);
}

int64_t row_avg(const struct row *r)
{
	return r->calls ? r->summed / (int64_t)r->calls : 0;
}

int64_t row_quantile(const struct row *r, double q)
{
	int64_t v = sketch_quantile(&r->durations, q);

	/* within the sketch's 1%, and never outside what was seen */
	return !r->calls ? 0 : v < r->min ? r->min : v > r->max ? r->max : v;
}

static bool quantile_from_log2(const struct row *r, double q)
{
	return r->log2_calls &&
	       sketch_count(&r->log2, sketch_quantile_bucket(&r->durations, q));
}

unsigned int row_from_log2(const struct row *r)
{
	return (r->min_log2 ? FROM_LOG2_MIN : 0) | (r->max_log2 ? FROM_LOG2_MAX : 0) |
	       (quantile_from_log2(r, 0.5) ? FROM_LOG2_P50 : 0) |
	       (quantile_from_log2(r, 0.99) ? FROM_LOG2_P99 : 0);
}

const char *row_part(const struct row *r, int k)
{
	const char *s = r->key;

	while (k--)
		s += strlen(s) + 1;
	return s;
}

/* ---- self time ----
 * A child gives its time back to its parent: by DFTracer's ids (p_idx
 * names the parent, which a trace writes after its children, and a
 * merged file before them), or, for torch's ranges, which have no ids,
 * by what encloses them on their thread (torch writes them by start). */

/* The rows an event went to, one per grouping; a torch range's cat and
 * name too (copied after the rows), for the events it encloses. */
struct placed {
	int64_t end;
	struct span cat, name;
	uint32_t rows[];
};

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
static void give_back(struct profile *p, const uint32_t *parent, const uint32_t *kid,
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
		give_back(p, rows, l->kids[i].rows, l->kids[i].dur, l->kids[i].region);
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
		give_back(p, l->at->rows, rows, dur, region);
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
static int link_by_ids(struct profile *p, uint16_t input, const struct ev *e,
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
static void forget_seen(struct profile *p, int64_t now)
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
static const struct placed *torch_phase(struct profile *p, uint16_t input,
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

static int link_by_time(struct profile *p, uint16_t input, const struct ev *e,
			const uint32_t *rows)
{
	struct stack *st = hmap_get_or_new(&p->stacks, stack_key(input, e), sizeof(*st));
	struct placed *pl;

	if (!st)
		return -ENOMEM;
	stack_close(st, e->start);
	if (st->n && e->end <= st->open[st->n - 1]->end)
		give_back(p, st->open[st->n - 1]->rows, rows, e->end - e->start, true);
	pl = placed_named(p, rows, e->end, e->cat, e->name);
	if (!pl || VEC_PUSH(st->open, st->n, st->cap, pl)) {
		free(pl);
		return -ENOMEM;
	}
	return 0;
}

/* ---- the rows and the headline ---- */

static void see_duration(struct row *r, int64_t lo, int64_t hi, bool log2)
{
	if (lo < r->min) {
		r->min = lo;
		r->min_log2 = log2;
	}
	if (hi > r->max) {
		r->max = hi;
		r->max_log2 = log2;
	}
}

/* A folded total's calls by its log2 buckets: false if its args.hist
 * does not count them all (then its average call stands for each). */
static bool count_buckets(struct row *r, const struct ev *e, int64_t dur)
{
	uint64_t counts[DFT_FOLD_BUCKETS];
	int64_t avg = dur / e->calls, lo = -1, hi = 0;

	if (ev_hist(e->hist, counts) != e->calls)
		return false;
	for (int b = 0; b < DFT_FOLD_BUCKETS; b++) {
		/* [2^b, 2^(b+1)), but bucket 0 holds 0 too and the last all
		 * beyond; no call is longer than all of them */
		int64_t from = b ? (int64_t)1 << b : 0;
		int64_t to = b < DFT_FOLD_BUCKETS - 1 ? ((int64_t)2 << b) - 1 : dur;
		int64_t mid;

		if (!counts[b])
			continue;
		to = to < dur ? to : dur;
		from = from < to ? from : to;
		mid = from + (to - from) / 2;
		sketch_add_n(&r->durations, mid, counts[b]);
		sketch_add_n(&r->log2, mid, counts[b]);
		if (lo < 0)
			lo = from;
		hi = to;
	}
	/* a hand-made hist that the average contradicts is not believed
	 * beyond it */
	see_duration(r, lo < avg ? lo : avg, hi > avg ? hi : avg, true);
	r->log2_calls += e->calls;
	return true;
}

static void count_in_row(struct row *r, const struct ev *e)
{
	int64_t dur = e->end - e->start;

	/* a folded total: its calls, its summed time, each call's bucket */
	r->calls += e->calls;
	units_add(&r->total, dur);
	units_add(&r->self, dur);
	units_add(&r->summed, dur);
	if (e->kind == EV_REGION || e->kind == EV_COMPUTE)
		units_add(&r->region_self, dur);
	if (e->bytes_kind != SC_BYTES_NONE) {
		units_add(&r->bytes, e->bytes);
		units_add(&r->data_time, dur);
	}
	if (e->calls > 1 && count_buckets(r, e, dur))
		return;
	dur /= e->calls;
	see_duration(r, dur, dur, e->calls > 1);
	sketch_add(&r->durations, dur);
	if (e->calls > 1) {
		sketch_add(&r->log2, dur);
		r->log2_calls += e->calls;
	}
}

static int count_in_headline(struct profile *p, const struct ev_input *in,
			     uint16_t input, const struct ev *e)
{
	struct headline *h = &p->head;
	/* unoverlapped I/O is swept per input, in the order each is read:
	 * a torch trace's ops, read after its trace, would all come late */
	uint64_t proc = (uint64_t)input << 32 | e->pid;
	int64_t dur = e->end - e->start;
	int rank = ev_rank(in, e->pid);

	h->events++;
	if (e->start < h->t_min)
		h->t_min = e->start;
	if (e->end > h->t_max)
		h->t_max = e->end;
	if (hmap_add(&p->procs, ev_process(in, input, e->pid), 0) == 1)
		h->processes++;
	if (rank >= 0 && hmap_add(&p->ranks, rank, 0) == 1)
		h->ranks++;
	if (e->kind == EV_COMPUTE)
		return overlap_add(&p->overlap, proc, e->start, e->end, true);
	if (e->kind != EV_IO)
		return 0;
	units_add(&h->io_time, dur);
	if (e->file.len && hmap_add(&p->files, dft_hash64(e->file.p, e->file.len), 0) == 1)
		h->files++;
	switch (e->bytes_kind) {
	case SC_BYTES_READ:
		units_add(&h->bytes_read, e->bytes);
		break;
	case SC_BYTES_WRITE:
		units_add(&h->bytes_written, e->bytes);
		break;
	case SC_BYTES_COPY:
		units_add(&h->bytes_copied, e->bytes);
		break;
	default:
		break;
	}
	if (e->bytes_kind != SC_BYTES_NONE)
		units_add(&h->data_time, dur);
	return overlap_add(&p->overlap, proc, e->start, e->end, false);
}

int profile_add(struct profile *p, const struct ev_input *in, uint16_t input,
		const struct ev *e)
{
	bool region = e->kind == EV_REGION || e->kind == EV_COMPUTE;
	uint32_t rows[PROFILE_MAX_GROUPINGS];
	const struct placed *range = NULL;
	struct ev inner;
	int rc = 0;

	if (in->by_start && !region && !e->phase.len &&
	    (range = torch_phase(p, input, e, &inner)))
		e = &inner;
	for (int i = 0; i < p->nby; i++) {
		int64_t r = row_of(p, &p->by[i], in, input, e);

		if (r < 0)
			return r;
		rows[i] = r;
		count_in_row(&p->by[i].rows[r], e);
	}
	/* the sweep: a merged file's events come by start, a trace's by end */
	forget_seen(p, in->by_start ? e->start : e->end);
	if (e->has_ids && (region || e->parent >= 0))
		rc = link_by_ids(p, input, e, rows, region);
	else if (region)
		rc = link_by_time(p, input, e, rows);
	else if (range && e->end <= range->end)
		give_back(p, range->rows, rows, e->end - e->start, false);
	gpu_profile_add(&p->gpu, in, e);
	if (p->find)
		findings_add(&p->findings, in, input, e);
	if (!rc)
		rc = p->gpu.err;
	return rc ? rc : count_in_headline(p, in, input, e);
}

void profile_find(struct profile *p, double min_share)
{
	p->find = true;
	findings_init(&p->findings, min_share);
}

int profile_finish(struct profile *p)
{
	int rc = overlap_finish(&p->overlap);

	p->head.unoverlapped_io = p->overlap.unoverlapped;
	p->head.late = p->overlap.late;
	if (!p->head.events)
		p->head.t_min = p->head.t_max = 0;
	if (!rc && p->find)
		rc = findings_finish(&p->findings, p->head.t_max - p->head.t_min, &p->overlap);
	return rc;
}

void profile_free(struct profile *p)
{
	struct heap_item hi;
	uint64_t k, v;
	size_t it = 0;

	for (int i = 0; p->by && i < p->nby; i++) {
		for (uint32_t r = 0; r < p->by[i].n; r++) {
			free(p->by[i].rows[r].key);
			free(p->by[i].rows[r].material);
			sketch_free(&p->by[i].rows[r].durations);
			sketch_free(&p->by[i].rows[r].log2);
		}
		free(p->by[i].rows);
		hmap_free(&p->by[i].index);
	}
	free(p->by);
	while (heap_pop(&p->seen_by_end, &hi))
		link_free(hi.val);
	heap_free(&p->seen_by_end);
	gpu_profile_free(&p->gpu);
	if (p->find)
		findings_free(&p->findings);
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
	hmap_free(&p->files);
	hmap_free(&p->procs);
	hmap_free(&p->ranks);
	overlap_free(&p->overlap);
	free(p->scratch);
}
