/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * GPU and collective calls (bpf/gpu.h): a file that defines a family's
 * marker symbol (libcuda, libnccl, libcufile, or a program or library
 * linking one statically) gets an entry and a return probe on each of
 * that family's functions it defines. Found as libraries are mapped,
 * with the USDT notes (capture/probed.c, which calls this).
 */
#ifndef CAPTURE_GPUPROBES_H
#define CAPTURE_GPUPROBES_H

#include <gelf.h>
#include <stdint.h>
#include "capture/uprobes.h"
#include "dftrace.h"

struct dftrace_bpf;

/* Where a file defines the calls: their offsets in the file. */
struct gpu_syms {
	uint64_t off[DFT_GPU__COUNT];	/* 0: not defined there */
	unsigned int families;		/* 1 << enum dft_gpu_family */
};

void gpu_find_syms(Elf *elf, struct gpu_syms *s);
/* The calls' probes into plan: how many calls, or -ENOMEM. Return
 * probes first: an entry without its return would be a frame the kernel
 * side keeps until the thread's stack passes it again. */
int gpu_plan(struct dftrace_bpf *skel, const struct gpu_syms *s, struct uprobe_plan *plan);

#endif
