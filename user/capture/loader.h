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
struct premade;

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
	bool split;		/* the start's programs in halves (loader_parallel()) */
	unsigned int preload;	/* the lazy groups loaded at start: 1 << g */
	const struct features *features;	/* this kernel's */
	struct premade *premade;	/* the main instance's large maps, or NULL */
};

/* Whether this process may load BPF: root, or CAP_BPF and CAP_PERFMON
 * (or CAP_SYS_ADMIN). Without, the tracer is the service's client. */
bool loader_may_load(void);
/* Root or the BPF capabilities, kernel BTF, and what the core needs:
 * 0 or -errno. Fills *f with this kernel's features. */
int loader_check_system(struct features *f, const char *no_hooks);

/*
 * One object, loaded as several instances, every map (its globals too)
 * the main instance's, each instance only its own programs:
 * - the main instance: the maps, and every program but those below;
 * - the lazy groups (annotations, GPU calls): loaded at their first use
 *   (a traced process maps a file that has such probes), by an instance
 *   of their own, not at start: a third of the verifier's time at
 *   start-up. A process that execs meanwhile runs without them for the
 *   load's 60-80 ms, so only a tracer that stays on (capture/tracer.c)
 *   waits for the first use; the others preload them (o->preload), with
 *   the start's other programs;
 * - where two CPUs are free (o->split), the start's programs but the
 *   main instance's few, in two halves loaded beside each other: the
 *   verifier and libbpf's relocations of an instance run on one core.
 *   The main instance goes first, for its maps (its large ones made
 *   beforehand, beside the start's checks: capture/premade.h).
 * Without split the main instance has all the start's programs, the
 * preloaded groups' too: each instance relocates against the kernel's
 * BTF again (parsed once for the start: capture/kernelbtf.h).
 */
enum lazy_group { LAZY_ANNOT, LAZY_GPU, LAZY__COUNT };

#define LOADER_HALVES 2

struct loader {
	struct loader_opts o;
	struct dftrace_bpf *main;
	struct dftrace_bpf *half[LOADER_HALVES];	/* under o.split */
	/* the instance that has group g's programs: main, a half, own[g] */
	struct dftrace_bpf *inst[LAZY__COUNT];
	struct dftrace_bpf *own[LAZY__COUNT];	/* loaded at first use */
	int err[LAZY__COUNT];		/* a group that failed is not tried again */
	struct bpf_link *at_signal;	/* own[LAZY_ANNOT]'s signal_deliver hook */
	bool stopped;			/* nothing attached from now */
	bool verbose;
};

/* The object, opened (libbpf's open: nothing in the kernel yet). */
struct dftrace_bpf *loader_open(void);
/* Whether the start's programs load in two halves: two CPUs free. */
bool loader_parallel(void);
/* Opened, configured and loaded (verified), nothing attached yet: the
 * main instance (l->main), the halves, the preloaded groups. 0 or
 * -errno, said; a preloaded group that fails is said, and only its
 * probes are left out. loader_unload() in any case. */
int loader_load(struct loader *l, const struct loader_opts *o, bool verbose);
/* Every loaded instance's hooks live, the syscall hooks last: 0 or
 * -errno, said. */
int loader_attach(struct loader *l);
/* The instance whose programs of group g are loaded, loading them now
 * if need be; NULL (said once on stderr) if they cannot be. */
struct dftrace_bpf *loader_lazy(struct loader *l, enum lazy_group g);
/* fn(instance, ctx) for every instance loaded, the main one first. */
void loader_each(const struct loader *l, void (*fn)(struct dftrace_bpf *, void *), void *ctx);
/* Hooks off, every instance's. */
void loader_detach(struct loader *l);
void loader_unload(struct loader *l);

/* A task iterator's link, which outlives the detach of the hooks: its fd
 * makes iterations (bpf_iter_create). NULL, said on stderr, on failure. */
struct bpf_link *loader_iter(struct bpf_program *prog);

#endif
