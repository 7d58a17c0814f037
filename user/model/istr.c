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

static uint64_t hash_of(const char *s, size_t n, bool truncated)
{
	return dft_hash64(s, n) ^ (truncated ? TRUNCATED_SALT : 0);
}

static struct istr *lookup(uint64_t h, const char *s, size_t n, bool truncated)
{
	struct istr *p;

	for (p = hmap_get_ptr(&table, h); p; p = p->next)
		if (same(p, s, n, truncated))
			return p;
	return NULL;
}

static struct istr *new_istr(uint64_t h, const char *s, size_t n, bool truncated, bool loose)
{
	struct istr *p = malloc(sizeof(*p) + n + 1);

	if (!p)
		return NULL;
	p->hash = h;
	p->len = n;
	p->truncated = truncated;
	p->loose = loose;
	p->next = NULL;
	memcpy(p->str, s, n);
	p->str[n] = 0;
	return p;
}

struct istr *istr_find(const char *s, size_t n, bool truncated)
{
	return lookup(hash_of(s, n, truncated), s, n, truncated);
}

struct istr *istr_loose(const char *s, size_t n, bool truncated)
{
	return new_istr(hash_of(s, n, truncated), s, n, truncated, true);
}

void istr_release(const struct istr *s)
{
	if (s && s->loose)
		free((struct istr *)s);
}

bool istr_same(const struct istr *a, const struct istr *b)
{
	return a == b || (a && b && (a->loose || b->loose) && a->hash == b->hash &&
			  same(a, b->str, b->len, b->truncated));
}

struct istr *istr_intern(const char *s, size_t n, bool truncated)
{
	uint64_t h = hash_of(s, n, truncated);
	struct istr *p = lookup(h, s, n, truncated);

	if (p)
		return p;
	p = new_istr(h, s, n, truncated, false);
	if (!p)
		return NULL;
	p->next = hmap_get_ptr(&table, h);
	if (hmap_put_ptr(&table, h, p)) {
		free(p);
		return NULL;
	}
	return p;
}
