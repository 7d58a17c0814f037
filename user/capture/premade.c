// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "capture/loader.h"
#include "capture/premade.h"
#include "dftrace.h"
#include "dftrace.skel.h" /* after dftrace.h: its types */
#include "lib/clock.h"

/* Below this a map is made in about a millisecond or less (on the VM
 * of doc/bench.md a hash map of 16384 elements of 16 bytes takes ~5 ms:
 * each element preallocated and linked). */
#define PREMADE_MIN_BYTES (256u << 10)

static bool preallocated_kind(enum bpf_map_type type)
{
	switch (type) {
	case BPF_MAP_TYPE_HASH:
	case BPF_MAP_TYPE_LRU_HASH:
	case BPF_MAP_TYPE_PERCPU_HASH:
	case BPF_MAP_TYPE_LRU_PERCPU_HASH:
	case BPF_MAP_TYPE_ARRAY:
	case BPF_MAP_TYPE_PERCPU_ARRAY:
		return true;
	default:
		return false;
	}
}

static uint64_t map_bytes(const struct bpf_map *m)
{
	return (uint64_t)bpf_map__max_entries(m) * (bpf_map__key_size(m) + bpf_map__value_size(m));
}

static bool worth_making(const struct bpf_map *m)
{
	uint64_t bytes = map_bytes(m);

	return !bpf_map__is_internal(m) && preallocated_kind(bpf_map__type(m)) &&
	       !(bpf_map__map_flags(m) & BPF_F_NO_PREALLOC) &&
	       strlen(bpf_map__name(m)) < BPF_OBJ_NAME_LEN && bytes >= PREMADE_MIN_BYTES;
}

/* m, made and handed to libbpf: 0, or -errno (m may be half changed:
 * finish() gives libbpf a fresh object then). */
static int make_map(struct bpf_map *m)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = bpf_map__map_flags(m),
		    .numa_node = bpf_map__numa_node(m));
	int fd = bpf_map_create(bpf_map__type(m), bpf_map__name(m), bpf_map__key_size(m),
				bpf_map__value_size(m), bpf_map__max_entries(m), &opts);
	int err;

	if (fd < 0)
		return -errno;
	err = bpf_map__reuse_fd(m, fd);	/* dups it */
	close(fd);
	return err;
}

/* The next map not yet taken by a worker, made; until none is left. */
static void work(struct premade *p)
{
	unsigned int i;

	while ((i = __atomic_fetch_add(&p->next, 1, __ATOMIC_RELAXED)) < p->ntodo) {
		if (make_map(p->todo[i]))
			__atomic_store_n(&p->failed, true, __ATOMIC_RELAXED);
		else
			__atomic_fetch_add(&p->maps, 1, __ATOMIC_RELAXED);
	}
}

/* The largest first: the last map begun sets when all are made. */
static int by_bytes_desc(const void *a, const void *b)
{
	uint64_t x = map_bytes(*(struct bpf_map *const *)a), y = map_bytes(*(struct bpf_map *const *)b);

	return x < y ? 1 : x > y ? -1 : 0;
}

static void *make(void *arg)
{
	struct premade *p = arg;
	struct dftrace_bpf *skel = loader_open();
	struct bpf_map *m;

	if (!skel)
		return NULL;
	bpf_object__for_each_map(m, skel->obj)
		if (worth_making(m) && p->ntodo < PREMADE_MAX)
			p->todo[p->ntodo++] = m;
	qsort(p->todo, p->ntodo, sizeof(p->todo[0]), by_bytes_desc);
	p->skel = skel;
	/* from here take() may help */
	__atomic_store_n(&p->ready, true, __ATOMIC_RELEASE);
	work(p);
	return NULL;
}

void premade_start(struct premade *p)
{
	*p = (struct premade){ .t0 = clock_mono_ns() };
	p->started = !pthread_create(&p->thread, NULL, make, p);
}

/* The maps not yet begun are made by the caller too, beside the thread. */
static void finish(struct premade *p)
{
	if (!p->started)
		return;
	if (__atomic_load_n(&p->ready, __ATOMIC_ACQUIRE))
		work(p);
	pthread_join(p->thread, NULL);
	p->started = false;
	p->ns = clock_mono_ns() - p->t0;
	if (p->failed && p->skel) {
		/* reuse_fd may have half changed a map: libbpf makes them all */
		dftrace_bpf__destroy(p->skel);
		p->skel = NULL;
		p->maps = 0;
	}
}

struct dftrace_bpf *premade_take(struct premade *p)
{
	struct dftrace_bpf *skel;

	finish(p);
	skel = p->skel;
	p->skel = NULL;
	return skel;
}

void premade_free(struct premade *p)
{
	dftrace_bpf__destroy(premade_take(p));
}
