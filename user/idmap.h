/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* An open-addressing map from pid/tid to a pointer: the consumer looks a
 * task up for every event, so this must be a few loads, not a syscall. */
#ifndef IDMAP_H
#define IDMAP_H

#include <stddef.h>
#include <stdint.h>

struct idmap {
	uint32_t *keys;	/* 0 marks an empty slot: pid 0 is never traced */
	void **vals;
	size_t cap, n;
};

void *idmap_get(const struct idmap *m, uint32_t key);
int idmap_put(struct idmap *m, uint32_t key, void *val);
void *idmap_del(struct idmap *m, uint32_t key);
void idmap_free(struct idmap *m);
/* Iteration: for (size_t i = 0; i < m->cap; i++) if (m->keys[i]) ... */

#endif
