/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Scanning JSON in place: values are spans of the input, read only as far
 * as asked. The trace reader streams millions of small objects, so nothing
 * is copied or allocated here. A scan that runs into the end of the bytes
 * it was given says so (JS_MORE), so that the caller can read more and
 * scan again from the value's start.
 */
#ifndef READ_JSCAN_H
#define READ_JSCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct span {
	const char *p;
	size_t len;
};

#define SPAN_LIT(s) ((struct span){ (s), sizeof(s) - 1 })

enum js_result {
	JS_OK = 0,
	JS_MORE = 1,	/* the value goes on past the end */
	JS_BAD = -1,	/* not JSON */
};

/* Skips whitespace; returns the first other byte's address, or end. */
static inline const char *js_ws(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r'))
		p++;
	return p;
}

/* Skips one value at *p, leaving *p after it. */
enum js_result js_skip(const char **p, const char *end);

/* One member of an object: call with *p just after '{' (or after the
 * previous member); fills key (without quotes, still escaped) and val
 * (the value's text). Returns JS_OK, JS_MORE, JS_BAD, or 2 at the '}',
 * with *p after it. */
#define JS_END 2
int js_member(const char **p, const char *end, struct span *key,
	      struct span *val);
/* The same, up to the value: leaves *p at the value's first byte. */
int js_key(const char **p, const char *end, struct span *key);

/* A key or string value equal to a plain literal (no escapes in it). */
static inline bool span_eq(struct span s, const char *lit, size_t n)
{
	return s.len == n && __builtin_memcmp(s.p, lit, n) == 0;
}

#define SPAN_IS(s, lit) span_eq((s), (lit), sizeof(lit) - 1)

/* The contents of a string value (between the quotes, still escaped);
 * false if val is not a string. */
bool js_string(struct span val, struct span *out);
/* An integer value; false if it is not one (or has a fraction). */
bool js_int(struct span val, int64_t *out);
/* A number of µs (integer or decimal, as Chrome traces write ts and dur)
 * as ns, exact to the ns; false if not a number, or not one in int64. */
bool js_us_to_ns(struct span val, int64_t *ns);
/* The value of key in the object text obj ("{...}"); false if absent. */
bool js_get(struct span obj, const char *key, struct span *val);
/* Unescapes the contents of a JSON string into out (up to size - 1 bytes,
 * NUL-terminated); returns the length. \uXXXX becomes UTF-8. */
size_t js_unescape(struct span s, char *out, size_t size);

#endif
