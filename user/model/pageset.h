/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The pages of one file a process has mapped in, as sorted disjoint
 * ranges. The kernel's fault-around reports its whole window at every
 * fault, pages already mapped included: a page counts the first time it
 * is mapped, until the file's mappings go.
 */
#ifndef MODEL_PAGESET_H
#define MODEL_PAGESET_H

#include <stdint.h>

struct pageset {
	uint64_t dev, ino;	/* the file, as the kernel names it */
	uint64_t *lo, *hi;	/* [lo[i], hi[i]), ascending, not touching */
	uint32_t n, cap;
};

/* Adds [lo, hi); returns how many of its pages were not in the set.
 * Out of memory, all of them: a count too high, never too low. */
uint64_t pageset_add(struct pageset *s, uint64_t lo, uint64_t hi);
void pageset_free(struct pageset *s);

#endif
