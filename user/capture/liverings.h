/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The regions that threads still running when tracing stops wrote to
 * their rings (include/dftrace/usdt.h) since the kernel side last read
 * them: only a thread's own hooks read its ring there, and none comes any
 * more. Read from the process's memory instead, checked as the kernel
 * side checks a ring's records (bpf/annot.bpf.c), and kept only if the
 * process is proven still the traced one (attach_proven()).
 */
#ifndef CAPTURE_LIVERINGS_H
#define CAPTURE_LIVERINGS_H

#include <stdint.h>
#include "capture/lost.h"
#include "correlate/trace.h"
#include "dftrace.h"

struct liverings {
	int tasks_fd;		/* the kernel side's marks (attach_proven()) */
	uint64_t since;		/* records older are another tracer's */
	const struct lost *lost; /* where a dropped record is counted */
};

/* The records of the ring of the thread k says, whose state is st, each
 * to the trace as the kernel side would have sent it. peek: the thread
 * runs on, and the kernel side will send them too (a dump is due: see
 * trace_ring_peeked()). */
void liverings_take(const struct liverings *lr, struct trace *t, const struct dft_kept_head *k,
		    const struct dft_task *st, bool peek);

#endif
