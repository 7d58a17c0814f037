// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdlib.h>
#include <string.h>
#include "json.h"
#include "paths.h"

static struct path **slots;
static size_t cap, count;

static bool same(const struct path *p, const char *s, size_t n, bool trunc)
{
	return p->len == n && p->truncated == trunc && memcmp(p->str, s, n) == 0;
}

static int grow(void)
{
	size_t ncap = cap ? cap * 2 : 1024;
	struct path **n = calloc(ncap, sizeof(*n));

	if (!n)
		return -1;
	for (size_t i = 0; i < cap; i++) {
		size_t j;

		if (!slots[i])
			continue;
		for (j = slots[i]->hash & (ncap - 1); n[j]; j = (j + 1) & (ncap - 1))
			;
		n[j] = slots[i];
	}
	free(slots);
	slots = n;
	cap = ncap;
	return 0;
}

struct path *path_intern(const char *s, size_t n, bool truncated)
{
	uint64_t h = dft_hash64(s, n) ^ (truncated ? 0x9e3779b97f4a7c15ull : 0);
	struct path *p;
	size_t i;

	if ((count + 1) * 2 > cap && grow())
		return NULL;
	for (i = h & (cap - 1); slots[i]; i = (i + 1) & (cap - 1))
		if (slots[i]->hash == h && same(slots[i], s, n, truncated))
			return slots[i];
	p = malloc(sizeof(*p) + n + 1);
	if (!p)
		return NULL;
	p->hash = h;
	p->len = n;
	p->truncated = truncated;
	memcpy(p->str, s, n);
	p->str[n] = 0;
	slots[i] = p;
	count++;
	return p;
}

/* Appends component c (n bytes) to out[*len], handling "." and "..". */
static void push_component(char *out, size_t *len, const char *c, size_t n)
{
	if (n == 0 || (n == 1 && c[0] == '.'))
		return;
	if (n == 2 && c[0] == '.' && c[1] == '.') {
		while (*len > 0 && out[*len - 1] != '/')
			(*len)--;
		if (*len > 0)
			(*len)--;
		return;
	}
	out[(*len)++] = '/';
	memcpy(out + *len, c, n);
	*len += n;
}

static void push_all(char *out, size_t *len, const char *s, size_t n)
{
	size_t start = 0;

	for (size_t i = 0; i <= n; i++) {
		if (i == n || s[i] == '/') {
			push_component(out, len, s + start, i - start);
			start = i + 1;
		}
	}
}

struct path *path_resolve(const struct path *base, const char *rel, size_t n,
			  bool truncated)
{
	size_t blen = base ? base->len : 0, len = 0;
	char *buf = malloc(blen + n + 2);
	struct path *p;

	if (!buf)
		return NULL;
	if (n == 0 && base) { /* AT_EMPTY_PATH: the dirfd's own file */
		free(buf);
		return path_intern(base->str, base->len, truncated || base->truncated);
	}
	if (!(n > 0 && rel[0] == '/') && base)
		push_all(buf, &len, base->str, blen);
	push_all(buf, &len, rel, n);
	if (len == 0)
		buf[len++] = '/';
	p = path_intern(buf, len, truncated || (base && base->truncated));
	free(buf);
	return p;
}

struct path *cmdline_intern(const char *argv, size_t n, bool truncated)
{
	char buf[8192];

	if (n > sizeof(buf))
		n = sizeof(buf), truncated = true;
	memcpy(buf, argv, n);
	while (n > 0 && buf[n - 1] == 0)
		n--;
	for (size_t i = 0; i < n; i++)
		if (buf[i] == 0)
			buf[i] = ' ';
	return path_intern(buf, n, truncated);
}

void paths_free(void)
{
	for (size_t i = 0; i < cap; i++)
		free(slots[i]);
	free(slots);
	slots = NULL;
	cap = count = 0;
}
