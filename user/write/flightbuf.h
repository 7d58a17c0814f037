/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * --flight's window: the last SECONDS of the lines a full trace would
 * have written, kept in memory and nowhere else until a dump asks.
 *
 * Lines come from the flight sink (write/files.c routes to it) in
 * batches. Event lines gather in a pending buffer, which is sealed into
 * a chunk, one gzip member, every FLIGHT_CHUNK_BYTES or
 * FLIGHT_CHUNK_NS; a chunk knows the earliest and latest end of its
 * events. Chunks go, oldest first, once their last event ended before
 * the window, or while the memory cap binds (the window is then
 * shorter: flightbuf_span() says what it covers). The metadata lines
 * (FH, SH, HH, process and thread names, PR) are kept apart and whole,
 * so that a dump names files and processes met before its window.
 *
 * Syscalls come as binary records (write/flightrec.h) and their contexts
 * as context lines among the metadata; a dump formats them.
 */
#ifndef WRITE_FLIGHTBUF_H
#define WRITE_FLIGHTBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "lib/hmap.h"
#include "lib/json.h"
#include "write/sink.h"

/* An event kept as a binary record: FLIGHT_REC, its length (two bytes,
 * host order), the record. A context line, among the metadata:
 * FLIGHT_CTX, its key in 16 hex digits, the context's JSON, a newline.
 * No JSON line begins with either byte. */
#define FLIGHT_REC 0x01
#define FLIGHT_REC_HEAD 3
#define FLIGHT_CTX 0x02
#define FLIGHT_CTX_HEAD 17

#define FLIGHT_CHUNK_BYTES (256u << 10)
#define FLIGHT_CHUNK_NS 100000000ull

struct flight_chunk {
	uint64_t lo_ns, hi_ns;	/* its events' earliest and latest end */
	uint32_t events;
	uint32_t raw_len, z_len;
	unsigned char *z;	/* one gzip member of the lines */
	uint32_t map_len;	/* the pages z lies in, maybe more than z_len needs */
};

/* A chunk's pages once its chunk went, kept for a chunk to come: a
 * window at its length lets a chunk go for each it seals, and pages
 * taken afresh fault in one by one while unmapped ones cost every CPU
 * that ran the tracer an interrupt to flush their TLB (a third of the
 * tracer's time under a flood, here, and each of those interrupts
 * stops the traced program's CPU). */
struct flight_spare {
	unsigned char *p;
	uint32_t map_len;
};

#define FLIGHT_SPARES 8

/* One generation of metadata lines. */
struct flight_meta {
	struct jbuf lines;
	uint64_t last_chunk;	/* the last chunk that may use it: sealed's */
};

#define FLIGHT_META_GEN (64u << 10)

struct flight_span {
	uint64_t from_ns, to_ns;	/* the events' earliest and latest end */
	uint64_t events;
	uint64_t chunks;
};

struct flightbuf {
	uint64_t keep_ns;	/* --flight SECONDS */
	size_t cap;		/* --flight-mem */
	struct flight_chunk *chunks;	/* oldest first, from first */
	uint32_t first, n, capchunks;
	struct jbuf pending;	/* event lines not yet sealed */
	uint64_t pend_lo, pend_hi, pend_since;
	uint32_t pend_events;
	/* The metadata lines, once each, in generations: when the newest
	 * passes FLIGHT_META_GEN bytes (or a sixteenth of the cap), a new one
	 * begins and names_lost is set: the sink writes its names again as
	 * they are used. A generation goes once every chunk that may use
	 * it has gone, so a window always holds the names it uses. */
	struct flight_meta *gens;	/* oldest first, from gfirst */
	uint32_t gfirst, ngens, capgens;
	struct hmap meta_seen;	/* keys of the newest's lines (meta_key()) */
	bool names_lost;
	uint64_t sealed, dropped;	/* chunks sealed and let go, ever */
	struct flight_spare spares[FLIGHT_SPARES];
	uint32_t nspares;
	size_t used;		/* chunks' and spares' pages, meta and pending */
	uint64_t capped;	/* chunks dropped inside the window by the cap */
	uint64_t events_in;	/* event lines taken, ever */
	int err;		/* the first failure (-ENOMEM) */
};

int flightbuf_init(struct flightbuf *fb, uint64_t keep_ns, size_t cap);
void flightbuf_free(struct flightbuf *fb);
/* Takes s's lines and records and empties it: metadata to meta, events
 * to pending (their ends: s->end_lo, s->end_hi). */
void flightbuf_take(struct flightbuf *fb, struct sink *s, uint64_t now_ns);
/* Seals pending when it is big or old enough, then lets go of what the
 * window no longer needs: chunks whose last event ended before
 * min(now - keep, hold_ns) (hold_ns: 0, none), and more while over the
 * cap. */
void flightbuf_tick(struct flightbuf *fb, uint64_t now_ns, uint64_t hold_ns);
/* Seals pending now, whatever its size. */
void flightbuf_seal(struct flightbuf *fb);
/* What a dump of [from_ns, to_ns] would hold now. */
struct flight_span flightbuf_span(const struct flightbuf *fb, uint64_t from_ns,
				  uint64_t to_ns);
/* Formats a record's event as a line into out, unless it ended before
 * from_ns (0: it is wanted): 1 written, 0 left out, -EIO (not a record).
 * ctx_lines: the context lines' keys to the lines. */
typedef int (*flight_rec_fmt)(void *ctx, const unsigned char *rec, size_t len,
			      const struct hmap *ctx_lines, uint64_t from_ns,
			      struct jbuf *out);

/* Hands out(ctx, bytes, len) the metadata lines, then the lines of the
 * chunks that ended at or after from_ns and began at or before to_ns,
 * records formatted by fmt(fmt_ctx), but for events that ended before
 * from_ns (their ts and dur: wall-clock µs, wall_offset_ns past
 * CLOCK_MONOTONIC), whole lines each time; *events counts the event
 * lines: 0, or out's error, or -EIO (a chunk that does not inflate). */
int flightbuf_write(const struct flightbuf *fb, uint64_t from_ns, uint64_t to_ns,
		    int64_t wall_offset_ns, uint64_t *events, flight_rec_fmt fmt,
		    void *fmt_ctx, int (*out)(void *ctx, const void *bytes, size_t len),
		    void *ctx);

#endif
