// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdlib.h>
#include "lib/heap.h"
#include "lib/vec.h"

static bool before(const struct heap_item *a, const struct heap_item *b)
{
	return a->key < b->key || (a->key == b->key && a->seq < b->seq);
}

static void swap(struct heap_item *a, struct heap_item *b)
{
	struct heap_item t = *a;

	*a = *b;
	*b = t;
}

int heap_push(struct heap *h, int64_t key, void *val)
{
	uint32_t i;

	if (VEC_PUSH(h->a, h->n, h->cap, ((struct heap_item){ key, h->seq++, val })))
		return -ENOMEM;
	for (i = h->n - 1; i && before(&h->a[i], &h->a[(i - 1) / 2]); i = (i - 1) / 2)
		swap(&h->a[i], &h->a[(i - 1) / 2]);
	return 0;
}

/* Moves a hole down from i to where item fits, and puts it there. */
static void sift_down(struct heap *h, uint32_t i, struct heap_item item)
{
	for (;;) {
		uint32_t c = 2 * i + 1;

		if (c >= h->n)
			break;
		if (c + 1 < h->n && before(&h->a[c + 1], &h->a[c]))
			c++;
		if (!before(&h->a[c], &item))
			break;
		h->a[i] = h->a[c];
		i = c;
	}
	h->a[i] = item;
}

bool heap_pop(struct heap *h, struct heap_item *out)
{
	if (!h->n)
		return false;
	*out = h->a[0];
	if (--h->n)
		sift_down(h, 0, h->a[h->n]);
	return true;
}

void heap_pushpop(struct heap *h, int64_t key, void *val, struct heap_item *out)
{
	struct heap_item item = { key, h->seq++, val };

	if (!h->n || before(&item, &h->a[0])) {
		*out = item;
		return;
	}
	*out = h->a[0];
	sift_down(h, 0, item);
}

void heap_free(struct heap *h)
{
	free(h->a);
	*h = (struct heap){ 0 };
}
