/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * merge's second pass: every input converted to Chrome events and put
 * out in time order, through a reorder window. More inputs than it reads
 * at once (CONVERT_OPEN) go in rounds, each into a spool (cmd/spool.h),
 * and the spools are merged by time.
 *
 * A round of traces alone touches nothing another round does (their
 * thread names wait for the round's commit: render/chrome.h), so rounds
 * run on every core; they are committed (names taken, spools added) in
 * order, so the output is the same on any number of cores. A round with
 * a torch trace or an earlier merge (new track ids, names as they come)
 * is converted by the committing thread, in its turn.
 */
#ifndef CMD_CONVERT_H
#define CMD_CONVERT_H

#include <stddef.h>
#include <stdint.h>
#include "analyze/sources.h"
#include "cmd/progress.h"
#include "lib/hmap.h"
#include "lib/json.h"

/* Inputs read at once by a round (some 5 MB and a descriptor each). */
#define CONVERT_OPEN 4

/* One event out, in time order: 0 or -errno. */
typedef int (*convert_out_fn)(void *ctx, const char *text, size_t len);

struct convert {
	struct source_set *set;
	struct hmap named;	/* threads and processes named (chrome_conv) */
	struct jbuf names;	/* the thread_name lines, inputs in order */
	convert_out_fn out;
	void *ctx;
	struct progress *progress;
	int jobs;		/* 0: every core it may use */
	uint64_t read, total;	/* events converted (__atomic), of all */
	char err[512];
};

/* Every input of set, in time order, to out: 0, or -errno with a
 * message in cv->err. cv->names holds the thread names after. */
int convert_run(struct convert *cv);
void convert_free(struct convert *cv);

#endif
