// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "analyze/events.h"
#include "analyze/sources.h"
#include "model/profiler.h"

#define NS_PER_US 1000

int rank_from_name(const char *path, int *world)
{
	const char *base = strrchr(path, '/'), *p;
	int r, w, used;

	base = base ? base + 1 : path;
	for (p = base; (p = strchr(p, '-')); p++) {
		if (sscanf(p, "-%d-of-%d%n", &r, &w, &used) == 2 && r >= 0 && w > r) {
			if (world)
				*world = w;
			return r;
		}
	}
	return -1;
}

void ev_input_init(struct ev_input *in, const char *path)
{
	*in = (struct ev_input){ .rank = rank_from_name(path, NULL) };
}

void ev_input_free(struct ev_input *in)
{
	fh_table_free(&in->fh);
	hmap_free_ptrs(&in->comm);
	hmap_free(&in->ranks);
	hmap_free(&in->torch_thread);
	hmap_free(&in->anchor_thread);
	hmap_free(&in->anchor_track);
}

int ev_rank(const struct ev_input *in, uint32_t pid)
{
	uint64_t r;

	if (in->owner) /* one process, one rank: the trace's, as merge names it */
		return ev_rank(in->owner, pid);
	return hmap_get(&in->ranks, pid, &r) ? (int)r : in->rank;
}

const char *ev_comm(const struct ev_input *in, uint32_t pid)
{
	const char *comm = in->owner ? ev_comm(in->owner, pid) : NULL;

	return comm ? comm : hmap_get_ptr(&in->comm, pid);
}

static bool arg_int(const struct rec *e, const char *key, int64_t *out)
{
	struct span v;

	return e->args.len && js_get(e->args, key, &v) && js_int(v, out);
}

static void set_rank(struct ev_input *in, uint32_t pid, int64_t rank)
{
	if (rank >= 0 && rank <= INT_MAX)
		hmap_put(&in->ranks, pid, rank);
}

/* A process name; a merged file's "rank 3 · python3 [1234] @node07" gives
 * the rank and the program. */
static void learn_name(struct ev_input *in, uint32_t pid, struct span v)
{
	char name[512], *comm = name, *end, *old;
	long rank;

	js_unescape(v, name, sizeof(name));
	if (!strncmp(name, "rank ", 5) && (rank = strtol(name + 5, &end, 10)) >= 0 &&
	    !strncmp(end, " \xc2\xb7 ", 4)) {
		set_rank(in, pid, rank);
		comm = end + 4;
	}
	if ((end = strstr(comm, " [")))
		*end = 0;
	old = hmap_get_ptr(&in->comm, pid);
	comm = strdup(comm);
	if (comm && !hmap_put_ptr(&in->comm, pid, comm))
		free(old);
	else
		free(comm);
}

static void learn_meta(struct ev_input *in, const struct rec *e)
{
	struct span v, w;
	char digits[24];
	int64_t rank;

	if (SPAN_IS(e->name, "FH")) {
		fh_table_add(&in->fh, e);
	} else if (SPAN_IS(e->name, "process_name") && e->pid_num && e->args.len &&
		   js_get(e->args, "name", &v) && js_string(v, &v)) {
		learn_name(in, e->pid, v);
	} else if (SPAN_IS(e->name, "PR") && e->pid_num && e->args.len &&
		   js_get(e->args, "name", &v) && js_string(v, &v) && SPAN_IS(v, "rank") &&
		   js_get(e->args, "value", &w)) {
		if (js_string(w, &w)) {
			js_unescape(w, digits, sizeof(digits));
			w = (struct span){ digits, strlen(digits) };
		}
		if (js_int(w, &rank))
			set_rank(in, e->pid, rank);
	}
}

static enum ev_kind kind_of(const struct rec *e)
{
	static const char *const other[] = { "PROC", "IOCTL", "DEVICE" };

	if (SPAN_IS(e->cat, "POSIX") || SPAN_IS(e->cat, "STDIO"))
		return EV_IO;
	if (SPAN_IS(e->cat, "NCCL") || SPAN_IS(e->cat, "CUFILE") ||
	    (e->cat.len >= 4 && !memcmp(e->cat.p, "CUDA", 4)))
		return EV_GPU;
	for (size_t i = 0; i < sizeof(other) / sizeof(other[0]); i++)
		if (span_eq(e->cat, other[i], strlen(other[i])))
			return EV_OTHER;
	/* torch's operators: Kineto's cpu_op and kernel; without Kineto no
	 * cat, and operators are named "aten::..." (record_function ranges
	 * such as "save" are regions). An event with no name has no text to
	 * search: its span is { NULL, 0 }, and memmem's may not be NULL. */
	if (SPAN_IS(e->cat, "compute") || SPAN_IS(e->cat, "cpu_op") || SPAN_IS(e->cat, "kernel") ||
	    (!e->cat.len && e->name.len && memmem(e->name.p, e->name.len, "::", 2)))
		return EV_COMPUTE;
	return EV_REGION;
}

static void file_of_hash(struct ev_input *in, struct span fhash, struct ev *out)
{
	const struct fh_path *f = fh_table_get(&in->fh, fhash);

	if (f)
		out->file = (struct span){ f->text, f->len };
}

/* A total's calls (v1's args.calls, v2's args.dft_cnt): 1 if not a
 * count of at least one. */
static void take_calls(struct span v, struct ev *out)
{
	if (!js_int(v, &out->calls) || out->calls < 1)
		out->calls = 1;
}

/* The args an analysis needs, in one pass over them. */
static void read_args(struct ev_input *in, const struct rec *e, struct ev *out,
		      struct rec_fine *fine, int64_t *ret)
{
	const char *p = e->args.p, *end = e->args.len ? e->args.p + e->args.len : p;
	struct span k, v, api;
	bool summed = false;	/* v2 aggregated: ret_sum, not ret each */
	int i = 0;

	if (!p && e->nargs < 0)
		return; /* no args at all (an absent field's span is { NULL, 0 }) */
	p = js_ws(p, end);
	if (e->nargs < 0 && p < end && *p == '{')
		p++;
	for (;;) {
		if (e->nargs >= 0) {
			if (i == e->nargs)
				break;
			k = e->arg_key[i];
			v = e->arg_val[i++];
		} else if (js_member(&p, end, &k, &v) != JS_OK) {
			break;
		}
		if (k.len < 2 || k.len > 9)
			continue;
		switch (k.p[0]) { /* one compare for most keys */
		case 'r':
			if (SPAN_IS(k, "ret") && !summed)
				js_int(v, ret);
			else if (SPAN_IS(k, "ret_sum"))
				summed = js_int(v, ret);
			break;
		case 'd':
			if (SPAN_IS(k, "dft_cnt"))
				take_calls(v, out);
			break;
		case 'c':
			if (SPAN_IS(k, "calls"))
				take_calls(v, out);
			else if (SPAN_IS(k, "copy_kind"))
				js_string(v, &out->copy_kind);
			else if (SPAN_IS(k, "comm_rank"))
				js_int(v, &out->comm_rank);
			else if (SPAN_IS(k, "comm_id"))
				js_string(v, &out->comm_id);
			break;
		case 'b':
			if (SPAN_IS(k, "bytes") && !summed)
				js_int(v, &out->gpu_bytes);
			else if (SPAN_IS(k, "bytes_sum"))
				summed = js_int(v, &out->gpu_bytes);
			break;
		case 'a':
			if (SPAN_IS(k, "api") && js_string(v, &api)) {
				out->cufile = api.len > 6 && !memcmp(api.p, "cuFile", 6);
				/* cuFile's compatibility mode: the call (CUFILE) is
				 * named for the syscalls it made, whose events are
				 * in the trace too; it counts once, as itself */
				if (out->cufile && out->kind == EV_GPU)
					out->name = api;
			}
			break;
		case 'h':
			if (SPAN_IS(k, "hist"))
				js_string(v, &out->hist);
			break;
		case 'o':
			if (SPAN_IS(k, "offset") && (!js_int(v, &out->offset) || out->offset < 0))
				out->offset = -1;
			break;
		case 'n':
			rec_fine_member(k, v, fine);
			break;
		case 'm':
			if (SPAN_IS(k, "misses") && (!js_int(v, &out->misses) || out->misses < 0))
				out->misses = 0;
			break;
		case 'f':
			if (SPAN_IS(k, "fname"))
				js_string(v, &out->file);
			else if (SPAN_IS(k, "fhash") && !out->file.len)
				file_of_hash(in, v, out);
			else if (SPAN_IS(k, "fd") && (!js_int(v, &out->fd) || out->fd < 0))
				out->fd = -1;
			break;
		case 'p':
			if (SPAN_IS(k, "phase"))
				js_string(v, &out->phase);
			else if (SPAN_IS(k, "phase_cat"))
				js_string(v, &out->phase_cat);
			else if (SPAN_IS(k, "p_idx"))
				out->has_ids = js_int(v, &out->parent);
			break;
		case 'e':
			if (SPAN_IS(k, "epoch"))
				js_int(v, &out->epoch);
			else if (SPAN_IS(k, "event_id"))
				js_int(v, &out->id);
			break;
		case 's':
			if (SPAN_IS(k, "step"))
				js_int(v, &out->step);
			break;
		}
	}
	/* DFTracer writes a number that never varied plain: each call's */
	if (e->aggregated && !summed && out->calls > 1) {
		if (*ret > 0)
			*ret = *ret > INT64_MAX / out->calls ? INT64_MAX : *ret * out->calls;
		if (out->gpu_bytes > 0)
			out->gpu_bytes = out->gpu_bytes > INT64_MAX / out->calls ? INT64_MAX :
					 out->gpu_bytes * out->calls;
	}
}

int64_t ev_hist(struct span hist, uint64_t counts[DFT_FOLD_BUCKETS])
{
	const char *p = hist.p, *end = hist.len ? hist.p + hist.len : p;
	int64_t calls = 0;

	memset(counts, 0, DFT_FOLD_BUCKETS * sizeof(*counts));
	while (p < end) {
		uint64_t b = 0, n = 0;
		const char *d = p;

		while (p < end && *p >= '0' && *p <= '9' && b < DFT_FOLD_BUCKETS)
			b = b * 10 + (*p++ - '0');
		if (p == d || b >= DFT_FOLD_BUCKETS || p == end || *p++ != ':')
			return -1;
		/* at most 2^32 - 1 a total, as the kernel counts them */
		for (d = p; p < end && *p >= '0' && *p <= '9' && n <= UINT32_MAX; p++)
			n = n * 10 + (*p - '0');
		if (p == d || n > UINT32_MAX || (p < end && *p++ != ' '))
			return -1;
		counts[b] += n;
		calls += n;
	}
	return calls;
}

/* The lifecycle marks say the file's rank, when the tracer knew it. */
static int lifecycle(struct ev_input *in, const struct rec *e)
{
	int64_t rank;

	if (SPAN_IS(e->name, "start") && arg_int(e, "rank", &rank) && rank >= 0 &&
	    rank <= INT_MAX)
		in->rank = rank;
	return 0;
}

static uint64_t pid_key(const struct rec *e, int64_t low)
{
	return (uint64_t)(uint32_t)e->pid << 32 | (uint32_t)low;
}

void ev_input_learn(struct ev_input *in, const struct rec *e)
{
	int64_t n;

	if (e->ph == 'M')
		learn_meta(in, e);
	if (e->ph != 'X' || !e->pid_num || !e->tid_num)
		return;
	if (SPAN_IS(e->cat, DFT_PROFILER_CAT) && SPAN_IS(e->name, "anchor") &&
	    arg_int(e, "count", &n))
		hmap_put(&in->anchor_thread, pid_key(e, n), (uint32_t)e->tid);
	else if (sources_torch_anchor(e->name, &n))
		hmap_put(&in->anchor_track, pid_key(e, n), (uint32_t)e->tid);
}

/* A track and a thread with the same anchor of a process are one. */
void ev_input_learned(struct ev_input *in)
{
	uint64_t k, track, tid;
	size_t it = 0;

	while (hmap_next(&in->anchor_track, &it, &k, &track))
		if (hmap_get(&in->anchor_thread, k, &tid))
			hmap_put(&in->torch_thread, (k >> 32) << 32 | track, tid);
	hmap_free(&in->anchor_thread);
	hmap_free(&in->anchor_track);
}

int ev_from_rec(struct ev_input *in, const struct rec *e, struct ev *out)
{
	uint64_t tid;

	struct rec_fine fine = REC_FINE_NONE;
	int64_t ret = 0;

	if (e->ph == 'M') {
		learn_meta(in, e);
		return 0;
	}
	if (e->ph != 'X' || !e->has_ts)
		return 0;
	if (SPAN_IS(e->cat, "dftracer"))
		return lifecycle(in, e);
	if (SPAN_IS(e->cat, DFT_PROFILER_CAT)) { /* bookkeeping for the merge */
		int64_t rank;

		if (e->pid_num && arg_int(e, "rank", &rank))
			set_rank(in, e->pid, rank);
		return 0;
	}
	*out = (struct ev){ .name = e->name, .cat = e->cat, .kind = kind_of(e),
			    .epoch = -1, .step = -1, .id = e->has_id ? e->id : -1,
			    .parent = -1, .calls = 1, .comm_rank = -1, .offset = -1, .fd = -1 };
	out->pid = e->pid_num ? (uint32_t)e->pid : 0;
	out->tid = e->tid_num ? (uint32_t)e->tid : 0;
	if (hmap_get(&in->torch_thread, (uint64_t)out->pid << 32 | out->tid, &tid))
		out->tid = tid;
	read_args(in, e, out, &fine, &ret);
	out->ret = ret;
	out->has_ids = out->has_ids && out->id >= 0;
	rec_span_ns(e, fine, &out->start, &out->end);
	if (out->kind == EV_IO) {
		out->bytes_kind = sc_bytes_of(e->name.p, e->name.len);
		out->bytes = out->bytes_kind != SC_BYTES_NONE && ret > 0 ? ret : 0;
	} else if (out->kind == EV_GPU) {
		out->gpu = gpu_class_of(e->cat.p, e->cat.len, e->name.p, e->name.len,
					out->copy_kind.p, out->copy_kind.len);
		if (out->cufile) /* via syscalls, in the trace: bytes are ret */
			out->gpu_bytes = ret > 0 ? ret : 0;
	}
	return 1;
}
