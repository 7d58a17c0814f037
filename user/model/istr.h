/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Interned strings: each distinct string (a path, a command line, a region
 * name, a key) is stored once, with its hash, and lives until exit, so fd
 * tables, regions and sinks hold plain pointers and compare them as such.
 * One table for the whole process, as malloc is one heap.
 */
#ifndef MODEL_ISTR_H
#define MODEL_ISTR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct istr {
	uint64_t hash;		/* fhash: of the bytes, so any two strings differ */
	uint32_t len;
	bool truncated;		/* the traced process passed a longer string */
	/* not in the table: one holder's own copy, which it releases
	 * (istr_release), for strings too many to keep till exit */
	bool loose;
	struct istr *next;	/* another string with the same hash */
	char str[];		/* NUL-terminated; may hold any other byte */
};

/* The one copy of n bytes at s (NULL when out of memory). */
struct istr *istr_intern(const char *s, size_t n, bool truncated);
/* The interned copy of n bytes at s if there is one, else NULL. */
struct istr *istr_find(const char *s, size_t n, bool truncated);
/* A loose copy of n bytes at s: the caller's, until istr_release(). */
struct istr *istr_loose(const char *s, size_t n, bool truncated);
/* Frees a loose string; an interned one stays. NULL-safe. */
void istr_release(const struct istr *s);
/* The same string: one pointer, or, where either is loose, the same
 * bytes. */
bool istr_same(const struct istr *a, const struct istr *b);

static inline struct istr *istr_cstr(const char *s)
{
	return istr_intern(s, __builtin_strlen(s), false);
}

#endif
