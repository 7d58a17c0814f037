/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Unoverlapped I/O, as DFAnalyzer reports it: the time of a process's I/O
 * calls during which none of its compute regions runs. Intervals are
 * swept in order of start, through a reorder window (traces are written
 * in order of end); per process the compute regions seen so far are one
 * open stretch, and each I/O call waits until the sweep has passed its
 * end, while later compute regions may still cover some of it. Memory
 * holds what overlaps the sweep, never the whole trace. An I/O call may
 * carry a tag (a findings phase's): its unoverlapped time is summed per
 * tag too.
 */
#ifndef ANALYZE_OVERLAP_H
#define ANALYZE_OVERLAP_H

#include <stdbool.h>
#include <stdint.h>
#include "lib/hmap.h"

struct interval;
struct overlap_proc;

struct overlap {
	struct interval *heap;	/* the window: intervals not yet swept */
	uint32_t n;
	struct hmap procs;	/* process key -> index in by_index */
	struct overlap_proc **by_index;
	uint32_t nprocs, capprocs;
	int64_t sweep;		/* start of the last interval swept */
	int64_t unoverlapped;	/* ns, of calls already settled */
	uint64_t late;		/* intervals that came after the sweep passed them */
	struct hmap tags;	/* tag -> the unoverlapped ns of its calls */
	int err;		/* -ENOMEM: a tag's sum was lost */
};

/* A process's figures, after overlap_finish: its key as overlap_add had
 * it, its I/O time, compute time and unoverlapped I/O. */
struct overlap_figures {
	uint64_t proc;
	int64_t io_ns, compute_ns, unoverlapped_ns;
};

/* One compute region of process proc. */
int overlap_add_compute(struct overlap *o, uint64_t proc, int64_t start, int64_t end);
/* One I/O call of process proc, tagged (0: none). */
int overlap_add_io(struct overlap *o, uint64_t proc, int64_t start, int64_t end,
		   uint32_t tag);
/* Sweeps what is left: o->unoverlapped is the total. */
int overlap_finish(struct overlap *o);
/* The i-th process's figures, i < o->nprocs. */
struct overlap_figures overlap_proc_figures(const struct overlap *o, uint32_t i);
/* The unoverlapped time of the calls tagged tag, after overlap_finish. */
int64_t overlap_tag_ns(const struct overlap *o, uint32_t tag);
void overlap_free(struct overlap *o);

#endif
