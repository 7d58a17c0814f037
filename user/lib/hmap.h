/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The one hash map of the project: 64-bit keys to 64-bit values (a pid, a
 * string's hash, a pointer), open addressing with linear probing and
 * backward-shift deletion. The consumer looks a task up for every event,
 * so a lookup is a multiply and a few loads. Key 0 is stored apart, so
 * every key is allowed.
 */
#ifndef LIB_HMAP_H
#define LIB_HMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hmap {
	uint64_t *keys;		/* 0: an empty slot */
	uint64_t *vals;
	size_t cap, n;		/* cap: 0 or a power of two; n counts key 0 too */
	unsigned int shift;	/* 64 - log2(cap) */
	bool has_zero;
	uint64_t zero_val;
};

bool hmap_get(const struct hmap *m, uint64_t key, uint64_t *val);
/* Inserts or replaces: 0, or -ENOMEM (the map is unchanged). */
int hmap_put(struct hmap *m, uint64_t key, uint64_t val);
/* Inserts key if absent: 1 if it was, 0 if it was there, -ENOMEM. */
int hmap_add(struct hmap *m, uint64_t key, uint64_t val);
/* Removes key: true if it was there (its value in *val unless NULL). */
bool hmap_del(struct hmap *m, uint64_t key, uint64_t *val);
/* Frees the storage; the map is empty and usable again. NULL-safe. */
void hmap_free(struct hmap *m);
/* The same for a map whose values are malloc'd pointers: frees them too. */
void hmap_free_ptrs(struct hmap *m);

/* Iteration: size_t it = 0; while (hmap_next(m, &it, &k, &v)) ...
 * Changing the map meanwhile is not allowed. */
bool hmap_next(const struct hmap *m, size_t *it, uint64_t *key, uint64_t *val);

/* The same with pointer values: NULL when absent. */
static inline void *hmap_get_ptr(const struct hmap *m, uint64_t key)
{
	uint64_t v;

	return hmap_get(m, key, &v) ? (void *)(uintptr_t)v : NULL;
}

static inline int hmap_put_ptr(struct hmap *m, uint64_t key, const void *p)
{
	return hmap_put(m, key, (uintptr_t)p);
}

/* The pointer at key, or a new zeroed block of size put there; NULL if
 * out of memory (the map unchanged). */
void *hmap_get_or_new(struct hmap *m, uint64_t key, size_t size);

static inline void *hmap_del_ptr(struct hmap *m, uint64_t key)
{
	uint64_t v;

	return hmap_del(m, key, &v) ? (void *)(uintptr_t)v : NULL;
}

#endif
