/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Strict Chrome Trace Event JSON, which Perfetto, Chromium's DevTools and
 * speedscope all load: events of any input put on the merged timeline
 * (times relative to the merge's base, to the ns), ids remapped, file
 * paths on the events themselves, CM marks as instant events, and the
 * processes named after their rank, program, pid and host.
 */
#ifndef RENDER_CHROME_H
#define RENDER_CHROME_H

#include <stdbool.h>
#include <stdint.h>
#include "analyze/fhash.h"
#include "analyze/sources.h"
#include "lib/hmap.h"
#include "lib/json.h"
#include "read/reader.h"

/* A thread_name line of names, and the thread it names. */
struct chrome_name {
	uint64_t key;		/* pid << 32 | tid, output ids */
	size_t off, len;
};

/* What converting one input needs besides the source set. */
struct chrome_conv {
	struct source_set *set;
	struct source *src;
	struct fh_table fh;	/* dftrace: its files */
	struct hmap tracks;	/* torch: its tid -> struct track */
	struct jbuf names;	/* thread_name lines: a trace's, the torch tracks' */
	struct chrome_name *lines;	/* each of them */
	uint32_t nlines, caplines;
	struct jbuf args;	/* scratch: one event's args */
	struct hmap *named;	/* the merge's: pid << 32 | tid named so far */
};

/* named: shared by all inputs, so a thread is named once in the output;
 * only an earlier merge's events use it as they are converted (the
 * caller's thread). A trace's thread names wait in c->names, for
 * chrome_names_take: a conversion of traces alone touches nothing any
 * other conversion does, and can run on a thread of its own. */
void chrome_conv_init(struct chrome_conv *c, struct source_set *set,
		      struct source *src, struct hmap *named);
/* c's thread_name lines whose thread named has not seen (now seen),
 * after out's (",\n" between). */
void chrome_names_take(struct chrome_conv *c, struct hmap *named, struct jbuf *out);
void chrome_conv_free(struct chrome_conv *c);

/* Writes e as one event into out (no separator), with its output time in
 * *ts_ns for ordering; false if it is not written (FH lines and the like,
 * which the conversion keeps for itself). */
bool chrome_event(struct chrome_conv *c, const struct rec *e, struct jbuf *out,
		  int64_t *ts_ns);

/* process_name lines: "rank 3 · python3 [1234] @node07". */
void chrome_process_names(struct source_set *set, struct jbuf *out);

#endif
