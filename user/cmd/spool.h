/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A merge of more inputs than it reads at once goes in rounds: each round
 * converts a few inputs into a spool, an unnamed temporary file of their
 * rendered events in time order, and the spools are merged by time, a
 * few at a time, so that memory and descriptors stay bounded however many
 * inputs there are.
 */
#ifndef CMD_SPOOL_H
#define CMD_SPOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "lib/lane.h"

#define SPOOL_FAN 32		/* spools merged at once */
#define SPOOL_LEVELS 8		/* SPOOL_FAN^8 rounds */

/* Where merged events go: 0 or -errno. */
typedef int (*spool_put_fn)(void *ctx, int64_t ts, const char *text, size_t len);

/* A new spool, empty, for writing: 0, or -errno with a message. */
int spool_new(FILE **f, char *err, size_t errlen);
/* One event, at its time. */
int spool_put(void *f, int64_t ts, const char *text, size_t len);
/* What went wrong with a spool (rc: -errno), into err. */
void spool_say(char *err, size_t errlen, int rc);

#define SPOOL_QUEUE SPOOL_FAN	/* spools handed to the merging thread, waiting */

/* The spools of the rounds so far: a level's SPOOL_FAN spools become one
 * of the next level as soon as they are there. Zeroed, spools_add()
 * merges in the caller; after spools_start(), a thread of its own takes
 * the spools in the order given and merges them (the same files either
 * way), while the caller goes on converting. */
struct spools {
	FILE *at[SPOOL_LEVELS][SPOOL_FAN];
	int n[SPOOL_LEVELS];
	struct lane lane;	/* the merging thread, if running */
	FILE *queue[SPOOL_QUEUE];
	unsigned qhead, qn;
	int rc;			/* the thread's first error */
	char err[256];
};

/* Merges in a thread from now on; 0, or -errno (then in the caller). */
int spools_start(struct spools *s);
/* Takes f (written, the round's): 0, or -errno with a message (of this
 * spool, or an earlier one the thread merged). */
int spools_add(struct spools *s, FILE *f, char *err, size_t errlen);
/* Every event of every spool, in time order, to put; the spools go. */
int spools_drain(struct spools *s, spool_put_fn put, void *ctx, char *err,
		 size_t errlen);
void spools_free(struct spools *s);

#endif
