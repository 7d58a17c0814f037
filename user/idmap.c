// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include "idmap.h"

static size_t slot_of(uint32_t key, size_t cap)
{
	return (key * 2654435761u) & (cap - 1);
}

void *idmap_get(const struct idmap *m, uint32_t key)
{
	if (!m->cap)
		return NULL;
	for (size_t i = slot_of(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
		if (m->keys[i] == key)
			return m->vals[i];
		if (!m->keys[i])
			return NULL;
	}
}

static int grow(struct idmap *m)
{
	struct idmap big = { 0 };

	big.cap = m->cap ? m->cap * 2 : 64;
	big.keys = calloc(big.cap, sizeof(*big.keys));
	big.vals = calloc(big.cap, sizeof(*big.vals));
	if (!big.keys || !big.vals) {
		free(big.keys);
		free(big.vals);
		return -ENOMEM;
	}
	for (size_t i = 0; i < m->cap; i++)
		if (m->keys[i])
			idmap_put(&big, m->keys[i], m->vals[i]);
	idmap_free(m);
	*m = big;
	return 0;
}

int idmap_put(struct idmap *m, uint32_t key, void *val)
{
	size_t i;

	if ((m->n + 1) * 2 > m->cap && grow(m))
		return -ENOMEM;
	for (i = slot_of(key, m->cap); m->keys[i] && m->keys[i] != key;
	     i = (i + 1) & (m->cap - 1))
		;
	if (!m->keys[i])
		m->n++;
	m->keys[i] = key;
	m->vals[i] = val;
	return 0;
}

/* Backward-shift deletion keeps probe chains intact without tombstones. */
void *idmap_del(struct idmap *m, uint32_t key)
{
	size_t i, j, home;
	void *val;

	if (!m->cap)
		return NULL;
	for (i = slot_of(key, m->cap); m->keys[i] != key;
	     i = (i + 1) & (m->cap - 1))
		if (!m->keys[i])
			return NULL;
	val = m->vals[i];
	for (j = (i + 1) & (m->cap - 1); m->keys[j]; j = (j + 1) & (m->cap - 1)) {
		home = slot_of(m->keys[j], m->cap);
		/* Move j into the hole at i if i lies on j's probe path. */
		if (((j - home) & (m->cap - 1)) >= ((j - i) & (m->cap - 1))) {
			m->keys[i] = m->keys[j];
			m->vals[i] = m->vals[j];
			i = j;
		}
	}
	m->keys[i] = 0;
	m->vals[i] = NULL;
	m->n--;
	return val;
}

void idmap_free(struct idmap *m)
{
	if (!m)
		return;
	free(m->keys);
	free(m->vals);
	m->keys = NULL;
	m->vals = NULL;
	m->cap = m->n = 0;
}
