/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What to trace beyond a pid tree: every process (-a), a cgroup v2
 * directory and below (--cgroup), a user's processes (--uid), processes
 * by command name (--comm); a union, with -p and -- CMD too. The kernel
 * side tracks a task from the moment it enters a scope (an exec, a
 * rename, a move into the cgroup); at start-up the processes already in
 * one are found in /proc and marked with their descendants.
 */
#ifndef CAPTURE_SCOPE_H
#define CAPTURE_SCOPE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include "dftrace.h"

struct scope_opts {
	struct dft_scope k;	/* what the kernel side is given */
	bool on;
	char cgroup_path[4096];	/* resolved */
};

/* Each: 0, or -EINVAL with a one-line message in err. */
int scope_add_cgroup(struct scope_opts *s, const char *path, char *err, size_t errlen);
int scope_add_uid(struct scope_opts *s, const char *user, char *err, size_t errlen);
int scope_add_comm(struct scope_opts *s, const char *name, char *err, size_t errlen);
void scope_add_all(struct scope_opts *s);

/* Whether a live process is in scope now, by /proc. */
/* --cgroup's directory's id now, or -errno (-ENOENT: it is gone). */
int scope_cgroup_now(const struct scope_opts *s, unsigned long long *id);
bool scope_has_process(const struct scope_opts *s, pid_t pid);
/* The processes in scope now (malloc'd; the tracer's own excluded). */
pid_t *scope_processes(const struct scope_opts *s, pid_t self, int *n);

#endif
