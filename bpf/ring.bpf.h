/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Regions a thread keeps in a ring of its own memory, where the header
 * (include/dftrace/usdt.h) writes them with no trap while the regions
 * probe is attached (annot.bpf.c). The kernel side reads the ring at
 * the thread's next event that a region may own: each of its syscalls
 * we see, page faults, other annotations and signals, and its exit
 * (exit and exit_group, DFT_INTEREST_RING). Only the
 * thread's own hooks read it: the ring is in its memory, and it writes
 * while nothing of ours runs on it.
 */
#ifndef RING_BPF_H
#define RING_BPF_H

#include "core.bpf.h"

/* What the current thread wrote in its ring since it was last read. */
int drain_ring(struct dft_task *st);

/* A load and a branch for the threads that have no ring. */
static __always_inline void take_ring(struct dft_task *st)
{
	if (rings_on && st && st->ring)
		drain_ring(st);
}

#endif
