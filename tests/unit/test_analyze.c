/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Unit tests for user/analyze on small traces written by hand, with the
 * exact results worked out by hand: the duration sketch, the unoverlapped
 * I/O sweep, how events are classed and what their args give (events.c),
 * file hashes (fhash.c), and a profile's rows and headline through its
 * public API. Edge cases included: empty inputs, events with no name or an
 * empty one, and sums that reach INT64_MAX (held there, never wrapped).
 * Also built under ASan and UBSan (build/tests/test_analyze-san). */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "analyze/events.h"
#include "analyze/fhash.h"
#include "analyze/hostclock.h"
#include "analyze/overlap.h"
#include "analyze/profile.h"
#include "analyze/sketch.h"
#include "read/reader.h"

static char tmpdir[] = "/tmp/dftrace-test-analyze-XXXXXX";

/* The longest dur a trace may give (REC_TIME_MAX ns, in whole µs). */
#define DUR_MAX_US "4611686018427387"
#define DUR_MAX_NS (INT64_C(4611686018427387) * 1000)

/* Writes a trace whose JSON is given with ' for " (easier to read here). */
static const char *trace(const char *name, const char *text)
{
	const char *path = check_path(tmpdir, name);
	FILE *f = fopen(path, "w");

	for (const char *c = text; *c; c++)
		fputc(*c == '\'' ? '"' : *c, f);
	fclose(f);
	return path;
}

static void span_str(char *dst, size_t n, struct span s)
{
	snprintf(dst, n, "%.*s", (int)s.len, s.len ? s.p : "");
}

/* What ev_from_rec made of each event it counted, copied out of the
 * reader's buffer. */
struct got_ev {
	char name[64], cat[64], file[128], phase[64], phase_cat[64];
	struct ev ev;
};

struct got {
	int rc, recs, n;
	struct got_ev e[16];
	char err[256];
};

static struct got read_evs(const char *path, struct ev_input *in)
{
	struct got g = { 0 };
	struct reader *r;
	struct rec e;
	struct ev ev;

	g.rc = reader_open(&r, path, 0, g.err, sizeof(g.err));
	if (g.rc)
		return g;
	while ((g.rc = reader_next(r, &e, g.err, sizeof(g.err))) > 0) {
		g.recs++;
		if (!ev_from_rec(in, &e, &ev) || g.n == 16)
			continue;
		struct got_ev *o = &g.e[g.n++];

		o->ev = ev;
		span_str(o->name, sizeof(o->name), ev.name);
		span_str(o->cat, sizeof(o->cat), ev.cat);
		span_str(o->file, sizeof(o->file), ev.file);
		span_str(o->phase, sizeof(o->phase), ev.phase);
		span_str(o->phase_cat, sizeof(o->phase_cat), ev.phase_cat);
	}
	reader_close(r);
	return g;
}

/* ---- sketch ---- */

static void check_sketch(void)
{
	struct sketch s = { 0 };
	int64_t from, to;
	int rc = 0;

	CHECK(sketch_quantile(&s, 0.5) == 0 && sketch_quantile(&s, 1) == 0 && s.total == 0,
	      "sketch: empty: every quantile is 0");

	for (int v = 1; v <= 10; v++)
		rc |= sketch_add(&s, v);
	CHECK(!rc && s.total == 10 && sketch_quantile(&s, 0) == 1 &&
	      sketch_quantile(&s, 0.5) == 5 && sketch_quantile(&s, 0.9) == 9 &&
	      sketch_quantile(&s, 1) == 10,
	      "sketch: 1..10 ns are exact: p0 1, p50 5, p90 9, p100 10 (got %lld %lld %lld %lld)",
	      (long long)sketch_quantile(&s, 0), (long long)sketch_quantile(&s, 0.5),
	      (long long)sketch_quantile(&s, 0.9), (long long)sketch_quantile(&s, 1));
	sketch_free(&s);
	CHECK(!s.counts && !s.n && !s.total, "sketch: freed is empty again");

	sketch_add(&s, -5);
	CHECK(s.total == 1 && sketch_quantile(&s, 0.5) == 0,
	      "sketch: a negative value counts as 0 (got %lld)",
	      (long long)sketch_quantile(&s, 0.5));
	sketch_free(&s);

	/* buckets grow downwards as well as up */
	sketch_add(&s, 1000);
	sketch_add(&s, 1);
	CHECK(s.total == 2 && sketch_quantile(&s, 0.5) == 1 && sketch_quantile(&s, 1) == 1003,
	      "sketch: 1000 then 1: p50 1, p100 1003 (1000's bucket is [1000, 1008)) (got %lld %lld)",
	      (long long)sketch_quantile(&s, 0.5), (long long)sketch_quantile(&s, 1));
	sketch_free(&s);

	sketch_bucket(63, &from, &to);
	CHECK(from == 63 && to == 64, "sketch: bucket 63 is [63, 64)");
	sketch_bucket(64, &from, &to);
	CHECK(from == 64 && to == 65, "sketch: bucket 64 is [64, 65)");
	sketch_bucket(128, &from, &to);
	CHECK(from == 128 && to == 130, "sketch: bucket 128 is [128, 130)");

	/* 1e6 ns: a bucket of 2^13 from 122 * 8192 */
	sketch_add(&s, 1000000);
	CHECK(sketch_quantile(&s, 0.5) == 999424 + 4095,
	      "sketch: 1 ms is its bucket's middle, 1003519 ns, within 1/64 (got %lld)",
	      (long long)sketch_quantile(&s, 0.5));
	sketch_free(&s);

	/* the longest a trace's duration can be, and the largest value */
	sketch_add(&s, DUR_MAX_NS);
	CHECK(sketch_quantile(&s, 0.5) >= DUR_MAX_NS - DUR_MAX_NS / 64 &&
	      sketch_quantile(&s, 0.5) <= DUR_MAX_NS + DUR_MAX_NS / 64,
	      "sketch: 2^62 ns is within 1/64 (got %lld)", (long long)sketch_quantile(&s, 0.5));
	sketch_free(&s);
	sketch_add(&s, INT64_MAX);
	sketch_bucket(s.lo, &from, &to);
	CHECK(s.total == 1 && from == INT64_C(127) << 56 && to == INT64_MAX &&
	      sketch_quantile(&s, 1) > INT64_C(127) << 56,
	      "sketch: INT64_MAX: its bucket [127 << 56, INT64_MAX], no overflow (got %lld, %lld)",
	      (long long)from, (long long)to);
	sketch_free(&s);
}

/* ---- overlap ---- */

struct iv {
	uint64_t proc;
	int64_t start, end;
	bool compute;
};

static int64_t unoverlapped(const struct iv *iv, int n, uint64_t *late)
{
	struct overlap o = { 0 };
	int rc = 0;
	int64_t u;

	for (int i = 0; i < n; i++)
		rc |= iv[i].compute ? overlap_add_compute(&o, iv[i].proc, iv[i].start, iv[i].end) :
				      overlap_add_io(&o, iv[i].proc, iv[i].start, iv[i].end,
						     (uint32_t)iv[i].start % 2 + 1);
	rc |= overlap_finish(&o);
	u = rc ? -1 : o.unoverlapped;
	/* tags: calls starting at odd ns are tag 2, at even ones tag 1 */
	if (!rc && overlap_tag_ns(&o, 1) + overlap_tag_ns(&o, 2) != u)
		u = -2;
	if (late)
		*late = o.late;
	overlap_free(&o);
	return u;
}

static void check_overlap(void)
{
	const struct iv alone[] = { { 1, 0, 100, false } };
	const struct iv half[] = { { 1, 0, 100, false }, { 1, 50, 150, true } };
	const struct iv half_first[] = { { 1, 50, 150, true }, { 1, 0, 100, false } };
	const struct iv other_proc[] = { { 2, 0, 100, true }, { 1, 0, 100, false } };
	const struct iv two_gaps[] = { { 1, 10, 20, true }, { 1, 30, 40, true },
				       { 1, 0, 50, false } };
	const struct iv nested[] = { { 1, 20, 30, true }, { 1, 0, 100, true },
				     { 1, 10, 40, false }, { 1, 90, 120, false } };
	const struct iv backwards[] = { { 1, 100, 50, false } };
	const struct iv huge[] = { { 1, 0, DUR_MAX_NS, false }, { 1, 0, DUR_MAX_NS, false },
				   { 1, 0, DUR_MAX_NS, false } };
	uint64_t late;
	int64_t u;

	CHECK(unoverlapped(NULL, 0, &late) == 0 && late == 0, "overlap: nothing: 0 ns");
	CHECK((u = unoverlapped(alone, 1, NULL)) == 100, "overlap: one call, no compute: 100 ns (got %lld)",
	      (long long)u);
	CHECK((u = unoverlapped(half, 2, NULL)) == 50,
	      "overlap: [0,100) under compute [50,150): 50 ns (got %lld)", (long long)u);
	CHECK((u = unoverlapped(half_first, 2, NULL)) == 50,
	      "overlap: the same, compute given first: 50 ns (got %lld)", (long long)u);
	CHECK((u = unoverlapped(other_proc, 2, NULL)) == 100,
	      "overlap: another process's compute covers nothing: 100 ns (got %lld)",
	      (long long)u);
	CHECK((u = unoverlapped(two_gaps, 3, NULL)) == 30,
	      "overlap: [0,50) under [10,20) and [30,40): 30 ns (got %lld)", (long long)u);
	CHECK((u = unoverlapped(nested, 4, NULL)) == 20,
	      "overlap: [10,40) and [90,120) under [0,100) ⊃ [20,30): 20 ns (got %lld)",
	      (long long)u);
	CHECK((u = unoverlapped(backwards, 1, NULL)) == 0,
	      "overlap: a call that ends before it starts: 0 ns (got %lld)", (long long)u);
	CHECK((u = unoverlapped(huge, 3, NULL)) == INT64_MAX,
	      "overlap: 3 calls of 2^62 ns: held at INT64_MAX (got %lld)", (long long)u);
}

/* ---- events ---- */

static void check_kinds(void)
{
	struct ev_input in;
	const char *path = trace("kinds.pfw",
		"{'ph':'X','ts':1,'dur':2}\n"
		"{'name':'','cat':'','ph':'X','ts':1,'dur':2}\n"
		"{'name':'aten::mm','ph':'X','ts':1,'dur':2}\n"
		"{'name':'save','ph':'X','ts':1,'dur':2}\n"
		"{'name':'mm','cat':'cpu_op','ph':'X','ts':1,'dur':2}\n"
		"{'name':'k','cat':'kernel','ph':'X','ts':1,'dur':2}\n"
		"{'name':'step','cat':'compute','ph':'X','ts':1,'dur':2}\n"
		"{'name':'fork','cat':'PROC','ph':'X','ts':1,'dur':2}\n"
		"{'name':'a::b','cat':'IOCTL','ph':'X','ts':1,'dur':2}\n"
		"{'name':'read','cat':'STDIO','ph':'X','ts':1,'dur':2}\n"
		"{'name':'epoch','cat':'ai','ph':'X','ts':1,'dur':2}\n");
	static const enum ev_kind want[] = { EV_REGION, EV_REGION, EV_COMPUTE, EV_REGION,
					     EV_COMPUTE, EV_COMPUTE, EV_COMPUTE, EV_OTHER,
					     EV_OTHER, EV_IO, EV_REGION };
	static const char *const what[] = {
		"no name and no cat", "an empty name and cat", "'aten::mm', no cat",
		"'save', no cat", "cat cpu_op", "cat kernel", "cat compute", "cat PROC",
		"cat IOCTL with '::' in its name", "cat STDIO", "cat ai",
	};
	struct got g;

	ev_input_init(&in, path);
	g = read_evs(path, &in);
	CHECK(g.rc == 0 && g.n == 11, "events: 11 events counted (rc %d, n %d: %s)", g.rc, g.n,
	      g.err);
	for (int i = 0; i < 11 && i < g.n; i++)
		CHECK(g.e[i].ev.kind == want[i], "events: %s: kind %d (got %d)", what[i], want[i],
		      g.e[i].ev.kind);
	CHECK(g.n && !g.e[0].ev.name.len && g.e[0].ev.start == 1000 && g.e[0].ev.end == 3000 &&
	      g.e[0].ev.calls == 1 && g.e[0].ev.epoch == -1 && g.e[0].ev.step == -1 &&
	      g.e[0].ev.parent == -1 && g.e[0].ev.id == -1 && !g.e[0].ev.has_ids,
	      "events: no name: [1000, 3000) ns, 1 call, no epoch, step, id or parent");
	ev_input_free(&in);
}

static void check_args(void)
{
	struct ev_input in;
	const char *path = trace("args.pfw",
		"{'name':'read','cat':'POSIX','pid':7,'tid':8,'ph':'X','ts':10,'dur':5,"
		"'args':{'ret':4096,'fname':'/d/a','epoch':2,'step':9,'phase':'load','phase_cat':'ai'}}\n"
		"{'name':'read','cat':'POSIX','pid':7,'tid':8,'ph':'X','ts':20,'dur':5,'args':{'ret':-1}}\n"
		"{'name':'write','cat':'POSIX','pid':7,'ph':'X','ts':30,'dur':5,'args':{'ret':8,'calls':7}}\n"
		"{'name':'lseek','cat':'POSIX','pid':7,'ph':'X','ts':30,'dur':5,'args':{'ret':8,'calls':0}}\n"
		"{'name':'read','cat':'POSIX','pid':7,'ph':'X','ts':30,'dur':5,'args':{'calls':-3}}\n"
		"{'name':'read','cat':'POSIX','pid':7,'ph':'X','ts':30,'dur':5,'args':{'calls':'x'}}\n"
		"{'id':5,'name':'r','cat':'ai','pid':7,'ph':'X','ts':1,'dur':50,"
		"'args':{'event_id':5,'p_idx':3}}\n"
		"{'name':'r','cat':'ai','pid':'host','tid':'t','ph':'X','ts':1,'dur':50,'args':{'p_idx':3}}\n");
	struct got g;
	const struct ev *e;

	ev_input_init(&in, path);
	g = read_evs(path, &in);
	CHECK(g.rc == 0 && g.n == 8, "args: 8 events (rc %d, n %d: %s)", g.rc, g.n, g.err);
	if (g.n != 8)
		goto out;
	e = &g.e[0].ev;
	CHECK(e->kind == EV_IO && e->bytes_kind == SC_BYTES_READ && e->bytes == 4096 &&
	      e->pid == 7 && e->tid == 8 && e->start == 10000 && e->end == 15000 &&
	      e->epoch == 2 && e->step == 9 && !strcmp(g.e[0].file, "/d/a") &&
	      !strcmp(g.e[0].phase, "load") && !strcmp(g.e[0].phase_cat, "ai"),
	      "args: a read: 4096 bytes read, pid 7 tid 8, [10, 15) µs, epoch 2, step 9, "
	      "file /d/a, phase ai/load");
	CHECK(g.e[1].ev.bytes == 0 && g.e[1].ev.bytes_kind == SC_BYTES_READ,
	      "args: a read that failed (ret -1) moved 0 bytes (got %lld)",
	      (long long)g.e[1].ev.bytes);
	CHECK(g.e[2].ev.calls == 7 && g.e[2].ev.bytes_kind == SC_BYTES_WRITE &&
	      g.e[2].ev.bytes == 8, "args: a folded total of 7 writes: calls 7, 8 bytes written");
	CHECK(g.e[3].ev.calls == 1 && g.e[3].ev.bytes_kind == SC_BYTES_NONE && !g.e[3].ev.bytes,
	      "args: calls 0 counts as 1; an lseek moves no bytes (got calls %lld)",
	      (long long)g.e[3].ev.calls);
	CHECK(g.e[4].ev.calls == 1 && g.e[5].ev.calls == 1,
	      "args: calls -3 and \"x\" count as 1 (got %lld, %lld)",
	      (long long)g.e[4].ev.calls, (long long)g.e[5].ev.calls);
	CHECK(g.e[6].ev.has_ids && g.e[6].ev.id == 5 && g.e[6].ev.parent == 3,
	      "args: DFTracer's ids: id 5, parent 3");
	CHECK(!g.e[7].ev.has_ids && g.e[7].ev.pid == 0 && g.e[7].ev.tid == 0,
	      "args: a p_idx without an id is no link; string pid and tid are 0");
out:
	ev_input_free(&in);
}

static void check_meta(void)
{
	struct ev_input in;
	const char *path = trace("trace-3-of-8.pfw",
		"{'name':'process_name','ph':'M','pid':7,'args':{'name':'rank 5 \xc2\xb7 python3 [7] @n1'}}\n"
		"{'name':'process_name','ph':'M','pid':8,'args':{'name':'worker'}}\n"
		"{'name':'process_name','ph':'M','pid':8,'args':{'name':'worker2 [8]'}}\n"
		"{'name':'PR','ph':'M','pid':9,'args':{'name':'rank','value':'6'}}\n"
		"{'name':'PR','ph':'M','pid':10,'args':{'name':'rank','value':11}}\n"
		"{'name':'PR','ph':'M','pid':11,'args':{'name':'rank','value':-2}}\n"
		"{'name':'start','cat':'dftracer','ph':'X','pid':1,'ts':1,'dur':0,'args':{'rank':4}}\n"
		"{'name':'x','cat':'dftrace.profiler','ph':'X','pid':12,'ts':1,'dur':0,'args':{'rank':2}}\n"
		"{'name':'i','cat':'POSIX','ph':'i','pid':1,'ts':1}\n"
		"{'name':'nots','cat':'POSIX','ph':'X','pid':1}\n");
	struct got g;
	int world = 0;

	ev_input_init(&in, path);
	CHECK(in.rank == 3, "meta: the rank a file's name says: trace-3-of-8 is 3 (got %d)",
	      in.rank);
	g = read_evs(path, &in);
	CHECK(g.rc == 0 && g.recs == 10 && g.n == 0,
	      "meta: metadata, lifecycle marks, instants and events without ts are not "
	      "counted (rc %d, recs %d, n %d: %s)", g.rc, g.recs, g.n, g.err);
	CHECK(ev_rank(&in, 7) == 5 && ev_comm(&in, 7) && !strcmp(ev_comm(&in, 7), "python3"),
	      "meta: 'rank 5 · python3 [7] @n1': rank 5, python3 (got %d, %s)", ev_rank(&in, 7),
	      ev_comm(&in, 7) ? ev_comm(&in, 7) : "NULL");
	CHECK(ev_comm(&in, 8) && !strcmp(ev_comm(&in, 8), "worker2"),
	      "meta: a second name replaces the first, without ' [8]' (got %s)",
	      ev_comm(&in, 8) ? ev_comm(&in, 8) : "NULL");
	CHECK(ev_rank(&in, 9) == 6 && ev_rank(&in, 10) == 11 && ev_rank(&in, 12) == 2,
	      "meta: PR ranks as a string and a number, a profiler line's rank "
	      "(got %d %d %d)", ev_rank(&in, 9), ev_rank(&in, 10), ev_rank(&in, 12));
	CHECK(ev_rank(&in, 11) == 4 && ev_rank(&in, 99) == 4 && !ev_comm(&in, 99),
	      "meta: a rank of -2 is no rank; others take the start mark's rank 4 (got %d %d)",
	      ev_rank(&in, 11), ev_rank(&in, 99));
	ev_input_free(&in);

	CHECK(rank_from_name("/x/run-1/trace-3-of-8.pfw.gz", &world) == 3 && world == 8,
	      "meta: rank_from_name: dir/run-1/trace-3-of-8: 3 of 8");
	CHECK(rank_from_name("trace-8-of-8.pfw", NULL) == -1 &&
	      rank_from_name("trace.pfw", NULL) == -1 && rank_from_name("", NULL) == -1,
	      "meta: rank_from_name: 8 of 8, none, and an empty name: -1");
}

/* ---- fhash ---- */

static void check_fhash(void)
{
	struct ev_input in;
	const char *path = trace("fh.pfw",
		"{'name':'FH','cat':'dftracer','ph':'M','pid':1,'args':{'name':'/a','value':'00ab'}}\n"
		"{'name':'FH','cat':'dftracer','ph':'M','pid':1,'args':{'name':'/b','value':3e8}}\n"
		"{'name':'FH','cat':'dftracer','ph':'M','pid':1,'args':{'name':'/c','value':'00ab'}}\n"
		"{'name':'FH','cat':'dftracer','ph':'M','pid':1,'args':{'name':'/d'}}\n"
		"{'name':'FH','cat':'dftracer','ph':'M','pid':1,'args':{'name':'','value':'e'}}\n"
		"{'name':'read','cat':'POSIX','ph':'X','ts':1,'dur':1,'args':{'fhash':'00ab'}}\n"
		"{'name':'read','cat':'POSIX','ph':'X','ts':1,'dur':1,'args':{'fhash':'3e8'}}\n"
		"{'name':'read','cat':'POSIX','ph':'X','ts':1,'dur':1,'args':{'fhash':'ffff'}}\n"
		"{'name':'read','cat':'POSIX','ph':'X','ts':1,'dur':1,'args':{'fname':'/z','fhash':'00ab'}}\n"
		"{'name':'read','cat':'POSIX','ph':'X','ts':1,'dur':1,'args':{'fhash':'e'}}\n");
	const struct fh_path *f;
	struct got g;

	ev_input_init(&in, path);
	g = read_evs(path, &in);
	CHECK(g.rc == 0 && g.n == 5, "fhash: 5 events (rc %d, n %d: %s)", g.rc, g.n, g.err);
	if (g.n == 5) {
		CHECK(!strcmp(g.e[0].file, "/a"), "fhash: '00ab' names /a, the first FH line of it "
		      "(got '%s')", g.e[0].file);
		CHECK(!strcmp(g.e[1].file, "/b"), "fhash: \"3e8\" finds the FH line's number 3e8 "
		      "(got '%s')", g.e[1].file);
		CHECK(!g.e[2].file[0], "fhash: an unknown hash: no file (got '%s')", g.e[2].file);
		CHECK(!strcmp(g.e[3].file, "/z"), "fhash: fname wins over fhash (got '%s')",
		      g.e[3].file);
		CHECK(!g.e[4].file[0], "fhash: an empty path: no file (got '%s')", g.e[4].file);
	}
	f = fh_table_get(&in.fh, SPAN_LIT("\"00ab\""));
	CHECK(f && f->len == 2 && !memcmp(f->text, "/a", 2),
	      "fhash: fh_table_get of the quoted token finds /a");
	CHECK(!fh_table_get(&in.fh, SPAN_LIT("")), "fhash: an empty token finds nothing");
	ev_input_free(&in);

	in = (struct ev_input){ 0 };
	CHECK(!fh_table_get(&in.fh, SPAN_LIT("1")), "fhash: an empty table finds nothing");
	ev_input_free(&in);
}

/* ---- profile, through its public API ---- */

/* Input number input into p, with its metadata in *in (made ready). */
static int feed_into(struct profile *p, const char *path, uint16_t input, struct ev_input *in)
{
	struct reader *r;
	struct rec e;
	struct ev ev;
	char err[256];
	int rc = reader_open(&r, path, 0, err, sizeof(err));

	if (rc)
		return rc;
	in->by_start = reader_meta(r)->container;
	while ((rc = reader_next(r, &e, err, sizeof(err))) > 0)
		if (ev_from_rec(in, &e, &ev) && (rc = profile_add(p, in, input, &ev)))
			break;
	reader_close(r);
	return rc;
}

static int feed(struct profile *p, const char *path, uint16_t input)
{
	struct ev_input in;
	int rc;

	ev_input_init(&in, path);
	rc = feed_into(p, path, input, &in);
	ev_input_free(&in);
	return rc;
}

static const struct row *row_named(const struct profile *p, int by, const char *key0,
				   const char *key1)
{
	for (uint32_t i = 0; i < p->by[by].n; i++) {
		const struct row *r = &p->by[by].rows[i];

		if (!strcmp(row_part(r, 0), key0) && (!key1 || !strcmp(row_part(r, 1), key1)))
			return r;
	}
	return NULL;
}

static void check_specs(void)
{
	char *bad[] = { "op,bogus" }, *five[] = { "op,file,rank,epoch,step" };
	struct profile p;
	char err[256] = "";
	int rc;

	CHECK(by_spec_check("phase,op", err, sizeof(err)) == 0 && by_key_parse("step", 4) == BY_STEP &&
	      by_key_parse("ste", 3) == -1 && !strcmp(by_key_name(BY_FILE), "file"),
	      "profile: 'phase,op' is a grouping; keys by name and back");
	rc = profile_init(&p, bad, 1, err, sizeof(err));
	CHECK(rc == -EINVAL && !strcmp(err, "unknown grouping 'bogus' (op, phase, file, process, "
				       "rank, epoch, step)"),
	      "profile: an unknown grouping is refused, named (rc %d: %s)", rc, err);
	profile_free(&p);
	rc = profile_init(&p, five, 1, err, sizeof(err));
	CHECK(rc == -EINVAL && !strcmp(err, "more than 4 groupings in 'op,file,rank,epoch,step'"),
	      "profile: five keys are refused (rc %d: %s)", rc, err);
	profile_free(&p);
	rc = by_spec_check("", err, sizeof(err));
	CHECK(rc == -EINVAL, "profile: an empty grouping is refused (rc %d: %s)", rc, err);
}

static void check_profile_empty(void)
{
	char *specs[] = { "op" };
	struct profile p;
	struct row none = { .min = INT64_MAX };
	char err[256];
	int rc = profile_init(&p, specs, 1, err, sizeof(err));

	/* an empty file is refused by the reader: a trace of metadata alone */
	rc = rc ? rc : feed(&p, trace("meta.pfw", "{'name':'FH','ph':'M','pid':1,"
				      "'args':{'name':'/a','value':'1'}}\n"), 0);
	rc = rc ? rc : profile_finish(&p);
	CHECK(rc == 0 && p.by[0].n == 0 && p.head.events == 0 && p.head.t_min == 0 &&
	      p.head.t_max == 0 && p.head.io_time == 0 && p.head.unoverlapped_io == 0 &&
	      p.head.files == 0 && p.head.processes == 0,
	      "profile: no events: no rows, every headline figure 0 (rc %d)", rc);
	CHECK(row_quantile(&none, 0.5) == 0, "profile: a row with no calls: p50 0");
	profile_free(&p);
}

static void check_profile(void)
{
	char *specs[] = { "op", "phase,op", "file" };
	const char *path = trace("p.pfw",
		"{'name':'read','cat':'POSIX','pid':7,'ph':'X','ts':10,'dur':0.1,"
		"'args':{'ret':10,'fname':'/a','phase':'load','phase_cat':'ai'}}\n"
		"{'name':'read','cat':'POSIX','pid':7,'ph':'X','ts':20,'dur':0.2,"
		"'args':{'ret':20,'fname':'/a','phase':'load','phase_cat':'ai'}}\n"
		"{'name':'read','cat':'POSIX','pid':8,'ph':'X','ts':30,'dur':0.3,'args':{'ret':30,'fname':'/b'}}\n"
		"{'name':'write','cat':'POSIX','pid':8,'ph':'X','ts':40,'dur':1,'args':{'ret':5,'fname':'/b'}}\n"
		"{'name':'load','cat':'ai','pid':7,'ph':'X','ts':5,'dur':45}\n"
		"{'ph':'X','pid':8,'ts':50,'dur':1}\n");
	const struct row *r;
	struct profile p;
	char err[256];
	int rc = profile_init(&p, specs, 3, err, sizeof(err));

	rc = rc ? rc : feed(&p, path, 0);
	rc = rc ? rc : profile_finish(&p);
	CHECK(rc == 0 && p.by[0].n == 4 && p.by[2].n == 3,
	      "profile: rows by op: read, write, load, - ; by file: /a, /b, - (rc %d, %u, %u)", rc,
	      p.by[0].n, p.by[2].n);
	r = row_named(&p, 0, "read", NULL);
	CHECK(r && r->calls == 3 && r->total == 600 && r->self == 600 && r->min == 100 &&
	      r->max == 300 && r->bytes == 60 && r->data_time == 600 && !r->region_self,
	      "profile: op read: 3 calls, 600 ns, min 100, max 300, 60 bytes in 600 ns");
	CHECK(r && row_quantile(r, 0) == 100 && row_quantile(r, 0.5) == 200 &&
	      row_quantile(r, 1) == 300,
	      "profile: op read: p0 100, p50 200, p100 300 (held at max) (got %lld %lld %lld)",
	      r ? (long long)row_quantile(r, 0) : -1, r ? (long long)row_quantile(r, 0.5) : -1,
	      r ? (long long)row_quantile(r, 1) : -1);
	r = row_named(&p, 0, "load", NULL);
	CHECK(r && r->calls == 1 && r->total == 45000 && r->region_self == 45000 && !r->bytes,
	      "profile: op load, a region: 45 µs, all of it its own");
	r = row_named(&p, 0, "-", NULL);
	CHECK(r && r->calls == 1 && r->total == 1000,
	      "profile: an event with no name is the row '-', 1 call of 1 µs");
	r = row_named(&p, 1, "ai/load", "read");
	CHECK(r && r->calls == 2 && r->total == 300,
	      "profile: phase,op: ai/load read: 2 calls, 300 ns");
	r = row_named(&p, 1, "-", "read");
	CHECK(r && r->calls == 1 && r->total == 300, "profile: phase,op: - read: 1 call, 300 ns");
	r = row_named(&p, 2, "/b", NULL);
	CHECK(r && r->calls == 2 && r->bytes == 35,
	      "profile: file /b: 2 calls, 35 bytes (a read and a write)");
	CHECK(p.head.events == 6 && p.head.t_min == 5000 && p.head.t_max == 51000 &&
	      p.head.io_time == 1600 && p.head.bytes_read == 60 && p.head.bytes_written == 5 &&
	      p.head.data_time == 1600 && p.head.files == 2 && p.head.processes == 2 &&
	      p.head.unoverlapped_io == 1600,
	      "profile: headline: 6 events over [5, 51) µs, 1600 ns of I/O, 60 B read, 5 B "
	      "written, 2 files, 2 processes, 1600 ns unoverlapped (regions are no compute)");
	profile_free(&p);
}

/* A row's Total, Self and Avg (ns) are these. */
static bool row_is(const struct row *r, uint64_t calls, int64_t total, int64_t self, int64_t avg)
{
	return r && r->calls == calls && r->total == total && r->self == self && row_avg(r) == avg;
}

/* A region inside a region, calls inside both, as a trace writes them
 * (children first, by DFTracer's ids; µs):
 *   train/step [0, 100)  id 1
 *     data/fetch [10, 50)  id 2
 *       read /a [20, 30)  id 3;  read /a [35, 40)  id 4
 *     write /b [60, 80)  id 5
 * Each row's Total holds an event once, where its parent is in another
 * row; Self is Total less the children in other rows: the Selfs of each
 * grouping add up to the 100 µs covered, and no row passes 100% of it. */
static void check_profile_nested(void)
{
	char *specs[] = { "phase", "op", "process", "file" };
	const char *text =
		"{'id':3,'name':'read','cat':'POSIX','pid':1,'tid':1,'ph':'X','ts':20,'dur':10,'args':{'ret':100,'fname':'/a','p_idx':2,'phase_cat':'data','phase':'fetch'}}\n"
		"{'id':4,'name':'read','cat':'POSIX','pid':1,'tid':1,'ph':'X','ts':35,'dur':5,'args':{'ret':100,'fname':'/a','p_idx':2,'phase_cat':'data','phase':'fetch'}}\n"
		"{'id':2,'name':'fetch','cat':'data','pid':1,'tid':1,'ph':'X','ts':10,'dur':40,'args':{'p_idx':1}}\n"
		"{'id':5,'name':'write','cat':'POSIX','pid':1,'tid':1,'ph':'X','ts':60,'dur':20,'args':{'ret':9,'fname':'/b','p_idx':1,'phase_cat':'train','phase':'step'}}\n"
		"{'id':1,'name':'step','cat':'train','pid':1,'tid':1,'ph':'X','ts':0,'dur':100,'args':{'p_idx':-1}}\n";
	struct profile p;
	char err[256];
	int rc = profile_init(&p, specs, 4, err, sizeof(err));

	rc = rc ? rc : feed(&p, trace("nested.pfw", text), 0);
	rc = rc ? rc : profile_finish(&p);
	CHECK(rc == 0 && p.head.t_max - p.head.t_min == 100000, "nested: 100 us of wall (rc %d)", rc);
	CHECK(row_is(row_named(&p, 0, "train/step", NULL), 2, 100000, 60000, 60000),
	      "nested, by phase: train/step: the region and its write, Total 100 us (the write "
	      "is inside it), Self 60 (less data/fetch's 40), Avg 60");
	CHECK(row_is(row_named(&p, 0, "data/fetch", NULL), 3, 40000, 40000, 18333),
	      "nested, by phase: data/fetch: the region and its 2 reads, Total and Self 40 us");
	CHECK(row_is(row_named(&p, 1, "step", NULL), 1, 100000, 40000, 100000) &&
	      row_is(row_named(&p, 1, "fetch", NULL), 1, 40000, 25000, 40000) &&
	      row_is(row_named(&p, 1, "read", NULL), 2, 15000, 15000, 7500) &&
	      row_is(row_named(&p, 1, "write", NULL), 1, 20000, 20000, 20000),
	      "nested, by op: step's Self 40 us (less fetch and the write), fetch's 25 (less "
	      "its reads); the calls' Total is their Self");
	CHECK(p.by[2].n == 1 && row_is(&p.by[2].rows[0], 5, 100000, 100000, 35000),
	      "nested, by process: one row of 100 us, Total and Self, not 175");
	CHECK(row_is(row_named(&p, 3, "-", NULL), 2, 100000, 65000, 70000) &&
	      row_is(row_named(&p, 3, "/a", NULL), 2, 15000, 15000, 7500) &&
	      row_is(row_named(&p, 3, "/b", NULL), 1, 20000, 20000, 20000),
	      "nested, by file: the regions' row '-' 100 us, Self 65 (less the calls on files)");
	profile_free(&p);
}

/* A trace of n preads of /f, 10 us each: the first small ones of 4 KiB
 * (the rest 1 MiB), the first jumps ones placed apart (the calls after
 * them in order); then meta stats of meta_us each. The wall time is 1 ms
 * or more. */
static const char *plant(const char *name, int n, int small, int jumps, int meta, int meta_us)
{
	static char text[1 << 16];
	size_t len = 0;
	long long off = 0;

	for (int i = 0; i < n; i++) {
		long long size = i < small ? 4096 : 1 << 20;
		long long at = i < jumps ? (long long)(n - i) * (2 << 20) : off;

		len += snprintf(text + len, sizeof(text) - len,
				"{'name':'pread','cat':'POSIX','pid':1,'tid':1,'ph':'X','ts':%d,'dur':10,"
				"'args':{'ret':%lld,'fname':'/f','offset':%lld}}\n", i * 10, size, at);
		off = at + size;
	}
	for (int i = 0; i < meta; i++)
		len += snprintf(text + len, sizeof(text) - len,
				"{'name':'stat','cat':'POSIX','pid':1,'tid':1,'ph':'X','ts':%d,'dur':%d,"
				"'args':{'ret':0,'fname':'/g'}}\n", n * 10 + i * meta_us, meta_us);
	len += snprintf(text + len, sizeof(text) - len,
			"{'name':'end','cat':'x','pid':1,'tid':1,'ph':'X','ts':0,'dur':1000}\n");
	return trace(name, text);
}

/* The rules found in a planted trace, as "rule where" joined by ';'. */
static const char *found(const char *path, double min_share)
{
	static char out[512];
	char *specs[] = { "op" };
	struct profile p;
	char err[256];
	size_t len = 0;
	int rc = profile_init(&p, specs, 1, err, sizeof(err));

	if (!rc)
		profile_find(&p, min_share);
	rc = rc ? rc : feed(&p, path, 0);
	rc = rc ? rc : profile_finish(&p);
	out[0] = 0;
	for (uint32_t i = 0; !rc && i < p.findings.n; i++) {
		const struct finding *x = &p.findings.list[i];

		if (x->rank >= 0)
			len += snprintf(out + len, sizeof(out) - len, "%s%s rank %lld", i ? ";" : "",
					finding_rule_name(x->rule), (long long)x->rank);
		else
			len += snprintf(out + len, sizeof(out) - len, "%s%s %s", i ? ";" : "",
					finding_rule_name(x->rule),
					x->file ? x->file : x->phase ? x->phase : x->process);
	}
	profile_free(&p);
	return rc ? "error" : out;
}

/* /f opened, first reads of 1 MiB in order with read(), then again
 * preads of those MiBs in turn, in epoch again_epoch (the first in epoch
 * 1). */
/* One process opening /f nfds times (fds 3 on) and reading it 1 MiB at
 * a time through each fd in turn, 6 MiB in all through each: with 3,
 * two thirds of the reads read again what the first fd read, which a
 * position kept per process (0 to 18 MiB) would not see. */
static const char *fd_plant(const char *name, int nfds)
{
	static char text[1 << 14];
	size_t len = 0;

	for (int fd = 3; fd < 3 + nfds; fd++)
		len += snprintf(text + len, sizeof(text) - len,
				"{'name':'open','cat':'POSIX','pid':1,'tid':1,'ph':'X','ts':%d,'dur':1,"
				"'args':{'ret':%d,'fname':'/f'}}\n", fd, fd);
	for (int i = 0; i < 6 * nfds; i++)
		len += snprintf(text + len, sizeof(text) - len,
				"{'name':'read','cat':'POSIX','pid':1,'tid':1,'ph':'X','ts':%d,'dur':10,"
				"'args':{'ret':1048576,'fname':'/f','fd':%d}}\n",
				10 + i * 10, 3 + i % nfds);
	return trace(name, text);
}

static const char *reread_plant(const char *name, int first, int again, int again_epoch)
{
	static char text[1 << 14];
	size_t len = snprintf(text, sizeof(text),
			      "{'name':'open','cat':'POSIX','pid':1,'tid':1,'ph':'X','ts':0,'dur':1,"
			      "'args':{'ret':3,'fname':'/f','epoch':1}}\n");

	for (int i = 0; i < first + again; i++)
		len += snprintf(text + len, sizeof(text) - len,
				"{'name':'%s','cat':'POSIX','pid':1,'tid':1,'ph':'X','ts':%d,'dur':10,"
				"'args':{'ret':1048576,'fname':'/f','epoch':%d,'offset':%lld}}\n",
				i < first ? "read" : "pread", 10 + i * 10, i < first ? 1 : again_epoch,
				i < first ? -1LL : (long long)(i % first) << 20);
	return trace(name, text);
}

/* n steps of 100 us on a thread of process "job", each a dataloader
 * region named name of wait_us at its start; then a wait with no next. */
static const char *loader_plant(const char *file, const char *name, int n, int wait_us)
{
	static char text[1 << 14];
	size_t len = snprintf(text, sizeof(text),
			      "{'name':'process_name','ph':'M','pid':1,'args':{'name':'job'}}\n");

	for (int i = 0; i <= n; i++)
		len += snprintf(text + len, sizeof(text) - len,
				"{'name':'%s','cat':'dataloader','pid':1,'tid':1,'ph':'X','ts':%d,"
				"'dur':%d}\n", name, i * 100, wait_us);
	return trace(file, text);
}

/* n steps of 100 us on a thread of process "job" by args.step, no wait
 * regions: each a read of read_us at its start. */
static const char *read_steps_plant(const char *file, int n, int read_us)
{
	static char text[1 << 14];
	size_t len = snprintf(text, sizeof(text),
			      "{'name':'process_name','ph':'M','pid':1,'args':{'name':'job'}}\n");

	for (int i = 0; i <= n; i++)
		len += snprintf(text + len, sizeof(text) - len,
				"{'name':'read','cat':'POSIX','pid':1,'tid':1,'ph':'X','ts':%d,"
				"'dur':%d,'args':{'ret':4096,'fname':'/in','step':%d}}\n",
				i * 100, read_us, i + 1);
	return trace(file, text);
}

/* The rank_imbalance findings of n rank files, rank r's text made by
 * fn(r, n, arg), as "rank R NS[ COLLECTIVES];...". */
static const char *rank_findings(int n, void (*fn)(char *text, size_t size, int r, int n, int arg),
				 int arg)
{
	static char out[256];
	char *specs[] = { "op" }, name[32], text[1024];
	struct profile p;
	char err[256];
	int rc = profile_init(&p, specs, 1, err, sizeof(err));

	if (!rc)
		profile_find(&p, 0.01);
	for (int r = 0; !rc && r < n; r++) {
		snprintf(name, sizeof(name), "rank%d.pfw", r);
		fn(text, sizeof(text), r, n, arg);
		rc = feed(&p, trace(name, text), r);
	}
	rc = rc ? rc : profile_finish(&p);
	out[0] = 0;
	for (uint32_t i = 0; !rc && i < p.findings.n; i++) {
		const struct finding *x = &p.findings.list[i];
		size_t len = strlen(out);

		if (x->rule != RULE_RANK_IMBALANCE)
			continue;
		len += snprintf(out + len, sizeof(out) - len, "%srank %lld %lld", out[0] ? ";" : "",
				(long long)x->rank, (long long)x->ns);
		if (x->ev.collectives)
			snprintf(out + len, sizeof(out) - len, " %lld", (long long)x->ev.collectives);
	}
	profile_free(&p);
	return rc ? "error" : out;
}

/* Rank r (pid 100 + r) named by DFTracer's PR line. */
static int rank_head(char *text, size_t size, int r)
{
	return snprintf(text, size, "{'name':'PR','cat':'dftracer','pid':%d,'tid':%d,'ph':'M',"
			"'args':{'name':'rank','value':'%d'}}\n", 100 + r, 100 + r, r);
}

/* One read of 100 us, the last rank's of last_us. */
static void one_read(char *text, size_t size, int r, int n, int last_us)
{
	int len = rank_head(text, size, r);

	snprintf(text + len, size - len,
		 "{'name':'read','cat':'POSIX','pid':%d,'tid':%d,'ph':'X','ts':0,'dur':%d,"
		 "'args':{'ret':4096,'fname':'/s%d'}}\n",
		 100 + r, 100 + r, r == n - 1 ? last_us : 100, r);
}

/* Three all_reduces 100 us apart, each ending for all 40 us after its
 * start, the last rank coming to the second and third extra us late
 * (arg & 0xffff); with arg & OVERLAP, rank 0 also has a barrier inside
 * its first all_reduce (no own time). */
#define OVERLAP 0x10000
static void three_steps(char *text, size_t size, int r, int n, int arg)
{
	int x = r == n - 1 ? arg & 0xffff : 0, len = rank_head(text, size, r);

	for (int c = 0; c < 3; c++)
		len += snprintf(text + len, size - len,
				"{'name':'all_reduce','cat':'comm','pid':%d,'tid':%d,'ph':'X','ts':%d,"
				"'dur':%d,'args':{}}\n", 100 + r, 100 + r, c * 100 + (c ? x : 0),
				40 - (c ? x : 0));
	if (arg & OVERLAP && r == 0)
		snprintf(text + len, size - len, "{'name':'barrier','cat':'comm','pid':100,'tid':100,"
			 "'ph':'X','ts':2,'dur':5,'args':{}}\n");
}

/* Each rule's thresholds, on both sides. */
static void check_findings_rules(void)
{
	static const struct {
		int n, small, jumps, meta, meta_us;
		double share;
		const char *want, *what;
	} cases[] = {
		{ 16, 9, 0, 0, 0, 0.01, "small_io /f", "small_io: 9 of 16 calls under 64 KiB" },
		{ 16, 8, 0, 0, 0, 0.01, "", "small_io: 8 of 16, half: none" },
		{ 15, 15, 0, 0, 0, 0.01, "", "small_io: 15 calls, fewer than 16: none" },
		{ 16, 16, 0, 0, 0, 0.2, "", "small_io: 160 us of 1 ms, under a 20% share: none" },
		{ 16, 0, 10, 0, 0, 0.01, "random_access /f", "random_access: 9 of 16 calls not "
		  "where the last ended (the first of 10 placed apart has no last)" },
		{ 16, 0, 9, 0, 0, 0.01, "", "random_access: 8 of 16 jumps, half: none" },
		{ 16, 0, 0, 17, 10, 0.01, "metadata_heavy -",
		  "metadata_heavy: 170 us of metadata in 17 calls against 160 us of data" },
		{ 16, 0, 0, 16, 10, 0.01, "", "metadata_heavy: 160 us against 160 us: none" },
		{ 4, 0, 0, 15, 100, 0.01, "", "metadata_heavy: 1.5 ms in 15 calls against 40 us "
		  "of data, fewer than 16 calls: none" },
	};
	static const char *const ckpt =
		"{'name':'write','cat':'POSIX','pid':1,'tid':1,'ph':'X','ts':0,'dur':50,'args':{'ret':4096,'fname':'/c','phase_cat':'checkpoint','phase':'capture'}}\n"
		"{'name':'fsync','cat':'POSIX','pid':1,'tid':1,'ph':'X','ts':50,'dur':%d,'args':{'ret':0,'fname':'/c','phase_cat':'checkpoint','phase':'capture'}}\n"
		"{'name':'end','cat':'x','pid':1,'tid':1,'ph':'X','ts':0,'dur':1000}\n";
	char name[32], text[1024];

	snprintf(text, sizeof(text), ckpt, 50);
	CHECK_STREQ(found(trace("ckpt.pfw", text), 0.1), "checkpoint_blocking checkpoint/capture",
		    "checkpoint_blocking: a write and its fsync, 100 us of 1 ms");
	snprintf(text, sizeof(text), ckpt, 40);
	CHECK_STREQ(found(trace("ckpt2.pfw", text), 0.1), "",
		    "checkpoint_blocking: 90 us of 1 ms, under a 10%% share: none");
	/* the same checkpoint while another thread of its process computes:
	 * covered whole, then but for the fsync's last 30 us */
	snprintf(text, sizeof(text), ckpt, 50);
	strcat(text, "{'name':'forward','cat':'compute','pid':1,'tid':2,'ph':'X','ts':0,'dur':100}\n");
	CHECK_STREQ(found(trace("ckpt4.pfw", text), 0.01), "",
		    "checkpoint_blocking: a checkpoint under another thread's compute: none");
	snprintf(text, sizeof(text), ckpt, 50);
	strcat(text, "{'name':'forward','cat':'compute','pid':1,'tid':2,'ph':'X','ts':0,'dur':70}\n");
	CHECK_STREQ(found(trace("ckpt5.pfw", text), 0.03),
		    "checkpoint_blocking checkpoint/capture;unoverlapped_io ? [1]",
		    "checkpoint_blocking: compute over all but 30 us of 1 ms, over a 3%% share "
		    "(and the process's I/O outside compute, the same 30 us)");
	CHECK_STREQ(found(trace("ckpt5.pfw", text), 0.04), "",
		    "checkpoint_blocking: the same 30 us, under a 4%% share: none");
	snprintf(text, sizeof(text), "%.*s", (int)(strchr(ckpt, '\n') - ckpt + 1), ckpt);
	strcat(text, strrchr(ckpt, '{'));
	CHECK_STREQ(found(trace("ckpt3.pfw", text), 0.01), "",
		    "checkpoint_blocking: writes with no sync: none");
	static const char *const io =
		"{'name':'process_name','ph':'M','pid':1,'args':{'name':'job'}}\n"
		"{'name':'forward','cat':'compute','pid':1,'tid':1,'ph':'X','ts':0,'dur':500}\n"
		"{'name':'read','cat':'POSIX','pid':1,'tid':1,'ph':'X','ts':%d,'dur':200,'args':{'ret':9,'fname':'/r'}}\n";

	snprintf(text, sizeof(text), io, 600);
	CHECK_STREQ(found(trace("io1.pfw", text), 0.1), "unoverlapped_io job [1]",
		    "unoverlapped_io: a read after the process's compute");
	snprintf(text, sizeof(text), io, 450);
	CHECK_STREQ(found(trace("io2.pfw", text), 0.2), "unoverlapped_io job [1]",
		    "unoverlapped_io: a read 50 us under compute: 150 us of 650, over a 20%% "
		    "share");
	CHECK_STREQ(found(trace("io2.pfw", text), 0.3), "",
		    "unoverlapped_io: the same, under a 30%% share: none");
	snprintf(text, sizeof(text), io, 100);
	CHECK_STREQ(found(trace("io3.pfw", text), 0.01), "",
		    "unoverlapped_io: a read inside compute: none");
	CHECK_STREQ(found(trace("io4.pfw", strchr(strchr(text, '\n') + 1, '\n') + 1), 0.01),
		    "", "unoverlapped_io: a process with no compute: none");
	CHECK_STREQ(found(reread_plant("rr1.pfw", 7, 9, 1), 0.01), "repeated_reads /f",
		    "repeated_reads: 9 of 16 reads of the first MiB again");
	CHECK_STREQ(found(reread_plant("rr2.pfw", 8, 8, 1), 0.01), "",
		    "repeated_reads: 8 of 16, half: none");
	CHECK_STREQ(found(reread_plant("rr3.pfw", 4, 12, 1), 0.01), "repeated_reads /f",
		    "repeated_reads: 4 MiB read, then 12 times again");
	CHECK_STREQ(found(fd_plant("rr5.pfw", 3), 0.01), "repeated_reads /f",
		    "repeated_reads: three fds each reading the file: 12 of 18 reads again");
	CHECK_STREQ(found(fd_plant("rr6.pfw", 1), 0.01), "",
		    "repeated_reads: one fd reading it once: none");
	CHECK_STREQ(found(reread_plant("rr4.pfw", 4, 12, 2), 0.01), "",
		    "repeated_reads: the same, again in the next epoch: 8 of 12 reads there, "
		    "none");
	CHECK_STREQ(found(loader_plant("ld1.pfw", "fetch", 3, 51), 0.01), "input_bound job [1]",
		    "input_bound: 3 steps of 100 us, each 51 us waiting for fetch");
	CHECK_STREQ(found(loader_plant("ld2.pfw", "fetch.iter", 3, 50), 0.01), "",
		    "input_bound: each 50 us of 100 waiting (fetch.iter), half: none");
	CHECK_STREQ(found(loader_plant("ld3.pfw", "fetch", 2, 90), 0.01), "",
		    "input_bound: 2 steps, fewer than 3: none");
	CHECK_STREQ(found(loader_plant("ld4.pfw", "fetch.block", 3, 90), 0.01), "",
		    "input_bound: the loop's body (fetch.block) is no wait: none");
	static const char *const mapped =
		"{'name':'mmap_read','cat':'POSIX','pid':1,'tid':1,'ph':'X','ts':0,'dur':300,'args':{'ret':1048576,'fname':'/m','offset':0,'pages':256,'misses':%d}}\n"
		"{'name':'mmap_read','cat':'POSIX','pid':1,'tid':1,'ph':'X','ts':300,'dur':100,'args':{'ret':1048576,'fname':'/m','offset':1048576,'pages':256,'misses':0}}\n"
		"{'name':'end','cat':'x','pid':1,'tid':1,'ph':'X','ts':0,'dur':1000}\n";

	snprintf(text, sizeof(text), mapped, 16);
	CHECK_STREQ(found(trace("mm1.pfw", text), 0.3), "page_cache_misses /m",
		    "page_cache_misses: a run of mapped reads that read 16 pages from storage, "
		    "300 us of 1 ms");
	snprintf(text, sizeof(text), mapped, 15);
	CHECK_STREQ(found(trace("mm2.pfw", text), 0.01), "",
		    "page_cache_misses: 15 pages from storage, fewer than 16: none");
	snprintf(text, sizeof(text), mapped, 256);
	CHECK_STREQ(found(trace("mm3.pfw", text), 0.31), "",
		    "page_cache_misses: 300 us of 1 ms, under a 31%% share (the cached run's "
		    "100 us not counted): none");
	static const char *const gpu =
		"{'name':'process_name','ph':'M','pid':1,'args':{'name':'job'}}\n"
		"{'name':'%s','cat':'CUDA_DRIVER_API','pid':1,'tid':1,'ph':'X','ts':0,'dur':10}\n"
		"{'name':'read','cat':'POSIX','pid':1,'tid':2,'ph':'X','ts':%d,'dur':100,'args':{'ret':4096,'fname':'/d'}}\n"
		"{'name':'cuLaunchKernel','cat':'CUDA_DRIVER_API','pid':1,'tid':1,'ph':'X','ts':200,'dur':5}\n"
		"{'name':'read','cat':'POSIX','pid':1,'tid':2,'ph':'X','ts':300,'dur':100,'args':{'ret':4096,'fname':'/d'}}\n"
		"{'name':'end','cat':'x','pid':1,'tid':1,'ph':'X','ts':0,'dur':1000}\n";

	snprintf(text, sizeof(text), gpu, "cuStreamSynchronize", 20);
	CHECK_STREQ(found(trace("gpu1.pfw", text), 0.09), "gpu_waits_on_io job [1]",
		    "gpu_waits_on_io: a loader thread's 100 us read after the stream sync, "
		    "before the next launch (the one after it, the GPU busy, not counted)");
	snprintf(text, sizeof(text), gpu, "cuStreamSynchronize", 150);
	CHECK_STREQ(found(trace("gpu2.pfw", text), 0.05), "gpu_waits_on_io job [1]",
		    "gpu_waits_on_io: a read half in the gap: 50 us of 1 ms, over a 5%% share");
	CHECK_STREQ(found(trace("gpu2.pfw", text), 0.06), "",
		    "gpu_waits_on_io: the same, under a 6%% share: none");
	snprintf(text, sizeof(text), gpu, "cuMemcpyHtoD_v2", 20);
	CHECK_STREQ(found(trace("gpu3.pfw", text), 0.01), "",
		    "gpu_waits_on_io: no wait for the device before the read: none");
	CHECK_STREQ(found(read_steps_plant("rs1.pfw", 3, 51), 0.01), "input_bound job [1]",
		    "input_bound: 3 steps of 100 us by args.step, each 51 us in reads, no wait "
		    "regions");
	CHECK_STREQ(found(read_steps_plant("rs2.pfw", 3, 50), 0.01), "",
		    "input_bound: each 50 us of 100 in reads, half: none");
	CHECK_STREQ(found(read_steps_plant("rs3.pfw", 2, 90), 0.01), "",
		    "input_bound: 2 steps by args.step, fewer than 3: none");
	CHECK_STREQ(rank_findings(4, one_read, 201), "rank 3 101000",
		    "rank_imbalance: 201 us of I/O against the median's 100: 101 us past it");
	CHECK_STREQ(rank_findings(4, one_read, 200), "", "rank_imbalance: twice the median: none");
	CHECK_STREQ(rank_findings(2, one_read, 900), "", "rank_imbalance: 2 ranks, fewer than 3: none");
	/* own time 120 us a rank; the last's 120 + 2 * extra */
	CHECK_STREQ(rank_findings(4, three_steps, 20), "rank 3 40000 3",
		    "rank_imbalance by own time: 160 us against 120: 40 us past it");
	CHECK_STREQ(rank_findings(4, three_steps, 10), "", "rank_imbalance by own time: 140 us, under 1.25 times 120");
	CHECK_STREQ(rank_findings(4, three_steps, 20 | OVERLAP), "rank 3 40000 3",
		    "rank_imbalance by own time: a collective inside another adds none");
	CHECK_STREQ(rank_findings(2, three_steps, 30), "", "rank_imbalance by own time: 2 ranks: none");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(name, sizeof(name), "plant%zu.pfw", i);
		CHECK_STREQ(found(plant(name, cases[i].n, cases[i].small, cases[i].jumps,
					cases[i].meta, cases[i].meta_us), cases[i].share),
			    cases[i].want, "%s", cases[i].what);
	}
}

/* Sums that a hostile trace can push past int64: held at INT64_MAX. */
static void check_profile_saturates(void)
{
	char *specs[] = { "op" };
	const char *big = "{'name':'read','cat':'POSIX','pid':1,'ph':'X','ts':0,'dur':" DUR_MAX_US
			  ",'args':{'ret':9223372036854775807}}\n";
	char text[1024];
	const struct row *r;
	struct profile p;
	char err[256];
	int rc = profile_init(&p, specs, 1, err, sizeof(err));

	snprintf(text, sizeof(text), "%s%s%s", big, big, big);
	rc = rc ? rc : feed(&p, trace("big.pfw", text), 0);
	rc = rc ? rc : profile_finish(&p);
	r = p.by[0].n ? &p.by[0].rows[0] : NULL;
	CHECK(rc == 0 && r && r->calls == 3 && r->total == INT64_MAX && r->self == INT64_MAX &&
	      r->bytes == INT64_MAX && r->data_time == INT64_MAX && r->max == DUR_MAX_NS,
	      "profile: 3 reads of 2^62 ns and INT64_MAX bytes: total, self, bytes and data time "
	      "held at INT64_MAX (rc %d)", rc);
	CHECK(p.head.io_time == INT64_MAX && p.head.bytes_read == INT64_MAX &&
	      p.head.data_time == INT64_MAX && p.head.unoverlapped_io == INT64_MAX &&
	      p.head.t_max == DUR_MAX_NS,
	      "profile: the headline's I/O time, bytes read, data time and unoverlapped I/O: "
	      "INT64_MAX");
	profile_free(&p);

	/* three child regions of 2^62 ns each under one parent (by DFTracer's
	 * ids; a trace writes children first): the time they give back to it
	 * is held at INT64_MAX */
	big = "{'name':'c','cat':'ai','pid':1,'ph':'X','ts':0,'dur':" DUR_MAX_US
	      ",'args':{'event_id':2,'p_idx':1}}\n";
	snprintf(text, sizeof(text), "%s%s%s{'name':'p','cat':'ai','pid':1,'ph':'X','ts':0,"
		 "'dur':" DUR_MAX_US ",'args':{'event_id':1,'p_idx':-1}}\n", big, big, big);
	rc = profile_init(&p, specs, 1, err, sizeof(err));
	rc = rc ? rc : feed(&p, trace("kids.pfw", text), 0);
	rc = rc ? rc : profile_finish(&p);
	r = row_named(&p, 0, "p", NULL);
	CHECK(rc == 0 && r && r->total == DUR_MAX_NS && r->self == DUR_MAX_NS - INT64_MAX &&
	      r->region_self == DUR_MAX_NS - INT64_MAX,
	      "profile: a parent's children of 3 x 2^62 ns take back INT64_MAX of its self time "
	      "(rc %d, self %lld)", rc, r ? (long long)r->self : 0);
	profile_free(&p);
}

/* GPU calls are neither I/O nor regions: a wait, copies each way, a
 * launch and a collective, inside a region of step 2; hostile sizes
 * count nothing and huge ones saturate. */
static void check_profile_gpu(void)
{
	char *specs[] = { "phase" };
	const char *text =
		"{'name':'cuStreamSynchronize','cat':'CUDA_DRIVER_API','pid':1,'tid':1,'ph':'X','ts':10,'dur':5,'args':{'p_idx':1,'phase_cat':'compute','phase':'forward','step':2}}\n"
		"{'name':'cuMemcpyHtoD_v2','cat':'CUDA_DRIVER_API','pid':1,'tid':1,'ph':'X','ts':16,'dur':1,'args':{'p_idx':1,'phase_cat':'compute','phase':'forward','step':2,'bytes':4096,'copy_kind':'HtoD'}}\n"
		"{'name':'cuMemcpyDtoHAsync_v2','cat':'CUDA_DRIVER_API','pid':1,'tid':1,'ph':'X','ts':17,'dur':1,'args':{'p_idx':1,'phase_cat':'compute','phase':'forward','step':2,'bytes':-5,'copy_kind':'DtoH'}}\n"
		"{'name':'cuMemcpyDtoH_v2','cat':'CUDA_DRIVER_API','pid':1,'tid':1,'ph':'X','ts':18,'dur':1,'args':{'p_idx':1,'phase_cat':'compute','phase':'forward','step':2,'bytes':9223372036854775807,'copy_kind':'DtoH'}}\n"
		"{'name':'cuMemcpyDtoH_v2','cat':'CUDA_DRIVER_API','pid':1,'tid':1,'ph':'X','ts':19,'dur':1,'args':{'p_idx':1,'phase_cat':'compute','phase':'forward','step':2,'bytes':10,'copy_kind':'DtoH'}}\n"
		"{'name':'cuLaunchKernel','cat':'CUDA_DRIVER_API','pid':1,'tid':1,'ph':'X','ts':20,'dur':1,'args':{'p_idx':1,'phase_cat':'compute','phase':'forward','step':2,'kernel':'k'}}\n"
		"{'name':'ncclAllReduce','cat':'NCCL','pid':1,'tid':1,'ph':'X','ts':21,'dur':2,'args':{'p_idx':1,'phase_cat':'compute','phase':'forward','step':2,'bytes':64,'comm_rank':3}}\n"
		"{'name':'forward','cat':'compute','pid':1,'tid':1,'ph':'X','ts':9,'dur':20,'args':{'event_id':1,'p_idx':-1,'step':2}}\n";
	const struct gpu_totals *t = NULL;
	struct profile p;
	char err[256];
	int rc = profile_init(&p, specs, 1, err, sizeof(err));

	rc = rc ? rc : feed(&p, trace("gpu.pfw", text), 0);
	rc = rc ? rc : profile_finish(&p);
	if (!rc && p.gpu.n == 1)
		t = &p.gpu.rows[0].t;
	CHECK(rc == 0 && p.gpu.all.calls == 7 && p.gpu.all.waits == 1 && p.gpu.all.wait_ns == 5000 &&
	      p.gpu.all.to_device == 4096 && p.gpu.all.from_device == INT64_MAX &&
	      p.gpu.all.launches == 1 && p.gpu.all.collective_bytes == 64,
	      "gpu: a wait of 5 us, 4096 B in, the bytes out held at INT64_MAX (a negative "
	      "count counts none), a launch, 64 B of collectives (rc %d)", rc);
	CHECK(t && !strcmp(p.gpu.rows[0].phase, "compute/forward") && p.gpu.rows[0].step == 2 &&
	      t->copies == 4 && t->waits == 1,
	      "gpu: all of them in compute/forward, step 2");
	CHECK(p.gpu.nranks == 1 && p.gpu.ranks[0].rank == 3 && p.gpu.ranks[0].bytes == 64,
	      "gpu: collective bytes by the communicator's rank");
	CHECK(p.by[0].n == 1 && row_named(&p, 0, "compute/forward", NULL) &&
	      row_named(&p, 0, "compute/forward", NULL)->calls == 8,
	      "gpu: the calls are in the region's phase row, not phases of their own");
	profile_free(&p);
}

/* cuFile in its compatibility mode: the call (CUFILE, named pwrite for
 * the syscall it made) and the syscall, each counted once, each in its
 * own row; the bytes once, the syscall's. Through GPUDirect the call is
 * the POSIX pwrite itself. */
static void check_profile_cufile(void)
{
	char *specs[] = { "op" };
	const char *text =
		"{'name':'pwrite','cat':'POSIX','pid':1,'tid':1,'ph':'X','ts':11,'dur':1,'args':{'ret':4096,'fname':'/g'}}\n"
		"{'name':'pwrite','cat':'CUFILE','pid':1,'tid':1,'ph':'X','ts':10,'dur':5,'args':{'ret':4096,'fname':'/g','api':'cuFileWrite','via':'posix'}}\n"
		"{'name':'pwrite','cat':'POSIX','pid':1,'tid':1,'ph':'X','ts':21,'dur':1,'args':{'ret':100,'fname':'/g'}}\n"
		"{'name':'pwrite','cat':'CUFILE','pid':1,'tid':1,'ph':'X','ts':20,'dur':5,'args':{'ret':100,'fname':'/g','api':'cuFileWrite','via':'posix'}}\n"
		"{'name':'pwrite','cat':'POSIX','pid':1,'tid':1,'ph':'X','ts':30,'dur':1,'args':{'ret':7,'fname':'/h'}}\n"
		"{'name':'pwrite','cat':'POSIX','pid':1,'tid':1,'ph':'X','ts':40,'dur':2,'args':{'ret':8,'fname':'/g','api':'cuFileWrite'}}\n";
	const struct row *w, *c;
	struct profile p;
	char err[256];
	int rc = profile_init(&p, specs, 1, err, sizeof(err));

	rc = rc ? rc : feed(&p, trace("cufile.pfw", text), 0);
	rc = rc ? rc : profile_finish(&p);
	w = row_named(&p, 0, "pwrite", NULL);
	c = row_named(&p, 0, "cuFileWrite", NULL);
	CHECK(rc == 0 && w && w->calls == 4 && w->bytes == 4096 + 100 + 7 + 8,
	      "cufile: the pwrite row: 3 syscalls and a write through GPUDirect, 4211 bytes "
	      "(rc %d, calls %llu)", rc, w ? (unsigned long long)w->calls : 0);
	CHECK(c && c->calls == 2 && c->total == 10000 && !c->bytes,
	      "cufile: the cuFileWrite row: the 2 calls in compatibility mode, 10 us, no bytes "
	      "(their syscalls have them)");
	CHECK(p.head.bytes_written == 4211 && p.gpu.all.file_bytes == 4096 + 100 + 8,
	      "cufile: bytes written once; cuFile's bytes, each once (got %lld, %lld)",
	      (long long)p.head.bytes_written, (long long)p.gpu.all.file_bytes);
	profile_free(&p);
}

/* A torch trace given with the trace that ran torch: one process, named
 * and ranked as the trace says, as merge makes it. */
static void check_profile_owner(void)
{
	char *specs[] = { "process", "rank", "process,rank" };
	const char *raw = trace("raw.pfw",
		"{'name':'process_name','ph':'M','pid':7,'args':{'name':'python3'}}\n"
		"{'name':'read','cat':'POSIX','pid':7,'tid':7,'ph':'X','ts':10,'dur':1,'args':{'ret':1}}\n"
		"{'name':'read','cat':'POSIX','pid':9,'tid':9,'ph':'X','ts':10,'dur':1,'args':{'ret':1}}\n");
	const char *torch = trace("torch-trace-0-of-1.json",
		"[{'name':'aten::mm','ph':'X','ts':11,'dur':1,'pid':7,'tid':7},\n"
		"{'name':'aten::add','ph':'X','ts':12,'dur':1,'pid':7,'tid':7},\n"
		"{'name':'process_name','ph':'M','pid':8,'args':{'name':'python'}},\n"
		"{'name':'aten::mm','ph':'X','ts':11,'dur':1,'pid':8,'tid':8}]\n");
	struct ev_input in[2];
	const struct row *r;
	struct profile p;
	char err[256];
	int rc = profile_init(&p, specs, 3, err, sizeof(err));

	ev_input_init(&in[0], raw);
	ev_input_init(&in[1], torch);
	in[1].owner = &in[0];
	in[1].owner_input = 0;
	rc = rc ? rc : feed_into(&p, raw, 0, &in[0]);
	rc = rc ? rc : feed_into(&p, torch, 1, &in[1]);
	rc = rc ? rc : profile_finish(&p);
	r = row_named(&p, 0, "python3 [7]", NULL);
	CHECK(rc == 0 && p.by[0].n == 3 && r && r->calls == 3,
	      "owner: pid 7 of both inputs is one process, python3 [7], 3 calls; 9 and the "
	      "torch trace's own 8 are two more (rc %d, rows %u)", rc, p.by[0].n);
	CHECK(row_named(&p, 0, "python [8]", NULL) && p.head.processes == 3,
	      "owner: a pid the trace has no name for keeps the torch trace's; 3 processes "
	      "(got %llu)", (unsigned long long)p.head.processes);
	CHECK(p.by[1].n == 1 && row_named(&p, 1, "-", NULL) && p.head.ranks == 0 &&
	      p.by[2].n == 3 && row_named(&p, 2, "python3 [7]", "-"),
	      "owner: the rank is the trace's (none), not 0 from the torch file's name");
	ev_input_free(&in[1]);
	ev_input_free(&in[0]);
	profile_free(&p);
}

#define SPAN(s) ((struct span){ (s), sizeof(s) - 1 })

/* comm regions as merge's alignment and the stragglers take them: those
 * that synchronise, one key a name where no communicator is said, one a
 * name and communicator where args.comm_id says it. */
static void check_hostclock_comm(void)
{
	uint64_t world, world2, tp0, tp1, none;

	CHECK(hostclock_collective(SPAN("comm"), SPAN("all_reduce"), SPAN(""), &world) &&
	      hostclock_collective(SPAN("comm"), SPAN("all_reduce"), SPAN(""), &world2) &&
	      world == world2, "no communicator said: one key for the name");
	CHECK(hostclock_collective(SPAN("comm"), SPAN("all_reduce"), SPAN("tp0"), &tp0) &&
	      hostclock_collective(SPAN("comm"), SPAN("all_reduce"), SPAN("tp1"), &tp1) &&
	      tp0 != tp1 && tp0 != world && tp1 != world,
	      "a communicator said: a key of its own");
	CHECK(hostclock_collective(SPAN("comm"), SPAN("barrier"), SPAN("tp0"), &none) &&
	      none != tp0, "another collective on the same communicator: another key");
	CHECK(!hostclock_collective(SPAN("comm"), SPAN("bcast"), SPAN("tp0"), &none) &&
	      !hostclock_collective(SPAN("compute"), SPAN("all_reduce"), SPAN(""), &none),
	      "a collective that need not synchronise, another cat: none");
}

/* NCCL's collectives as merge's alignment takes them (hostclock.h): the
 * calls that synchronise, keyed by communicator; each waits for its
 * thread's next synchronise of its stream, which ends its span. */
static void check_hostclock_nccl(void)
{
	struct coll_list l = { 0 };
	uint64_t a, a2, b, bcast;
	bool all;

	CHECK(hostclock_nccl(SPAN("NCCL"), SPAN("ncclAllReduce"), SPAN("00000000000000aa"), &a) &&
	      hostclock_nccl(SPAN("NCCL"), SPAN("ncclAllReduce"), SPAN("00000000000000aa"), &a2) &&
	      a == a2, "a call's key: the same for the same name and communicator");
	CHECK(hostclock_nccl(SPAN("NCCL"), SPAN("ncclAllReduce"), SPAN("00000000000000bb"), &b) &&
	      b != a, "another communicator's calls: another key");
	CHECK(!hostclock_nccl(SPAN("NCCL"), SPAN("ncclAllReduce"), SPAN(""), &bcast) &&
	      !hostclock_nccl(SPAN("NCCL"), SPAN("ncclBroadcast"), SPAN("00000000000000aa"), &bcast) &&
	      !hostclock_nccl(SPAN("comm"), SPAN("ncclAllReduce"), SPAN("00000000000000aa"), &bcast),
	      "no communicator, a call that need not synchronise, another cat: none");
	CHECK(hostclock_nccl_sync(SPAN("CUDA_DRIVER_API"), SPAN("cuStreamSynchronize"), &all) &&
	      !all && hostclock_nccl_sync(SPAN("CUDA_DRIVER_API"), SPAN("cuCtxSynchronize"), &all) &&
	      all && !hostclock_nccl_sync(SPAN("CUDA_DRIVER_API"), SPAN("cuMemcpy"), &all) &&
	      !hostclock_nccl_sync(SPAN("NCCL"), SPAN("cuStreamSynchronize"), &all),
	      "synchronises: a stream's, the context's (all streams); nothing else");
	/* thread 10: two calls on a's communicator on stream 5, one on b's
	 * on stream 6; thread 11 syncs stream 5, then thread 10 does */
	hostclock_nccl_call(&l, a, 1, 10, 5, 100);
	hostclock_nccl_call(&l, b, 1, 10, 6, 110);
	hostclock_nccl_call(&l, a, 1, 10, 5, 120);
	hostclock_nccl_synced(&l, 1, 11, 5, false, 150);
	CHECK(l.n == 0 && l.npend == 3, "another thread's synchronise ends none");
	hostclock_nccl_synced(&l, 1, 10, 5, false, 200);
	CHECK(l.n == 2 && l.npend == 1 && l.c[0].key == a && l.c[0].seq == 0 &&
	      l.c[0].start == 100 && l.c[0].end == 200 && l.c[1].seq == 1 && l.c[1].start == 120 &&
	      l.c[1].end == 200, "the stream's calls, in order, end with its synchronise");
	hostclock_nccl_synced(&l, 1, 10, -1, true, 300);
	CHECK(l.n == 3 && !l.npend && l.c[2].key == b && l.c[2].seq == 0 && l.c[2].start == 110 &&
	      l.c[2].end == 300, "the context's synchronise ends the other stream's");
	for (int i = 0; i <= HOSTCLOCK_PENDING; i++)
		hostclock_nccl_call(&l, a, 1, 10, 5, 400 + i);
	CHECK(l.npend == HOSTCLOCK_PENDING && l.left_out == 1 && l.pend[0].start == 401,
	      "past HOSTCLOCK_PENDING waiting, the oldest goes, counted");
	hostclock_free(&l);
}

int main(void)
{
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	check_sketch();
	check_overlap();
	check_kinds();
	check_args();
	check_meta();
	check_fhash();
	check_specs();
	check_profile_empty();
	check_profile();
	check_profile_nested();
	check_findings_rules();
	check_profile_saturates();
	check_profile_gpu();
	check_profile_cufile();
	check_profile_owner();
	check_hostclock_comm();
	check_hostclock_nccl();
	check_rm_tree(tmpdir);
	return check_done();
}
