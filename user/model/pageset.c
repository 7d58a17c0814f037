// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdlib.h>
#include <string.h>
#include "model/pageset.h"

/* The first range that ends at or after lo (it may touch [lo, hi)). */
static uint32_t first_reaching(const struct pageset *s, uint64_t lo)
{
	uint32_t a = 0, b = s->n;

	while (a < b) {
		uint32_t m = a + (b - a) / 2;

		if (s->hi[m] < lo)
			a = m + 1;
		else
			b = m;
	}
	return a;
}

static int grow(struct pageset *s)
{
	uint32_t cap = s->cap ? s->cap * 2 : 4;
	uint64_t *lo = realloc(s->lo, cap * sizeof(*lo)), *hi;

	if (!lo)
		return -1;
	s->lo = lo;
	hi = realloc(s->hi, cap * sizeof(*hi));
	if (!hi)
		return -1;
	s->hi = hi;
	s->cap = cap;
	return 0;
}

uint64_t pageset_add(struct pageset *s, uint64_t lo, uint64_t hi)
{
	uint32_t i = first_reaching(s, lo), j = i;
	uint64_t have = 0, nlo = lo, nhi = hi;

	if (hi <= lo)
		return 0;
	/* ranges i..j-1 touch or overlap [lo, hi): they merge into one */
	for (; j < s->n && s->lo[j] <= hi; j++) {
		uint64_t a = s->lo[j] > lo ? s->lo[j] : lo;
		uint64_t b = s->hi[j] < hi ? s->hi[j] : hi;

		have += b > a ? b - a : 0;
		nlo = s->lo[j] < nlo ? s->lo[j] : nlo;
		nhi = s->hi[j] > nhi ? s->hi[j] : nhi;
	}
	if (j == i) { /* touches none: a new range at i */
		if (s->n == s->cap && grow(s))
			return hi - lo;
		memmove(s->lo + i + 1, s->lo + i, (s->n - i) * sizeof(*s->lo));
		memmove(s->hi + i + 1, s->hi + i, (s->n - i) * sizeof(*s->hi));
		s->n++;
		j = i + 1;
	}
	s->lo[i] = nlo;
	s->hi[i] = nhi;
	memmove(s->lo + i + 1, s->lo + j, (s->n - j) * sizeof(*s->lo));
	memmove(s->hi + i + 1, s->hi + j, (s->n - j) * sizeof(*s->hi));
	s->n -= j - i - 1;
	return hi - lo - have;
}

void pageset_free(struct pageset *s)
{
	free(s->lo);
	free(s->hi);
	s->lo = s->hi = NULL;
	s->n = s->cap = 0;
}
