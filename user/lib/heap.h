/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* A binary min-heap of (key, pointer): the merge's reorder window, and
 * its choice of the input that is furthest behind. */
#ifndef LIB_HEAP_H
#define LIB_HEAP_H

#include <stdbool.h>
#include <stdint.h>

struct heap_item {
	int64_t key;
	uint64_t seq;	/* insertion order: equal keys come out in it */
	void *val;
};

struct heap {
	struct heap_item *a;
	uint32_t n, cap;
	uint64_t seq;
};

/* 0 or -ENOMEM. */
int heap_push(struct heap *h, int64_t key, void *val);
/* The smallest key's item; false if empty. */
bool heap_pop(struct heap *h, struct heap_item *out);
/* Push then pop, in one pass: out is the smallest of the heap and the
 * new item (which then never enters). Cannot fail. */
void heap_pushpop(struct heap *h, int64_t key, void *val, struct heap_item *out);
static inline const struct heap_item *heap_top(const struct heap *h)
{
	return h->n ? &h->a[0] : 0;
}
void heap_free(struct heap *h);

#endif
