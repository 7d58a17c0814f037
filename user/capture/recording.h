/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * $DFTRACE_BPF_RECORD: what reached the trace, for make bench's replay
 * (tests/bench/replay.c) and the tests that write one run twice. Each
 * item is a 4-byte size and its bytes: a ring record as it came, or one of
 * the kinds below, for what the tracer drained from the kernel's maps
 * (totals, names of files opened with no room in the ring) and when it
 * wrote the totals. Not for users: the layout is this build's.
 */
#ifndef CAPTURE_RECORDING_H
#define CAPTURE_RECORDING_H

#include <stdint.h>
#include <stdio.h>
#include "dftrace.h"
#include "fold.h"

/* The first byte of an item that is not a ring record: above every
 * enum dft_kind. */
enum recording_kind {
	REC_FOLD = 0xf0,	/* struct rec_fold: trace_fold() */
	REC_NAME,		/* struct rec_name: trace_name_file() */
	REC_WRITE_FOLDS,	/* the kind alone: trace_write_folds() */
};

struct rec_fold {
	uint8_t kind, pad[7];
	struct dft_fold_key key;
	struct dft_fold val;
};

struct rec_name {
	uint8_t kind, pad[3];
	uint32_t pid;
	uint64_t dev, ino;
	char path[DFT_PATH_MAX];
};

/* One item into *f; a write that fails closes it and sets *f NULL (the
 * recording stops; the trace goes on). */
void recording_put(FILE **f, const void *data, uint32_t size);

#endif
