/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The kernel side: what the system must offer, then open -> configure ->
 * load -> attach. Failures are said on stderr in one line. */
#ifndef CAPTURE_LOADER_H
#define CAPTURE_LOADER_H

#include <stdbool.h>
#include <stdint.h>

struct dftrace_bpf;
struct features;

/* What the core needs (user/capture/features.c): BTF, the ring buffer,
 * task storage, callbacks, the syscall and process tracepoints. */
#define LOADER_MIN_LINUX "5.13"

struct loader_opts {
	uint64_t ringbuf_size;
	bool lost_by_proc;	/* -D: count losses per process too */
	bool hide_privileged;	/* under sudo: drop privileged execs */
	const struct dft_steps *steps;	/* --steps, or NULL */
	const struct dft_scope *scope;	/* -a, --cgroup, --uid, --comm, or NULL */
	bool profile;		/* --profile: every call folded into totals */
	bool flight;		/* --flight: and sent whole too */
	const struct features *features;	/* this kernel's */
};

/* Root or the BPF capabilities, kernel BTF, and what the core needs:
 * 0 or -errno. Fills *f with this kernel's features. */
int loader_check_system(struct features *f);
/* *skel is set even on failure, for the caller's cleanup to destroy. */
int loader_open(struct dftrace_bpf **skel, const struct loader_opts *o);
/* A task iterator's link, which outlives the detach of the hooks: its fd
 * makes iterations (bpf_iter_create). NULL, said on stderr, on failure. */
struct bpf_link *loader_iter(struct bpf_program *prog);

#endif
