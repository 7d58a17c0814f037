/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Fast JSON line building for the event writer.
 *
 * The writer formats about a million events a second on one core, so the
 * appenders are inline, avoid stdio entirely and do one capacity check
 * each.  They grow the buffer themselves: callers never size anything.
 * A failed growth is sticky (b->err) instead of a return value on every
 * appender, so a line is built without error checks and b->err is checked
 * once before the line is used; once set, the contents are garbage. */
#ifndef DFTRACE_JSON_H
#define DFTRACE_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct jbuf {
	char *p;
	size_t len, cap;
	int err;	/* -ENOMEM once a growth failed; cleared by jb_init, jb_free */
};

int jb_init(struct jbuf *b, size_t cap);
void jb_free(struct jbuf *b);
int jb_reserve(struct jbuf *b, size_t extra);
void jb_str(struct jbuf *b, const char *s, size_t n);
uint64_t dft_hash64(const void *s, size_t n);

/* "00" "01" ... "99": two digits per table lookup halves the divisions. */
extern const char jb_digit_pairs[200];

/* Room for n more bytes; false (and nothing appended) if growth failed. */
static inline int jb_room(struct jbuf *b, size_t n)
{
	if (__builtin_expect(b->cap - b->len >= n, 1))
		return 1;
	return jb_reserve(b, n) == 0;
}

/* Drops the buffer contents but keeps the allocation (one line per event). */
static inline void jb_reset(struct jbuf *b)
{
	b->len = 0;
}

static inline void jb_mem(struct jbuf *b, const void *s, size_t n)
{
	if (!jb_room(b, n))
		return;
	memcpy(b->p + b->len, s, n);
	b->len += n;
}

#define JB_LIT(b, lit) jb_mem((b), (lit), sizeof(lit) - 1)

static inline void jb_char(struct jbuf *b, char c)
{
	if (!jb_room(b, 1))
		return;
	b->p[b->len++] = c;
}

/* Number of decimal digits in v: log2 via clz, then one compare against a
 * power of ten; 1233/4096 approximates log10(2).  v | 1 makes 0 count as
 * one digit and never changes the count of any other value. */
static inline unsigned int jb_udigits(uint64_t v)
{
	static const uint64_t pow10[20] = {
		1ULL, 10ULL, 100ULL, 1000ULL, 10000ULL, 100000ULL, 1000000ULL,
		10000000ULL, 100000000ULL, 1000000000ULL, 10000000000ULL,
		100000000000ULL, 1000000000000ULL, 10000000000000ULL,
		100000000000000ULL, 1000000000000000ULL, 10000000000000000ULL,
		100000000000000000ULL, 1000000000000000000ULL,
		10000000000000000000ULL,
	};
	unsigned int t = ((64 - __builtin_clzll(v | 1)) * 1233) >> 12;

	return t + 1 - ((v | 1) < pow10[t]);
}

/* Writes the ndigits decimal digits of v ending just before end. */
static inline void jb_put_digits(char *end, uint64_t v)
{
	while (v >= 100) {
		unsigned int pair = (unsigned int)(v % 100) * 2;

		v /= 100;
		end -= 2;
		memcpy(end, jb_digit_pairs + pair, 2);
	}
	if (v >= 10) {
		end -= 2;
		memcpy(end, jb_digit_pairs + v * 2, 2);
	} else {
		*--end = (char)('0' + v);
	}
}

static inline void jb_u64(struct jbuf *b, uint64_t v)
{
	unsigned int n;

	if (!jb_room(b, 20))
		return;
	n = jb_udigits(v);
	jb_put_digits(b->p + b->len + n, v);
	b->len += n;
}

static inline void jb_i64(struct jbuf *b, int64_t v)
{
	/* Negate in unsigned arithmetic so INT64_MIN does not overflow. */
	uint64_t mag = v < 0 ? -(uint64_t)v : (uint64_t)v;
	unsigned int n;

	if (!jb_room(b, 21))
		return;
	if (v < 0)
		b->p[b->len++] = '-';
	n = jb_udigits(mag);
	jb_put_digits(b->p + b->len + n, mag);
	b->len += n;
}

static inline void jb_hex16(struct jbuf *b, uint64_t v)
{
	static const char hex[16] = "0123456789abcdef";
	char *d;
	int i;

	if (!jb_room(b, 16))
		return;
	d = b->p + b->len;
	for (i = 15; i >= 0; i--, v >>= 4)
		d[i] = hex[v & 0xf];
	b->len += 16;
}

#endif
