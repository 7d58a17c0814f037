/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The kernel side: what the system must offer, then open -> configure ->
 * load -> attach. Failures are said on stderr in one line. */
#ifndef CAPTURE_LOADER_H
#define CAPTURE_LOADER_H

#include <stdbool.h>
#include <stdint.h>

struct dftrace_bpf;

struct loader_opts {
	uint64_t ringbuf_size;
	bool lost_by_proc;	/* -D: count losses per process too */
	bool hide_privileged;	/* under sudo: drop privileged execs */
	const struct dft_steps *steps;	/* --steps, or NULL */
	const struct dft_scope *scope;	/* -a, --cgroup, --uid, --comm, or NULL */
	bool profile;		/* --profile: every call folded into totals */
};

/* Root or the BPF capabilities, and kernel BTF: 0 or -errno. */
int loader_check_system(void);
/* *skel is set even on failure, for the caller's cleanup to destroy. */
int loader_open(struct dftrace_bpf **skel, const struct loader_opts *o);

#endif
