/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Bytes moved over time, per process, in a fixed number of bins that
 * widen (doubling) as events fall outside them: one pass, whatever the
 * span, memory by processes only. A call's bytes count in the bin where
 * it starts.
 */
#ifndef ANALYZE_TIMELINE_H
#define ANALYZE_TIMELINE_H

#include <stdint.h>
#include "lib/hmap.h"

#define TIMELINE_BINS 240

struct timeline_series {
	uint64_t proc;		/* ev_process(): input << 32 | pid */
	uint64_t total;
	uint64_t bytes[TIMELINE_BINS];
};

struct timeline {
	int64_t origin, width;	/* bin i is [origin + i*width, ...); width 0: empty */
	struct hmap index;	/* proc -> series index + 1 */
	struct timeline_series **series;
	uint32_t n, cap;
};

/* 0 or -ENOMEM. */
int timeline_add(struct timeline *t, uint64_t proc, int64_t start, uint64_t bytes);
void timeline_free(struct timeline *t);

#endif
