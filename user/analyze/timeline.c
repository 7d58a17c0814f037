// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "analyze/timeline.h"
#include "lib/vec.h"

/* 1 µs bins to start with: they double as the span grows, so a trace of
 * any length ends with 120 to 240 bins over it */
#define FIRST_WIDTH 1000

/* Doubles the bins' width; the old span becomes the left half (t after
 * it) or the right half (t before it). */
static void widen(struct timeline *t, int before)
{
	for (uint32_t s = 0; s < t->n; s++) {
		uint64_t *b = t->series[s]->bytes, merged[TIMELINE_BINS] = { 0 };

		for (int i = 0; i < TIMELINE_BINS; i++)
			merged[(before ? TIMELINE_BINS / 2 : 0) + i / 2] += b[i];
		memcpy(b, merged, sizeof(merged));
	}
	if (before)
		t->origin -= (int64_t)TIMELINE_BINS * t->width;
	t->width *= 2;
}

static struct timeline_series *series_of(struct timeline *t, uint64_t proc)
{
	struct timeline_series *s;
	uint64_t idx;

	if (hmap_get(&t->index, proc, &idx))
		return t->series[idx - 1];
	s = calloc(1, sizeof(*s));
	if (!s || VEC_PUSH(t->series, t->n, t->cap, s) || hmap_put(&t->index, proc, t->n)) {
		free(s);
		return NULL;
	}
	s->proc = proc;
	return s;
}

int timeline_add(struct timeline *t, uint64_t proc, int64_t start, uint64_t bytes)
{
	struct timeline_series *s;

	if (!t->width) {
		t->width = FIRST_WIDTH;
		t->origin = start - start % FIRST_WIDTH;
	}
	while (start < t->origin)
		widen(t, 1);
	while (start >= t->origin + (int64_t)TIMELINE_BINS * t->width)
		widen(t, 0);
	s = series_of(t, proc);
	if (!s)
		return -ENOMEM;
	s->bytes[(start - t->origin) / t->width] += bytes;
	s->total += bytes;
	return 0;
}

void timeline_free(struct timeline *t)
{
	for (uint32_t i = 0; i < t->n; i++)
		free(t->series[i]);
	free(t->series);
	hmap_free(&t->index);
	*t = (struct timeline){ 0 };
}
