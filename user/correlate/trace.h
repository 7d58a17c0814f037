/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The record path: every kernel record passes through here once. The fd
 * tables and regions are updated (correlate.c, annot.c), files are named,
 * and each event becomes one line in the right file (write/).
 */
#ifndef CORRELATE_TRACE_H
#define CORRELATE_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "dftrace.h"
#include "model/procs.h"
#include "model/stats.h"
#include "lib/traceformat.h"
#include "write/files.h"

struct trace;

struct trace_config {
	bool inline_paths;
	enum trace_format format;	/* --format */
	const char *v2_cfg;	/* v2's end: args.cfg's inside, or NULL */
	/* CLOCK_REALTIME - CLOCK_MONOTONIC to write times with; 0: this
	 * host's now. make bench's replay writes one recording twice with
	 * the same times (and tests compare the two formats so). */
	int64_t clock_offset_ns;
	const char *cmdline;	/* what was traced, for start/end events */
	struct sink *single;	/* -o: the one file */
	struct outdir *outdir;	/* -D: a file per process */
	struct loss_reader lost; /* -D: each process's own losses */
	uint32_t root_pid;	/* the first traced process: owns start/end */
	const struct dft_steps *steps;	/* --steps' schedule, or NULL */
	bool profile;		/* --profile: calls come as totals */
	bool root_launched;	/* -- CMD: not exec'd yet, /proc shows us */
	const char *root_exe;	/* -- CMD: the program it will exec, if known */
	/* A file process pid mapped executable at [addr, addr + len), or
	 * exec'd (len 0): it may carry probes (the capture side attaches to
	 * it, later, and holds them while a traced process maps it). */
	void (*on_program)(void *ctx, uint32_t pid, const char *path, uint64_t addr,
			   uint64_t len);
	/* What may end such a mapping: an unmapping of [addr, addr + len)
	 * by thread tid of pid, an exec (all of them, tid its new one), the
	 * end of pid (tid 0), at alive_ns (the record's time: what is read
	 * of /proc/PID then is checked against it, as on_found's); and
	 * what copies them, a fork. ctx: on_program_ctx. */
	void (*on_unmapped)(void *ctx, uint32_t pid, uint32_t tid, uint64_t addr,
			    uint64_t len, uint64_t alive_ns);
	void (*on_forked)(void *ctx, uint32_t parent, uint32_t child);
	/* A process found running, not seen born (attach, a scope's entry):
	 * its mappings may carry annotations too. alive_ns: when a record
	 * showed it alive, for the check of what is read of it (struct
	 * proc_gate's proven). */
	void (*on_found)(void *ctx, uint32_t pid, uint64_t alive_ns);
	/* The path the kernel kept for a file opened when its record found no
	 * room (up to size bytes, as the call gave it), taken: true if any. */
	bool (*lost_name)(void *ctx, const struct dft_name_key *k, char *path,
			  size_t size);
	void *lost_name_ctx;
	/* A process ended: the totals of its calls the kernel left in its
	 * maps, each handed to trace_fold() before the process is forgotten
	 * (ctx: lost_name_ctx). */
	void (*process_ended)(void *ctx, struct trace *t, uint32_t pid);
	/* A dump is due (--flight): the live threads' kept records handed
	 * to trace_peek_kept() first, after every record already sent. */
	void (*peek_kept)(void *ctx, struct trace *t);
	void *peek_ctx;
	/* A region annotation's strings at these addresses of pid, read
	 * whole: the capture side may let the kernel take the region's id
	 * from there from now on (DFT_ANNOT_CACHED records), where the
	 * strings cannot change (read-only memory; alive_ns as on_found's).
	 * site_gone: that no more (an exec, an unmapping, the process's
	 * end). ctx: site_ctx. */
	void (*site_found)(void *ctx, const struct dft_annot_site *s, uint32_t id,
			   uint64_t alive_ns);
	void (*site_gone)(void *ctx, const struct dft_annot_site *s);
	void *site_ctx;
	/* Whether the process at pid is still the traced one a record
	 * showed alive at alive_ns (model/procs.h's struct proc_gate); ctx:
	 * proven_ctx. NULL: no traced process's state is kept from /proc. */
	bool (*proven)(void *ctx, uint32_t pid, uint64_t alive_ns);
	void *proven_ctx;
	/* The kernel's features, for the start and end events (or NULL). */
	const char *features;
	void *on_program_ctx;
};

int trace_new(struct trace **out, const struct trace_config *cfg);
void trace_free(struct trace *t);
/* A process that is traced from now on (attach or launch), as marked
 * for the kernel side at alive_ns (before the pidfd that marked it). */
void trace_adopt(struct trace *t, uint32_t pid, uint64_t alive_ns);
/* libbpf ring_buffer callback; ctx is the struct trace. */
int trace_handle_record(void *ctx, void *data, size_t size);
/* The first n entries of a live thread's batch (the calls and regions
 * it keeps in the kernel to send as one record), read before it is sent (a dump
 * is due: a thread that makes no more calls may never send them): those
 * not taken yet are taken now, and dropped when the batch comes. */
void trace_peek_kept(struct trace *t, const struct dft_kept_batch *b, uint32_t n);
/* The regions of tid's ring before place upto, the last at last_ts,
 * were handed to the trace before the kernel side read them (a dump is
 * due): each dropped when the kernel sends it (DFT_ANNOT_RING). */
void trace_ring_peeked(struct trace *t, uint32_t tid, uint32_t upto, uint64_t last_ts);
/* lost[slot]: per syscall nr, then per record kind. Ends every file but
 * the single one, which its owner closes. */
void trace_finish(struct trace *t, const uint64_t *lost, size_t nslots);
/* A file pid opened as path (up to size bytes, as the call gave it) when
 * no record could say so: totals that charge (dev, ino) are named so. */
void trace_name_file(struct trace *t, uint32_t pid, uint64_t dev, uint64_t ino,
		     const char *path, size_t size);
/* A total of folded calls (bpf/fold.h), added to the one of its key:
 * written by trace_write_folds, or when its thread or process ends. */
void trace_fold(struct trace *t, const struct dft_fold_key *key,
		const struct dft_fold *fold);
/* Every total not written yet, one event each (every interval, and at
 * the end). */
void trace_write_folds(struct trace *t);
/* Forgets the processes and threads that have exited (exited(pid))
 * without a record since the call before: their exit records were
 * lost. Found gone by one call, each is forgotten by a later one with
 * caught_up, the ring read up to where it ended at the call before: a
 * backlog may still hold its exit record. Their totals are written and their files
 * closed, as an exit does; called once a second, it keeps memory
 * bounded whatever is lost. */
void trace_sweep(struct trace *t, bool (*exited)(pid_t pid), bool caught_up);
/* Periodic flush of every open file; returns the first error. */
int trace_flush(struct trace *t);
const struct trace_stats *trace_stats(const struct trace *t);
const struct model *trace_model(const struct trace *t);

#endif
