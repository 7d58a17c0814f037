// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <endian.h>
#include <string.h>
#include "lib/hash.h"

/* wyhash (final version 4.2, seed 0, default secret): fast on short paths
 * and of good quality.  Reads are little-endian so a hash means the same on
 * every host. */
static const uint64_t wy_secret[4] = {
	0x2d358dccaa6c78a5ULL, 0x8bb84b93962eacc9ULL,
	0x4b33a62ed433d4a3ULL, 0x4d5a2da51de1aa47ULL,
};

static inline void wy_mum(uint64_t *a, uint64_t *b)
{
	__uint128_t r = (__uint128_t)*a * *b;

	*a = (uint64_t)r;
	*b = (uint64_t)(r >> 64);
}

static inline uint64_t wy_mix(uint64_t a, uint64_t b)
{
	wy_mum(&a, &b);
	return a ^ b;
}

static inline uint64_t wy_r8(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return le64toh(v);
}

static inline uint64_t wy_r4(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return le32toh(v);
}

static inline uint64_t wy_r3(const uint8_t *p, size_t k)
{
	return ((uint64_t)p[0] << 16) | ((uint64_t)p[k >> 1] << 8) | p[k - 1];
}

uint64_t dft_hash64(const void *s, size_t n)
{
	const uint8_t *p = s;
	const uint64_t *sec = wy_secret;
	uint64_t seed = wy_mix(sec[0], sec[1]);
	uint64_t a, b;

	if (n <= 16) {
		if (n >= 4) {
			size_t mid = (n >> 3) << 2;

			a = (wy_r4(p) << 32) | wy_r4(p + mid);
			b = (wy_r4(p + n - 4) << 32) | wy_r4(p + n - 4 - mid);
		} else if (n > 0) {
			a = wy_r3(p, n);
			b = 0;
		} else {
			a = b = 0;
		}
	} else {
		size_t i = n;

		if (i >= 48) {
			uint64_t see1 = seed, see2 = seed;

			do {
				seed = wy_mix(wy_r8(p) ^ sec[1], wy_r8(p + 8) ^ seed);
				see1 = wy_mix(wy_r8(p + 16) ^ sec[2], wy_r8(p + 24) ^ see1);
				see2 = wy_mix(wy_r8(p + 32) ^ sec[3], wy_r8(p + 40) ^ see2);
				p += 48;
				i -= 48;
			} while (i >= 48);
			seed ^= see1 ^ see2;
		}
		while (i > 16) {
			seed = wy_mix(wy_r8(p) ^ sec[1], wy_r8(p + 8) ^ seed);
			i -= 16;
			p += 16;
		}
		a = wy_r8(p + i - 16);
		b = wy_r8(p + i - 8);
	}
	a ^= sec[1];
	b ^= seed;
	wy_mum(&a, &b);
	return wy_mix(a ^ sec[0] ^ n, b ^ sec[1]);
}
