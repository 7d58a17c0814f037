// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "analyze/sketch.h"

#define SUB_BITS 6
#define SUB (1 << SUB_BITS)	/* buckets per power of two */

static int32_t bucket_of(uint64_t v)
{
	int e;

	if (v < SUB)
		return v;
	e = 63 - __builtin_clzll(v);	/* v's leading bit */
	return SUB + (e - SUB_BITS) * SUB + ((v >> (e - SUB_BITS)) & (SUB - 1));
}

void sketch_bucket(int32_t b, int64_t *from, int64_t *to)
{
	int shift;

	if (b < SUB) {
		*from = b;
		*to = b + 1;
		return;
	}
	shift = (b - SUB) / SUB;
	*from = (int64_t)(SUB + (b - SUB) % SUB) << shift;
	/* the last bucket, [127 << 56, 2^63), ends past int64: held at its max */
	if (__builtin_add_overflow(*from, (int64_t)1 << shift, to))
		*to = INT64_MAX;
}

/* Makes room for bucket b. */
static int cover(struct sketch *s, int32_t b)
{
	int32_t lo, hi;
	uint32_t *c;

	if (s->n && b >= s->lo && b < s->lo + s->n)
		return 0;
	lo = s->n && s->lo < b ? s->lo : b;
	hi = s->n && s->lo + s->n > b + 1 ? s->lo + s->n : b + 1;
	c = calloc(hi - lo, sizeof(*c));
	if (!c)
		return -ENOMEM;
	if (s->n)
		memcpy(c + (s->lo - lo), s->counts, s->n * sizeof(*c));
	free(s->counts);
	s->counts = c;
	s->lo = lo;
	s->n = hi - lo;
	return 0;
}

int sketch_add_n(struct sketch *s, int64_t v, uint32_t n)
{
	int32_t b = bucket_of(v > 0 ? v : 0);

	if (cover(s, b))
		return -ENOMEM;
	s->counts[b - s->lo] += n;
	s->total += n;
	return 0;
}

int sketch_add(struct sketch *s, int64_t v)
{
	return sketch_add_n(s, v, 1);
}

int32_t sketch_quantile_bucket(const struct sketch *s, double q)
{
	/* the rank of the value wanted, counted from 1 */
	uint64_t rank = (uint64_t)ceil(q * s->total), seen = 0;

	if (!s->total)
		return -1;
	if (rank < 1)
		rank = 1;
	for (int32_t i = 0; i < s->n; i++) {
		seen += s->counts[i];
		if (seen >= rank || i == s->n - 1)
			return s->lo + i;
	}
	return -1;
}

int64_t sketch_quantile(const struct sketch *s, double q)
{
	int32_t b = sketch_quantile_bucket(s, q);
	int64_t from, to;

	if (b < 0)
		return 0;
	sketch_bucket(b, &from, &to);
	return from + (to - from - 1) / 2;
}

uint64_t sketch_count(const struct sketch *s, int32_t b)
{
	return s->n && b >= s->lo && b < s->lo + s->n ? s->counts[b - s->lo] : 0;
}

void sketch_free(struct sketch *s)
{
	free(s->counts);
	*s = (struct sketch){ 0 };
}
