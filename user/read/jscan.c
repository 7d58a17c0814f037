// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#include "lib/vec.h"
#include "read/jscan.h"

/* Byte classes, looked up rather than compared on the scanner's paths. */
enum { C_STOP = 1, C_NUM = 2 };	/* ends a string's plain run; in a number */
static const unsigned char cls[256] = {
	['"'] = C_STOP, ['\\'] = C_STOP,
	['0'] = C_NUM, ['1'] = C_NUM, ['2'] = C_NUM, ['3'] = C_NUM, ['4'] = C_NUM,
	['5'] = C_NUM, ['6'] = C_NUM, ['7'] = C_NUM, ['8'] = C_NUM, ['9'] = C_NUM,
	['-'] = C_NUM, ['+'] = C_NUM, ['.'] = C_NUM, ['e'] = C_NUM, ['E'] = C_NUM,
};
#define CLS(c) cls[(unsigned char)(c)]

/* The first quote or backslash in [s, end), or end. 16 bytes at a time
 * where the CPU has SSE2 (every x86-64): strings are most of a trace. */
static inline __attribute__((always_inline)) const char *
quote_or_backslash(const char *s, const char *end)
{
#ifdef __SSE2__
	const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\');

	for (; end - s >= 16; s += 16) {
		__m128i v = _mm_loadu_si128((const __m128i *)s);
		unsigned int hit = _mm_movemask_epi8(_mm_or_si128(
			_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)));

		if (hit)
			return s + __builtin_ctz(hit);
	}
#endif
	while (s < end && !(CLS(*s) & C_STOP))
		s++;
	return s;
}

static inline __attribute__((always_inline)) enum js_result
skip_string(const char **p, const char *end)
{
	const char *s = *p + 1;

	for (;;) {
		s = quote_or_backslash(s, end);
		if (s >= end)
			return JS_MORE;
		if (*s == '"') {
			*p = s + 1;
			return JS_OK;
		}
		s += 2; /* an escape: the backslash and what it escapes */
	}
}

static enum js_result skip_scalar(const char **p, const char *end)
{
	const char *s = *p;
	static const char *const words[] = { "true", "false", "null" };

	if (CLS(*s) & C_NUM) {
		while (s < end && (CLS(*s) & C_NUM))
			s++;
		if (s == end)
			return JS_MORE; /* a number may go on */
		*p = s;
		return JS_OK;
	}
	for (size_t i = 0; i < 3; i++) {
		size_t n = strlen(words[i]);

		if ((size_t)(end - s) < n)
			return memcmp(s, words[i], end - s) ? JS_BAD : JS_MORE;
		if (!memcmp(s, words[i], n)) {
			*p = s + n;
			return JS_OK;
		}
	}
	return JS_BAD;
}

/* The closers that a value's open objects and arrays expect, a bit a
 * level (1 '}', 0 ']'): valid JSON is read at any depth that the bytes
 * given hold, in a loop, never by recursion. The first levels are on the
 * stack; deeper ones (no writer nests so, but a file may) on the heap,
 * an eighth of a byte a level: at most 8 MiB for the reader's largest
 * event (64 MiB). */
#define LOCAL_LEVELS 256

struct closers {
	uint64_t local[LOCAL_LEVELS / 64];
	uint64_t *heap;		/* all levels, once past the local ones */
	uint32_t cap;		/* its words */
	size_t depth;
};

/* Opens a level: false only when memory runs out. */
static bool open_level(struct closers *c, char opener)
{
	size_t word = c->depth / 64;
	uint64_t *bits = c->heap ? c->heap : c->local, bit = 1ull << (c->depth % 64);

	if (c->depth >= LOCAL_LEVELS && word >= c->cap) {
		bool first = !c->heap;

		if (word >= UINT32_MAX ||
		    vec_reserve((void **)&c->heap, &c->cap, word + 1, sizeof(*c->heap)))
			return false;
		if (first)
			memcpy(c->heap, c->local, sizeof(c->local));
		bits = c->heap;
	}
	bits[word] = opener == '{' ? bits[word] | bit : bits[word] & ~bit;
	c->depth++;
	return true;
}

/* Closes the level closer ends: false if it is not the open one's. */
static bool close_level(struct closers *c, char closer)
{
	const uint64_t *bits = c->heap ? c->heap : c->local;
	size_t top;

	if (!c->depth)
		return false;
	top = c->depth - 1;
	if (((bits[top / 64] >> (top % 64)) & 1) != (closer == '}'))
		return false;
	c->depth = top;
	return true;
}

/* The walk over one object or array, its levels kept in c. */
static enum js_result walk_nested(struct closers *c, const char **p, const char *end)
{
	const char *s = *p;
	enum js_result r;

	while (s < end) {
		switch (*s) {
		case '{':
		case '[':
			if (!open_level(c, *s))
				return JS_BAD;
			s++;
			break;
		case '}':
		case ']':
			if (!close_level(c, *s))
				return JS_BAD;
			s++;
			if (!c->depth) {
				*p = s;
				return JS_OK;
			}
			break;
		case '"':
			r = skip_string(&s, end);
			if (r)
				return r;
			break;
		case ',':
		case ':':
		case ' ':
		case '\n':
		case '\t':
		case '\r':
			s++;
			break;
		default:
			r = skip_scalar(&s, end);
			if (r)
				return r;
		}
	}
	return JS_MORE;
}

/* Objects and arrays. */
static enum js_result skip_nested(const char **p, const char *end)
{
	struct closers c = { .depth = 0 };
	enum js_result r = walk_nested(&c, p, end);

	free(c.heap);
	return r;
}

enum js_result js_skip(const char **p, const char *end)
{
	const char *s = js_ws(*p, end);
	enum js_result r;

	if (s == end)
		return JS_MORE;
	if (*s == '"')
		r = skip_string(&s, end);
	else if (*s == '{' || *s == '[')
		r = skip_nested(&s, end);
	else
		r = skip_scalar(&s, end);
	if (r == JS_OK)
		*p = s;
	return r;
}

int js_key(const char **p, const char *end, struct span *key)
{
	const char *s = js_ws(*p, end), *v;
	enum js_result r;

	if (s < end && *s == ',')
		s = js_ws(s + 1, end);
	if (s == end)
		return JS_MORE;
	if (*s == '}') {
		*p = s + 1;
		return JS_END;
	}
	if (*s != '"')
		return JS_BAD;
	v = s;
	r = skip_string(&v, end);
	if (r)
		return r;
	*key = (struct span){ s + 1, v - s - 2 };
	s = js_ws(v, end);
	if (s == end)
		return JS_MORE;
	if (*s != ':')
		return JS_BAD;
	*p = js_ws(s + 1, end);
	return JS_OK;
}

int js_member(const char **p, const char *end, struct span *key,
	      struct span *val)
{
	const char *s = *p, *v;
	int r = js_key(&s, end, key);

	if (r == JS_END)
		*p = s;
	if (r)
		return r;
	v = s;
	r = js_skip(&v, end);
	if (r)
		return r;
	*val = (struct span){ s, v - s };
	*p = v;
	return JS_OK;
}

bool js_string(struct span val, struct span *out)
{
	if (val.len < 2 || val.p[0] != '"' || val.p[val.len - 1] != '"')
		return false;
	*out = (struct span){ val.p + 1, val.len - 2 };
	return true;
}

bool js_int(struct span val, int64_t *out)
{
	const char *s = val.p, *end = val.p + val.len;
	bool neg = s < end && *s == '-';
	uint64_t v = 0;

	if (neg)
		s++;
	/* 19 digits fit in 64 bits unsigned: checked once, after */
	if (s == end || end - s > 19)
		return false;
	for (; s < end; s++) {
		unsigned int d = (unsigned char)*s - '0';

		if (d > 9)
			return false;
		v = v * 10 + d;
	}
	if (v > (uint64_t)INT64_MAX)
		return false;
	*out = neg ? -(int64_t)v : (int64_t)v;
	return true;
}

bool js_us_to_ns(struct span val, int64_t *ns)
{
	const char *dot = memchr(val.p, '.', val.len);
	struct span whole = { val.p, dot ? (size_t)(dot - val.p) : val.len };
	int64_t us, frac = 0;
	int digits = 0;

	if (!js_int(whole, &us))
		return false;
	if (dot) {
		for (const char *s = dot + 1; s < val.p + val.len; s++) {
			if (*s < '0' || *s > '9')
				return false;
			if (digits < 3) {
				frac = frac * 10 + (*s - '0');
				digits++;
			}
		}
		while (digits++ < 3)
			frac *= 10;
	}
	/* out of int64's ns (292 years) is not a number here */
	return !__builtin_mul_overflow(us, 1000, ns) &&
	       !__builtin_add_overflow(*ns, us < 0 ? -frac : frac, ns);
}

bool js_get(struct span obj, const char *key, struct span *val)
{
	const char *p = obj.p, *end = obj.p + obj.len;
	size_t n = strlen(key);
	struct span k, v;

	p = js_ws(p, end);
	if (p == end || *p != '{')
		return false;
	p++;
	while (js_member(&p, end, &k, &v) == JS_OK) {
		if (span_eq(k, key, n)) {
			*val = v;
			return true;
		}
	}
	return false;
}

static int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

static unsigned int read_u(const char *s)
{
	unsigned int u = 0;

	for (int i = 0; i < 4; i++) {
		int h = hex_value(s[i]);

		if (h < 0)
			return 0xfffd;
		u = u << 4 | h;
	}
	return u;
}

static size_t put_utf8(char *d, unsigned int cp)
{
	if (cp < 0x80) {
		d[0] = cp;
		return 1;
	}
	if (cp < 0x800) {
		d[0] = 0xc0 | cp >> 6;
		d[1] = 0x80 | (cp & 0x3f);
		return 2;
	}
	if (cp < 0x10000) {
		d[0] = 0xe0 | cp >> 12;
		d[1] = 0x80 | ((cp >> 6) & 0x3f);
		d[2] = 0x80 | (cp & 0x3f);
		return 3;
	}
	d[0] = 0xf0 | cp >> 18;
	d[1] = 0x80 | ((cp >> 12) & 0x3f);
	d[2] = 0x80 | ((cp >> 6) & 0x3f);
	d[3] = 0x80 | (cp & 0x3f);
	return 4;
}

size_t js_unescape(struct span s, char *out, size_t size)
{
	const char *p = s.p, *end;
	size_t n = 0;

	if (!size)
		return 0;
	if (!s.len) { /* an absent field's span may be { NULL, 0 } */
		out[0] = 0;
		return 0;
	}
	end = s.p + s.len;
	while (p < end) {
		char c[4];
		size_t len = 1;
		unsigned int u;

		c[0] = *p;
		if (*p != '\\' || p + 1 == end) {
			p++;
		} else if (p[1] != 'u') {
			c[0] = p[1] == 'n' ? '\n' : p[1] == 't' ? '\t' : p[1] == 'r' ? '\r' :
			       p[1] == 'b' ? '\b' : p[1] == 'f' ? '\f' : p[1];
			p += 2;
		} else if (end - p < 6) {
			break;
		} else {
			u = read_u(p + 2);
			p += 6;
			if (u >= 0xd800 && u < 0xdc00 && end - p >= 6 && p[0] == '\\' &&
			    p[1] == 'u' && read_u(p + 2) >= 0xdc00 && read_u(p + 2) < 0xe000) {
				u = 0x10000 + ((u - 0xd800) << 10) + (read_u(p + 2) - 0xdc00);
				p += 6;
			}
			len = put_utf8(c, u);
		}
		if (n + len >= size)
			break;
		memcpy(out + n, c, len);
		n += len;
	}
	out[n] = 0;
	return n;
}
