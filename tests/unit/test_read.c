/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Unit tests for user/read: the JSON scanner on hostile and edge-case
 * text, and the reader on every shape of trace file (pfw lines with and
 * without brackets and commas, arrays, {"traceEvents"} objects, gzip in
 * one or several members, cut short, events split across its buffer). */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "check.h"
#include "read/jscan.h"
#include "read/reader.h"

static char tmpdir[] = "/tmp/dftrace-test-read-XXXXXX";

static char *path_in(const char *name)
{
	return check_path(tmpdir, name);
}

static void write_file(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "w");

	fwrite(data, 1, len, f);
	fclose(f);
}

/* data as gzip members of `parts` pieces each. */
static void write_gzip(const char *path, const char *data, size_t len, int parts)
{
	FILE *f = fopen(path, "w");

	for (int i = 0; i < parts; i++) {
		size_t a = len * i / parts, b = len * (i + 1) / parts;
		z_stream z = { 0 };
		unsigned char out[1 << 16];

		deflateInit2(&z, 6, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY);
		z.next_in = (unsigned char *)data + a;
		z.avail_in = b - a;
		do {
			z.next_out = out;
			z.avail_out = sizeof(out);
			deflate(&z, Z_FINISH);
			fwrite(out, 1, sizeof(out) - z.avail_out, f);
		} while (z.avail_out == 0);
		deflateEnd(&z);
	}
	fclose(f);
}

/* Reads a whole file: events and the status of the last reader_next. */
struct got {
	int rc, n;
	char names[64][32];
	int64_t ts[64], pid[64];
	char err[512];
};

static struct got read_all(const char *path, unsigned int flags)
{
	struct got g = { 0 };
	struct reader *r;
	struct rec e;

	g.rc = reader_open(&r, path, flags, g.err, sizeof(g.err));
	if (g.rc)
		return g;
	while ((g.rc = reader_next(r, &e, g.err, sizeof(g.err))) > 0) {
		if (g.n < 64) {
			snprintf(g.names[g.n], sizeof(g.names[0]), "%.*s", (int)e.name.len, e.name.p);
			g.ts[g.n] = e.ts_ns;
			g.pid[g.n] = e.pid;
		}
		g.n++;
	}
	reader_close(r);
	return g;
}

static const char *LINES[] = {
	"{\"id\":1,\"name\":\"open\",\"cat\":\"POSIX\",\"pid\":7,\"tid\":7,\"ts\":100,\"dur\":2,\"ph\":\"X\",\"args\":{\"ret\":3,\"fhash\":\"ab\"}}",
	"{\"name\":\"FH\",\"cat\":\"dftracer\",\"pid\":7,\"tid\":7,\"ph\":\"M\",\"args\":{\"name\":\"/a \\\"q\\\" }}\",\"value\":\"ab\"}}",
	"{\"id\":2,\"name\":\"read\",\"cat\":\"POSIX\",\"pid\":7,\"tid\":8,\"ts\":103.5,\"dur\":0.25,\"ph\":\"X\",\"args\":{\"ret\":4096,\"nested\":{\"a\":[1,2,{\"b\":null}]}}}",
};
#define NLINES 3

static void check_shapes(void)
{
	char buf[4096];
	const char *path = path_in("t.pfw");
	struct got g;
	int n;

	for (int shape = 0; shape < 4; shape++) {
		static const char *const what[] = { "'[' and lines", "'[', commas, ']'",
						    "lines alone", "'[', lines, ']'" };

		n = shape == 2 ? 0 : snprintf(buf, sizeof(buf), "[\n");
		for (int i = 0; i < NLINES; i++)
			n += snprintf(buf + n, sizeof(buf) - n, "%s%s\n", LINES[i],
				      shape == 1 && i < NLINES - 1 ? "," : "");
		if (shape == 1 || shape == 3)
			n += snprintf(buf + n, sizeof(buf) - n, "]\n");
		write_file(path, buf, n);
		for (unsigned int flags = 0; flags <= READER_SKIM; flags += READER_SKIM) {
			g = read_all(path, flags);
			CHECK(g.rc == 0 && g.n == NLINES && !strcmp(g.names[1], "FH") &&
			      g.ts[2] == 103500 && g.pid[2] == 7,
			      "pfw with %s%s: 3 events, ts to the ns (rc %d, n %d: %s)",
			      what[shape], flags ? ", skimmed" : "", g.rc, g.n, g.err);
		}
	}
}

/* DFTracer's v2: integer ph (an aggregated record read as a complete one
 * of its calls' summed time), metadata without ts, an unknown ph. */
static void check_v2(void)
{
	static const char text[] =
		"{\"name\":\"FH\",\"cat\":\"dftracer\",\"type\":1,\"pid\":7,\"tid\":7,\"ph\":4,\"args\":{\"hhash\":\"01\",\"name\":\"/a\",\"value\":\"ab\"}}\n"
		"{\"id\":1,\"name\":\"read\",\"cat\":\"POSIX\",\"type\":3,\"pid\":7,\"tid\":7,\"ts\":100,\"dur\":2,\"ph\":1,\"args\":{\"hhash\":\"01\",\"ret\":3}}\n"
		"{\"name\":\"openat\",\"cat\":\"POSIX\",\"type\":3,\"ts\":200,\"ph\":3,\"pid\":7,\"tid\":7,\"args\":{\"hhash\":\"01\",\"dft_cnt\":2,\"dur_min\":3,\"dur_max\":5,\"dur_sum\":8}}\n"
		"{\"name\":\"creat\",\"cat\":\"POSIX\",\"type\":3,\"ts\":300,\"ph\":3,\"pid\":7,\"tid\":7,\"args\":{\"hhash\":\"01\",\"dft_cnt\":4,\"dur\":1.5}}\n"
		"{\"name\":\"cpu\",\"cat\":\"sys\",\"type\":7,\"ts\":300,\"ph\":2,\"pid\":7,\"tid\":0,\"args\":{\"hhash\":\"01\",\"user_pct\":1.5}}\n"
		"{\"name\":\"later\",\"cat\":\"x\",\"type\":12,\"ts\":300,\"ph\":9,\"pid\":7,\"tid\":0}\n"
		"{\"name\":\"huge\",\"cat\":\"POSIX\",\"type\":3,\"ts\":300,\"ph\":3,\"pid\":7,\"tid\":7,\"args\":{\"hhash\":\"01\",\"dft_cnt\":9223372036854775807,\"dur\":1000}}\n";
	static const int64_t want_dur[] = { 0, 2000, 8000, 6000, 0, 0, 0 };
	const char *path = path_in("v2.pfw");
	struct reader *r;
	struct rec e;
	char err[256], ph[8] = { 0 };
	uint64_t first_bad;
	int n = 0, ok = 1;

	write_file(path, text, sizeof(text) - 1);
	for (unsigned int flags = 0; flags <= READER_SKIM; flags += READER_SKIM) {
		n = 0;
		CHECK(!reader_open(&r, path, flags, err, sizeof(err)), "v2 opens");
		while (reader_next(r, &e, err, sizeof(err)) > 0 && n < 7) {
			ph[n] = e.ph;
			ok &= e.dur_ns == want_dur[n] && e.aggregated == (n == 2 || n == 3);
			n++;
		}
		CHECK(n == 6 && !strcmp(ph, "MXXXC?") && ok && reader_skipped(r, &first_bad) == 1 && first_bad == 7,
		      "v2%s: ph 4, 1, 3, 3, 2, 9 read as %s; aggregated durs the sums (dur_sum, "
		      "dur each); a dur out of range left out", flags ? ", skimmed" : "", ph);
		reader_close(r);
		memset(ph, 0, sizeof(ph));
		ok = 1;
	}
}

static void check_chrome_shapes(void)
{
	const char *path = path_in("c.json");
	const char *array = "[{\"name\": \"aten::mm\", \"ph\": \"X\", \"ts\": 100, \"dur\": 2,\n"
			    " \"tid\": 1, \"pid\": \"CPU functions\", \"args\": {\n  \"a\": 1\n}},\n"
			    "{\"name\": \"b\", \"ph\": \"X\", \"ts\": 1.001, \"dur\": 0, \"tid\": 1, \"pid\": 2}]";
	const char *object = "{\"schemaVersion\": 1, \"traceEvents\": [\n"
			     "{\"name\": \"x\", \"ph\": \"X\", \"ts\": 5.5, \"dur\": 1, \"pid\": 3, \"tid\": 3}\n"
			     "], \"distributedInfo\": {\"rank\": 1}, \"baseTimeNanoseconds\": 1700000000000000000}";
	struct reader *r;
	struct rec e;
	char err[256];
	struct got g;

	write_file(path, array, strlen(array));
	g = read_all(path, READER_SKIM);
	CHECK(g.rc == 0 && g.n == 2 && g.ts[1] == 1001 && !strcmp(g.names[0], "aten::mm"),
	      "torch's bare array, an event over several lines (rc %d, n %d: %s)",
	      g.rc, g.n, g.err);
	write_file(path, object, strlen(object));
	CHECK(reader_open(&r, path, 0, err, sizeof(err)) == 0, "a Kineto object opens");
	CHECK(reader_meta(r)->container && reader_meta(r)->has_base &&
	      reader_meta(r)->base_ns == 1700000000000000000LL &&
	      reader_meta(r)->distributed_info &&
	      strstr(reader_meta(r)->distributed_info, "\"rank\": 1"),
	      "its base time and distributedInfo, written after traceEvents, are read first");
	CHECK(reader_next(r, &e, err, sizeof(err)) == 1 && e.ts_ns == 5500 &&
	      reader_next(r, &e, err, sizeof(err)) == 0, "then its one event");
	reader_close(r);
}

static void check_gzip(void)
{
	char buf[1 << 16];
	const char *gz = path_in("t.pfw.gz");
	struct got g;
	int n = snprintf(buf, sizeof(buf), "[\n");

	for (int i = 0; i < 40; i++)
		n += snprintf(buf + n, sizeof(buf) - n, "%s\n", LINES[i % NLINES]);
	write_gzip(gz, buf, n, 1);
	g = read_all(gz, 0);
	CHECK(g.rc == 0 && g.n == 40, "gzip, one member: 40 events (%d %s)", g.n, g.err);
	write_gzip(gz, buf, n, 5);
	g = read_all(gz, 0);
	CHECK(g.rc == 0 && g.n == 40, "gzip, five members (as -D's suspended files are)");

	/* cut the stream short: an error naming the file and the line */
	{
		FILE *f = fopen(gz, "r");
		char raw[1 << 16];
		size_t len = fread(raw, 1, sizeof(raw), f);

		fclose(f);
		write_gzip(gz, buf, n, 1);
		f = fopen(gz, "r");
		len = fread(raw, 1, sizeof(raw), f);
		fclose(f);
		write_file(gz, raw, len - 12);
	}
	g = read_all(gz, READER_STRICT);
	CHECK(g.rc == -ENODATA && strstr(g.err, "t.pfw.gz':") && strstr(g.err, "cut short"),
	      "a gzip stream cut short, READER_STRICT: '%s'", g.err);
	/* as a SIGKILLed tracer leaves it: read up to the last whole line */
	for (unsigned int flags = 0; flags <= READER_SKIM; flags += READER_SKIM) {
		struct reader *r;
		struct rec e;
		char err[256];
		uint64_t line = 0, events = 0;
		int rc = reader_open(&r, gz, flags, err, sizeof(err));
		bool cut = false;

		if (!rc) {
			while ((rc = reader_next(r, &e, err, sizeof(err))) > 0)
				events++;
			cut = reader_cut(r, &line);
		}
		reader_close(r);
		CHECK(rc == 0 && cut && events > 0 && events < 40 && line == events + 1,
		      "a gzip stream cut short%s: read to its last whole line, line %llu, "
		      "%llu events (rc %d: %s)", flags ? ", skimmed" : "",
		      (unsigned long long)line, (unsigned long long)events, rc, rc ? err : "");
	}
}

static void check_bad(void)
{
	static const struct {
		const char *text, *want;
		bool in_args;
	} cases[] = {
		{ "[\n{\"name\":\"a\",\"ph\":\"X\"}\n{\"name\":\"b\",\"ph\":X}\n", "':3: an event that does not parse", false },
		{ "[\n{\"name\":\"a\",\"ph\":\"X\"}\n{\"name\":\"b\",\"ph\":\"X\",\"args\":{\"k\":tru}}\n", "':3: ", true },
		{ "\x7f" "ELF\x02\x01", "':1: neither a .pfw trace nor a Chrome trace", false },
		{ "", "':1: empty", false },
		{ "{\"displayTimeUnit\":\"ns\"}\n", "':1: not a trace event", false },
		{ "[\n{\"name\":\"a\",\"ph\":\"X\",\"args\":{\"k\":\"unterminated}\n", "ends inside an event", false },
		{ "[\n\n\n{\"name\":\"a\"}\n", "':4: not a trace event", false },
		{ "[\n{\"name\":\"a\",\"ph\":\"X\"} 17\n", "':2: expected an event object", false },
		/* a base time out of range refuses the file (an event's: see
		 * check_out_of_range) */
		{ "{\"traceEvents\":[\n{\"name\":\"a\",\"ph\":\"X\",\"ts\":1,\"dur\":1}],\n\"baseTimeNanoseconds\": 9223372036854775807}", "':3: \"baseTimeNanoseconds\" out of range", false },
	};
	const char *path = path_in("bad.pfw");
	char nested[8192];
	struct got g;
	int n;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		write_file(path, cases[i].text, strlen(cases[i].text));
		for (unsigned int flags = 0; flags <= READER_SKIM; flags += READER_SKIM) {
			/* a skim does not look into args: the full read does */
			if (flags && cases[i].in_args)
				continue;
			g = read_all(path, flags);
			CHECK(g.rc < 0 && strstr(g.err, cases[i].want),
			      "bad input %zu%s: '%s'", i, flags ? " (skimmed)" : "", g.err);
		}
	}
	/* 2000 nested arrays that the file never closes: refused, not a crash */
	n = snprintf(nested, sizeof(nested), "[\n{\"name\":\"a\",\"ph\":\"X\",\"args\":");
	for (int i = 0; i < 2000; i++)
		nested[n++] = '[';
	nested[n++] = '\n';
	write_file(path, nested, n);
	g = read_all(path, 0);
	CHECK(g.rc < 0 && strstr(g.err, "ends inside an event"),
	      "2000 nested arrays never closed are refused: '%s'", g.err);
}

/* An event whose ts, dur or ts + dur is out of range (a traced process
 * writes the times of its own ring): left out and counted, the line of
 * the first kept; READER_STRICT refuses it, naming the line. */
static void check_out_of_range(void)
{
	static const struct {
		const char *text, *want;
		int events;
		uint64_t skipped, line;
	} cases[] = {
		{ "[\n{\"name\":\"a\",\"ph\":\"X\",\"ts\":9223372036854775,\"dur\":1}\n", "':2: \"ts\" out of range", 0, 1, 2 },
		{ "[\n{\"name\":\"a\",\"ph\":\"X\",\"ts\":1,\"dur\":-5}\n{\"name\":\"b\",\"ph\":\"X\",\"ts\":1,\"dur\":5}\n", "':2: \"dur\" out of range", 1, 1, 2 },
		{ "{\"name\":\"a\",\"ph\":\"X\",\"ts\":1,\"dur\":1}\n{\"name\":\"a\",\"ph\":\"X\",\"ts\":4611686018427387,\"dur\":1}\n", "':2: \"ts\" + \"dur\" out of range", 1, 1, 2 },
		{ "[{\"name\":\"a\",\"ph\":\"X\",\"ts\":1e300,\"dur\":1}]", "':1: \"ts\" out of range", 0, 1, 1 },
		/* three among good ones, in a Kineto object (read twice: counted once) */
		{ "{\"traceEvents\":[\n{\"name\":\"a\",\"ph\":\"X\",\"ts\":1,\"dur\":1},\n"
		  "{\"name\":\"b\",\"ph\":\"X\",\"ts\":-1,\"dur\":1},\n{\"name\":\"c\",\"ph\":\"X\",\"ts\":2,\"dur\":1},\n"
		  "{\"name\":\"d\",\"ph\":\"M\",\"ts\":9223372036854775807},\n"
		  "{\"name\":\"e\",\"ph\":\"X\",\"ts\":3,\"dur\":9223372036854775}],\n"
		  "\"baseTimeNanoseconds\": 1}", "':3: \"ts\" out of range", 2, 3, 3 },
	};
	const char *path = path_in("range.pfw");

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		write_file(path, cases[i].text, strlen(cases[i].text));
		for (unsigned int flags = 0; flags <= READER_SKIM; flags += READER_SKIM) {
			struct reader *r;
			struct rec e;
			struct got g;
			char err[256] = "";
			uint64_t line = 0, skipped = 0;
			int rc = reader_open(&r, path, flags, err, sizeof(err)), events = 0;

			if (!rc) {
				while ((rc = reader_next(r, &e, err, sizeof(err))) > 0)
					events++;
				skipped = reader_skipped(r, &line);
				reader_close(r);
			}
			CHECK(rc == 0 && events == cases[i].events && skipped == cases[i].skipped &&
			      line == cases[i].line, "out of range %zu%s: %d events read, %llu "
			      "skipped, the first at line %llu (rc %d, %d, %llu, %llu: %s)", i,
			      flags ? " (skimmed)" : "", cases[i].events,
			      (unsigned long long)cases[i].skipped,
			      (unsigned long long)cases[i].line, rc, events,
			      (unsigned long long)skipped, (unsigned long long)line, err);
			g = read_all(path, flags | READER_STRICT);
			CHECK(g.rc == -EINVAL && strstr(g.err, cases[i].want),
			      "out of range %zu%s, READER_STRICT: '%s'", i,
			      flags ? " (skimmed)" : "", g.err);
		}
	}
}

/* Valid JSON nested at any depth the bytes hold: read in a loop, with
 * no depth limit and no stack that grows with it. */
static void check_deep(void)
{
	const size_t deep = 1000000;
	size_t cap = 2 * deep + 4096, n = 0;
	char *buf = malloc(cap);
	const char *p, *path = path_in("deep.pfw");
	struct got g;

	/* the scanner alone: a million arrays, an object at the bottom */
	memset(buf, '[', deep);
	n = deep + sprintf(buf + deep, "{\"k\":[1,\"]\"]}");
	memset(buf + n, ']', deep);
	n += deep;
	p = buf;
	CHECK(js_skip(&p, buf + n) == JS_OK && p == buf + n,
	      "js_skip: a million nested arrays are one value");
	p = buf;
	CHECK(js_skip(&p, buf + n - 1) == JS_MORE, "js_skip: without its last ']', more is needed");
	buf[n - 300] = '}';
	p = buf;
	CHECK(js_skip(&p, buf + n) == JS_BAD,
	      "js_skip: a '}' for a '[' 300 levels up (past the first 256) is not JSON");
	memcpy(buf, "[{", 2);
	buf[n - 300] = ']';
	p = buf;
	CHECK(js_skip(&p, buf + n) == JS_BAD,
	      "js_skip: a ']' for the '{' a million levels up is not JSON");

	/* the reader: events with args 100 and 100000 deep, and after them */
	for (size_t depth = 100; depth <= 100000; depth *= 1000) {
		n = sprintf(buf, "[\n{\"name\":\"deep\",\"ph\":\"X\",\"ts\":1,\"dur\":1,\"args\":{\"a\":");
		for (size_t i = 0; i < depth; i++)
			n += sprintf(buf + n, "{\"k\":");
		n += sprintf(buf + n, "1");
		memset(buf + n, '}', depth);
		n += depth;
		n += sprintf(buf + n, ",\"ret\":4}}\n{\"name\":\"next\",\"ph\":\"X\",\"ts\":2,\"dur\":1}\n");
		write_file(path, buf, n);
		for (unsigned int flags = 0; flags <= READER_SKIM; flags += READER_SKIM) {
			g = read_all(path, flags);
			CHECK(g.rc == 0 && g.n == 2 && !strcmp(g.names[0], "deep") &&
			      !strcmp(g.names[1], "next"), "args %zu deep%s: the event and the "
			      "next are read (rc %d, n %d: %s)", depth, flags ? ", skimmed" : "",
			      g.rc, g.n, g.err);
		}
	}
	free(buf);
}

/* An event across the reader's buffer boundary (4 MiB) reads whole. */
static void check_big_events(void)
{
	const char *path = path_in("big.pfw");
	size_t len = 5u << 20, n = 0;
	char *buf = malloc(len + 200000);
	struct got g;
	int events = 0;

	n += sprintf(buf + n, "[\n");
	while (n < len) {
		n += sprintf(buf + n, "{\"name\":\"e\",\"cat\":\"C\",\"pid\":1,\"tid\":1,\"ts\":1,"
			     "\"dur\":1,\"ph\":\"X\",\"args\":{\"s\":\"");
		memset(buf + n, 'x', 100000);
		n += 100000;
		n += sprintf(buf + n, "\"}}\n");
		events++;
	}
	write_file(path, buf, n);
	g = read_all(path, 0);
	CHECK(g.rc == 0 && g.n == events, "100 kB events, %d of them, over buffer "
	      "refills (%s)", g.n, g.err);
	free(buf);
}

/* An event whose "args": ends where the bytes read so far end (issue 24):
 * the value after it is not there yet, whatever the buffer holds past
 * them. Two files, both with '[' (the reader's buffer is then one byte
 * behind the file):
 *   - the second event's first 4 MiB end with "args": and fill the
 *     buffer, so the byte after it is past the allocation (ASan);
 *   - the file ends with "args": after a short last read, where the
 *     buffer still holds "{}}" from an earlier read: an event was taken
 *     from stale bytes, 3 bytes past the data, and the next read's
 *     memmove was given (size_t)-3. */
static void check_args_at_boundary(void)
{
	const char *path = path_in("edge.pfw");
	const size_t mib = 1u << 20, e2_at = 600000, tail = 1000;
	size_t len = 5 * mib, n;
	char *buf = malloc(len);
	struct got g;

	for (int skim = 0; skim <= 1; skim++) {
		/* the buffer full: E2 from buf[0] to the 4 MiB that fill it */
		{
			const char *e1 = "[\n{\"name\":\"a\",\"ph\":\"X\",\"ts\":1,\"dur\":1}\n";
			const char *e2 = "{\"name\":\"b\",\"ph\":\"X\",\"ts\":2,\"dur\":1,\"pad\":\"";
			const char *args = "\",\"args\":";
			size_t end = strlen(e1) - 1 + 4 * mib; /* E1's newline kept */

			n = sprintf(buf, "%s%s", e1, e2);
			memset(buf + n, 'y', end - strlen(args) - n);
			n = end - strlen(args);
			n += sprintf(buf + n, "%s{\"k\":1}}\n", args);
		}
		write_file(path, buf, n);
		g = read_all(path, skim ? READER_SKIM : 0);
		CHECK(g.rc == 0 && g.n == 2, "\"args\": at the end of a full buffer%s: "
		      "2 events (rc %d, n %d: %s)", skim ? " (skimmed)" : "", g.rc, g.n, g.err);

		/* the file ends with "args":, stale "{}}" after it */
		{
			const char *e1 = "[\n{\"name\":\"a\",\"ph\":\"X\",\"ts\":1,\"dur\":1,\"args\":{\"s\":\"";
			const char *e2 = "{\"name\":\"b\",\"ph\":\"X\",\"ts\":2,\"dur\":1,\"pad\":\"";
			const char *args = "\",\"args\":";
			size_t size = mib + tail, stale = mib - (e2_at - 1) + tail;

			n = sprintf(buf, "%s", e1);
			memset(buf + n, 'x', e2_at - 4 - n);
			memcpy(buf + stale, "{}}{\\\"", 6);
			n = e2_at - 4;
			n += sprintf(buf + n, "\"}}\n");
			n += sprintf(buf + n, "%s", e2);
			memset(buf + n, 'y', size - strlen(args) - n);
			n = size - strlen(args);
			n += sprintf(buf + n, "%s", args);
		}
		write_file(path, buf, n);
		g = read_all(path, skim ? READER_SKIM : 0);
		CHECK(g.rc < 0 && g.n == 1 && strstr(g.err, "ends inside an event"),
		      "a file that ends with \"args\":, stale bytes after it%s: 1 event, "
		      "then an error (rc %d, n %d: %s)", skim ? " (skimmed)" : "",
		      g.rc, g.n, g.err);
	}
	free(buf);
}

/* A file without '[' whose first event is not all in the first read
 * (issue 24): a sequence of events, not an empty container. Plain, its
 * first line over the 1 MiB read; gzipped, over what one inflate gives. */
static void check_big_first_event(void)
{
	const char *path = path_in("first.pfw"), *gz = path_in("first.pfw.gz");
	size_t pad = 2u << 20, n = 0;
	char *buf = malloc(pad + 4096);
	struct got g;

	n += sprintf(buf + n, "{\"id\":1,\"name\":\"read\",\"cat\":\"POSIX\",\"pid\":1,"
		     "\"tid\":1,\"ts\":1,\"dur\":1,\"ph\":\"X\",\"args\":{\"s\":\"");
	memset(buf + n, 'x', pad);
	n += pad;
	n += sprintf(buf + n, "\"}}\n%s\n", LINES[0]);
	write_file(path, buf, n);
	write_gzip(gz, buf, n, 1);
	for (unsigned int flags = 0; flags <= READER_SKIM; flags += READER_SKIM) {
		g = read_all(path, flags);
		CHECK(g.rc == 0 && g.n == 2, "no '[', a first line of 2 MiB%s: 2 events "
		      "(rc %d, n %d: %s)", flags ? ", skimmed" : "", g.rc, g.n, g.err);
		g = read_all(gz, flags);
		CHECK(g.rc == 0 && g.n == 2, "the same gzipped%s: 2 events (rc %d, n %d: %s)",
		      flags ? ", skimmed" : "", g.rc, g.n, g.err);
	}
	free(buf);
}

static void check_scanner(void)
{
	char out[64];
	struct span s = SPAN_LIT("a\\u00e9\\ud83d\\ude00\\n\\\"b"), v;
	int64_t x;

	CHECK(js_unescape(s, out, sizeof(out)) == 10 && !strcmp(out, "a\xc3\xa9\xf0\x9f\x98\x80\n\"b"),
	      "unescape: \\u, a surrogate pair, \\n, \\\"");
	CHECK(js_unescape(SPAN_LIT("sh"), out, 3) == 2 && !strcmp(out, "sh"),
	      "unescape fills the buffer exactly");
	CHECK(js_unescape(SPAN_LIT("\\u00e9\\u00e9"), out, 4) == 2,
	      "unescape never splits a character at the end");
	CHECK(js_int(SPAN_LIT("-9223372036854775808"), &x) == false &&
	      js_int(SPAN_LIT("9223372036854775807"), &x) && x == INT64_MAX &&
	      !js_int(SPAN_LIT("99999999999999999999"), &x) && !js_int(SPAN_LIT("1.5"), &x) &&
	      !js_int(SPAN_LIT(""), &x) && !js_int(SPAN_LIT("-"), &x),
	      "js_int: the int64 range, nothing else");
	CHECK(js_us_to_ns(SPAN_LIT("12.3456"), &x) && x == 12345 &&
	      js_us_to_ns(SPAN_LIT("7"), &x) && x == 7000 && !js_us_to_ns(SPAN_LIT("1.2e3"), &x),
	      "js_us_to_ns: µs to the ns, decimals past three dropped");
	CHECK(js_get(SPAN_LIT("{\"a\":{\"b\":1},\"b\":\"x\\\"}\"}"), "b", &v) &&
	      v.len == 6, "js_get finds a top-level key after a nested one of the same name");
}

/* An event's ends to 10 ns: ns10d (D…DSS) as written now, ns10 (SSEE)
 * as earlier traces have it, and an ns10d that contradicts dur. */
static void check_fine_times(void)
{
	struct rec e = { .ts_ns = 10000, .dur_ns = 2000 };
	struct rec_fine f = REC_FINE_NONE;
	int64_t s, t;

	CHECK(rec_fine_member(SPAN_LIT("ns10d"), SPAN_LIT("20631"), &f) && f.ns10d == 20631,
	      "ns10d is taken");
	rec_span_ns(&e, f, &s, &t);
	CHECK(s == 10310 && t == 12370, "ns10d 20631 at 10 us, dur 2: 10.31 to 12.37 us "
	      "(%lld %lld)", (long long)s, (long long)t);
	f = REC_FINE_NONE;
	CHECK(rec_fine_member(SPAN_LIT("ns10"), SPAN_LIT("3137"), &f) && f.ns10 == 3137 &&
	      !rec_fine_member(SPAN_LIT("ns"), SPAN_LIT("1"), &f), "ns10 is taken, ns not");
	rec_span_ns(&e, f, &s, &t);
	CHECK(s == 10310 && t == 12370, "ns10 3137, the same times");
	f = (struct rec_fine){ .ns10d = 30031, .ns10 = -1 };
	rec_span_ns(&e, f, &s, &t);
	CHECK(s == 10000 && t == 12000, "an ns10d ending in another us than dur says is not believed");
	f = (struct rec_fine){ .ns10d = INT64_MAX, .ns10 = -1 };
	rec_span_ns(&e, f, &s, &t);
	CHECK(s == 10000 && t == 12000, "nor a huge one");
	f = (struct rec_fine){ .ns10d = 99, .ns10 = -1 };
	e.dur_ns = 0;
	rec_span_ns(&e, f, &s, &t);
	CHECK(s == 10990 && t == 10990, "an instant at 10.99 us");
}

int main(void)
{
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	check_scanner();
	check_fine_times();
	check_shapes();
	check_chrome_shapes();
	check_v2();
	check_gzip();
	check_bad();
	check_out_of_range();
	check_deep();
	check_big_events();
	check_args_at_boundary();
	check_big_first_event();
	check_rm_tree(tmpdir);
	return check_done();
}
