/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Marking running tasks as traced, in the kernel's task storage. */
#ifndef CAPTURE_ATTACH_H
#define CAPTURE_ATTACH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "dftrace.h"

/* Marks one task (any thread): 1 if newly marked, 0 if it already was
 * (the fork hook marks the children of marked tasks), or -errno:
 * -EINVAL for a thread other than its process's first before Linux 6.9,
 * where a pidfd names none (see attach_opts.adopt_*). at: a time
 * (clock_mono_ns()) before the call, when the task was surely alive if
 * it is marked: the kernel side keeps it as its process's start, which
 * user space checks before it reads /proc/PID (dftrace.h). */
int attach_task(int tasks_fd, pid_t tid, uint64_t at);

/* Whether the process at pid is still the traced one that a record
 * showed alive at alive_ns, with the memory it had then: its first
 * thread's mark (struct dft_task, through a pidfd) says it began, and
 * last exec'd, no later. Then it held the pid all along since alive_ns:
 * what was read of /proc/PID before the call is its (model/procs.h's
 * struct proc_gate). */
bool attach_proven(int tasks_fd, pid_t pid, uint64_t alive_ns);

/* What -p may name: a live user-space process other than the tracer.
 * Stores its process id in *tgid (a thread id names its process).
 * 0, or a negative errno with a one-line message in err. */
int attach_check_target(pid_t pid, pid_t *tgid, char *err, size_t errlen);

struct attach_opts {
	int tasks_fd;
	/* Before 6.9: the kernel side marks the threads of the processes
	 * put in the map adopt_fd when its task iterator adopt_iter_fd (a
	 * link) is read, and says their thread ids. -1: not used. */
	int adopt_fd, adopt_iter_fd;
	pid_t self;		/* the tracer: never marked, nor below it */
	bool skip_gone;		/* pids that are gone are passed over, not errors */
	/* once per process we marked, with attach_task()'s at */
	void (*adopt)(pid_t pid, uint64_t at, void *ctx);
	/* Called between steps: drains the ring buffer, and answers false
	 * to stop attaching (a signal, the deadline). */
	bool (*keep_going)(void *ctx);
	void *ctx;
};

/*
 * Marks pids, all their threads and descendants.  Tasks born after their
 * parent was marked are the fork hook's: only tasks that existed before
 * are marked and adopted here, in a few passes over /proc (each finds the
 * tasks born while the one before ran).  0, -EINTR when keep_going said
 * stop (what was marked stays marked), or -errno with a message in err.
 */
int attach_tree(const struct attach_opts *o, const pid_t *pids, int npids,
		char *err, size_t errlen);
/* True when pid is gone or a zombie: no more records will come from it. */
bool process_exited(pid_t pid);
/* The same, but only where /proc says so: a pid whose entry can't be read
 * for another reason (no fd left, no memory) is not gone. */
bool process_gone(pid_t pid);
/* pid is a tracer (its name is ours): no tracer traces another. */
bool is_tracer_process(pid_t pid);

#endif
