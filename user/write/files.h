/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Which file an event goes to: the one trace file (-o), or with -D a file
 * per process, opened at the process's first line with its start event
 * and ended at its exit with its own losses and end event.
 */
#ifndef WRITE_FILES_H
#define WRITE_FILES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "lib/hmap.h"
#include "model/procs.h"
#include "model/stats.h"
#include "write/outdir.h"
#include "write/sink.h"
#include "write/writer.h"

/* Where a process's own losses come from (-D): the kernel's per-process
 * counters, read by the capture side. consume: forget them once read, so
 * that a later process with the same pid starts at zero. */
struct loss_reader {
	void (*read)(void *ctx, uint32_t pid, uint64_t *lost, size_t nslots,
		     bool consume);
	void *ctx;
};

struct files {
	struct sink *single;	/* -o */
	struct outdir *outdir;	/* -D */
	struct hmap by_pid;	/* -D: pid -> its open struct sink */
	struct loss_reader lost;
	struct writer *w;
	struct trace_stats *stats;
	struct sink *flight;	/* --flight: the window's sink, or NULL */
	struct lifecycle root;	/* -o: what start and end describe */
	uint32_t root_ids;	/* -o: ids the root process used up, once gone */
};

/* -o: writes the single file's start line. */
void files_init(struct files *f, struct sink *single, struct outdir *outdir,
		struct loss_reader lost, struct writer *w,
		struct trace_stats *stats, const struct lifecycle *root);
void files_free(struct files *f);

/* --flight: the events a full trace would write go to flight; the
 * files get what --profile writes, copied to flight too but for what is
 * written with files_own() (totals, and what is written to flight
 * itself). */
void files_set_flight(struct files *f, struct sink *flight);
/* Where the events go that only a full trace writes (syscalls, GPU
 * calls): flight under --flight, else p's file. */
struct sink *files_event_sink(struct files *f, struct proc *p);
/* What is written to s from here (on) or no more (off) is s's own: not
 * copied to flight. */
static inline void files_own(struct sink *s, bool on)
{
	s->tee_off = on;
}
/* A task has ended: what every sink wrote of its names is forgotten
 * (writer_forget_names; pid 0: a thread alone). */
void files_forget_names(struct files *f, const struct proc *p, uint32_t pid,
			uint32_t tid);
/* p is newly known: -o's start line used the root process's first id. */
void files_adopted(struct files *f, struct proc *p);
/* The sink for p's events, its file opened first under -D; NULL when it
 * cannot be written (stats->write_error says why). */
struct sink *files_sink(struct files *f, struct proc *p);
/* The sink p already has, or NULL: nothing is opened. */
struct sink *files_sink_if_open(struct files *f, const struct proc *p);
/* No more records will come from p: under -D its file ends. */
void files_close_process(struct files *f, struct proc *p, uint64_t ts_us);
/* -D: names p's open file after its program (after an exec). */
void files_renamed(struct files *f, const struct proc *p);
/* The end: losses and end lines; every file is closed but the single
 * one, which the caller closes. */
void files_finish(struct files *f, const struct model *m,
		  const uint64_t *lost, size_t nslots);
/* Everything written so far reaches the disk; 0 or the first error. */
int files_flush(struct files *f);
/* The first write error stops the trace; it is reported once. */
void files_failed(struct files *f, int err, const char *msg);

#endif
