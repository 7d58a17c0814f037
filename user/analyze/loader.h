/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The data loader's waits, step by step (the input_bound finding,
 * analyze/findings.h). A wait is a region of cat "dataloader" named
 * "fetch" (DFTracer's ai.dataloader.fetch, --torch's next batch) or
 * "*.iter" (the wait of DFT_USDT_FETCH_ITER and ai's iter()); waits that
 * overlap on a thread are one. A thread's step runs from the start of one
 * wait to the start of the next, so the last wait, with no next, is no
 * step. One wait a thread is kept.
 *
 * A process with no such waits may still wait in its reads: a thread's
 * step is then the step its events carry (args.step: DFT_USDT_SET_STEP,
 * ai.update(step=), dftrace.profiler, --torch), from its first event in
 * it to its first in the next, and its wait the time of its data reads
 * in it. One step a thread is kept.
 */
#ifndef ANALYZE_LOADER_H
#define ANALYZE_LOADER_H

#include <stdint.h>
#include "lib/hmap.h"

struct ev;

/* Steps and their waits, counted one way. */
struct loader_steps {
	int64_t steps, bound;	/* steps seen; those more than half waiting */
	int64_t wait_ns, step_ns;	/* in all steps */
	int64_t bound_wait_ns;	/* the waits of the bound steps */
};

struct loader_proc {
	uint64_t proc;		/* input << 32 | pid */
	struct loader_steps waits;	/* by the loader's wait regions */
	struct loader_steps reads;	/* by args.step, waiting in reads */
};

struct loader_waits {
	struct hmap threads;	/* (input, pid, tid) -> its last wait */
	struct hmap read_steps;	/* (input, pid, tid) -> its step now */
	struct hmap procs;	/* input << 32 | pid -> struct loader_proc * */
	int err;
};

/* The steps that judge p: its waits', or where it has none, its reads'. */
static inline const struct loader_steps *loader_judged(const struct loader_proc *p)
{
	return p->waits.steps ? &p->waits : &p->reads;
}

void loader_add(struct loader_waits *l, uint16_t input, const struct ev *e);
void loader_free(struct loader_waits *l);

#endif
