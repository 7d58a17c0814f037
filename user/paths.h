/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Interned file paths: each distinct path is stored once, with its hash,
 * and lives until exit, so fd tables and sinks can hold plain pointers. */
#ifndef PATHS_H
#define PATHS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct path {
	uint64_t hash;		/* fhash: of the bytes, so any two paths differ */
	uint32_t len;
	bool truncated;		/* the traced process passed a longer string */
	char str[];		/* NUL-terminated; may hold any other byte */
};

struct path *path_intern(const char *s, size_t n, bool truncated);
/* Absolute, lexically normalised path of rel (n bytes) seen from base,
 * a directory; rel is used as is when absolute. NULL base: "/". */
struct path *path_resolve(const struct path *base, const char *rel, size_t n,
			  bool truncated);
/* argv as the kernel keeps it (NUL-separated) as one space-separated
 * string, the way DFTracer writes command lines. */
struct path *cmdline_intern(const char *argv, size_t n, bool truncated);
void paths_free(void);

#endif
