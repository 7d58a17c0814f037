/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* dftrace-bpf's tracing: options, then the run until the traced tree
 * exits, a signal or the duration; returns the exit status. */
#ifndef CAPTURE_TRACER_H
#define CAPTURE_TRACER_H

struct env;

/* What a caller other than the command line adds (the service, issue
 * 38): a check of the options before anything is done, which may narrow
 * them (a client's scope to its own processes), a check once the
 * targets are attached and before the trace is written (0, or a refusal
 * said on stderr: nothing is written), and word that tracing has begun. */
struct tracer_hooks {
	int (*check)(void *ctx, struct env *env);
	int (*attached)(void *ctx);
	void (*ready)(void *ctx);
	void *ctx;
};

int tracer_main(int argc, char **argv);
int tracer_run(int argc, char **argv, const struct tracer_hooks *hooks);

#endif
