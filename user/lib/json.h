/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Fast JSON line building for the event writer.
 *
 * The writer formats about a million events a second on one core, so the
 * appenders are inline, avoid stdio entirely and do one capacity check
 * each.  They grow the buffer themselves: callers never size anything.
 * A failed growth is sticky (b->err) instead of a return value on every
 * appender, so a line is built without error checks and b->err is checked
 * once before the line is used; once set, the contents are garbage. */
#ifndef LIB_JSON_H
#define LIB_JSON_H

#include <endian.h>
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
/* "key":v, -- a member and the comma after it (key: plain ASCII) */
void jb_member_i64(struct jbuf *b, const char *key, int64_t v);

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

/* n bytes, n <= 32, as at most two fixed-size copies that overlap: no
 * byte outside [s, s + n) is read. Keys and fragments are this short, and
 * a call into memcpy per key was a fifth of the writer's time. */
static inline void jb_copy_short(char *d, const char *s, size_t n)
{
	if (n >= 16) {
		memcpy(d, s, 16);
		memcpy(d + n - 16, s + n - 16, 16);
	} else if (n >= 8) {
		memcpy(d, s, 8);
		memcpy(d + n - 8, s + n - 8, 8);
	} else if (n >= 4) {
		memcpy(d, s, 4);
		memcpy(d + n - 4, s + n - 4, 4);
	} else {
		for (size_t i = 0; i < n; i++)
			d[i] = s[i];
	}
}

static inline void jb_mem(struct jbuf *b, const void *s, size_t n)
{
	if (!jb_room(b, n))
		return;
	if (n <= 32)
		jb_copy_short(b->p + b->len, s, n);
	else
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

/* Writes v < 10^8 as exactly 8 digits at d: two independent halves keep
 * the chain of dependent divisions short. */
static inline void jb_put8(char *d, uint32_t v)
{
	uint32_t hi = v / 10000, lo = v % 10000;

	memcpy(d, jb_digit_pairs + hi / 100 * 2, 2);
	memcpy(d + 2, jb_digit_pairs + hi % 100 * 2, 2);
	memcpy(d + 4, jb_digit_pairs + lo / 100 * 2, 2);
	memcpy(d + 6, jb_digit_pairs + lo % 100 * 2, 2);
}

/* Writes the decimal digits of v so that they end just before end.
 * Eight digits at a time first: microsecond timestamps have 16. */
static inline void jb_put_digits(char *end, uint64_t v)
{
	uint32_t w;

	while (v >= 100000000) {
		end -= 8;
		jb_put8(end, (uint32_t)(v % 100000000));
		v /= 100000000;
	}
	for (w = (uint32_t)v; w >= 100; w /= 100) {
		end -= 2;
		memcpy(end, jb_digit_pairs + w % 100 * 2, 2);
	}
	if (w >= 10)
		memcpy(end - 2, jb_digit_pairs + w * 2, 2);
	else
		end[-1] = (char)('0' + w);
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

/* Eight lowercase hex digits of v, most significant first, as the bytes
 * of a 64-bit word: spread the nibbles into bytes, then add '0', plus
 * 'a' - '0' - 10 to those >= 10 (found by the carry of n + 6 into bit 4). */
static inline uint64_t jb_hex8(uint32_t v)
{
	uint64_t x = v;

	x = ((x & 0xffff0000ULL) << 16) | (x & 0xffffULL);
	x = ((x & 0x0000ff000000ff00ULL) << 8) | (x & 0x000000ff000000ffULL);
	x = ((x & 0x00f000f000f000f0ULL) << 4) | (x & 0x000f000f000f000fULL);
	x += 0x3030303030303030ULL +
	     (((x + 0x0606060606060606ULL) >> 4) & 0x0101010101010101ULL) * 39;
	return htobe64(x);	/* most significant digit at the lowest address */
}

static inline void jb_hex16(struct jbuf *b, uint64_t v)
{
	uint64_t hi = jb_hex8((uint32_t)(v >> 32)), lo = jb_hex8((uint32_t)v);

	if (!jb_room(b, 16))
		return;
	memcpy(b->p + b->len, &hi, 8);
	memcpy(b->p + b->len + 8, &lo, 8);
	b->len += 16;
}

#endif
