/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Starting the traced command: forked early and held before exec, so it
 * can be marked as traced and its very first syscall is seen. */
#ifndef CAPTURE_LAUNCH_H
#define CAPTURE_LAUNCH_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct invoker;
struct rlimit;

struct launch {
	const struct invoker *as;	/* who the command runs as */
	const struct rlimit *nofile;	/* its RLIMIT_NOFILE, or NULL */
	pid_t pid;
	int go_fd;	/* write end: one byte releases the child */
	int err_fd;	/* read end: errno of a failed exec, or EOF */
	sigset_t ignored;	/* of the signals the tracer handles, those
				 * ignored when it started: the command's */
	sigset_t blocked;	/* the mask the tracer started with: the
				 * command's (run_keep_signal_mask()) */
	bool stdout_to_stderr;	/* set before launch_prepare(): the trace
				 * is our stdout, the child must not write
				 * into it */
};

/* Forks the child, which becomes l->as and waits. */
int launch_prepare(char **argv, struct launch *l, char *err, size_t errlen);
/* Releases the child; fails with a message if exec failed. */
int launch_start(struct launch *l, char *err, size_t errlen);
/* Kills and reaps a child that was never started. NULL-safe. */
void launch_abort(struct launch *l);
/* The file execvp() will run for cmd, as an absolute path without
 * symlinks: its annotations go live before the exec, and the trace's
 * start event names it. false (and "") if there is none. */
bool launch_program(const char *cmd, char *out, size_t len);

#endif
