/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The GPU and collective calls of bpf/gpu.h, by number: their names, the
 * family (library) each belongs to, and which argument means what.
 */
#ifndef MODEL_GPUCALLS_H
#define MODEL_GPUCALLS_H

#include <stdbool.h>
#include "dftrace.h"
#include "lib/hmap.h"

struct gpu_desc {
	const char *name;	/* the exported symbol */
	enum dft_gpu_family family;
	enum dft_gpu_class cls;
	enum dft_gpu_kind kind;
	unsigned char nargs, out, out2, str, bytes, stream, comm, x, y;
};

/* What a process's calls made, by the handles the later calls name them
 * with. Bounded: a process making more than GPU_STATE_MAX of one kind
 * (without freeing them) has the rest unnamed. */
struct gpu_state {
	struct hmap kernels;	/* CUfunction / CUkernel -> struct istr * */
	struct hmap allocs;	/* device or host address -> bytes */
	struct hmap comms;	/* ncclComm_t -> rank | nranks << 32 (-1: unknown) */
	/* ncclComm_t -> struct istr * of its id, the same in every rank's
	 * process: a hash of the ncclUniqueId it was made from, or of its
	 * parent's id and its color (ncclCommSplit) */
	struct hmap comm_ids;
	struct hmap files;	/* CUfileHandle_t -> struct istr * (its path) */
};

#define GPU_STATE_MAX 65536

void gpu_state_free(struct gpu_state *g);

/* The call of that number, or NULL. */
const struct gpu_desc *gpu_call(unsigned int id);
/* The category its events are written under: DFTracer's
 * "CUDA_DRIVER_API" for libcuda, "NCCL", "POSIX" for cuFile's I/O. */
const char *gpu_family_cat(enum dft_gpu_family f);
/* The symbol that marks a file as a family's library. */
const char *gpu_family_marker(enum dft_gpu_family f);
/* The kernel side's configuration, one entry per call (DFT_GPU_MAX). */
void gpu_fill_config(struct dft_gpu_cfg *cfg);
/* "name":"...","cat":"...", of its events (its length in *len). */
const char *gpu_name_cat(unsigned int id, size_t *len);
/* "HtoD", "DtoH", "DtoD", "PtoP", "default"; NULL for none. */
const char *gpu_copy_kind(enum dft_gpu_kind k);
/* An NCCL datatype's name and size in bytes (0: unknown). */
const char *gpu_nccl_type(unsigned long long t, unsigned int *size);
/* A class whose calls move bytes (args.bytes, or a cuFile call's ret). */
static inline bool gpu_moves_bytes(enum dft_gpu_class c)
{
	return c == GC_COPY || c == GC_ALLOC || c == GC_ALLOC_PITCH || c == GC_FREE ||
	       c == GC_COLL || c == GC_FILE_IO || c == GC_FILE_ASYNC || c == GC_FILE_BATCH;
}

/* A syncing call: the time the host waited for the device. */
static inline bool gpu_is_wait(const struct gpu_desc *d)
{
	return d->cls == GC_SYNC;
}

#endif
