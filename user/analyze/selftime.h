/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The part of the profile (profile.h) that finds each event's parent, so
 * that a child gives its time back: by DFTracer's ids (p_idx), kept
 * until the parent comes in a trace (written by end) or while it may
 * still get children in a merged file (by start); by what encloses them
 * for torch's ranges, which have no ids. profile.c calls it; nothing
 * else does.
 */
#ifndef ANALYZE_SELFTIME_H
#define ANALYZE_SELFTIME_H

#include <stdbool.h>
#include <stdint.h>
#include "analyze/profile.h"

/* The rows an event went to, one per grouping; a torch range's cat and
 * name too (copied after the rows), for the events it encloses. */
struct placed {
	int64_t end;
	struct span cat, name;
	uint32_t rows[];
};

/* A child of dur ns in rows kid is inside a parent in rows parent (see
 * profile.h's Total and Self). */
void selftime_give_back(struct profile *p, const uint32_t *parent, const uint32_t *kid, int64_t dur,
	       bool region);
/* e, a region or a call with a parent, by DFTracer's ids. */
int selftime_link_ids(struct profile *p, uint16_t input, const struct ev *e, const uint32_t *rows,
		bool region);
/* e, a torch range with no ids, by what encloses it on its thread. */
int selftime_link_time(struct profile *p, uint16_t input, const struct ev *e, const uint32_t *rows);
/* Regions that ended before now get no more children. */
void selftime_forget(struct profile *p, int64_t now);
/* In a merged file, the innermost torch range open on e's thread when it
 * starts: *inner is e with that phase; NULL if none. */
const struct placed *selftime_torch_phase(struct profile *p, uint16_t input, const struct ev *e,
				 struct ev *inner);
void selftime_free(struct profile *p);

#endif
