// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include "model/gpucalls.h"

static const struct gpu_desc calls[DFT_GPU__COUNT] = {
#define GPU_DESC(s, fam, c, k, n, o, o2, st, b, strm, cm, xx, yy)            \
	[DFT_GPU_##s] = { #s, DFT_GPU_##fam, c, k, n, o, o2, st, b, strm, cm, xx, yy },
	DFT_GPU_CALLS(GPU_DESC)
#undef GPU_DESC
};

_Static_assert(DFT_GPU__COUNT <= DFT_GPU_MAX, "DFT_GPU_MAX: the cookie's mask");

const struct gpu_desc *gpu_call(unsigned int id)
{
	return id > DFT_GPU_NONE && id < DFT_GPU__COUNT ? &calls[id] : NULL;
}

const char *gpu_family_cat(enum dft_gpu_family f)
{
	return f == DFT_GPU_CUDA ? "CUDA_DRIVER_API" : f == DFT_GPU_NCCL ? "NCCL" : "POSIX";
}

const char *gpu_family_marker(enum dft_gpu_family f)
{
	return f == DFT_GPU_CUDA ? DFT_GPU_MARKER_CUDA :
	       f == DFT_GPU_NCCL ? DFT_GPU_MARKER_NCCL : DFT_GPU_MARKER_CUFILE;
}

const char *gpu_name_cat(unsigned int id, size_t *len)
{
	static char frags[DFT_GPU__COUNT][96];
	const struct gpu_desc *d = gpu_call(id);
	int n;

	if (!d)
		return NULL;
	n = snprintf(frags[id], sizeof(frags[id]), "\"name\":\"%s\",\"cat\":\"%s\",", d->name,
		     d->cls >= GC_FILE_REG ? "CUFILE" : gpu_family_cat(d->family));
	*len = n;
	return frags[id];
}

void gpu_fill_config(struct dft_gpu_cfg *cfg)
{
	for (unsigned int i = 1; i < DFT_GPU__COUNT; i++)
		cfg[i] = (struct dft_gpu_cfg){ calls[i].cls, calls[i].nargs, calls[i].out,
					       calls[i].out2, calls[i].str };
}

const char *gpu_copy_kind(enum dft_gpu_kind k)
{
	switch (k) {
	case GK_DEFAULT: return "default";
	case GK_HTOD: return "HtoD";
	case GK_DTOH: return "DtoH";
	case GK_DTOD: return "DtoD";
	case GK_PTOP: return "PtoP";
	default: return NULL;
	}
}

/* ncclDataType_t, as nccl.h numbers it (2.19 on: the two fp8 types) */
const char *gpu_nccl_type(unsigned long long t, unsigned int *size)
{
	static const struct {
		const char *name;
		unsigned int size;
	} types[] = {
		{ "int8", 1 }, { "uint8", 1 }, { "int32", 4 }, { "uint32", 4 },
		{ "int64", 8 }, { "uint64", 8 }, { "float16", 2 }, { "float32", 4 },
		{ "float64", 8 }, { "bfloat16", 2 }, { "float8e4m3", 1 }, { "float8e5m2", 1 },
	};

	if (t >= sizeof(types) / sizeof(types[0])) {
		*size = 0;
		return "unknown";
	}
	*size = types[t].size;
	return types[t].name;
}

void gpu_state_free(struct gpu_state *g)
{
	if (!g)
		return;
	hmap_free(&g->kernels);
	hmap_free(&g->allocs);
	hmap_free(&g->comms);
	hmap_free(&g->comm_ids);
	hmap_free(&g->files);
	free(g);
}
