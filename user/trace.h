/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Turns kernel records into trace lines: correlates them with the fd
 * tables, names files, and writes DFTracer-compatible JSON. */
#ifndef TRACE_H
#define TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "outdir.h"
#include "sink.h"
#include "syscalls.h"

#define TRACE_MAX_OPS SC_MAX_NAMES
#define TRACE_ERR_LEN 512

struct trace_config {
	bool inline_paths;
	struct outdir *outdir;	/* -D: one file per process; NULL: one file */
	const char *cmdline;	/* what was traced, for start/end events */
	uint32_t root_pid;	/* the first traced process: owns start/end */
	bool root_launched;	/* -- CMD: not exec'd yet, /proc shows us */
	const char *root_exe;	/* -- CMD: the program it will exec, if known */
	/* With output_dir: the losses of one process, by slot; NULL else. */
	void (*proc_lost)(uint32_t pid, uint64_t *lost, size_t nslots,
			  bool consume);
};

struct trace_stats {
	uint64_t events;	/* "X" events written */
	uint64_t records;	/* kernel records consumed */
	uint64_t count[TRACE_MAX_OPS];	/* by sc_name_index() */
	uint64_t bytes[TRACE_MAX_OPS];
	uint64_t untracked_children;	/* forks the kernel could not track */
	uint64_t lost_in_files;	/* output_dir: losses written to a process's file */
	uint64_t lost_elsewhere; /* output_dir: losses no file reports (full map) */
	uint64_t privileged;	/* execs that raised privileges: untraced */
	uint64_t files_reopened; /* -D: files closed for want of descriptors */
	uint32_t live;		/* traced processes still running */
	int write_error;	/* first output error, negative errno */
	char write_error_msg[TRACE_ERR_LEN]; /* and what it was */
};

/* main_sink: the single output, or NULL with config->outdir. */
int trace_init(const struct trace_config *config, struct sink *main_sink);
/* A process that is traced from now on (attach or launch). */
void trace_adopt(uint32_t pid);
/* libbpf ring_buffer callback. */
int trace_handle_record(void *ctx, void *data, size_t size);
/* lost[slot]: per syscall nr, then per record kind (see dftrace.bpf.c). */
void trace_finish(const uint64_t *lost, size_t nslots);
/* Periodic flush of every open output; returns the first error. */
int trace_flush(void);
const struct trace_stats *trace_stats(void);
/* CLOCK_MONOTONIC ns to wall-clock µs, as in the trace. */
uint64_t trace_wall_us(uint64_t mono_ns);

#endif
