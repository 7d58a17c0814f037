/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Text from traced programs (annotation names, file paths) made safe for
 * a terminal or a CSV file: control bytes (C0, DEL, the C1 code points)
 * and bytes that are not UTF-8 are written \xHH, and a backslash \\, so
 * that no such text can move the cursor, clear the screen or set the
 * window title, and what was escaped is never ambiguous. The trace file
 * escapes the same bytes as JSON does.
 */
#ifndef LIB_TERMSAFE_H
#define LIB_TERMSAFE_H

#include <stddef.h>

/* s escaped into out (size bytes, NUL-terminated, never cut inside an
 * escape or a character); returns the length the whole would take. */
size_t termsafe(char *out, size_t size, const char *s);

#endif
