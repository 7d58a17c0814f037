/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Unit tests for user/lib: the hash map against a plain model, the
 * growable array, and a thread's lane. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "lib/hmap.h"
#include "lib/lane.h"
#include "lib/vec.h"

#define MODEL_KEYS 4096

static uint64_t rng_state = 0x243f6a8885a308d3ull;

static uint64_t rng(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Keys that collide in the table on purpose: small pids, a run of
 * multiples of the capacity, 0, and random 64-bit hashes. */
static uint64_t key_of(int i)
{
	switch (i % 4) {
	case 0: return i / 4;			/* 0, 1, 2, ... */
	case 1: return (uint64_t)(i / 4 + 1) * 4096 * 4096;
	case 2: return ~(uint64_t)(i / 4);
	default: return rng() | 1;
	}
}

/* Random puts, adds and deletes against an array model. */
static void test_against_model(void)
{
	static uint64_t keys[MODEL_KEYS], vals[MODEL_KEYS];
	static bool in[MODEL_KEYS];
	struct hmap m = { 0 };
	int bad = 0, i, op;
	size_t count = 0;

	for (i = 0; i < MODEL_KEYS; i++)
		keys[i] = key_of(i);
	for (op = 0; op < 200000; op++) {
		int k = rng() % MODEL_KEYS;
		uint64_t v = rng(), got = 0;

		switch (rng() % 4) {
		case 0:
			bad += hmap_put(&m, keys[k], v) != 0;
			count += !in[k];
			in[k] = true;
			vals[k] = v;
			break;
		case 1:
			bad += hmap_add(&m, keys[k], v) != !in[k];
			if (!in[k]) {
				vals[k] = v;
				count++;
			}
			in[k] = true;
			break;
		case 2:
			bad += hmap_del(&m, keys[k], &got) != in[k];
			bad += in[k] && got != vals[k];
			count -= in[k];
			in[k] = false;
			break;
		default:
			bad += hmap_get(&m, keys[k], &got) != in[k];
			bad += in[k] && got != vals[k];
		}
	}
	CHECK(bad == 0, "200000 random put/add/del/get agree with a model (%d wrong)", bad);
	CHECK(m.n == count, "the count agrees (%zu, model %zu)", m.n, count);
	{
		size_t it = 0, seen = 0;
		uint64_t k, v;

		while (hmap_next(&m, &it, &k, &v))
			seen++;
		CHECK(seen == count, "iteration visits every key once, key 0 included");
	}
	hmap_free(&m);
	CHECK(m.n == 0 && !hmap_get(&m, 0, &(uint64_t){ 0 }) &&
	      hmap_put(&m, 7, 8) == 0 && hmap_get_ptr(&m, 7) == (void *)8,
	      "a freed map is empty and usable again");
	hmap_free(&m);
	hmap_free(NULL);
}

/* Deleting from the middle of a cluster must keep the rest findable. */
static void test_delete_in_clusters(void)
{
	struct hmap m = { 0 };
	int bad = 0;

	for (uint64_t k = 1; k <= 1000; k++)
		hmap_put(&m, k * 64, k);
	for (uint64_t k = 1; k <= 1000; k += 2)
		hmap_del(&m, k * 64, &(uint64_t){ 0 });
	for (uint64_t k = 1; k <= 1000; k++) {
		uint64_t v;
		bool found = hmap_get(&m, k * 64, &v);

		bad += found != (k % 2 == 0) || (found && v != k);
	}
	CHECK(bad == 0, "half of a clustered map deleted: the other half intact");
	hmap_free(&m);
}

static void test_vec(void)
{
	struct pair { int a; long b; } *arr = NULL;
	uint32_t n = 0, cap = 0;
	int bad = 0;

	for (int i = 0; i < 100000; i++)
		bad += VEC_PUSH(arr, n, cap, ((struct pair){ i, -i })) != 0;
	for (uint32_t i = 0; i < n; i++)
		bad += arr[i].a != (int)i || arr[i].b != -(long)i;
	CHECK(bad == 0 && n == 100000 && cap >= n, "100000 pushes kept in order");
	CHECK(vec_reserve((void **)&arr, &cap, cap + 1, sizeof(*arr)) == 0 &&
	      arr[cap - 1].a == 0 && arr[cap - 1].b == 0,
	      "new slots are zeroed");
	CHECK(vec_reserve((void **)&arr, &cap, UINT32_MAX, SIZE_MAX / 2) == -ENOMEM,
	      "an impossible size is refused, the array kept");
	free(arr);
}

static void test_get_or_new(void)
{
	struct hmap m = { 0 };
	long *a = hmap_get_or_new(&m, 42, sizeof(*a)), *b;

	CHECK(a && *a == 0 && hmap_get_ptr(&m, 42) == a, "a new key gets a zeroed block");
	*a = 7;
	b = hmap_get_or_new(&m, 42, sizeof(*b));
	CHECK(b == a && *b == 7 && m.n == 1, "the key again gets the same block");
	hmap_free_ptrs(&m);
}

/* A lane whose thread doubles each number handed to it, one at a time,
 * until it is closed. */
struct doubler {
	struct lane lane;
	int in, out;
	bool full, done;	/* in is the thread's; out is the caller's */
	int handled;
};

static void *doubler_run(void *arg)
{
	struct doubler *d = arg;

	lane_lock(&d->lane);
	for (;;) {
		while (!d->full && !d->lane.closing)
			lane_wait(&d->lane);
		if (!d->full)
			break;
		d->out = 2 * d->in;
		d->full = false;
		d->done = true;
		d->handled++;
		lane_wake(&d->lane);
	}
	lane_unlock(&d->lane);
	return NULL;
}

static int doubled(struct doubler *d, int x)
{
	lane_lock(&d->lane);
	d->in = x;
	d->full = true;
	d->done = false;
	lane_wake(&d->lane);
	while (!d->done)
		lane_wait(&d->lane);
	x = d->out;
	lane_unlock(&d->lane);
	return x;
}

static void test_lane(void)
{
	struct doubler d = { 0 };
	bool all = true;

	CHECK(lane_start(&d.lane, doubler_run, &d) == 0 && d.lane.running, "a lane's thread starts");
	for (int i = 0; i < 1000; i++)
		all = all && doubled(&d, i) == 2 * i;
	CHECK(all && d.handled == 1000, "1000 numbers handed over and back, each once (%d)",
	      d.handled);
	lane_close(&d.lane);
	CHECK(!d.lane.running && d.lane.closing, "closed: its thread, waiting for work, ended");
	lane_close(&d.lane);	/* as a cleanup after the owner's own close */
	CHECK(!d.lane.running && !d.lane.made, "closing twice is harmless");
	memset(&d, 0, sizeof(d));
	lane_close(&d.lane);
	CHECK(!d.lane.made, "so is closing a zeroed lane never started");
}

int main(void)
{
	test_against_model();
	test_get_or_new();
	test_delete_in_clusters();
	test_vec();
	test_lane();
	return check_done();
}
