/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The kernel's totals of folded calls (bpf/fold.h): drained from one map
 * while the kernel fills the other, every interval (--profile's, else a
 * second, for what overload folded) and at the end.
 */
#ifndef CAPTURE_FOLDS_H
#define CAPTURE_FOLDS_H

#include <stdint.h>
#include <stdio.h>
#include "correlate/trace.h"

struct dftrace_bpf;

struct folds {
	int map_fd[2];
	int names_fd;		/* files opened with no room to name them */
	/* the task iterator of live threads' kept calls and running totals,
	 * read at the end (a link); -1: none */
	int kept_iter_fd;
	uint32_t *gen;		/* the kernel's fold_gen: the map it fills */
	uint32_t *made;		/* the kernel's fold_made: a total since */
	uint64_t interval_ns, next_ns;
	/* the rings of live threads, read at the end; NULL: none */
	const struct liverings *rings;
	FILE **recording;	/* $DFTRACE_BPF_RECORD's, or NULL */
};

void folds_init(struct folds *f, struct dftrace_bpf *skel, int kept_iter_fd,
		uint64_t interval_ns);
/* If the interval is over: the filled map's totals, each to the trace. */
void folds_tick(struct folds *f, struct trace *t, uint64_t now_ns);
/* The trace's lost_name (struct trace_config); ctx: the struct folds. */
bool folds_lost_name(void *ctx, const struct dft_name_key *k, char *path, size_t size);
/* The trace's peek_kept: the live threads' kept records, read now. */
void folds_peek_kept(void *ctx, struct trace *t);
/* Both maps and the threads' running totals, once nothing adds to them
 * any more. */
void folds_finish(struct folds *f, struct trace *t);
/* trace_config.process_ended: the totals of a process that ended, taken
 * from the map being filled (ctx: the struct folds). */
void folds_process_ended(void *ctx, struct trace *t, uint32_t pid);

#endif
