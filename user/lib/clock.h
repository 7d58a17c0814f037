/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* CLOCK_MONOTONIC in ns: the clock of the kernel side's bpf_ktime_get_ns()
 * and of include/dftrace/usdt.h's rings, which the trace's times are in
 * until they are written as wall-clock µs. */
#ifndef LIB_CLOCK_H
#define LIB_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t clock_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#endif
