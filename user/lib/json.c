/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* JSON line building: buffer growth and string escaping.  The number
 * appenders are inline in json.h. */
#include <endian.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/json.h"

const char jb_digit_pairs[200] =
	"00010203040506070809101112131415161718192021222324"
	"25262728293031323334353637383940414243444546474849"
	"50515253545556575859606162636465666768697071727374"
	"75767778798081828384858687888990919293949596979899";

int jb_init(struct jbuf *b, size_t cap)
{
	b->len = 0;
	b->cap = 0;
	b->err = 0;
	b->p = malloc(cap ? cap : 1);
	if (!b->p)
		return -ENOMEM;
	b->cap = cap ? cap : 1;
	return 0;
}

void jb_free(struct jbuf *b)
{
	if (!b)
		return;
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
	b->err = 0;
}

int jb_reserve(struct jbuf *b, size_t extra)
{
	size_t want, cap;
	char *p;

	if (b->cap - b->len >= extra)
		return 0;
	if (extra > SIZE_MAX - b->len)
		goto nomem;
	want = b->len + extra;
	/* Doubling keeps appends amortised O(1). */
	cap = b->cap > 64 ? b->cap : 64;
	while (cap < want)
		cap = cap > SIZE_MAX / 2 ? want : cap * 2;
	p = realloc(b->p, cap);
	if (!p)
		goto nomem;
	b->p = p;
	b->cap = cap;
	return 0;
nomem:
	b->err = -ENOMEM;
	return -ENOMEM;
}

/* ---- strings ---------------------------------------------------------- */

#define ONES 0x0101010101010101ULL
#define HIGHS (ONES * 0x80)

/* True if none of the 8 bytes in w needs escaping or UTF-8 checking: all
 * are ASCII in 0x20..0x7e and none is '"' or '\\'.  Each term sets a byte's
 * high bit for one kind of bad byte (the classic "has zero byte" and "has
 * byte less than" tricks, exact as a yes/no answer). */
static inline int word_is_plain(uint64_t w)
{
	uint64_t bad = w | (w + ONES);			/* >= 0x80, or 0x7f */

	bad |= (w - ONES * 0x20) & ~w;			/* < 0x20 */
	bad |= ((w ^ (ONES * '"')) - ONES) & ~(w ^ (ONES * '"'));
	bad |= ((w ^ (ONES * '\\')) - ONES) & ~(w ^ (ONES * '\\'));
	return !(bad & HIGHS);
}

static inline int byte_is_plain(unsigned char c)
{
	return c >= 0x20 && c < 0x7f && c != '"' && c != '\\';
}

static const char hex_digit[16] = "0123456789abcdef";

/* \uXXXX, lowercase, of one UTF-16 unit; returns the new end. */
static char *put_u(char *d, unsigned int u)
{
	memcpy(d, "\\u", 2);
	d[2] = hex_digit[(u >> 12) & 0xf];
	d[3] = hex_digit[(u >> 8) & 0xf];
	d[4] = hex_digit[(u >> 4) & 0xf];
	d[5] = hex_digit[u & 0xf];
	return d + 6;
}

/* Escapes one ASCII byte that is not plain; returns the new end. */
static char *put_escape(char *d, unsigned char c)
{
	char esc = 0;

	switch (c) {
	case '"': esc = '"'; break;
	case '\\': esc = '\\'; break;
	case '\b': esc = 'b'; break;
	case '\f': esc = 'f'; break;
	case '\n': esc = 'n'; break;
	case '\r': esc = 'r'; break;
	case '\t': esc = 't'; break;
	}
	if (esc) {
		d[0] = '\\';
		d[1] = esc;
		return d + 2;
	}
	return put_u(d, c);
}

/* Length of the well-formed UTF-8 sequence starting at s (s[0] >= 0x80),
 * or 0 if it is not one.  The ranges are those of Unicode's table 3-7,
 * which rule out overlongs (C0, C1, E0 80..9F, F0 80..8F), surrogates
 * (ED A0..BF) and code points above U+10FFFF (F4 90.., F5..FF). */
static size_t utf8_len(const unsigned char *s, size_t avail)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xbf;
	size_t len, i;

	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		if (c == 0xe0)
			lo = 0xa0;
		else if (c == 0xed)
			hi = 0x9f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		if (c == 0xf0)
			lo = 0x90;
		else if (c == 0xf4)
			hi = 0x8f;
	} else {
		return 0;
	}
	if (avail < len || s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < len; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return len;
}

#define REPLACEMENT "\\ufffd"
#define REPLACEMENT_LEN (sizeof(REPLACEMENT) - 1)

/* U+FFFD itself, EF BF BD in UTF-8: doubled, see jb_str. */
static int is_replacement(const unsigned char *s, size_t len)
{
	return len == 3 && s[0] == 0xef && s[1] == 0xbf && s[2] == 0xbd;
}

/* A well-formed UTF-8 sequence of len bytes as \uXXXX, or as the two
 * escapes of a surrogate pair above U+FFFF. */
static char *put_code_point(char *d, const unsigned char *s, size_t len)
{
	static const unsigned char lead_mask[5] = { 0, 0, 0x1f, 0x0f, 0x07 };
	unsigned int cp = s[0] & lead_mask[len];

	for (size_t i = 1; i < len; i++)
		cp = cp << 6 | (s[i] & 0x3f);
	if (cp < 0x10000)
		return put_u(d, cp);
	cp -= 0x10000;
	d = put_u(d, 0xd800 | cp >> 10);
	return put_u(d, 0xdc00 | (cp & 0x3ff));
}

/*
 * Quoted JSON string of n arbitrary bytes, in ASCII: non-ASCII characters
 * are written \uXXXX (DFAnalyzer's loader turns raw UTF-8 into '#').
 * Paths come from traced processes, which may be hostile, so every byte
 * sequence must give valid JSON: a byte that does not start a well-formed
 * UTF-8 sequence becomes U+FFFD and its two hex digits ("\xff" reads
 * "\ufffdff"), and the bytes after it are judged afresh; a real U+FFFD is
 * written twice. So no two byte strings give the same JSON string: two
 * files whose names differ only in invalid bytes stay apart.
 */
void jb_str(struct jbuf *b, const char *s, size_t n)
{
	const unsigned char *src = (const unsigned char *)s, *end = src + n;
	char *d;

	/* Worst case: every byte becomes U+FFFD and two digits (8 bytes). A
	 * 4-byte sequence gives 12, a 3-byte one 6 (U+FFFD doubled: 12). */
	if (n > (SIZE_MAX - 2) / 8) {
		b->err = -ENOMEM;
		return;
	}
	if (!jb_room(b, 2 + 8 * n))
		return;
	d = b->p + b->len;
	*d++ = '"';
	while (src < end) {
		uint64_t w;
		size_t len;

		if (end - src >= 8) {
			memcpy(&w, src, 8);
			if (word_is_plain(w)) {
				memcpy(d, src, 8);
				d += 8;
				src += 8;
				continue;
			}
		}
		if (byte_is_plain(*src)) {
			*d++ = (char)*src++;
		} else if (*src < 0x80) {
			d = put_escape(d, *src++);
		} else if ((len = utf8_len(src, end - src)) &&
			   !is_replacement(src, len)) {
			d = put_code_point(d, src, len);
			src += len;
		} else if (len) {
			memcpy(d, REPLACEMENT REPLACEMENT, 2 * REPLACEMENT_LEN);
			d += 2 * REPLACEMENT_LEN;
			src += len;
		} else {
			memcpy(d, REPLACEMENT, REPLACEMENT_LEN);
			d[REPLACEMENT_LEN] = hex_digit[*src >> 4];
			d[REPLACEMENT_LEN + 1] = hex_digit[*src & 0xf];
			d += REPLACEMENT_LEN + 2;
			src++;
		}
	}
	*d++ = '"';
	b->len = d - b->p;
}

void jb_member_i64(struct jbuf *b, const char *key, int64_t v)
{
	jb_char(b, '"');
	jb_mem(b, key, strlen(key));
	JB_LIT(b, "\":");
	jb_i64(b, v);
	jb_char(b, ',');
}
