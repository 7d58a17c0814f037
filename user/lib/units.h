/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Numbers for people: 74.7 ms, 1.52 s, 3.4 MiB, 120.5 MB/s. */
#ifndef LIB_UNITS_H
#define LIB_UNITS_H

#include <stddef.h>
#include <stdint.h>

void units_ns(char *buf, size_t len, int64_t ns);
void units_bytes(char *buf, size_t len, uint64_t bytes);
/* bytes per second, from bytes moved in ns; "-" when ns is 0 */
void units_rate(char *buf, size_t len, uint64_t bytes, int64_t ns);

/* *sum += v, held at the int64 limits: sums of what a trace says (its
 * times are bounded, but not how many there are) never wrap. */
static inline void units_add(int64_t *sum, int64_t v)
{
	if (__builtin_add_overflow(*sum, v, sum))
		*sum = v > 0 ? INT64_MAX : INT64_MIN;
}

#endif
