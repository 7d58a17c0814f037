/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A loop whose iterations are independent, on several threads: each
 * takes the next index until all are done or one fails.
 */
#ifndef LIB_PFOR_H
#define LIB_PFOR_H

#include <stdint.h>

/* The threads a command reads with at most. */
#define PFOR_MAX_JOBS 64

/* fn(ctx, i) for i in [0, n) on jobs threads (0: pfor_cores()): 0, or
 * the failure of the lowest i that failed (iterations not yet begun are
 * left out once one fails), and that i in *failed. */
int pfor(uint32_t n, int jobs, int (*fn)(void *ctx, uint32_t i), void *ctx,
	 uint32_t *failed);

/* The cores this process may run on (sched_getaffinity), 1 to
 * PFOR_MAX_JOBS. */
int pfor_cores(void);

#endif
