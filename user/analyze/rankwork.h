/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What each rank of a job did, for the rank_imbalance finding: its I/O
 * time, and its own time between its collectives.
 *
 * A synchronising collective (analyze/hostclock.h) ends for every rank
 * once the last has come, so a rank's wait for the others is inside the
 * call, and its time from one collective's end to its next one's start
 * is its own: its compute, I/O and whatever else it did. Summed over its
 * collectives, that is the step time the rank needs, the others' waits
 * for it taken out; the slowest rank's is what the job's steps take.
 *
 * Bounded: at most RANKWORK_CALLS collectives are kept; past them the
 * own times are not judged (rank_work_figures() says so).
 */
#ifndef ANALYZE_RANKWORK_H
#define ANALYZE_RANKWORK_H

#include <stdint.h>
#include "analyze/events.h"
#include "lib/hmap.h"

#define RANKWORK_CALLS (1u << 22)

struct rank_call {
	int32_t rank;
	int64_t start, end;
};

struct rank_work {
	struct hmap io;		/* rank -> its I/O's ns */
	struct rank_call *calls;
	uint32_t ncalls, capcalls;
	uint64_t calls_left_out;
	int err;
};

struct rank_figures {
	int32_t rank;
	int64_t io_ns;
	int64_t own_ns;		/* between its collectives; 0 if fewer than two */
	uint32_t collectives;
};

void rank_work_add(struct rank_work *w, const struct ev_input *in, const struct ev *e);
/* Each rank's figures, by rank, in *out (n of them, free()d by the
 * caller): 0 or -ENOMEM. Past RANKWORK_CALLS no rank has collectives. */
int rank_work_figures(struct rank_work *w, struct rank_figures **out, uint32_t *n);
void rank_work_free(struct rank_work *w);

#endif
