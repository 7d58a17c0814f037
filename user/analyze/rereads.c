// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Byte ranges read, per file and epoch (analyze/rereads.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "analyze/events.h"
#include "analyze/rereads.h"
#include "lib/hash.h"
#include "lib/units.h"

#define KEYS_MAX 65536

static bool is_open(struct span name)
{
	return SPAN_IS(name, "open") || SPAN_IS(name, "openat") || SPAN_IS(name, "open64") ||
	       SPAN_IS(name, "creat");
}

static struct reread_key *key_of(struct rereads *r, const char *file, int64_t epoch)
{
	uint64_t h = ((uint64_t)(uintptr_t)file ^ (uint64_t)epoch) * 0x9e3779b97f4a7c15ull;
	struct reread_key *k;

	for (; (k = hmap_get_ptr(&r->keys, h)); h++)
		if (k->file == file && k->epoch == epoch)
			return k;
	if (r->keys.n >= KEYS_MAX) {
		r->dropped++;
		return NULL;
	}
	k = calloc(1, sizeof(*k));
	if (!k || hmap_put_ptr(&r->keys, h, k)) {
		free(k);
		r->err = -ENOMEM;
		return NULL;
	}
	k->file = file;
	k->epoch = epoch;
	return k;
}

/* The first range whose end is past at (or n). */
static uint32_t first_after(const struct reread_key *k, int64_t at)
{
	uint32_t lo = 0, hi = k->n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (k->hi[mid] <= at)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static bool covered(const struct reread_key *k, int64_t a, int64_t b)
{
	uint32_t i = first_after(k, a);

	return i < k->n && k->lo[i] <= a && k->hi[i] >= b;
}

/* Adds [a, b): the ranges it touches become one. */
static int insert(struct reread_key *k, int64_t a, int64_t b)
{
	uint32_t i = first_after(k, a - 1), j = i;

	while (j < k->n && k->lo[j] <= b) {
		units_add(&k->distinct, -(k->hi[j] - k->lo[j]));
		a = a < k->lo[j] ? a : k->lo[j];
		b = b > k->hi[j] ? b : k->hi[j];
		j++;
	}
	if (i == j && k->n == k->cap) {
		uint32_t cap = k->cap ? 2 * k->cap : 16;
		int64_t *lo = realloc(k->lo, cap * sizeof(*lo)), *hi;

		if (lo)
			k->lo = lo;
		hi = lo ? realloc(k->hi, cap * sizeof(*hi)) : NULL;
		if (!hi)
			return -ENOMEM;
		k->hi = hi;
		k->cap = cap;
	}
	/* [i, j) becomes one range at i */
	memmove(&k->lo[i + 1], &k->lo[j], (k->n - j) * sizeof(*k->lo));
	memmove(&k->hi[i + 1], &k->hi[j], (k->n - j) * sizeof(*k->hi));
	k->n = k->n - (j - i) + 1;
	k->lo[i] = a;
	k->hi[i] = b;
	units_add(&k->distinct, b - a);
	return 0;
}

static void read_range(struct rereads *r, const struct ev *e, const char *file, int64_t at)
{
	struct reread_key *k = key_of(r, file, e->epoch);
	int64_t end = at + e->bytes;

	if (!k || k->full)
		return;
	k->reads++;
	if (covered(k, at, end)) {
		k->rereads++;
		units_add(&k->reread_ns, e->end - e->start);
		units_add(&k->reread_bytes, e->bytes);
		return;
	}
	if (k->n == RANGES_MAX)
		k->full = true;
	else if (insert(k, at, end))
		r->err = -ENOMEM;
}

/* Where a file's position is kept: per fd, and per process for events
 * that name no fd (DFTracer's may not), fd -1: an open sets both. */
static uint64_t pos_key(uint16_t input, const struct ev *e, int64_t fd)
{
	return dft_hash64(e->file.p, e->file.len) ^
	       ((uint64_t)input << 48 | (uint64_t)e->pid) * 0xff51afd7ed558ccdull ^
	       (uint64_t)(fd + 1) * 0xc4ceb9fe1a85ec53ull;
}

static void put_pos(struct rereads *r, uint64_t key, int64_t at)
{
	if (hmap_put(&r->pos, key, (uint64_t)at + 1))
		r->err = -ENOMEM;
}

void rereads_add(struct rereads *r, uint16_t input, const struct ev *e, const char *file)
{
	bool opened = is_open(e->name) && e->ret >= 0;
	uint64_t key, pos = 1;
	bool known;
	int64_t at;

	if (e->calls != 1)
		return;
	key = pos_key(input, e, opened ? e->ret : e->fd);
	if (SPAN_IS(e->name, "close")) {
		hmap_del(&r->pos, key, NULL);
		return;
	}
	known = hmap_get(&r->pos, key, &pos);
	at = (int64_t)pos - 1;
	if (opened || (SPAN_IS(e->name, "lseek") && e->ret >= 0)) {
		at = opened ? 0 : e->ret; /* lseek returns where it went */
		if (opened) /* for its reads that name no fd */
			put_pos(r, pos_key(input, e, -1), 0);
	} else if (e->bytes_kind == SC_BYTES_READ && e->bytes > 0 && at <= INT64_MAX - e->bytes) {
		if (e->offset >= 0 && e->offset <= INT64_MAX - e->bytes) {
			read_range(r, e, file, e->offset);
			return;
		}
		if (!known)
			return; /* opened before the trace began: where it is, unknown */
		read_range(r, e, file, at);
		at += e->bytes;
	} else {
		return;
	}
	put_pos(r, key, at);
}

void rereads_free(struct rereads *r)
{
	uint64_t key, v;
	size_t it = 0;

	while (hmap_next(&r->keys, &it, &key, &v)) {
		struct reread_key *k = (void *)(uintptr_t)v;

		free(k->lo);
		free(k->hi);
	}
	hmap_free_ptrs(&r->keys);
	hmap_free(&r->pos);
}
