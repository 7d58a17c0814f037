/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Percentiles of durations in bounded memory: counts in buckets that are
 * exact below 64 ns and then split each power of two into 64, so a
 * bucket is at most 1/64 of its values wide and any quantile (the middle
 * of its bucket) is within 0.8% of a value that was added. Integer
 * arithmetic only: the summary adds one value per event. A sketch's
 * buckets span only the values it has seen.
 */
#ifndef ANALYZE_SKETCH_H
#define ANALYZE_SKETCH_H

#include <stdint.h>

struct sketch {
	uint32_t *counts;	/* bucket lo + i */
	int32_t lo, n;		/* n buckets from lo */
	uint64_t total;
};

/* v >= 0 (ns). 0, or -ENOMEM (the value is not counted). */
int sketch_add(struct sketch *s, int64_t v);
/* v, n times. */
int sketch_add_n(struct sketch *s, int64_t v, uint32_t n);
/* The q-quantile (0..1); 0 when empty. */
int64_t sketch_quantile(const struct sketch *s, double q);
/* The bucket the q-quantile is in; -1 when empty. */
int32_t sketch_quantile_bucket(const struct sketch *s, double q);
/* The values counted in bucket b. */
uint64_t sketch_count(const struct sketch *s, int32_t b);
/* Bucket b's values: [*from, *to); the last one's *to is INT64_MAX. */
void sketch_bucket(int32_t b, int64_t *from, int64_t *to);
void sketch_free(struct sketch *s);

#endif
