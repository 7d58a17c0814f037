// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include "lib/hmap.h"

#define MIN_CAP 64
#define GOLDEN 0x9e3779b97f4a7c15ull	/* 2^64 / phi: Fibonacci hashing */

/* High bits of a multiply: pids in a row and random hashes both spread. */
static size_t slot_of(const struct hmap *m, uint64_t key)
{
	return (size_t)((key * GOLDEN) >> m->shift);
}

static size_t next_slot(const struct hmap *m, size_t i)
{
	return (i + 1) & (m->cap - 1);
}

bool hmap_get(const struct hmap *m, uint64_t key, uint64_t *val)
{
	if (!key) {
		if (m->has_zero)
			*val = m->zero_val;
		return m->has_zero;
	}
	if (!m->cap)
		return false;
	for (size_t i = slot_of(m, key); m->keys[i]; i = next_slot(m, i)) {
		if (m->keys[i] == key) {
			*val = m->vals[i];
			return true;
		}
	}
	return false;
}

/* Stores into a table known to have room and not to hold key. */
static void place(struct hmap *m, uint64_t key, uint64_t val)
{
	size_t i = slot_of(m, key);

	while (m->keys[i])
		i = next_slot(m, i);
	m->keys[i] = key;
	m->vals[i] = val;
}

static int grow(struct hmap *m)
{
	struct hmap big = *m;
	unsigned int log2 = 0;

	big.cap = m->cap ? m->cap * 2 : MIN_CAP;
	while ((1ull << log2) < big.cap)
		log2++;
	big.shift = 64 - log2;
	big.keys = calloc(big.cap, sizeof(*big.keys));
	big.vals = calloc(big.cap, sizeof(*big.vals));
	if (!big.keys || !big.vals) {
		free(big.keys);
		free(big.vals);
		return -ENOMEM;
	}
	for (size_t i = 0; i < m->cap; i++)
		if (m->keys[i])
			place(&big, m->keys[i], m->vals[i]);
	free(m->keys);
	free(m->vals);
	*m = big;
	return 0;
}

/* Inserts, or replaces if asked: 1 if key is new, 0 if not, -ENOMEM. */
static int put(struct hmap *m, uint64_t key, uint64_t val, bool replace)
{
	size_t i;

	if (!key) {
		bool had = m->has_zero;

		if (!had || replace)
			m->zero_val = val;
		m->n += !had;
		m->has_zero = true;
		return !had;
	}
	if ((m->n + 1) * 2 > m->cap && grow(m))
		return -ENOMEM;
	for (i = slot_of(m, key); m->keys[i]; i = next_slot(m, i)) {
		if (m->keys[i] == key) {
			if (replace)
				m->vals[i] = val;
			return 0;
		}
	}
	m->keys[i] = key;
	m->vals[i] = val;
	m->n++;
	return 1;
}

int hmap_put(struct hmap *m, uint64_t key, uint64_t val)
{
	int ret = put(m, key, val, true);

	return ret < 0 ? ret : 0;
}

int hmap_add(struct hmap *m, uint64_t key, uint64_t val)
{
	return put(m, key, val, false);
}

/* Backward-shift deletion keeps probe chains whole without tombstones. */
bool hmap_del(struct hmap *m, uint64_t key, uint64_t *val)
{
	size_t i, j;

	if (!key) {
		if (!m->has_zero)
			return false;
		if (val)
			*val = m->zero_val;
		m->has_zero = false;
		m->n--;
		return true;
	}
	if (!m->cap)
		return false;
	for (i = slot_of(m, key); m->keys[i] != key; i = next_slot(m, i))
		if (!m->keys[i])
			return false;
	if (val)
		*val = m->vals[i];
	for (j = next_slot(m, i); m->keys[j]; j = next_slot(m, j)) {
		size_t home = slot_of(m, m->keys[j]);

		/* Move j into the hole at i if i lies on j's probe path. */
		if (((j - home) & (m->cap - 1)) >= ((j - i) & (m->cap - 1))) {
			m->keys[i] = m->keys[j];
			m->vals[i] = m->vals[j];
			i = j;
		}
	}
	m->keys[i] = 0;
	m->n--;
	return true;
}

void hmap_free(struct hmap *m)
{
	if (!m)
		return;
	free(m->keys);
	free(m->vals);
	*m = (struct hmap){ 0 };
}

void hmap_free_ptrs(struct hmap *m)
{
	uint64_t k, v;
	size_t it = 0;

	if (!m)
		return;
	while (hmap_next(m, &it, &k, &v))
		free((void *)(uintptr_t)v);
	hmap_free(m);
}

bool hmap_next(const struct hmap *m, size_t *it, uint64_t *key, uint64_t *val)
{
	/* Slot it - 1 is looked at; the zero key comes first, at it 0. */
	if (*it == 0) {
		*it = 1;
		if (m->has_zero) {
			*key = 0;
			*val = m->zero_val;
			return true;
		}
	}
	for (; *it <= m->cap; (*it)++) {
		size_t i = *it - 1;

		if (m->keys[i]) {
			*key = m->keys[i];
			*val = m->vals[i];
			(*it)++;
			return true;
		}
	}
	return false;
}

void *hmap_get_or_new(struct hmap *m, uint64_t key, size_t size)
{
	void *p = hmap_get_ptr(m, key);

	if (p)
		return p;
	p = calloc(1, size);
	if (p && hmap_put_ptr(m, key, p)) {
		free(p);
		p = NULL;
	}
	return p;
}
