// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdlib.h>
#include <string.h>
#include "lib/hash.h"
#include "lib/hmap.h"
#include "model/istr.h"

/* A truncated string hashes apart from its complete twin. */
#define TRUNCATED_SALT 0x9e3779b97f4a7c15ull

static struct hmap table;	/* hash -> first string with that hash */

static bool same(const struct istr *p, const char *s, size_t n, bool trunc)
{
	return p->len == n && p->truncated == trunc && memcmp(p->str, s, n) == 0;
}

struct istr *istr_intern(const char *s, size_t n, bool truncated)
{
	uint64_t h = dft_hash64(s, n) ^ (truncated ? TRUNCATED_SALT : 0);
	struct istr *first = hmap_get_ptr(&table, h), *p;

	for (p = first; p; p = p->next)
		if (same(p, s, n, truncated))
			return p;
	p = malloc(sizeof(*p) + n + 1);
	if (!p)
		return NULL;
	p->hash = h;
	p->len = n;
	p->truncated = truncated;
	p->next = first;
	memcpy(p->str, s, n);
	p->str[n] = 0;
	if (hmap_put_ptr(&table, h, p)) {
		free(p);
		return NULL;
	}
	return p;
}
