/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * One event as the analyses see it, whatever trace it came from (ours,
 * DFTracer's, a merged file with torch ops): its times in ns, its class,
 * bytes, file, phase, epoch and step, and the links that make self time.
 * What an input's metadata says (file hashes, process names, ranks) is
 * kept per input.
 */
#ifndef ANALYZE_EVENTS_H
#define ANALYZE_EVENTS_H

#include <stdbool.h>
#include <stdint.h>
#include "analyze/fhash.h"
#include "analyze/gpu.h"
#include "fold.h"
#include "lib/hmap.h"
#include "model/syscalls.h"
#include "read/reader.h"

enum ev_kind {
	EV_IO,		/* cat POSIX or STDIO */
	EV_COMPUTE,	/* cat compute, and torch's operators */
	EV_REGION,	/* any other annotation or torch range */
	EV_OTHER,	/* process events, ioctls, devices */
	EV_GPU,		/* GPU and collective calls: cat CUDA*, NCCL, CUFILE */
};

struct ev {
	struct span name, cat;	/* escaped, as in the file */
	uint32_t pid, tid;
	int64_t start, end;	/* ns, on the input's clock */
	enum ev_kind kind;
	enum sc_bytes bytes_kind;
	int64_t bytes;		/* ret of a call that moves bytes, else 0 */
	int64_t ret;		/* args.ret as it is; 0 if none */
	int64_t calls;		/* 1, or the calls a folded total holds */
	int64_t offset;		/* args.offset of a positioned call (pread...); -1 */
	int64_t fd;		/* args.fd of a call on one; -1 if none */
	int64_t misses;		/* args.misses of a mapped read: pages from storage */
	struct span hist;	/* a folded total's args.hist, "B:N B:N ..." */
	struct span file;	/* escaped path; empty if none */
	struct span phase_cat, phase;	/* the innermost region, if any */
	int64_t epoch, step;	/* -1: none */
	enum ev_gpu gpu;	/* EV_GPU's class (analyze/gpu.h) */
	struct span copy_kind;	/* args.copy_kind: HtoD, DtoH... */
	int64_t gpu_bytes;	/* args.bytes of a copy or collective */
	int64_t comm_rank;	/* args.comm_rank of a collective; -1 */
	struct span comm_id;	/* args.comm_id (a communicator); empty if none */
	bool cufile;		/* cuFile's I/O (args.api "cuFile...") */
	bool has_ids;		/* DFTracer's id and p_idx are known */
	int64_t id, parent;	/* parent: -1 at the top */
};

/* What one input's metadata says. */
struct ev_input {
	struct fh_table fh;
	struct hmap comm;	/* pid -> char * (malloc'd, unescaped) */
	struct hmap ranks;	/* pid -> rank */
	int rank;		/* of the whole file, -1 if unknown */
	/* Its events come in order of start (a merged file), not of end
	 * (a trace, which writes an event when it ends). */
	bool by_start;
	/* A merged file puts torch's ranges on tracks of their own; the
	 * dftrace.profiler anchors, which both sides recorded, say which
	 * thread each track is: (pid << 32 | track) -> tid. */
	struct hmap torch_thread;
	/* the anchors, learned first: (pid << 32 | N) -> tid, -> track */
	struct hmap anchor_thread, anchor_track;
	/* A torch trace given with the trace that ran torch: its processes
	 * are that trace's (one pid space), named and ranked as the trace
	 * says, as merge makes them. NULL for any other input. */
	const struct ev_input *owner;
	uint16_t owner_input;	/* the owner's input number */
};

/* A process of any input, as one key: input << 32 | pid, with the owner's
 * input for a torch trace that has one. */
static inline uint64_t ev_process(const struct ev_input *in, uint16_t input, uint32_t pid)
{
	return (uint64_t)(in->owner ? in->owner_input : input) << 32 | pid;
}

void ev_input_init(struct ev_input *in, const char *path);
void ev_input_free(struct ev_input *in);

/* A merged file writes its process names (and so ranks) after the
 * events: a first pass gives each of its records here, then
 * ev_input_learned() before the events are read. */
void ev_input_learn(struct ev_input *in, const struct rec *e);
void ev_input_learned(struct ev_input *in);

/* 1 with *out filled if e is an event to count (an X event that is not
 * a lifecycle mark), 0 if not (its metadata is learned). */
int ev_from_rec(struct ev_input *in, const struct rec *e, struct ev *out);

/* A folded total's calls per log2 bucket (bpf/fold.h: bucket b holds
 * [2^b, 2^(b+1)) ns) from its args.hist: the calls counted, or -1 if
 * the text is not "B:N B:N ..." with each B below DFT_FOLD_BUCKETS. */
int64_t ev_hist(struct span hist, uint64_t counts[DFT_FOLD_BUCKETS]);

/* The rank a file name says: "trace-3-of-8..." is 3; -1 if none. */
int rank_from_name(const char *path, int *world);

/* The rank of a process of this input (its owner's), -1 if unknown. */
int ev_rank(const struct ev_input *in, uint32_t pid);
/* The process's name ("python3"), its owner's first; or NULL. */
const char *ev_comm(const struct ev_input *in, uint32_t pid);

#endif
