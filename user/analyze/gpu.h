/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the GPU and collective calls of a trace say, seen from the host
 * (dftrace-bpf's uprobes on libcuda, libnccl and libcufile, cats
 * CUDA_DRIVER_API, NCCL, CUFILE; DFTracer's CUPTI events, cats CUDA_*):
 * the time threads waited for the device, bytes copied to it and from
 * it, kernel launches and collective bytes; in all, per phase and step,
 * and collective bytes per rank. cuFile's reads and writes are file I/O
 * (cat POSIX), counted with the rest.
 */
#ifndef ANALYZE_GPU_H
#define ANALYZE_GPU_H

#include <stdint.h>
#include "lib/hmap.h"

struct ev;
struct ev_input;

enum ev_gpu {
	GPU_NONE, GPU_WAIT, GPU_TO_DEVICE, GPU_FROM_DEVICE, GPU_ON_DEVICE, GPU_LAUNCH,
	GPU_COLLECTIVE, GPU_CALL,
};

struct gpu_totals {
	uint64_t calls, waits, copies, launches, collectives, file_calls;
	int64_t wait_ns, to_device, from_device, on_device, collective_bytes;
	int64_t file_bytes;	/* read and written by cuFile */
};

/* A phase (its region's "cat/name", "-" outside any) and step (-1: none). */
struct gpu_phase_row {
	char *phase;		/* unescaped */
	int64_t step;
	struct gpu_totals t;
};

struct gpu_rank_row {
	int64_t rank;		/* the communicator's, else the launcher's; -1 */
	uint64_t calls;
	int64_t bytes;
};

struct gpu_profile {
	struct gpu_totals all;
	struct gpu_phase_row *rows;
	uint32_t n, cap;
	struct hmap index;	/* hash of (phase, step) -> row index */
	struct gpu_rank_row *ranks;
	uint32_t nranks, capranks;
	struct hmap rank_index;	/* rank -> index */
	int err;		/* -ENOMEM once a row could not be made */
};

/* The class of an event of cat cat, name name and args.copy_kind kind. */
enum ev_gpu gpu_class_of(const char *cat, size_t cat_len, const char *name,
			 size_t name_len, const char *kind, size_t kind_len);
void gpu_profile_add(struct gpu_profile *g, const struct ev_input *in, const struct ev *e);
void gpu_profile_free(struct gpu_profile *g);

#endif
