// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "analyze/events.h"
#include "analyze/sources.h"
#include "lib/pfor.h"
#include "lib/vec.h"
#include "model/profiler.h"

#define NS_PER_US 1000
/* A raw ts past this (ns) is since the epoch (after 2001): Kineto before
 * 2024-04 wrote absolute µs; later ones, and torch without Kineto, write
 * µs from a base of their own. */
#define EPOCH_NS_MIN 1000000000000000000LL
/* The paired process's own ids stay; a clash gets an id above pid_max. */
#define FIRST_SPARE_ID (1u << 22)


static char *unescaped(struct span s)
{
	char *out = malloc(s.len + 1);

	if (out)
		js_unescape(s, out, s.len + 1);
	return out;
}

static bool arg_string(const struct rec *e, const char *key, struct span *out)
{
	struct span v;

	return e->args.len && js_get(e->args, key, &v) && js_string(v, out);
}

static bool arg_int(const struct rec *e, const char *key, int64_t *out)
{
	struct span v;

	return e->args.len && js_get(e->args, key, &v) && js_int(v, out);
}

/* An X event's start and end, to the ns where the file says them. */
static void event_span(const struct rec *e, int64_t *start, int64_t *end)
{
	struct rec_fine fine = REC_FINE_NONE;

	if (!arg_int(e, "ns10d", &fine.ns10d))
		arg_int(e, "ns10", &fine.ns10);
	rec_span_ns(e, fine, start, end);
}

static void add_anchor(struct source *s, int64_t n, int64_t start, int64_t end,
		       uint32_t pid)
{
	struct anchor a = { n, start, end, pid };

	(void)VEC_PUSH(s->anchors, s->nanchors, s->capanchors, a);
}

/* dftrace.profiler's record of a torch trace: path0, path1... (an arg
 * holds 127 bytes, a path may not fit one). */
static void add_torch_path(struct source *s, const struct rec *e)
{
	char key[16], buf[PATH_MAX] = "", part[256];
	struct span v;
	size_t len = 0;

	for (int i = 0; i < 64; i++) {
		snprintf(key, sizeof(key), "path%d", i);
		if (!arg_string(e, key, &v))
			break;
		js_unescape(v, part, sizeof(part));
		len += snprintf(buf + len, sizeof(buf) - len, "%s", part);
		if (len >= sizeof(buf))
			return;
	}
	if (len) {
		struct torch_path t = { strdup(buf), e->pid };

		if (t.path && VEC_PUSH(s->torch_paths, s->ntorch, s->captorch, t))
			free(t.path);
	}
}

/* rank in args (dftrace.profiler's marks), or DFTracer's PR line
 * {"name":"PR","args":{"name":"rank","value":"3"}}. */
static void note_rank(struct source *s, const struct rec *e)
{
	struct span v;
	int64_t rank;

	if (!e->pid_num || e->pid <= 0 || e->pid > UINT32_MAX)
		return;
	if (SPAN_IS(e->name, "PR")) {
		char digits[24];

		if (!arg_string(e, "name", &v) || !SPAN_IS(v, "rank") ||
		    !js_get(e->args, "value", &v))
			return;
		if (js_string(v, &v)) {
			js_unescape(v, digits, sizeof(digits));
			v = (struct span){ digits, strlen(digits) };
		}
		if (!js_int(v, &rank))
			return;
	} else if (!arg_int(e, "rank", &rank)) {
		return;
	}
	if (rank >= 0 && rank <= INT32_MAX)
		hmap_put(&s->ranks, e->pid, rank);
}

int sources_rank(const struct source *s, uint32_t pid)
{
	uint64_t rank;

	return hmap_get(&s->ranks, pid, &rank) ? (int)rank : s->rank;
}

static void note_time(struct source *s, int64_t ts)
{
	if (!s->events || ts < s->min_ts)
		s->min_ts = ts;
	if (!s->events || ts > s->max_ts)
		s->max_ts = ts;
	s->events++;
}

/* The value of a CM line: µs as a string (or a number). */
bool sources_mark_us(const struct rec *e, int64_t *us)
{
	struct span v;

	if (!e->args.len || !js_get(e->args, "value", &v))
		return false;
	js_string(v, &v);
	return js_int(v, us);
}

static void note_mark(struct source *s, const struct rec *e)
{
	int64_t us;

	if (sources_mark_us(e, &us) && us >= 0 && us < INT64_MAX / NS_PER_US)
		note_time(s, us * NS_PER_US);
}

static void scan_metadata(struct source *s, const struct rec *e)
{
	struct span v;

	if (SPAN_IS(e->name, "CM")) /* a mark: its time is its value, in µs */
		note_mark(s, e);
	else if (SPAN_IS(e->name, "PR"))
		note_rank(s, e);
	else if (SPAN_IS(e->name, "HH") && !s->host[0] && arg_string(e, "name", &v))
		js_unescape(v, s->host, sizeof(s->host));
	else if (SPAN_IS(e->name, "process_name") && e->pid_num &&
		 arg_string(e, "name", &v)) {
		char *old = hmap_get_ptr(&s->comm, e->pid), *name = unescaped(v);

		if (name && !hmap_put_ptr(&s->comm, e->pid, name))
			free(old);
		else
			free(name);
	}
}

/* An NCCL collective, or a synchronise that may end some (see
 * hostclock.h): true if e was either. A call that failed made nothing
 * to wait for. */
static bool scan_nccl(struct source *s, const struct rec *e)
{
	struct span comm_id = { NULL, 0 };
	int64_t start, end, stream = -1, ret = 0;
	bool call = SPAN_IS(e->cat, "NCCL"), all;
	uint64_t key;

	if (call) {
		arg_string(e, "comm_id", &comm_id);
		if (!hostclock_nccl(e->cat, e->name, comm_id, &key))
			return false;
	} else if (!s->colls.npend || !hostclock_nccl_sync(e->cat, e->name, &all)) {
		return false;
	}
	arg_int(e, "ret", &ret);
	arg_int(e, "stream_id", &stream);
	event_span(e, &start, &end);
	if (ret)
		return true;
	if (call)
		hostclock_nccl_call(&s->colls, key, (uint32_t)e->pid, (uint32_t)e->tid, stream, start);
	else
		hostclock_nccl_synced(&s->colls, (uint32_t)e->pid, (uint32_t)e->tid, stream, all, end);
	return true;
}

/* A comm region that synchronises its ranks: true if e was one. */
static bool scan_comm(struct source *s, const struct rec *e)
{
	struct span comm_id = { NULL, 0 };
	int64_t start, end;
	uint64_t key;

	if (!SPAN_IS(e->cat, "comm"))
		return false;
	arg_string(e, "comm_id", &comm_id);
	if (!hostclock_collective(e->cat, e->name, comm_id, &key))
		return false;
	event_span(e, &start, &end);
	hostclock_note(&s->colls, key, (uint32_t)e->pid, start, end);
	return true;
}

static void scan_dftrace(struct source *s, const struct rec *e)
{
	int64_t start, end, v;

	if (e->ph == 'M') {
		scan_metadata(s, e);
		return;
	}
	if (e->ph != 'X')
		return;
	if (scan_comm(s, e) || scan_nccl(s, e))
		return;
	if (SPAN_IS(e->cat, "dftracer") && SPAN_IS(e->name, "start") && !s->root_pid) {
		s->root_pid = e->pid;
		if (arg_int(e, "rank", &v))
			s->rank = v;
		if (arg_int(e, "world_size", &v))
			s->world = v;
	}
	if (!SPAN_IS(e->cat, DFT_PROFILER_CAT))
		return;
	event_span(e, &start, &end);
	note_rank(s, e);
	if (SPAN_IS(e->name, "anchor") && arg_int(e, "count", &v))
		add_anchor(s, v, start, end, e->pid);
	else if (SPAN_IS(e->name, "torch_trace"))
		add_torch_path(s, e);
}

bool sources_torch_anchor(struct span name, int64_t *n)
{
	size_t len = sizeof(TORCH_ANCHOR_PREFIX) - 1;
	char digits[24];

	if (name.len <= len || memcmp(name.p, TORCH_ANCHOR_PREFIX, len) ||
	    name.len - len >= sizeof(digits))
		return false;
	memcpy(digits, name.p + len, name.len - len);
	digits[name.len - len] = 0;
	*n = atoll(digits);
	return true;
}

static void scan_torch(struct source *s, const struct rec *e)
{
	int64_t n;

	if (!e->pid_num && e->pid_text.len)
		s->torch_legacy = true;
	if (e->ph == 'M')
		scan_metadata(s, e); /* Kineto's process names */
	if (e->ph == 'X' && sources_torch_anchor(e->name, &n))
		add_anchor(s, n, e->ts_ns, e->ts_ns + e->dur_ns, 0);
}

static void note_event(struct source *s, const struct rec *e)
{
	if (e->has_ts && e->ph != 'M')
		note_time(s, e->ts_ns);
	if (e->pid_num && e->pid > 0 && e->pid <= UINT32_MAX)
		hmap_add(&s->pids, e->pid, 0);
	if (e->tid_num && e->tid > 0 && e->tid <= UINT32_MAX && e->tid != e->pid)
		hmap_add(&s->tids, e->tid, 0);
}

static int scan_one(struct source *s, bool strict, char *err, size_t errlen)
{
	struct reader *r;
	struct rec e;
	bool first = true;
	int rc = reader_open(&r, s->path, READER_SKIM | (strict ? READER_STRICT : 0) |
			     source_reader_flags(s), err, errlen);

	if (rc)
		return rc;
	s->kind = reader_meta(r)->container ? SRC_TORCH : SRC_DFTRACE;
	s->has_base = reader_meta(r)->has_base;
	s->base_ns = reader_meta(r)->base_ns;
	if (reader_meta(r)->distributed_info) {
		struct span di = { reader_meta(r)->distributed_info,
				   strlen(reader_meta(r)->distributed_info) }, v;
		int64_t x;

		if (js_get(di, "rank", &v) && js_int(v, &x))
			s->rank = x;
		if (js_get(di, "world_size", &v) && js_int(v, &x))
			s->world = x;
	}
	while ((rc = reader_next(r, &e, err, errlen)) > 0) {
		/* torch without Kineto writes a bare array, pid "CPU functions" */
		if (first && !e.pid_num && e.pid_text.len)
			s->kind = SRC_TORCH;
		first = false;
		note_event(s, &e);
		if (s->kind == SRC_TORCH)
			scan_torch(s, &e);
		else
			scan_dftrace(s, &e);
	}
	s->records = reader_events(r);
	if (reader_meta(r)->merged) /* said at its end, after the events */
		s->kind = SRC_MERGED;
	if (!rc) /* once: the conversion reads it again */
		reader_warn(r);
	reader_close(r);
	return rc;
}

unsigned int source_reader_flags(const struct source *s)
{
	return s->discovered ? READER_REGULAR : 0;
}

static int new_source(struct source_set *set, const char *path, bool discovered)
{
	struct source one = { .path = strdup(path), .rank = -1, .world = -1,
			      .discovered = discovered };

	if (!one.path || VEC_PUSH(set->src, set->n, set->cap, one)) {
		free(one.path);
		return -ENOMEM;
	}
	return 0;
}

/* What its name says, where its records did not. */
static void source_named(struct source *s)
{
	if (s->rank < 0)
		s->rank = rank_from_name(s->path, &s->world);
}

static int add_source(struct source_set *set, const char *path, bool discovered,
		      char *err, size_t errlen)
{
	int rc = new_source(set, path, discovered);

	if (!rc)
		rc = scan_one(&set->src[set->n - 1], set->strict, err, errlen);
	if (!rc)
		source_named(&set->src[set->n - 1]);
	return rc;
}

/* The inputs' first reads, on several cores: each its own message. */
struct scan_job {
	struct source *src;
	bool strict;
	char (*errs)[512];
};

static int scan_job(void *ctx, uint32_t i)
{
	struct scan_job *j = ctx;

	return scan_one(&j->src[i], j->strict, j->errs[i], sizeof(j->errs[i]));
}

int sources_scan(struct source_set *set, char *const *paths, int n, int jobs, char *err,
		 size_t errlen)
{
	struct scan_job j = { .strict = set->strict };
	uint32_t first = set->n, failed = 0;
	int rc = 0;

	for (int i = 0; i < n && !rc; i++)
		rc = new_source(set, paths[i], false);
	j.errs = calloc(n ? n : 1, sizeof(*j.errs));
	if (rc || !j.errs) {
		free(j.errs);
		return -ENOMEM;
	}
	j.src = set->src + first;
	rc = pfor(n, jobs, scan_job, &j, &failed);
	if (rc)
		snprintf(err, errlen, "%s", j.errs[failed]);
	for (int i = 0; i < n && !rc; i++)
		source_named(&j.src[i]);
	free(j.errs);
	return rc;
}

static void source_free(struct source *s)
{
	hmap_free_ptrs(&s->comm);
	hostclock_free(&s->colls);
	hmap_free(&s->pids);
	hmap_free(&s->tids);
	for (uint32_t j = 0; j < s->ntorch; j++)
		free(s->torch_paths[j].path);
	hmap_free(&s->ranks);
	free(s->torch_paths);
	free(s->anchors);
	free(s->path);
}

int sources_scan_discovered(struct source_set *set, const char *path, char *err,
			    size_t errlen)
{
	int rc = add_source(set, path, true, err, errlen);

	if (rc && rc != -ENOMEM)
		source_free(&set->src[--set->n]);
	return rc;
}

static bool same_file(const char *a, const char *b)
{
	char ra[PATH_MAX], rb[PATH_MAX];

	return realpath(a, ra) && realpath(b, rb) && !strcmp(ra, rb);
}

static bool given(const struct source_set *set, const char *path)
{
	for (uint32_t i = 0; i < set->n; i++)
		if (same_file(set->src[i].path, path))
			return true;
	return false;
}

char **sources_discovered(const struct source_set *set)
{
	char **out = calloc(1, sizeof(*out));
	size_t n = 0;

	for (uint32_t i = 0; out && i < set->n; i++) {
		for (uint32_t j = 0; j < set->src[i].ntorch; j++) {
			const char *p = set->src[i].torch_paths[j].path;
			char **grown;

			if (given(set, p))
				continue;
			grown = realloc(out, (n + 2) * sizeof(*out));
			if (!grown)
				break;
			out = grown;
			out[n++] = strdup(p);
			out[n] = NULL;
		}
	}
	return out;
}

/* ---- pairing and clocks ---- */

static struct source *recorded_by(struct source_set *set, struct source *t)
{
	for (uint32_t i = 0; i < set->n; i++) {
		for (uint32_t j = 0; j < set->src[i].ntorch; j++) {
			const struct torch_path *p = &set->src[i].torch_paths[j];

			if (same_file(p->path, t->path)) {
				t->paired_pid = p->pid;
				return &set->src[i];
			}
		}
	}
	return NULL;
}

/* A dftrace process that says it is rank r: 1 if exactly one, with it. */
static int process_of_rank(struct source_set *set, int r, struct source **src,
			   uint32_t *pid)
{
	int found = 0;

	for (uint32_t i = 0; i < set->n; i++) {
		uint64_t p, rank;
		size_t it = 0;

		while (set->src[i].kind == SRC_DFTRACE &&
		       hmap_next(&set->src[i].ranks, &it, &p, &rank)) {
			if ((int)rank == r && found++ == 0) {
				*src = &set->src[i];
				*pid = p;
			}
		}
	}
	return found;
}

/* The trace a torch trace's ops belong to: the one that recorded it, the
 * one process that says it has its rank, the only trace of its rank, or
 * the only trace. */
static struct source *pair_of(struct source_set *set, struct source *t)
{
	struct source *found = recorded_by(set, t), *only = NULL;
	int ndftrace = 0, nrank = 0;
	uint32_t pid;

	if (found)
		return found;
	if (t->rank >= 0 && process_of_rank(set, t->rank, &found, &pid) == 1) {
		t->paired_pid = pid;
		return found;
	}
	for (uint32_t i = 0; i < set->n; i++) {
		struct source *s = &set->src[i];

		if (s->kind != SRC_DFTRACE)
			continue;
		ndftrace++;
		if (t->rank >= 0 && s->rank == t->rank) {
			nrank++;
			found = s;
		}
		only = s;
	}
	if (nrank == 1)
		return found;
	return ndftrace == 1 ? only : NULL;
}

/* Each anchor bounds the offset: the torch side's span lies inside ours
 * (give or take its µs). The intersection over all is kept; its middle is
 * the offset, its half-width the error. */
static int align_by_anchors(struct source *t, const struct source *d, char *err,
			    size_t errlen)
{
	int64_t lo = INT64_MIN, hi = INT64_MAX;
	uint32_t used = 0;

	for (uint32_t i = 0; i < t->nanchors; i++) {
		for (uint32_t j = 0; j < d->nanchors; j++) {
			const struct anchor *a = &t->anchors[i], *b = &d->anchors[j];

			if (a->n != b->n || (t->paired_pid && b->pid != t->paired_pid))
				continue;
			if (b->start - a->start - TORCH_RESOLUTION_NS > lo)
				lo = b->start - a->start - TORCH_RESOLUTION_NS;
			if (b->end - a->end + TORCH_RESOLUTION_NS < hi)
				hi = b->end - a->end + TORCH_RESOLUTION_NS;
			used++;
		}
	}
	if (!used) {
		snprintf(err, errlen, "cannot align '%s' with '%s': its times are "
			 "relative and neither has a dftrace.profiler anchor the "
			 "other has (record it with dftrace.profiler)", t->path, d->path);
		return -EINVAL;
	}
	if (lo > hi) {
		snprintf(err, errlen, "cannot align '%s' with '%s': their %u anchors "
			 "disagree by %lld ns", t->path, d->path, used,
			 (long long)(lo - hi));
		return -EINVAL;
	}
	t->offset_ns = lo + (hi - lo) / 2;
	t->align_err_ns = (hi - lo) / 2;
	t->nanchors_used = used;
	return 0;
}

/* Kineto's own clock (a base, or absolute times) needs no partner; torch
 * without Kineto counts from its own start and needs the anchors of the
 * trace that ran it. */
static int align_torch(struct source_set *set, struct source *t, char *err,
		       size_t errlen)
{
	bool own_clock = t->has_base || (t->events && t->min_ts >= EPOCH_NS_MIN);

	t->paired = pair_of(set, t);
	if (t->paired && t->paired->nanchors && t->nanchors)
		return align_by_anchors(t, t->paired, err, errlen);
	if (own_clock) {
		t->offset_ns = t->has_base ? t->base_ns : 0;
		return 0;
	}
	if (!t->events)
		return 0;
	if (!t->paired) {
		snprintf(err, errlen, "cannot align '%s': its times count from its own "
			 "start and no trace of its rank recorded anchors for it (record "
			 "both with dftrace.profiler, or name the files "
			 "trace-<rank>-of-<N>)", t->path);
		return -EINVAL;
	}
	return align_by_anchors(t, t->paired, err, errlen);
}

/* ---- ids ---- */

static uint32_t group_of(struct source_set *set, uint32_t upto, const char *host)
{
	for (uint32_t i = 0; i < upto; i++)
		if (set->src[i].kind == SRC_DFTRACE && host[0] &&
		    !strcmp(set->src[i].host, host))
			return set->src[i].group;
	return upto + 1;
}

uint32_t sources_id(struct source_set *set, const struct source *s, uint32_t id)
{
	uint32_t group = s->paired ? s->paired->group : s->group;
	uint64_t v;

	return hmap_get(&set->ids, (uint64_t)group << 32 | id, &v) ? (uint32_t)v : id;
}

/* id (a pid or tid) of a group: the first group to show it keeps it;
 * later ones get spare ids, never one an input uses (a merged input
 * holds spare ids of its own). */
static int assign_id(struct source_set *set, struct hmap *taken, uint32_t group,
		     uint64_t id)
{
	uint64_t key = (uint64_t)group << 32 | id, owner;
	int rc;

	if (hmap_get(&set->ids, key, &owner))
		return 0;
	if (hmap_get(taken, id, &owner) && owner != group) {
		while (hmap_get(taken, set->next_id, &owner) ||
		       hmap_get(&set->used, set->next_id, &owner))
			set->next_id++;
		id = set->next_id++;
	}
	rc = hmap_put(taken, id, group);
	return rc ? rc : hmap_put(&set->ids, key, id);
}

/* Every id of every input: spare ids, and torch tracks' ids, avoid them. */
static int note_used(struct source_set *set)
{
	int rc = 0;

	for (uint32_t i = 0; i < set->n && !rc; i++) {
		const struct hmap *maps[] = { &set->src[i].pids, &set->src[i].tids };

		for (int m = 0; m < 2 && !rc; m++) {
			uint64_t id, unused;
			size_t it = 0;

			while (!rc && hmap_next(maps[m], &it, &id, &unused))
				rc = hmap_put(&set->used, id, 0);
		}
	}
	return rc;
}

uint32_t sources_spare_id(struct source_set *set)
{
	uint64_t unused;

	while (hmap_get(&set->used, set->next_id, &unused))
		set->next_id++;
	return set->next_id++;
}

static int assign_ids(struct source_set *set)
{
	struct hmap taken = { 0 };
	int rc = 0;

	for (uint32_t i = 0; i < set->n && !rc; i++) {
		struct source *s = &set->src[i];
		uint32_t group = s->paired ? s->paired->group : s->group;
		const struct hmap *maps[] = { &s->pids, &s->tids };

		for (int m = 0; m < 2 && !rc; m++) {
			uint64_t id, unused;
			size_t it = 0;

			while (!rc && hmap_next(maps[m], &it, &id, &unused))
				rc = assign_id(set, &taken, group, id);
		}
	}
	hmap_free(&taken);
	return rc;
}

/* Each host's correction, onto its traces and the torch traces they
 * recorded (analyze/hostclock.h). */
static int align_hosts(struct source_set *set)
{
	int rc = hostclock_fit(set, &set->fits, &set->nfits);

	for (uint32_t k = 0; !rc && k < set->nfits; k++) {
		const struct host_fit *f = &set->fits[k];

		for (uint32_t i = 0; f->pairs && i < set->n; i++) {
			struct source *s = &set->src[i];
			const struct source *d = s->kind == SRC_TORCH ? s->paired : s;

			if (!d || d->kind != SRC_DFTRACE || d->group != f->group)
				continue;
			/* a torch trace's raw time is its own: t0 moved with it */
			s->rate = f->rate;
			s->rate_t0 = f->t0_ns - s->offset_ns;
			s->offset_ns += f->corr_ns;
		}
	}
	return rc;
}

int sources_decide(struct source_set *set, char *err, size_t errlen)
{
	int64_t base = INT64_MAX;
	int rc;

	/* torch traces name no host: each its own group, unless paired */
	for (uint32_t i = 0; i < set->n; i++)
		set->src[i].group = group_of(set, i, set->src[i].host);
	for (uint32_t i = 0; i < set->n; i++) {
		struct source *s = &set->src[i];

		if (s->kind == SRC_TORCH && (rc = align_torch(set, s, err, errlen)))
			return rc;
		if (s->kind == SRC_MERGED) /* its times count from its base */
			s->offset_ns = s->base_ns;
	}
	if (set->align_hosts && (rc = align_hosts(set))) {
		snprintf(err, errlen, "out of memory");
		return rc;
	}
	for (uint32_t i = 0; i < set->n; i++) {
		const struct source *s = &set->src[i];

		if (s->events && s->min_ts + s->offset_ns < base)
			base = s->min_ts + s->offset_ns;
	}
	set->base_ns = base == INT64_MAX ? 0 : base;
	set->next_id = FIRST_SPARE_ID;
	rc = note_used(set);
	rc = rc ? rc : assign_ids(set);
	if (rc)
		snprintf(err, errlen, "out of memory");
	return rc;
}

void sources_free(struct source_set *set)
{
	for (uint32_t i = 0; i < set->n; i++)
		source_free(&set->src[i]);
	free(set->src);
	free(set->fits);
	hmap_free(&set->ids);
	hmap_free(&set->used);
	*set = (struct source_set){ 0 };
}
