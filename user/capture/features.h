/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the running kernel offers the kernel side, probed before load from
 * its BTF and map types: the core a trace needs (refused without it) and
 * each optional feature, which is off alone, with its programs, where
 * the kernel lacks what it needs. Also the shapes of interfaces that
 * changed between versions, handed to the programs as rodata.
 */
#ifndef CAPTURE_FEATURES_H
#define CAPTURE_FEATURES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "dftrace.h"

struct dftrace_bpf;

/* The prototypes of syscall functions the hooks take (bpf/syscalls.bpf.c:
 * CALL_HOOKS) */
#define SC_HOOK_GROUPS 2

/* The features, in the order they are listed. */
#define DFT_FEATURES(X)                                                        \
	X(fast_reads, "fast kernel reads")                                     \
	X(mmap_read, "mmap reads")                                             \
	X(fault_kinds, "write and exec faults told apart")                     \
	X(page_misses, "page-cache misses")                                    \
	X(mmap_write, "mmap writes")                                           \
	X(overlay_names, "names of files mapped from overlayfs")               \
	X(io_uring, "io_uring")                                                \
	X(annotations, "annotations (USDT)")                                   \
	X(region_rings, "regions from threads' rings")                         \
	X(gpu, "GPU and collective calls (uprobes)")                           \
	X(cgroup_scope, "--cgroup")                                            \
	X(fentry_syscalls, "per-syscall hooks (fentry): no tax on other calls")

enum feature {
#define FEATURE_ENUM(name, what) FEATURE_##name,
	DFT_FEATURES(FEATURE_ENUM)
#undef FEATURE_ENUM
	FEATURE__COUNT
};

struct features {
	char release[65];		/* uname -r */
	const char *core_missing;	/* what the core lacks, or NULL */
	bool on[FEATURE__COUNT];
	char why_off[FEATURE__COUNT][160];
	struct dft_kernel_shape shape;
	/* the submit hook's name here: io_uring_submit_req (6.4 on) or
	 * io_uring_submit_sqe */
	bool uring_submit_sqe;
	/* a program may both call its own functions and tail-call: the
	 * pinned region probes' programs do (annot.bpf.c); without it the
	 * annotation program takes those probes too */
	bool pinned_regions;
	/* one link holds a program's uprobes on a file (uprobe_multi,
	 * Linux 6.6): the uprobes' programs are loaded for it
	 * (capture/uprobes.h) */
	bool uprobe_multi;
	/* fentry_syscalls (capture/schooks.h): the BTF id of each recorded
	 * syscall's function (0: not hooked), its prototype's group,
	 * whether only its entry is hooked (exit, exit_group); for each
	 * group, the function its pair of programs is loaded for; the
	 * calls not hooked (fork and vfork where their functions have no
	 * BTF: no I/O, and the fd tables learn of forks elsewhere) */
	uint32_t sc_fn[DFT_NR_MAX];
	unsigned char sc_group[DFT_NR_MAX];
	bool sc_entry_only[DFT_NR_MAX];
	char sc_target[SC_HOOK_GROUPS][64];
	unsigned int sc_groups;
	char sc_unhooked[128];
};

/* A feature off by the user's choice (why: what to say of it). */
void features_turn_off(struct features *f, enum feature ft, const char *why);
/* Probes this kernel; 0, or -errno when its BTF can't be read. Safe to
 * call again. no_hooks: why a run will not use fentry_syscalls (the
 * feature is then off for it, and its probe, which looks up each hooked
 * function in BTF and attaches one, not made); NULL: probed. */
int features_probe(struct features *f, const char *no_hooks);
/* The programs of features that are off, or that this run does not need
 * (--cgroup's without --cgroup), are not loaded; the shapes go to the
 * programs' rodata. Between open and load. */
void features_configure(const struct features *f, struct dftrace_bpf *skel, bool cgroup);
/* "mmap_read,-io_uring,...": each feature, '-' before those off. */
void features_list(const struct features *f, char *buf, size_t size);
/* One line on stderr for each feature that is off (fentry_syscalls
 * only if verbose: the tracepoints lose nothing). */
void features_warn(const struct features *f, bool verbose);
/* The table --version prints. */
void features_print(const struct features *f, FILE *out);

#endif
