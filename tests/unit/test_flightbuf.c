/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Unit tests for write/flightbuf.c, --flight's window: lines taken from
 * a sink, sealed into gzip chunks, let go by time and by the cap, written
 * back whole with the events that ended before the window left out; the
 * metadata kept apart, once each, in generations no chunk outlives. And
 * write/flightrec.c: syscalls kept as records write the lines a full
 * trace writes. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include <errno.h>
#include <sys/syscall.h>
#include "write/flightbuf.h"
#include "write/v2.h"
#include "write/flightrec.h"
#include "write/sink.h"

#define MS 1000000ull
#define S 1000000000ull

struct out {
	char *p;
	size_t len, cap;
	int calls;
};

static int collect(void *ctx, const void *bytes, size_t len)
{
	struct out *o = ctx;

	if (o->len + len + 1 > o->cap) {
		o->cap = (o->len + len + 1) * 2;
		o->p = realloc(o->p, o->cap);
	}
	memcpy(o->p + o->len, bytes, len);
	o->len += len;
	o->p[o->len] = 0;
	o->calls++;
	return len && ((const char *)bytes)[len - 1] == '\n' ? 0 : -1; /* whole lines */
}

static int count(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = hay; p && (p = strstr(p, needle)); p++)
		n++;
	return n;
}

/* An event of thread tid ending at end_ns, as the writer leaves it in a
 * sink (its wall-clock ts and dur: mono + 0, in µs). */
static void event(struct sink *s, uint32_t tid, uint64_t end_ns, const char *what)
{
	char line[256];
	uint64_t ts = end_ns / 1000 - 5;

	sink_meta_so_far(s);
	sink_event_end(s, end_ns);
	snprintf(line, sizeof(line),
		 "{\"id\":1,\"name\":\"%s\",\"cat\":\"POSIX\",\"pid\":7,\"tid\":%u,"
		 "\"ts\":%llu,\"dur\":5,\"ph\":\"X\",\"args\":{}}\n",
		 what, tid, (unsigned long long)ts);
	jb_mem(&s->buf, line, strlen(line));
	sink_line_end(s, tid);
}

static void meta(struct sink *s, const char *kind, const char *name, const char *hash)
{
	char line[512];

	snprintf(line, sizeof(line),
		 "{\"name\":\"%s\",\"cat\":\"dftracer\",\"pid\":7,\"tid\":7,\"ph\":\"M\","
		 "\"args\":{\"hhash\":\"0\",\"name\":\"%s\",\"value\":\"%s\"}}\n",
		 kind, name, hash);
	jb_mem(&s->buf, line, strlen(line));
}

static void raw(struct sink *s, const char *line)
{
	jb_mem(&s->buf, line, strlen(line));
}

static void test_window_by_time(void)
{
	struct flightbuf fb;
	struct sink *s = sink_memory();
	struct out o = { 0 };
	uint64_t events = 0;
	char name[32];

	CHECK(!flightbuf_init(&fb, 2 * S, 64 << 20), "init");
	/* one event every 10 ms for 5 s, taken and ticked every 50 ms */
	for (int i = 0; i < 500; i++) {
		snprintf(name, sizeof(name), "e%03d", i);
		if (i == 0)
			meta(s, "FH", "/data/a", "00000000000000aa");
		event(s, 7, (uint64_t)(i + 1) * 10 * MS, name);
		if (i % 5 == 4) {
			flightbuf_take(&fb, s, (uint64_t)(i + 1) * 10 * MS);
			flightbuf_tick(&fb, (uint64_t)(i + 1) * 10 * MS, 0);
		}
	}
	CHECK(s->buf.len == 0 && s->nruns == 0, "the sink is emptied by take");
	flightbuf_seal(&fb);
	CHECK(fb.events_in == 500, "every event line counted (%llu)", (unsigned long long)fb.events_in);
	/* the window: 3 s to 5 s; chunks before it are gone */
	CHECK(fb.chunks[fb.first].hi_ns >= 3 * S - FLIGHT_CHUNK_NS,
	      "nothing much older than the window is kept");
	CHECK(!flightbuf_write(&fb, 4 * S, 5 * S, 0, &events, NULL, NULL, collect, &o), "written");
	CHECK(count(o.p, "\"name\":\"FH\"") == 1, "the name met before the window, once");
	CHECK(strstr(o.p, "\"name\":\"FH\"") == o.p + 1, "names first: %.60s", o.p);
	CHECK(count(o.p, "\"ph\":\"X\"") == 101 && events == 101,
	      "exactly the events that ended in [4 s, 5 s]: %d, said %llu", count(o.p, "\"ph\":\"X\""),
	      (unsigned long long)events);
	CHECK(!strstr(o.p, "\"e398\"") && strstr(o.p, "\"e399\"") && strstr(o.p, "\"e499\""),
	      "the first is the one ending at 4 s, the last the last");
	{
		struct flight_span sp = flightbuf_span(&fb, 4 * S, 5 * S);

		CHECK(sp.to_ns == 5 * S && sp.from_ns <= 4 * S && sp.from_ns > 4 * S - 2 * FLIGHT_CHUNK_NS,
		      "the span: its chunks' ends");
	}
	free(o.p);
	flightbuf_free(&fb);
	sink_close(s, NULL, 0);
}

static void test_cap(void)
{
	struct flightbuf fb;
	struct sink *s = sink_memory();
	struct out o = { 0 };
	uint64_t events = 0, now = 0;
	char name[64];

	CHECK(!flightbuf_init(&fb, 3600 * S, 256 << 10), "init, 256 KiB");
	/* distinct lines (they compress less), 20,000 of them over 20 s */
	for (int i = 0; i < 20000; i++) {
		now = (uint64_t)(i + 1) * MS;
		snprintf(name, sizeof(name), "%08x%08x", (unsigned)rand(), (unsigned)rand());
		event(s, 7, now, name);
		if (i % 100 == 99) {
			flightbuf_take(&fb, s, now);
			flightbuf_seal(&fb);
			flightbuf_tick(&fb, now, 0);
		}
	}
	CHECK(fb.used <= fb.cap, "the cap holds: %zu of %zu", fb.used, fb.cap);
	CHECK(fb.capped > 0, "chunks went for the cap (%llu)", (unsigned long long)fb.capped);
	CHECK(!flightbuf_write(&fb, 0, now, 0, &events, NULL, NULL, collect, &o), "written");
	CHECK(events > 0 && events < 20000, "a shorter window: %llu events", (unsigned long long)events);
	CHECK(strstr(o.p, name) != NULL, "ending with the last");
	free(o.p);
	flightbuf_free(&fb);
	sink_close(s, NULL, 0);
}

/* A window at its length: each chunk that goes leaves its pages to the
 * next seal, which takes them, not new ones; they go once the flood
 * ends. */
static void test_spares(void)
{
	struct flightbuf fb;
	struct sink *s = sink_memory();
	struct out o = { 0 };
	uint64_t events = 0, now = 0, taken = 0;
	size_t held = 0;
	char name[32];

	CHECK(!flightbuf_init(&fb, 1 * S, 64 << 20), "init");
	/* alike lines every 10 ms, sealed every 100 ms, for 4 s */
	for (int i = 0; i < 400; i++) {
		now = (uint64_t)(i + 1) * 10 * MS;
		snprintf(name, sizeof(name), "e%04d", i);
		if (i == 0)
			meta(s, "FH", "/data/a", "00000000000000aa");
		event(s, 7, now, name);
		if (i % 10 == 9) {
			uint32_t before;

			flightbuf_take(&fb, s, now);
			before = fb.nspares;
			flightbuf_seal(&fb);
			taken += fb.nspares < before;
			CHECK(fb.chunks[fb.n - 1].map_len >= fb.chunks[fb.n - 1].z_len,
			      "a chunk fits its pages");
			flightbuf_tick(&fb, now, 0);
		}
	}
	CHECK(fb.dropped >= 25 && taken + fb.nspares == fb.dropped,
	      "every chunk's pages that went were taken again or wait (%llu dropped, %llu taken, %u wait)",
	      (unsigned long long)fb.dropped, (unsigned long long)taken, fb.nspares);
	CHECK(!flightbuf_write(&fb, 3 * S, 4 * S, 0, &events, NULL, NULL, collect, &o), "written");
	CHECK(events == 101 && !strstr(o.p, "\"e0298\"") && strstr(o.p, "\"e0299\"") &&
	      strstr(o.p, "\"e0399\""), "pages taken again hold their new chunk only: %llu events",
	      (unsigned long long)events);
	/* the flood ended: the window empties, and the spares go with it */
	flightbuf_tick(&fb, now + 5 * S, 0);
	for (uint32_t i = fb.gfirst; i < fb.ngens; i++)
		held += fb.gens[i].lines.len;
	CHECK(fb.first == fb.n && fb.nspares == 0 && held > 0 && fb.used == held + fb.pending.len,
	      "nothing kept but the names: %zu of %zu bytes", fb.used, held + fb.pending.len);
	free(o.p);
	flightbuf_free(&fb);
	sink_close(s, NULL, 0);
}

static void test_meta(void)
{
	struct flightbuf fb;
	struct sink *s = sink_memory();
	struct out o = { 0 };
	uint64_t events = 0;
	char path[64], hash[17];
	int gens = 0;

	CHECK(!flightbuf_init(&fb, 3600 * S, 2 << 20), "init");
	/* the same file twice (two processes' FH lines): kept once */
	meta(s, "FH", "/data/same", "0000000000000001");
	meta(s, "FH", "/data/same", "0000000000000001");
	/* lines that are not names: a CM mark is an event, losses go */
	raw(s, "{\"name\":\"CM\",\"cat\":\"dftracer\",\"pid\":7,\"tid\":7,\"ph\":\"M\",\"args\":{}}\n");
	raw(s, "{\"name\":\"lost_events\",\"cat\":\"dftracer\",\"pid\":7,\"tid\":7,\"ph\":\"M\",\"args\":{}}\n");
	event(s, 7, 1 * MS, "first");
	flightbuf_take(&fb, s, 1 * MS);
	/* enough new names to begin generations */
	for (int i = 0; i < 3000; i++) {
		snprintf(path, sizeof(path), "/data/f%06d", i);
		snprintf(hash, sizeof(hash), "%016x", i + 100);
		meta(s, "FH", path, hash);
		event(s, 7, (uint64_t)(i + 2) * MS, path + 6);
		flightbuf_take(&fb, s, (uint64_t)(i + 2) * MS);
		if (fb.names_lost) {
			gens++;
			fb.names_lost = false;
		}
		if (i % 50 == 49)
			flightbuf_seal(&fb);
	}
	flightbuf_seal(&fb);
	CHECK(gens > 0 && fb.ngens - fb.gfirst == (uint32_t)gens + 1,
	      "new generations (%d), none let go while chunks may use them", gens);
	CHECK(!flightbuf_write(&fb, 0, UINT64_MAX, 0, &events, NULL, NULL, collect, &o), "written");
	CHECK(count(o.p, "/data/same") == 1, "a name two processes gave: once");
	CHECK(count(o.p, "\"name\":\"FH\"") == 3001, "every name: %d", count(o.p, "\"name\":\"FH\""));
	CHECK(count(o.p, "\"name\":\"CM\"") == 1 && !strstr(o.p, "lost_events"),
	      "a CM mark kept as an event, the losses not");
	CHECK(events == 3002, "events: %llu", (unsigned long long)events);
	/* the chunks go: so do the generations they used, but the newest */
	flightbuf_tick(&fb, 7200 * S, 0);
	CHECK(fb.first == fb.n && fb.ngens - fb.gfirst == 1, "the old generations went with the chunks");
	free(o.p);
	flightbuf_free(&fb);
	sink_close(s, NULL, 0);
}

/* ---- records: syscalls kept binary, formatted at the dump ---- */

/* The lines of text that begin with prefix, in order, joined. */
static char *lines_starting(const char *text, size_t len, const char *prefix)
{
	char *all = calloc(1, len + 1), *q = all;

	for (const char *p = text, *end = text + len, *nl; p < end; p = nl + 1) {
		nl = memchr(p, '\n', end - p);
		if (!nl)
			nl = end;
		if (!strncmp(p, prefix, strlen(prefix))) {
			memcpy(q, p, nl + 1 - p);
			q += nl + 1 - p;
		}
	}
	return all;
}

struct rec_case {
	int nr;
	long long ret;
	uint64_t args[DFT_SC_NARGS];
	const char *f1, *f2;
	bool in_phase;	/* inside a region with a step arg */
};

/* An mmap run, an io_uring completion (in a region) and a GPU call with
 * a string arg, to both sinks: 3 events. */
static int named_events(struct writer *w, struct sink *lines, struct sink *recs,
			struct proc *p, struct thread *th, int round, uint64_t *at)
{
	struct event_arg mm[] = { IO_ARG(offset, 4096 * round), IO_ARG(pages, 3) };
	struct event_arg ur[] = { IO_ARG(fd, 5), IO_ARG(count, -1) };
	struct event_arg gpu[] = { GPU_ARG(bytes, 1 << 20), GPU_ARG_STR(copy_kind, istr_cstr("HtoD")),
				   GPU_ARG_STR(kernel, istr_cstr("void k<\"x\">(int)")) };
	struct hidden_io io[] = {
		{ "mmap_read", *at, 900, 12288, NULL, istr_cstr("/data/m"), mm, 2 },
		{ "io_uring_read", *at + MS, 77, -5, "io_uring", NULL, ur, 2 },
	};
	struct gpu_event g = { .name = "cudaMemcpy", .cat = "CUDA", .tid = th->tid,
			       .ts_ns = *at + 2 * MS, .dur_ns = 5000, .nargs = 3 };
	struct phase_frame *f;
	struct nesting n;

	memcpy(g.args, gpu, sizeof(gpu));
	for (int i = 0; i < 2; i++) {
		if (i == 1) {
			f = phase_push(&th->phases);
			*f = (struct phase_frame){ .cat = istr_cstr("io"), .name = istr_cstr("ring"),
						   .id = 7, .ts = *at };
		}
		n = nest_in(p, th);
		writer_hidden_io(w, lines, p, th, &n, &io[i]);
		writer_end_event(lines);
		writer_hidden_io(w, recs, p, th, &n, &io[i]);
		writer_end_event(recs);
		if (i == 1)
			phase_pop(&th->phases);
	}
	n = nest_in(p, th);
	writer_gpu(w, lines, p, th, &n, &g);
	writer_end_event(lines);
	writer_gpu(w, recs, p, th, &n, &g);
	writer_end_event(recs);
	*at += 10 * MS;
	return 3;
}

/* In v1 and in v2 (--format): the same bytes either way. */
static void test_records_format_as_lines(bool v2)
{
	static const struct rec_case cases[] = {
		{ SYS_pread64, 4096, { 5, 0x7f0000001000, 4096, 1ull << 40 }, "/data/a", NULL, false },
		{ SYS_pread64, -11, { 5, 0x7f0000001000, 4096, 0 }, "/data/a", NULL, true },
		{ SYS_renameat2, 0, { (uint64_t)-100, 0, (uint64_t)-100, 0, 1 }, "/data/old", "/data/new", true },
		{ SYS_ioctl, 0, { 9, 0xc020462a, 0x7ffd0000 }, "/dev/nvidia0", NULL, false },
		{ SYS_lseek, 123456789, { 3, 123456789, 0 }, "/data/\"odd\"\n", NULL, true },
		{ SYS_fsync, 0, { 3 }, NULL, NULL, false },
	};
	struct trace_stats stats = { 0 };
	struct writer w;
	struct proc p = { .pid = 4242, .comm = "trainer", .next_id = 1 };
	struct thread th = { .tid = 4243, .pid = 4242, .comm = "loader" };
	struct sink *lines = sink_memory(), *recs = sink_memory();
	struct flightbuf fb;
	struct phase_frame *f;
	struct out o = { 0 };
	uint64_t events = 0, at = 5 * S, mid = 0;
	char *want, *got;
	int n = 0;

	CHECK(!sc_init() && !writer_init(&w, "unit", false, &stats), "writer");
	CHECK(!flightbuf_init(&fb, 60 * S, 64 << 20), "init");
	w.v2 = v2;
	recs->records = true;
	ctx_set(&p.ctx, istr_cstr("epoch"), NULL, 3);
	ctx_set(&p.ctx, istr_cstr("run"), istr_cstr("r\"1"), 0);
	for (int round = 0; round < 40; round++) {
		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			const struct rec_case *c = &cases[i];
			struct dft_syscall e = { { .nr = c->nr, .tgid = p.pid, .tid = th.tid,
						   .ts = at }, 1500 + 7 * i, c->ret, { 0 } };
			struct istr *f1 = c->f1 ? istr_cstr(c->f1) : NULL;
			struct istr *f2 = c->f2 ? istr_cstr(c->f2) : NULL;
			struct nesting nn;

			memcpy(e.args, c->args, sizeof(e.args));
			if (c->in_phase) {
				f = phase_push(&th.phases);
				*f = (struct phase_frame){ .cat = istr_cstr("dataloader"),
							   .name = istr_cstr("fetch"), .id = 999, .ts = at };
				ctx_set(&f->args, istr_cstr("step"), NULL, round);
			}
			nn = nest_in(&p, &th);
			writer_syscall(&w, lines, &p, &th, &nn, sc_lookup(c->nr), &e, f1, f2);
			writer_end_event(lines);
			writer_syscall(&w, recs, &p, &th, &nn, sc_lookup(c->nr), &e, f1, f2);
			writer_end_event(recs);
			if (c->in_phase)
				phase_pop(&th.phases);
			at += 10 * MS;
			n++;
		}
		n += named_events(&w, lines, recs, &p, &th, round, &at);
		if (round == 20)
			mid = at;
		if (round % 8 == 7)
			flightbuf_take(&fb, recs, at);
		if (round % 16 == 15)
			flightbuf_seal(&fb);
	}
	flightbuf_take(&fb, recs, at);
	flightbuf_seal(&fb);
	CHECK(recs->events == (uint64_t)n && fb.events_in == (uint64_t)n, "records counted and taken");
	CHECK(!flightbuf_write(&fb, 0, UINT64_MAX, w.clock_offset_ns, &events, flightrec_format, &w,
			       collect, &o), "written");
	want = lines_starting(lines->buf.p, lines->buf.len, "{\"id\":");
	got = lines_starting(o.p, o.len, "{\"id\":");
	CHECK(events == (uint64_t)n && !strcmp(want, got),
	      "%s: every record formats as the line a full trace writes (%llu of %d)",
	      v2 ? "v2" : "v1", (unsigned long long)events, n);
	CHECK(count(got, v2 ? ",\"ph\":1,\"args\":" : ",\"ph\":\"X\",\"args\":") == n &&
	      count(got, "\"cat\":\"POSIX\",\"type\":3,") == (v2 ? 40 * 7 : 0) &&
	      count(got, "\"cat\":\"CUDA\",\"type\":11,") == (v2 ? 40 : 0) &&
	      count(got, "\"cat\":\"DEVICE\",\"type\":3,") == (v2 ? 40 : 0),
	      "%s: each line's ph and type: %d %d %d %d", v2 ? "v2" : "v1",
	      count(got, v2 ? ",\"ph\":1,\"args\":" : ",\"ph\":\"X\",\"args\":"),
	      count(got, "\"cat\":\"POSIX\",\"type\":3,"), count(got, "\"cat\":\"CUDA\",\"type\":11,"),
	      count(got, "\"cat\":\"DEVICE\",\"type\":3,"));
	CHECK(count(o.p, "\"phase\":\"fetch\"") == 40 * 3 && count(o.p, "\"step\":39") == 3 &&
	      count(o.p, "\"fname_truncated\"") == 0 && count(o.p, "\"device\":\"nvidia\"") == 40,
	      "contexts, steps and device classes kept");
	CHECK(count(o.p, "\"copy_kind\":\"HtoD\"") == 40 && count(o.p, "\"op\":\"io_uring\"") == 40 &&
	      count(o.p, "\"phase\":\"ring\"") == 40 && count(o.p, "\"name\":\"mmap_read\"") == 40,
	      "I/O outside syscalls and GPU calls kept as records too");
	CHECK(!strchr(o.p, FLIGHT_CTX) && !strchr(o.p, FLIGHT_REC), "no record or context line handed out");
	free(want);
	free(got);
	/* a window from the middle: the records that ended before it left out */
	o.len = 0;
	events = 0;
	CHECK(!flightbuf_write(&fb, mid, UINT64_MAX, w.clock_offset_ns, &events, flightrec_format, &w,
			       collect, &o), "written from the middle");
	CHECK(events == 19 * 9, "the events that ended in the window: %llu",
	      (unsigned long long)events);
	/* a record gone bad is said, not formatted */
	{
		unsigned char bad[] = { 0, 0, 0x80, 0x80 };
		struct hmap none = { 0 };
		struct jbuf b;

		jb_init(&b, 64);
		CHECK(flightrec_format(&w, bad, sizeof(bad), &none, 0, &b) == -EIO && !b.len,
		      "a truncated record: -EIO");
		jb_free(&b);
	}
	free(o.p);
	flightbuf_free(&fb);
	sink_close(lines, NULL, 0);
	sink_close(recs, NULL, 0);
	phase_stack_free(&th.phases);
	ctx_free(&p.ctx);
	writer_free(&w);
}

/* The v2 layer of each category the writer puts in a fragment. */
static void test_v2_layers(void)
{
	static const struct {
		const char *frag;
		enum v2_type want;
	} cases[] = {
		{ "\"name\":\"pread\",\"cat\":\"POSIX\",", V2_LIBC_IO },
		{ "\"name\":\"fread\",\"cat\":\"STDIO\",", V2_LIBC_IO },
		{ "\"name\":\"ioctl\",\"cat\":\"DEVICE\",", V2_LIBC_IO },
		{ "\"name\":\"exec\",\"cat\":\"PROC\",", V2_DFTRACER },
		{ "\"name\":\"cuMemcpy\",\"cat\":\"CUDA_DRIVER_API\",", V2_CUDA },
		{ "\"name\":\"cuFileRead\",\"cat\":\"CUFILE\",", V2_CUDA },
		{ "\"name\":\"ncclAllReduce\",\"cat\":\"NCCL\",", V2_MPI },
		{ "\"name\":\"forward\",\"cat\":\"compute\",", V2_PYTHON },
		/* a name that holds what looks like a cat, a cat with a quote */
		{ "\"name\":\"x\\\",\\\"cat\\\":\\\"POSIX\",\"cat\":\"data\",", V2_PYTHON },
		{ "\"name\":\"x\",\"cat\":\"PO\\\"SIX\",", V2_PYTHON },
		{ "\"cat\":\"POSIX\"", V2_PYTHON },
		{ "", V2_PYTHON },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		CHECK(v2_type_of_name_cat(cases[i].frag, strlen(cases[i].frag)) == cases[i].want,
		      "v2 layer of %s: %d", cases[i].frag, cases[i].want);
}

int main(void)
{
	test_window_by_time();
	test_cap();
	test_spares();
	test_meta();
	test_v2_layers();
	test_records_format_as_lines(false);
	test_records_format_as_lines(true);
	return check_done();
}
