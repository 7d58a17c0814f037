/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Unit tests for user/json.c: number formatting, string escaping of any
 * byte sequence, buffer growth and the string hash.  Every check compares
 * exact bytes. */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "lib/hash.h"
#include "lib/json.h"

static struct jbuf jb;

/* jb's contents as a C string (the appenders never write NUL bytes). */
static const char *jb_cstr(void)
{
	jb_char(&jb, '\0');
	jb.len--;
	return jb.p;
}

static const char *fmt_u64(uint64_t v)
{
	jb_reset(&jb);
	jb_u64(&jb, v);
	return jb_cstr();
}

static const char *fmt_i64(int64_t v)
{
	jb_reset(&jb);
	jb_i64(&jb, v);
	return jb_cstr();
}

static const char *fmt_hex16(uint64_t v)
{
	jb_reset(&jb);
	jb_hex16(&jb, v);
	return jb_cstr();
}

static const char *fmt_str(const char *s, size_t n)
{
	jb_reset(&jb);
	jb_str(&jb, s, n);
	return jb_cstr();
}

#define STR(lit) fmt_str((lit), sizeof(lit) - 1)

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rng(void)
{
	/* splitmix64: fixed seed, so failures reproduce. */
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static void test_u64(void)
{
	char want[32];
	uint64_t p = 1;
	int i, bad = 0;

	CHECK_STREQ(fmt_u64(0), "0", "u64 0");
	CHECK_STREQ(fmt_u64(9), "9", "u64 9");
	CHECK_STREQ(fmt_u64(10), "10", "u64 10");
	CHECK_STREQ(fmt_u64(99), "99", "u64 99");
	CHECK_STREQ(fmt_u64(100), "100", "u64 100");
	CHECK_STREQ(fmt_u64(UINT64_MAX), "18446744073709551615", "u64 max");
	CHECK_STREQ(fmt_u64(1732350000123456ULL), "1732350000123456",
		    "u64 timestamp");

	/* Every digit-count boundary: 10^k - 1, 10^k and 10^k + 1. */
	for (i = 0; i < 20; i++, p *= 10) {
		uint64_t vs[3] = { p - 1, p, p + 1 };
		int j;

		for (j = 0; j < 3; j++) {
			snprintf(want, sizeof(want), "%" PRIu64, vs[j]);
			bad += strcmp(fmt_u64(vs[j]), want) != 0;
		}
	}
	CHECK(bad == 0, "u64 at every power of ten (%d wrong)", bad);

	bad = 0;
	for (i = 0; i < 200000; i++) {
		/* Random magnitudes so every length is exercised. */
		uint64_t v = rng() >> (rng() % 64);

		snprintf(want, sizeof(want), "%" PRIu64, v);
		bad += strcmp(fmt_u64(v), want) != 0;
	}
	CHECK(bad == 0, "u64 matches printf for random values (%d wrong)", bad);
}

static void test_i64(void)
{
	char want[32];
	int i, bad = 0;

	CHECK_STREQ(fmt_i64(0), "0", "i64 0");
	CHECK_STREQ(fmt_i64(-1), "-1", "i64 -1");
	CHECK_STREQ(fmt_i64(-10), "-10", "i64 -10");
	CHECK_STREQ(fmt_i64(-4096), "-4096", "i64 -4096");
	CHECK_STREQ(fmt_i64(INT64_MIN), "-9223372036854775808", "i64 min");
	CHECK_STREQ(fmt_i64(INT64_MAX), "9223372036854775807", "i64 max");
	for (i = 0; i < 200000; i++) {
		int64_t v = (int64_t)rng() >> (rng() % 64);

		snprintf(want, sizeof(want), "%" PRId64, v);
		bad += strcmp(fmt_i64(v), want) != 0;
	}
	CHECK(bad == 0, "i64 matches printf for random values (%d wrong)", bad);
}

static void test_hex16(void)
{
	CHECK_STREQ(fmt_hex16(0), "0000000000000000", "hex16 0");
	CHECK_STREQ(fmt_hex16(0xa), "000000000000000a", "hex16 pads");
	CHECK_STREQ(fmt_hex16(0x1f2e3d4c5b6a7988ULL), "1f2e3d4c5b6a7988",
		    "hex16 lowercase, most significant first");
	CHECK_STREQ(fmt_hex16(UINT64_MAX), "ffffffffffffffff", "hex16 max");
}

static void test_escapes(void)
{
	CHECK_STREQ(STR(""), "\"\"", "empty string");
	CHECK_STREQ(STR("/tmp/data/file.npz"), "\"/tmp/data/file.npz\"",
		    "plain path unchanged, '/' not escaped");
	CHECK_STREQ(STR("a\"b\\c"), "\"a\\\"b\\\\c\"", "quote and backslash");
	CHECK_STREQ(STR("\b\f\n\r\t"), "\"\\b\\f\\n\\r\\t\"", "short escapes");
	CHECK_STREQ(STR("\x01\x1f\x0b"), "\"\\u0001\\u001f\\u000b\"",
		    "other control bytes as \\u00XX");
	CHECK_STREQ(STR("\x7f"), "\"\\u007f\"", "DEL as \\u007f");
	CHECK_STREQ(STR(" ~"), "\" ~\"", "0x20 and 0x7e pass");
	CHECK_STREQ(STR("a\0b\0"), "\"a\\u0000b\\u0000\"", "embedded NUL bytes");
	CHECK_STREQ(STR("0123456789abcdef\"0123456789\n"),
		    "\"0123456789abcdef\\\"0123456789\\n\"",
		    "escapes after whole plain words");
}

static void test_utf8_valid(void)
{
	/* Non-ASCII is written \uXXXX: DFAnalyzer's loader turns raw UTF-8
	 * into '#'. Above U+FFFF, a surrogate pair. */
	CHECK_STREQ(STR("\xc3\xa9"), "\"\\u00e9\"", "2-byte U+00E9");
	CHECK_STREQ(STR("\xc2\x80"), "\"\\u0080\"", "2-byte lowest U+0080");
	CHECK_STREQ(STR("\xdf\xbf"), "\"\\u07ff\"", "2-byte highest U+07FF");
	CHECK_STREQ(STR("\xe0\xa0\x80"), "\"\\u0800\"", "3-byte lowest U+0800");
	CHECK_STREQ(STR("\xe2\x82\xac"), "\"\\u20ac\"", "3-byte U+20AC");
	CHECK_STREQ(STR("\xed\x9f\xbf"), "\"\\ud7ff\"", "U+D7FF below surrogates");
	CHECK_STREQ(STR("\xee\x80\x80"), "\"\\ue000\"", "U+E000 above surrogates");
	CHECK_STREQ(STR("\xef\xbf\xbf"), "\"\\uffff\"", "U+FFFF");
	CHECK_STREQ(STR("\xf0\x90\x80\x80"), "\"\\ud800\\udc00\"",
		    "4-byte lowest U+10000: a surrogate pair");
	CHECK_STREQ(STR("\xf0\x9f\x98\x80"), "\"\\ud83d\\ude00\"",
		    "4-byte emoji U+1F600");
	CHECK_STREQ(STR("\xf4\x8f\xbf\xbf"), "\"\\udbff\\udfff\"",
		    "4-byte highest U+10FFFF");
	CHECK_STREQ(STR("/d/\xe6\x97\xa5\xe6\x9c\xac/x\xc3\xa9\"y"),
		    "\"/d/\\u65e5\\u672c/x\\u00e9\\\"y\"",
		    "mixed path with escapes");
	CHECK_STREQ(STR("unicode-\xc3\xa9\xe2\x82\xac"), "\"unicode-\\u00e9\\u20ac\"",
		    "a file named unicode-\u00e9\u20ac reads back whole, in ASCII");
}

#define FFFD "\\ufffd"

static void test_utf8_invalid(void)
{
	CHECK_STREQ(STR("\x80"), "\"" FFFD "80\"",
		    "stray continuation byte");
	CHECK_STREQ(STR("a\xbf\xbf" "b"), "\"a" FFFD "bf" FFFD "bfb\"",
		    "two stray continuation bytes");
	CHECK_STREQ(STR("\xc0\x80"), "\"" FFFD "c0" FFFD "80\"",
		    "overlong C0 80");
	CHECK_STREQ(STR("\xc1\xbf"), "\"" FFFD "c1" FFFD "bf\"",
		    "overlong C1 BF");
	CHECK_STREQ(STR("\xe0\x80\x80"), "\"" FFFD "e0" FFFD "80" FFFD "80\"",
		    "overlong E0 80 80");
	CHECK_STREQ(STR("\xe0\x9f\xbf"), "\"" FFFD "e0" FFFD "9f" FFFD "bf\"",
		    "overlong E0 9F BF");
	CHECK_STREQ(STR("\xf0\x8f\xbf\xbf"), "\"" FFFD "f0" FFFD "8f" FFFD "bf" FFFD "bf\"",
		    "overlong F0 8F BF BF");
	CHECK_STREQ(STR("\xed\xa0\x80"), "\"" FFFD "ed" FFFD "a0" FFFD "80\"",
		    "high surrogate ED A0 80");
	CHECK_STREQ(STR("\xed\xbf\xbf"), "\"" FFFD "ed" FFFD "bf" FFFD "bf\"",
		    "low surrogate ED BF BF");
	CHECK_STREQ(STR("\xf4\x90\x80\x80"), "\"" FFFD "f4" FFFD "90" FFFD "80" FFFD "80\"",
		    "above U+10FFFF F4 90 80 80");
	CHECK_STREQ(STR("\xf5\x80\x80\x80"), "\"" FFFD "f5" FFFD "80" FFFD "80" FFFD "80\"",
		    "F5 lead byte");
	CHECK_STREQ(STR("\xf8\xfe\xff"), "\"" FFFD "f8" FFFD "fe" FFFD "ff\"",
		    "F8 FE FF bytes");
	CHECK_STREQ(STR("a\xc3"), "\"a" FFFD "c3\"",
		    "truncated 2-byte at end");
	CHECK_STREQ(STR("a\xe2\x82"), "\"a" FFFD "e2" FFFD "82\"",
		    "truncated 3-byte at end");
	CHECK_STREQ(STR("a\xf0\x9f\x98"), "\"a" FFFD "f0" FFFD "9f" FFFD "98\"",
		    "truncated 4-byte at end");
	CHECK_STREQ(STR("\xc3" "A"), "\"" FFFD "c3A\"",
		    "2-byte cut by ASCII");
	CHECK_STREQ(STR("\xe2\x82" "A\xe2\x82\xac"), "\"" FFFD "e2" FFFD "82A\\u20ac\"",
		    "3-byte cut by ASCII, then a good one");
	CHECK_STREQ(STR("\xf0\x9f\x98\xc3\xa9"), "\"" FFFD "f0" FFFD "9f" FFFD "98\\u00e9\"",
		    "4-byte cut by a 2-byte sequence");
	CHECK_STREQ(STR("\xc3\x00"), "\"" FFFD "c3\\u0000\"",
		    "2-byte cut by NUL");
	CHECK_STREQ(STR("a\xef\xbf\xbd" "b"), "\"a" FFFD FFFD "b\"",
		    "a real U+FFFD is written twice");
	{
		char *ff = strdup(STR("a\xff")), *fe = strdup(STR("a\xfe"));
		char *real = strdup(STR("a\xef\xbf\xbd" "ff"));

		CHECK(strcmp(ff, fe) && strcmp(ff, real) && strcmp(fe, real),
		      "names differing only in invalid bytes, or in an invalid "
		      "byte against a real U+FFFD, stay apart");
		free(ff);
		free(fe);
		free(real);
	}
}

/* What one byte alone must become inside a string. */
static void expect_byte(struct jbuf *w, unsigned char c)
{
	static const char *const short_esc[256] = {
		['"'] = "\\\"", ['\\'] = "\\\\", ['\b'] = "\\b", ['\f'] = "\\f",
		['\n'] = "\\n", ['\r'] = "\\r", ['\t'] = "\\t",
	};
	char u[8];

	if (short_esc[c]) {
		jb_mem(w, short_esc[c], strlen(short_esc[c]));
	} else if (c < 0x20 || c == 0x7f) {
		snprintf(u, sizeof(u), "\\u%04x", c);
		jb_mem(w, u, 6);
	} else if (c >= 0x80) {
		/* a lone non-ASCII byte is never valid: U+FFFD and its digits */
		snprintf(u, sizeof(u), "%02x", c);
		JB_LIT(w, FFFD);
		jb_mem(w, u, 2);
	} else {
		jb_char(w, (char)c);
	}
}

/* Every byte value at every offset of a word, with plain bytes around it:
 * catches any byte the 8-at-a-time fast path would wrongly pass. */
static void test_every_byte_every_offset(void)
{
	struct jbuf want;
	char in[24];
	int c, off, bad = 0;

	jb_init(&want, 64);
	for (c = 0; c < 256; c++) {
		for (off = 0; off < 17; off++) {
			memset(in, 'a', sizeof(in));
			in[off] = (char)c;
			jb_reset(&want);
			jb_char(&want, '"');
			jb_mem(&want, in, off);
			expect_byte(&want, (unsigned char)c);
			jb_mem(&want, in + off + 1, sizeof(in) - off - 1);
			jb_char(&want, '"');
			fmt_str(in, sizeof(in));
			if (jb.len != want.len || memcmp(jb.p, want.p, jb.len)) {
				if (!bad)
					printf("# first mismatch: byte 0x%02x at %d\n",
					       c, off);
				bad++;
			}
		}
	}
	CHECK(bad == 0, "each byte value alone at offsets 0..16 (%d wrong)", bad);
	jb_free(&want);
}

/* A long string from a tiny initial buffer: jb_str must grow by itself. */
static void test_growth(void)
{
	static const char unit[] = "/p\xc3\xa9\n\x80\"";
	static const char unit_out[] = "/p\\u00e9\\n" FFFD "80\\\"";
	const size_t reps = 20000;
	struct jbuf small, want;
	char *in = malloc(reps * (sizeof(unit) - 1));
	size_t i;
	int bad = 0;

	jb_init(&small, 1);
	jb_init(&want, 16);
	for (i = 0; i < reps; i++)
		memcpy(in + i * (sizeof(unit) - 1), unit, sizeof(unit) - 1);
	jb_char(&want, '"');
	for (i = 0; i < reps; i++)
		JB_LIT(&want, unit_out);
	jb_char(&want, '"');
	jb_str(&small, in, reps * (sizeof(unit) - 1));
	CHECK(small.err == 0 && small.len == want.len &&
	      memcmp(small.p, want.p, want.len) == 0,
	      "%zu-byte string from a 1-byte buffer", small.len);

	/* Many numbers from a small buffer, against printf. */
	jb_reset(&small);
	jb_reset(&want);
	for (i = 0; i < 100000; i++) {
		char num[32];
		int n = snprintf(num, sizeof(num), "%" PRIu64 ",",
				 (uint64_t)i * 1000003);

		jb_mem(&want, num, n);
		jb_u64(&small, (uint64_t)i * 1000003);
		JB_LIT(&small, ",");
	}
	for (i = 0; i < small.len && i < want.len; i++)
		bad += small.p[i] != want.p[i];
	CHECK(small.err == 0 && small.len == want.len && bad == 0,
	      "100000 numbers appended through growth");
	free(in);
	jb_free(&small);
	jb_free(&want);
}

static void test_buffer_api(void)
{
	struct jbuf b = { 0 };

	CHECK(jb_init(&b, 0) == 0 && b.cap >= 1 && b.len == 0, "jb_init(0)");
	JB_LIT(&b, "{\"a\":");
	jb_u64(&b, 1);
	jb_char(&b, '}');
	CHECK(b.len == 7 && memcmp(b.p, "{\"a\":1}", 7) == 0, "JB_LIT, jb_char");
	CHECK(jb_reserve(&b, 1000) == 0 && b.cap >= b.len + 1000,
	      "jb_reserve grows");
	CHECK(jb_reserve(&b, SIZE_MAX) == -ENOMEM && b.err == -ENOMEM,
	      "jb_reserve(SIZE_MAX) fails with -ENOMEM and sets err");
	CHECK(b.len == 7 && memcmp(b.p, "{\"a\":1}", 7) == 0,
	      "failed growth keeps the contents");
	b.err = 0;
	jb_str(&b, "x", SIZE_MAX / 4);
	CHECK(b.err == -ENOMEM && b.len == 7,
	      "jb_str with an impossible length sets err, appends nothing");
	jb_free(&b);
	CHECK(b.p == NULL && b.len == 0 && b.cap == 0, "jb_free clears");
	jb_free(&b);
	jb_free(NULL);
	CHECK(1, "jb_free twice and on NULL");

	/* A zeroed jbuf works without jb_init. */
	JB_LIT(&b, "ok");
	CHECK(b.len == 2 && memcmp(b.p, "ok", 2) == 0, "zeroed jbuf grows");
	jb_free(&b);
}

static void test_hash(void)
{
	static const char path[] = "/lus/flare/projects/dataset/train/img_000123.npz";
	char buf[80];
	uint64_t h[81];
	size_t i, j;
	int dup = 0, flips = 0;

	/* Pinned values: fhash/hhash must not change between versions, or
	 * traces from two versions would not join.  The first is wyhash's own
	 * published test vector for "" with seed 0. */
	CHECK(dft_hash64("", 0) == 0x93228a4de0eec5a2ULL,
	      "hash of \"\" is wyhash's (%016" PRIx64 ")", dft_hash64("", 0));
	CHECK(dft_hash64("a", 1) == 0xaced12527fe5bff8ULL,
	      "hash of \"a\" is pinned (%016" PRIx64 ")", dft_hash64("a", 1));
	CHECK(dft_hash64(path, sizeof(path) - 1) == 0xad5f7a39f78633aaULL,
	      "hash of a long path is pinned (%016" PRIx64 ")",
	      dft_hash64(path, sizeof(path) - 1));

	/* Every length 0..80 (all code paths): prefixes never collide. */
	memset(buf, 'x', sizeof(buf));
	for (i = 0; i <= sizeof(buf); i++)
		h[i] = dft_hash64(buf, i);
	for (i = 0; i <= sizeof(buf); i++)
		for (j = i + 1; j <= sizeof(buf); j++)
			dup += h[i] == h[j];
	CHECK(dup == 0, "prefixes of lengths 0..80 hash differently");

	/* Flipping any one input bit changes the hash. */
	for (i = 0; i < sizeof(buf) * 8; i++) {
		uint64_t before = dft_hash64(buf, sizeof(buf));

		buf[i / 8] ^= (char)(1 << (i % 8));
		flips += dft_hash64(buf, sizeof(buf)) == before;
		buf[i / 8] ^= (char)(1 << (i % 8));
	}
	CHECK(flips == 0, "every single-bit flip changes the hash");
}

int main(void)
{
	jb_init(&jb, 8);
	test_u64();
	test_i64();
	test_hex16();
	test_escapes();
	test_utf8_valid();
	test_utf8_invalid();
	test_every_byte_every_offset();
	test_growth();
	test_buffer_api();
	test_hash();
	jb_free(&jb);
	return check_done();
}
