/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Per-syscall hooks (the fentry_syscalls feature): a fentry and a fexit
 * on the function of each syscall the table records, in place of the
 * raw sys_enter and sys_exit tracepoints, which tax every syscall of
 * every task on the host while attached. A tracing program attaches only
 * to the function it was loaded for, so each hook is a stub of a few
 * instructions, loaded here, that tail-calls the one program of its kind
 * (bpf/syscalls.bpf.c: call_entry, call_exit).
 */
#ifndef CAPTURE_SCHOOKS_H
#define CAPTURE_SCHOOKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <bpf/bpf.h>

struct bpf_map;
struct bpf_program;
struct dftrace_bpf;
struct features;

struct sc_hooks {
	int *fds;		/* the stubs' and their links' */
	uint32_t n, cap;
};

/* The function syscall nr enters (the kernel's name for it, as the
 * syscall table says; "__x64_sys_newstat" for stat), into buf; false if
 * the table records no such call. */
bool sc_hook_function(unsigned int nr, char *buf, size_t size);
/* A stub of the given kind (BPF_TRACE_FENTRY, BPF_TRACE_FEXIT) for the
 * function of BTF id fn, tail-calling entry 0 of the program array
 * progs: its fd, or -errno. */
int sc_hook_stub(int progs, uint32_t fn, enum bpf_attach_type kind, const char *name);
/* Group g's program that the entry (or exit) stubs tail-call, and the
 * program array they call it through. */
struct bpf_program *sc_hook_program(struct dftrace_bpf *skel, unsigned int g, bool entry);
struct bpf_map *sc_hook_map(struct dftrace_bpf *skel, unsigned int g, bool entry);
/* Every hook of the table's calls, whose functions' BTF ids features
 * found: 0, or -errno (said on stderr; those attached are let go).
 * verbose: how many, in how long, said. */
int sc_hooks_attach(struct sc_hooks *h, struct dftrace_bpf *skel, const struct features *f,
		    bool verbose);
/* Every hook let go. NULL-safe; safe to repeat. */
void sc_hooks_detach(struct sc_hooks *h);

#endif
