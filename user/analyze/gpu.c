// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "analyze/events.h"
#include "analyze/gpu.h"
#include "lib/hash.h"
#include "lib/units.h"
#include "lib/vec.h"
#include "read/jscan.h"

#define IS(s, n, lit) ((n) == sizeof(lit) - 1 && !memcmp((s), lit, sizeof(lit) - 1))

static bool has(const char *s, size_t n, const char *part)
{
	return n && memmem(s, n, part, strlen(part));
}

enum ev_gpu gpu_class_of(const char *cat, size_t cat_len, const char *name,
			 size_t name_len, const char *kind, size_t kind_len)
{
	if (IS(cat, cat_len, "NCCL"))
		return has(name, name_len, "Comm") || has(name, name_len, "Group") ?
			       GPU_CALL : GPU_COLLECTIVE;
	if (cat_len < 4 || memcmp(cat, "CUDA", 4))
		return GPU_CALL; /* CUFILE: its I/O went by syscalls, counted there */
	if (IS(cat, cat_len, "CUDA_SYNC") || has(name, name_len, "Synchronize") ||
	    has(name, name_len, "WaitEvent"))
		return GPU_WAIT;
	if (has(name, name_len, "Launch") || IS(cat, cat_len, "CUDA_KERNEL"))
		return GPU_LAUNCH;
	if (IS(kind, kind_len, "HtoD"))
		return GPU_TO_DEVICE;
	if (IS(kind, kind_len, "DtoH"))
		return GPU_FROM_DEVICE;
	if (kind_len)
		return GPU_ON_DEVICE; /* DtoD, PtoP, and unified copies */
	return GPU_CALL;
}

/* A call's args.bytes: the file says, so any value; none below 0. */
static int64_t gpu_bytes(const struct ev *e)
{
	return e->gpu_bytes > 0 ? e->gpu_bytes : 0;
}

static void count(struct gpu_totals *t, const struct ev *e)
{
	int64_t dur = e->end - e->start;
	int64_t bytes = gpu_bytes(e);

	if (e->cufile) {
		t->file_calls += e->calls;
		units_add(&t->file_bytes, e->kind == EV_IO ? e->bytes : bytes);
	}
	if (e->kind != EV_GPU)
		return;
	t->calls += e->calls;
	switch (e->gpu) {
	case GPU_WAIT:
		t->waits += e->calls;
		units_add(&t->wait_ns, dur);
		break;
	case GPU_TO_DEVICE:
	case GPU_FROM_DEVICE:
	case GPU_ON_DEVICE:
		t->copies += e->calls;
		units_add(e->gpu == GPU_TO_DEVICE ? &t->to_device :
			  e->gpu == GPU_FROM_DEVICE ? &t->from_device : &t->on_device,
			  bytes);
		break;
	case GPU_LAUNCH:
		t->launches += e->calls;
		break;
	case GPU_COLLECTIVE:
		t->collectives += e->calls;
		units_add(&t->collective_bytes, bytes);
		break;
	default:
		break;
	}
}

static struct gpu_phase_row *phase_row(struct gpu_profile *g, const struct ev *e)
{
	char shown[1024];
	size_t n = 0;
	uint64_t h, i, key[2];
	struct gpu_phase_row r = { .step = e->step };

	if (e->phase.len) {
		n = js_unescape(e->phase_cat, shown, sizeof(shown) - 1);
		shown[n++] = '/';
		n += js_unescape(e->phase, shown + n, sizeof(shown) - n);
	} else {
		shown[n++] = '-';
	}
	key[0] = dft_hash64(shown, n);
	key[1] = (uint64_t)e->step;
	h = dft_hash64(key, sizeof(key));
	if (hmap_get(&g->index, h, &i))
		return &g->rows[i];
	if (!(r.phase = strndup(shown, n)) || VEC_PUSH(g->rows, g->n, g->cap, r) ||
	    hmap_put(&g->index, h, g->n - 1)) {
		free(r.phase);
		g->err = -ENOMEM;
		return NULL;
	}
	return &g->rows[g->n - 1];
}

static void count_rank(struct gpu_profile *g, int64_t rank, const struct ev *e)
{
	struct gpu_rank_row r = { .rank = rank };
	uint64_t i;

	if (!hmap_get(&g->rank_index, (uint64_t)rank, &i)) {
		if (VEC_PUSH(g->ranks, g->nranks, g->capranks, r) ||
		    hmap_put(&g->rank_index, (uint64_t)rank, g->nranks - 1)) {
			g->err = -ENOMEM;
			return;
		}
		i = g->nranks - 1;
	}
	g->ranks[i].calls += e->calls;
	units_add(&g->ranks[i].bytes, gpu_bytes(e));
}

void gpu_profile_add(struct gpu_profile *g, const struct ev_input *in, const struct ev *e)
{
	struct gpu_phase_row *r;

	if (e->kind != EV_GPU && !e->cufile)
		return;
	count(&g->all, e);
	if ((r = phase_row(g, e)))
		count(&r->t, e);
	if (e->gpu == GPU_COLLECTIVE)
		count_rank(g, e->comm_rank >= 0 ? e->comm_rank : ev_rank(in, e->pid), e);
}

void gpu_profile_free(struct gpu_profile *g)
{
	for (uint32_t i = 0; i < g->n; i++)
		free(g->rows[i].phase);
	free(g->rows);
	free(g->ranks);
	hmap_free(&g->index);
	hmap_free(&g->rank_index);
	memset(g, 0, sizeof(*g));
}
