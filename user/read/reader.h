/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The trace reader the offline tools share (merge, summary, report): the
 * events of one file, one at a time, whatever its shape:
 *   - dftrace-bpf's and DFTracer's .pfw lines, gzipped or not, with or
 *     without the opening '[' and closing ']', with or without commas;
 *   - a JSON array of events (torch.profiler's export_chrome_trace);
 *   - a {"traceEvents": [...], ...} object (Kineto, tensorboard's
 *     *.pt.trace.json[.gz]), whose other keys are in reader_meta.
 * Spans in a struct rec point into the reader's buffer and stay valid
 * until the next reader_next().
 */
#ifndef READ_READER_H
#define READ_READER_H

#include <stdbool.h>
#include <stdint.h>
#include "read/jscan.h"

#define REC_ARGS 48

/* A time in a trace (ts, dur, ts + dur, a base time) is 0 to 2^62 - 1
 * ns, 146 years: the sums and differences of times that the tools take
 * then stay within int64. An event with one outside is left out (see
 * READER_STRICT); a base time outside refuses the file. */
#define REC_TIME_MAX ((INT64_C(1) << 62) - 1)

struct rec {
	struct span raw;	/* the whole object */
	struct span name, cat;	/* string contents, still escaped */
	struct span args;	/* the args object's text, or empty */
	struct span pid_text, tid_text; /* as written: a number or a string */
	int64_t pid, tid;	/* when they are numbers */
	bool pid_num, tid_num;
	char ph;		/* 'X', 'M', 'i'...; 0 if absent; v2's integer as
				 * its letter (lib/traceformat.h) */
	bool aggregated;	/* v2's "ph":3: calls folded (args.dft_cnt), its
				 * dur their summed time, from args */
	bool has_ts, has_dur, has_id;
	int64_t ts_ns, dur_ns;	/* ts and dur (µs in the file) in ns */
	int64_t id;
	const char *bad;	/* why the event is refused, or NULL */
	/* args split into its members, on a full read of a flat enough
	 * object; nargs -1 when not (skimmed, or more than REC_ARGS) */
	int nargs;
	struct span arg_key[REC_ARGS], arg_val[REC_ARGS];
};

/* What dftrace-bpf's args say below the µs of ts and dur, in steps of
 * 10 ns (-1 when absent): "ns10d", D…DSS, the duration then the start's
 * digits; or, in traces written before it, "ns10", SSEE, the digits of
 * the start and of the end. */
struct rec_fine {
	int64_t ns10d, ns10;
};

#define REC_FINE_NONE ((struct rec_fine){ -1, -1 })

/* Takes the member k: v into f when it is one of those; true if so. */
static inline bool rec_fine_member(struct span k, struct span v, struct rec_fine *f)
{
	if (k.len < 4 || k.p[0] != 'n' || k.p[1] != 's')
		return false;
	if (SPAN_IS(k, "ns10d"))
		return js_int(v, &f->ns10d);
	if (SPAN_IS(k, "ns10"))
		return js_int(v, &f->ns10);
	return false;
}

/* An event's start and end in ns: ts and ts + dur, refined by f. An
 * "ns10d" that disagrees with dur's µs (a file edited, or not ours) is
 * not believed. */
static inline void rec_span_ns(const struct rec *e, struct rec_fine f, int64_t *start,
			       int64_t *end)
{
	int64_t s, d;

	*start = e->ts_ns;
	*end = e->ts_ns + e->dur_ns;
	if (f.ns10d >= 0 && f.ns10d / 100 <= e->dur_ns / 10 + 100) {
		s = e->ts_ns + f.ns10d % 100 * 10;
		d = f.ns10d / 100 * 10;
		if ((s + d) - (s + d) % 1000 == *end) {
			*start = s;
			*end = s + d;
		}
	} else if (f.ns10 >= 0 && f.ns10 < 10000) {
		*start += f.ns10 / 100 * 10;
		*end += f.ns10 % 100 * 10;
	}
}

/* otherData.producer of dftrace-bpf merge's output. */
#define MERGE_PRODUCER "dftrace-bpf merge"

/* A {"traceEvents": ...} file's other keys that matter. */
struct reader_meta {
	bool container;		/* the file is such an object */
	bool has_base;
	int64_t base_ns;	/* baseTimeNanoseconds */
	char *distributed_info;	/* distributedInfo's JSON text, or NULL */
	bool merged;		/* otherData.producer is dftrace-bpf merge */
};

struct reader;

enum reader_flags {
	/* A first look at a .pfw: each line is one event with args last, as
	 * DFTracer and dftrace-bpf write them, so an event's args are not
	 * read through but taken to run to the end of its line (js_get on
	 * them still works; raw is the line). A line that is not like that
	 * is read in full. What this misses (two events on one line), a full
	 * read finds: the caller compares the counts (reader_events). */
	READER_SKIM = 1 << 0,
	/* A gzip stream cut short (a tracer SIGKILLed, a node that went
	 * down) is an error, and so is an event whose ts, dur or ts + dur is
	 * out of range. Without it the file is read up to the last whole line
	 * before the cut (reader_cut() says which), and such an event is
	 * left out and counted (reader_skipped()). */
	READER_STRICT = 1 << 1,
	/* Only a regular file: a path that a trace recorded. */
	READER_REGULAR = 1 << 2,
};

/* 0, or -errno with a one-line message ("'FILE': why") in err. */
int reader_open(struct reader **r, const char *path, unsigned int flags,
		char *err, size_t errlen);
/* The next event: 1, 0 at the end, or -errno with a message naming the
 * file and line. */
int reader_next(struct reader *r, struct rec *e, char *err, size_t errlen);
const struct reader_meta *reader_meta(const struct reader *r);
const char *reader_path(const struct reader *r);
/* Events returned so far. */
uint64_t reader_events(const struct reader *r);
/* Whether the file was found cut short (and read up to *line, its last
 * whole line); once the reader has reached its end. */
bool reader_cut(const struct reader *r, uint64_t *line);
/* Events left out so far for a time out of range, and the line of the
 * first (READER_STRICT refuses them instead). */
uint64_t reader_skipped(const struct reader *r, uint64_t *first_line);
/* Says on stderr, once the file is read, what of it was not read, a
 * line each: "warning: 'F': skipped N events whose times are out of
 * range (first at line L)", "warning: 'F' is cut short after line N;
 * read up to it". */
void reader_warn(const struct reader *r);
void reader_close(struct reader *r);

#endif
