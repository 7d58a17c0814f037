/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Unit tests for write/flightbuf.c, --flight's window: lines taken from
 * a sink, sealed into gzip chunks, let go by time and by the cap, written
 * back whole with the events that ended before the window left out; the
 * metadata kept apart, once each, in generations no chunk outlives. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "write/flightbuf.h"
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
	CHECK(!flightbuf_write(&fb, 4 * S, 5 * S, 0, &events, collect, &o), "written");
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
	CHECK(!flightbuf_write(&fb, 0, now, 0, &events, collect, &o), "written");
	CHECK(events > 0 && events < 20000, "a shorter window: %llu events", (unsigned long long)events);
	CHECK(strstr(o.p, name) != NULL, "ending with the last");
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
	CHECK(!flightbuf_write(&fb, 0, UINT64_MAX, 0, &events, collect, &o), "written");
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

int main(void)
{
	test_window_by_time();
	test_cap();
	test_meta();
	return check_done();
}
