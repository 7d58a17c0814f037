/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* One trace file being written: batches lines for the output and
 * remembers which hashes already have their FH/SH metadata line. */
#ifndef WRITE_SINK_H
#define WRITE_SINK_H

#include <stdbool.h>
#include <stdint.h>
#include "dftrace.h"
#include "lib/hmap.h"
#include "lib/json.h"
#include "write/output.h"

/* The task the last process_name/thread_name check was about. */
struct sink_named {
	uint32_t pid, tid;
	char comm[DFT_COMM_LEN], thread_comm[DFT_COMM_LEN];
};

/* Lines of buf up to end, since the run before: all of one thread's
 * events (tid), or SINK_META/SINK_LAST lines (sink.c says why). */
struct sink_run {
	uint32_t tid;
	uint32_t end;
};

/* Lines that go before every thread's (what was written between events:
 * FH, SH, names, CM marks, start) or after (end). */
#define SINK_META 0u
#define SINK_LAST UINT32_MAX

struct sink {
	struct output *out;	/* NULL: lines stay in buf (tests) */
	struct jbuf buf;	/* lines not yet handed to out */
	struct sink_run *runs;	/* buf's lines, as runs */
	uint32_t nruns, capruns;
	bool runs_failed;	/* out of memory: buf goes out as written */
	uint32_t line_tid;	/* the thread of the event being written */
	struct hmap seen;	/* hashes whose FH/SH/HH line is written */
	struct hmap named;	/* task -> hash of the name last written */
	struct sink_named last_named;
	uint64_t events;	/* "X" events written */
	uint32_t layers;	/* v2: 1 << the type of each event written */
	uint32_t pid;		/* per-process sink: its process; else 0 */
	/* In an outdir (-D): */
	uint32_t gen;		/* the pid's n-th file in this run, from 1 */
	uint32_t slot;		/* index in the outdir's list */
	bool suspended;		/* its descriptor is closed for now */
	uint64_t last_use;
	/* --flight: every line of this sink, but the start, end and what
	 * tee_off keeps out (totals), is copied to tee, the flight sink.
	 * end_lo, end_hi: the earliest and latest end of the events written
	 * since the flight sink was last emptied (write/flightbuf.h). */
	struct sink *tee;
	bool tee_off;
	uint64_t end_lo, end_hi;
	uint64_t last_end_ns;	/* the end of the event being written */
	/* --flight without -P: syscalls are kept as binary records
	 * (write/flightrec.h) in recs, not as lines in buf; rec_open: the
	 * event being written is one. */
	bool records, rec_open;
	struct jbuf recs;
	uint32_t nrecs;
};

int sink_open(const struct output_opts *o, struct sink **out, char *err,
	      size_t errlen);
/* A sink whose lines stay in memory, in s->buf: for tests. */
struct sink *sink_memory(void);
/* Every FH/SH/HH and name line is written again at its next use. */
void sink_forget_seen(struct sink *s);
/* True the first time hash is offered: the caller then writes its line. */
bool sink_first_sight(struct sink *s, uint64_t hash);
/* Ends a line of buf: one of thread tid's events, or SINK_META/LAST. */
void sink_new_run(struct sink *s, uint32_t tid);
/* Copies the line(s) being ended to s->tee. */
void sink_tee_line(struct sink *s, uint32_t tid);
/* From now, s's lines are copied to tee (NULL: no more); what s holds
 * but has not yet marked (its start) is not. */
void sink_set_tee(struct sink *s, struct sink *tee);
static inline void sink_line_end(struct sink *s, uint32_t tid)
{
	if (__builtin_expect(s->tee != NULL, 0))
		sink_tee_line(s, tid);
	if (s->nruns && s->runs[s->nruns - 1].tid == tid)
		s->runs[s->nruns - 1].end = (uint32_t)s->buf.len;
	else
		sink_new_run(s, tid);
}
/* Marks what was written since the last line marked, if anything, as
 * SINK_META: called as an event begins, so that no line written between
 * events needs a mark of its own. */
static inline void sink_meta_so_far(struct sink *s)
{
	uint32_t marked = s->nruns ? s->runs[s->nruns - 1].end : 0;

	if (s->buf.len > marked)
		sink_line_end(s, SINK_META);
}
/* An event that ends at end_ns was written (the flight window's times). */
static inline void sink_event_end(struct sink *s, uint64_t end_ns)
{
	s->last_end_ns = end_ns;
	if (!s->end_lo || end_ns < s->end_lo)
		s->end_lo = end_ns;
	if (end_ns > s->end_hi)
		s->end_hi = end_ns;
}
/* Hands buf to the output, its lines grouped by thread. */
int sink_write_lines(struct sink *s);
/* Lines are handed to the output in batches of this many bytes. */
#define SINK_DRAIN_BYTES (256u << 10)
/* Hands buffered lines to the output once enough have gathered. */
static inline int sink_maybe_drain(struct sink *s)
{
	if (__builtin_expect(s->buf.err, 0))
		return s->buf.err; /* out of memory: lines are garbage */
	if (s->buf.len < SINK_DRAIN_BYTES || !s->out)
		return 0;
	return sink_write_lines(s);
}
int sink_flush(struct sink *s);
/* Flushes, then lets go of the file descriptor (see output_suspend). */
int sink_suspend(struct sink *s);
int sink_resume(struct sink *s, char *err, size_t errlen);
int sink_close(struct sink *s, char *err, size_t errlen);
void sink_abort(struct sink *s);

#endif
