/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * An output written by a thread of its own: the caller fills one buffer
 * while the thread writes (and gzips) the other, so that making the text
 * and compressing it take two cores. The bytes reach the output in the
 * order given; with no thread (none could be made), in the caller.
 */
#ifndef WRITE_HANDOFF_H
#define WRITE_HANDOFF_H

#include <stdbool.h>
#include <stddef.h>
#include "lib/json.h"
#include "lib/lane.h"

struct output;

#define HANDOFF_BYTES (1u << 20)	/* a buffer handed over when this full */

struct handoff {
	struct output *out;
	struct jbuf fill, full;	/* the caller's, the thread's */
	bool busy;		/* full is the thread's to write */
	struct lane lane;	/* the writing thread, if running */
	int rc;			/* the first failed write's */
};

/* 0, or -ENOMEM. */
int handoff_start(struct handoff *h, struct output *out);
/* len bytes for the output: 0, or the error of an earlier write. */
int handoff_put(struct handoff *h, const void *p, size_t len);
/* Everything given written; the thread gone: 0 or the first error. */
int handoff_end(struct handoff *h);

#endif
