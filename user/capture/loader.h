/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The kernel side: what the system must offer, then open -> configure ->
 * load -> attach. Failures are said on stderr in one line. */
#ifndef CAPTURE_LOADER_H
#define CAPTURE_LOADER_H

#include <stdbool.h>
#include <stdint.h>

struct bpf_link;
struct bpf_program;
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

/* Whether this process may load BPF: root, or CAP_BPF and CAP_PERFMON
 * (or CAP_SYS_ADMIN). Without, the tracer is the service's client. */
bool loader_may_load(void);
/* Root or the BPF capabilities, kernel BTF, and what the core needs:
 * 0 or -errno. Fills *f with this kernel's features. */
int loader_check_system(struct features *f, const char *no_hooks);
/* Opened and loaded (verified), nothing attached yet: 0 or -errno, said.
 * *skel is set even on failure, for the caller's cleanup to destroy. */
int loader_open(struct dftrace_bpf **skel, const struct loader_opts *o);
/* Its hooks live: 0 or -errno, said. */
int loader_attach(struct dftrace_bpf *skel);
/*
 * The programs of annotations and GPU calls can be loaded at their first
 * use (a traced process maps a file that has such probes), not at
 * start: a third of the verifier's time at start-up. But a process that
 * execs meanwhile runs without them for the load's 60-80 ms, so only a
 * tracer that stays on (capture/tracer.c) waits for the first use; the
 * others load them at start (loader_lazy_now). A group is a second
 * instance of the same object, every map (its globals too) the first
 * one's, and only the group's programs loaded.
 */
enum lazy_group { LAZY_NONE = -1, LAZY_ANNOT, LAZY_GPU, LAZY__COUNT };

struct lazy_progs {
	struct dftrace_bpf *main;
	struct loader_opts o;
	struct dftrace_bpf *inst[LAZY__COUNT];
	int err[LAZY__COUNT];		/* a group that failed is not tried again */
	struct bpf_link *at_signal;	/* the annotations' signal_deliver hook */
	bool stopped;			/* nothing attached from now */
	bool verbose;
};

void loader_lazy_init(struct lazy_progs *l, struct dftrace_bpf *main,
		      const struct loader_opts *o, bool verbose);
/* The instance whose programs of group g are loaded, loading them now
 * if need be; NULL (said once on stderr) if they cannot be. */
struct dftrace_bpf *loader_lazy(struct lazy_progs *l, enum lazy_group g);
/* Group g loaded now, at start (a failure said once on stderr). */
void loader_lazy_now(struct lazy_progs *l, enum lazy_group g);
/* Hooks off, as the main instance's (dftrace_bpf__detach). */
void loader_lazy_detach(struct lazy_progs *l);
void loader_lazy_free(struct lazy_progs *l);

/* A task iterator's link, which outlives the detach of the hooks: its fd
 * makes iterations (bpf_iter_create). NULL, said on stderr, on failure. */
struct bpf_link *loader_iter(struct bpf_program *prog);

#endif
