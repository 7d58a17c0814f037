// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdlib.h>
#include <string.h>
#include "model/paths.h"

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

struct istr *path_resolve(const struct istr *base, const char *rel, size_t n,
			  bool truncated)
{
	size_t blen = base ? base->len : 0, len = 0;
	char *buf = malloc(blen + n + 2);
	struct istr *p;

	if (!buf)
		return NULL;
	if (n == 0 && base) { /* AT_EMPTY_PATH: the dirfd's own file */
		free(buf);
		return istr_intern(base->str, base->len, truncated || base->truncated);
	}
	if (!(n > 0 && rel[0] == '/') && base)
		push_all(buf, &len, base->str, blen);
	push_all(buf, &len, rel, n);
	if (len == 0)
		buf[len++] = '/';
	p = istr_intern(buf, len, truncated || (base && base->truncated));
	free(buf);
	return p;
}

/* Longer command lines are cut, and flagged truncated. */
#define CMDLINE_MAX 8192

struct istr *cmdline_intern(const char *argv, size_t n, bool truncated)
{
	char buf[CMDLINE_MAX];

	if (n > sizeof(buf))
		n = sizeof(buf), truncated = true;
	memcpy(buf, argv, n);
	while (n > 0 && buf[n - 1] == 0)
		n--;
	for (size_t i = 0; i < n; i++)
		if (buf[i] == 0)
			buf[i] = ' ';
	return istr_intern(buf, n, truncated);
}
