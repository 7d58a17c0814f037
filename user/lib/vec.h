/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The one growable array: any element type, grown by doubling. */
#ifndef LIB_VEC_H
#define LIB_VEC_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

/* Makes room for need elements of size bytes in *arr (capacity *cap),
 * new slots zeroed. 0, or -ENOMEM with the array unchanged. */
int vec_reserve(void **arr, uint32_t *cap, uint32_t need, size_t size);

/* Appends item to arr[n] (capacity cap): 0 or -ENOMEM. */
#define VEC_PUSH(arr, n, cap, item)                                          \
	(vec_reserve((void **)&(arr), &(cap), (n) + 1, sizeof(*(arr))) ? -ENOMEM : \
	 ((arr)[(n)++] = (item), 0))

#endif
