/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Paths as the kernel resolves them, lexically, and command lines. */
#ifndef MODEL_PATHS_H
#define MODEL_PATHS_H

#include <stdbool.h>
#include <stddef.h>
#include "model/istr.h"

/* Absolute, lexically normalised path of rel (n bytes) seen from base,
 * a directory; rel is used as is when absolute. NULL base: "/". */
struct istr *path_resolve(const struct istr *base, const char *rel, size_t n,
			  bool truncated);
/* argv as the kernel keeps it (NUL-separated) as one space-separated
 * string, the way DFTracer writes command lines. */
struct istr *cmdline_intern(const char *argv, size_t n, bool truncated);

#endif
