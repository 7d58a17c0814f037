/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The tracer's state, shared by its front end (tracer.c: options, set-up,
 * the end) and its run (run.c: the target, the loop that drains the
 * ring, the command's end).
 */
#ifndef CAPTURE_RUN_H
#define CAPTURE_RUN_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/resource.h>
#include "capture/env.h"
#include "capture/features.h"
#include "capture/folds.h"
#include "capture/launch.h"
#include "capture/liverings.h"
#include "capture/loader.h"
#include "capture/premade.h"
#include "capture/lost.h"
#include "capture/probed.h"
#include "capture/report.h"
#include "capture/ring.h"
#include "capture/schooks.h"
#include "lib/invoker.h"

#define NS_PER_S 1000000000ull
/* INT, TERM and HUP (run.c's stop_signals) */
#define STOP_SIGNALS 3

struct bpf_link;
struct dftrace_bpf;
struct outdir;
struct output;
struct sink;
struct trace;

struct tracer_hooks;

struct tracer {
	struct env env;
	const struct tracer_hooks *caller;	/* the service's checks, or NULL */
	struct dftrace_bpf *skel;
	struct loader loader;	/* the BPF object's instances */
	struct premade premade;	/* the main instance's large maps, made early */
	struct sc_hooks hooks;	/* per-syscall hooks, where they replace the tracepoints */
	struct ring ring;
	struct trace *trace;
	struct sink *sink;	/* -o */
	struct outdir *outdir;	/* -D */
	struct output *pid_file;	/* --pid-file until it is in place */
	struct invoker who;
	struct launch launch;
	struct probed_files probed;	/* files with probes: annotations, GPU calls */
	struct lost lost;
	struct folds folds;	/* the kernel's totals of folded calls */
	struct liverings rings;	/* live threads' rings, at the end */
	FILE *recording;	/* $DFTRACE_BPF_RECORD: raw records, for make bench */
	struct report report;
	struct features features;	/* this kernel's */
	/* task iterators: -p's threads before 6.9, live threads' kept calls */
	struct bpf_link *adopt_iter, *kept_iter;
	/* -- CMD: counts the command's stop signals (bpf/signals.bpf.c) */
	struct bpf_link *signals_link;
	uint64_t stops_forwarded[STOP_SIGNALS];
	char features_list[256];	/* as the trace's start says them */
	char flight_prefix[4096];	/* --flight's dumps: the path up to flight- */
	struct rlimit nofile_at_start;	/* the command gets it back */
	char program[PATH_MAX];	/* -- CMD: the file it execs, or "" */
	char *target;		/* what start and end say was traced */
	struct jbuf v2_cfg;	/* --format v2: the end's args.cfg, inside */
	uint64_t deadline;	/* -d, counted from when tracing began; 0: none */
	uint32_t batch;		/* records in the current batch */
	uint64_t sweep_mark;	/* the ring's end at the last sweep */
	int child_status;
	bool child_reaped;
	bool cgroup_gone;	/* --cgroup's directory is gone, and we said so */
};

/* The signal mask the tracer was started with, for its command; first,
 * before any signal is unblocked. */
void run_keep_signal_mask(struct launch *l);
/* From here a stop signal ends the run, not the process (a file would
 * be left half made), even one the tracer inherited blocked; l->ignored
 * says which were ignored before. */
void run_install_signals(struct launch *l);
/* --flight: SIGUSR1 asks for a dump (dftrace-bpf dump PID sends it),
 * also where it came blocked. */
void run_install_dump_signal(void);
/* A stop signal has come. */
bool run_stopped(void);
/* Marks what is traced: a scope's processes, -p's, or the command,
 * started once its probes are attached. */
int run_start_target(struct tracer *tr);
/* Until the tree exits, a stop signal, the deadline or a write error. */
int run_loop(struct tracer *tr);
/* One bounded batch of records, waiting up to timeout_ms for the first.
 * 1 if more are waiting, 0 if the ring is empty, or -errno. */
int run_drain_batch(struct tracer *tr, int timeout_ms);
/* The command's exit status, its stop signals passed on meanwhile. */
int run_exit_status(struct tracer *tr);

#endif
