// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "lib/vec.h"

#define MIN_CAP 8

int vec_reserve(void **arr, uint32_t *cap, uint32_t need, size_t size)
{
	uint64_t c = *cap ? *cap : MIN_CAP;
	void *a;

	if (need <= *cap)
		return 0;
	while (c < need)
		c *= 2;
	if (c > UINT32_MAX || c > SIZE_MAX / size)
		return -ENOMEM;
	a = realloc(*arr, c * size);
	if (!a)
		return -ENOMEM;
	memset((char *)a + (size_t)*cap * size, 0, (c - *cap) * size);
	*arr = a;
	*cap = c;
	return 0;
}
