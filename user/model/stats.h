/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* What the record path counts, for the status line and the exit summary:
 * every layer counts here, none needs another's header for it. */
#ifndef MODEL_STATS_H
#define MODEL_STATS_H

#include <stdbool.h>
#include <stdint.h>
#include "model/phases.h"
#include "model/syscalls.h"

#define TRACE_MAX_OPS SC_MAX_NAMES
#define TRACE_ERR_LEN 512

struct trace_stats {
	uint64_t events;	/* "X" events written */
	uint64_t records;	/* kernel records consumed */
	uint64_t count[TRACE_MAX_OPS];	/* by sc_name_index() */
	uint64_t bytes[TRACE_MAX_OPS];
	struct phase_totals phases;	/* time and bytes by annotated phase */
	uint64_t untracked_children;	/* forks the kernel could not track */
	uint64_t lost_in_files;	/* -D: losses written to a process's file */
	uint64_t lost_elsewhere; /* -D: losses no file reports (full map) */
	uint64_t privileged;	/* execs that raised privileges: untraced */
	uint64_t files_reopened; /* -D: files closed for want of descriptors */
	uint64_t folds_orphaned; /* folded calls dropped: no memory for their process */
	uint64_t swept;		/* processes forgotten dead: their exit was lost */
	uint32_t live;		/* traced processes still running */
	int write_error;	/* first output error, negative errno */
	char write_error_msg[TRACE_ERR_LEN]; /* and what it was */
};

/* calls of the operation at index i (sc_name_index), which moved bytes
 * (counted when the operation moves data and bytes > 0) in the region
 * cat/name (NULL: none). One rule for every way a call is counted. */
static inline void stats_count(struct trace_stats *st, int i, uint64_t calls,
			       bool moves_bytes, int64_t bytes,
			       const struct istr *cat, const struct istr *name)
{
	if (i < 0)
		return;
	st->count[i] += calls;
	if (!moves_bytes || bytes <= 0)
		return;
	st->bytes[i] += bytes;
	if (cat)
		phase_add_bytes(&st->phases, cat, name, bytes);
}

#endif
