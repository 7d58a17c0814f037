// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "analyze/profile.h"
#include "analyze/selftime.h"
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
		return overlap_add_compute(&p->overlap, proc, e->start, e->end);
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
	return overlap_add_io(&p->overlap, proc, e->start, e->end,
			      p->find ? findings_overlap_tag(&p->findings) : 0);
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
	    (range = selftime_torch_phase(p, input, e, &inner)))
		e = &inner;
	for (int i = 0; i < p->nby; i++) {
		int64_t r = row_of(p, &p->by[i], in, input, e);

		if (r < 0)
			return r;
		rows[i] = r;
		count_in_row(&p->by[i].rows[r], e);
	}
	/* the sweep: a merged file's events come by start, a trace's by end */
	selftime_forget(p, in->by_start ? e->start : e->end);
	if (e->has_ids && (region || e->parent >= 0))
		rc = selftime_link_ids(p, input, e, rows, region);
	else if (region)
		rc = selftime_link_time(p, input, e, rows);
	else if (range && e->end <= range->end)
		selftime_give_back(p, range->rows, rows, e->end - e->start, false);
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
	selftime_free(p);
	gpu_profile_free(&p->gpu);
	if (p->find)
		findings_free(&p->findings);
	hmap_free(&p->files);
	hmap_free(&p->procs);
	hmap_free(&p->ranks);
	overlap_free(&p->overlap);
	free(p->scratch);
}
