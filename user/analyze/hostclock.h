/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Hosts' clocks lined up from the job's own collectives (merge, issue
 * 37). A collective that synchronises its ranks (all_reduce, all_gather,
 * reduce_scatter, all_to_all, barrier, as cat "comm" regions: the C
 * annotations, dftrace's ai.comm, --torch's torch.distributed calls)
 * cannot end on one rank before it began on another. So the n-th such
 * call of a process on host B, against the n-th of a process on the
 * reference host A, bounds B's correction c (B's time + c is A's):
 *   start_A - end_B <= c <= end_A - start_B.
 * The bounds of every pair are intersected; the estimate is the median
 * of end_A - end_B (the ranks leave a collective together), kept inside
 * them. Where they conflict (calls paired wrong: two communicators, or
 * a call that does not synchronise), the median stands and the conflict
 * is said. One host's traces are never moved against each other: they
 * share its clock.
 *
 * Clocks also drift apart (a rate, some ppm under NTP). Where a least
 * squares line of the ends' differences against time has a slope four
 * times its standard error or more, and stays inside every pair's
 * bounds, the correction is that line: corr + rate * (t - t0).
 */
#ifndef ANALYZE_HOSTCLOCK_H
#define ANALYZE_HOSTCLOCK_H

#include <stdbool.h>
#include <stdint.h>
#include "lib/hmap.h"
#include "read/jscan.h"

/* Collectives kept per input: the first ones, which every rank makes in
 * the same order (memory does not grow with the job). */
#define HOSTCLOCK_KEEP 4096

struct collective {
	uint64_t key;		/* its name's */
	uint32_t pid, seq;	/* the process's seq-th call of that name */
	int64_t start, end;	/* raw ns, as read */
};

/* NCCL's collectives return once enqueued (the device does the work):
 * their ends bound nothing. The thread's next synchronise of the call's
 * stream (cuStreamSynchronize; cuCtxSynchronize, every stream) returns
 * only once the collective is done, which needs every rank to have made
 * its call: [the call's start, that synchronise's end] is what a
 * collective region's span is. A call waits for it here, per thread, at
 * most HOSTCLOCK_PENDING of them (the oldest goes first). Calls are
 * told apart by communicator (args.comm_id, the same in every rank), so
 * that the n-th calls on one communicator pair, whatever a rank did on
 * others in between. */
#define HOSTCLOCK_PENDING 64

struct nccl_pending {
	uint64_t key;
	uint32_t pid, tid;
	int64_t stream;
	int64_t start;
};

struct coll_list {
	struct collective *c;
	uint32_t n, cap;
	struct hmap seq;	/* (pid, key) -> calls so far */
	uint64_t left_out;	/* past HOSTCLOCK_KEEP */
	struct nccl_pending pend[HOSTCLOCK_PENDING];
	uint32_t npend;
};

/* A host's correction against the reference host. */
struct host_fit {
	const char *host;	/* the first of its inputs' */
	uint32_t group;
	bool reference;
	uint32_t pairs;		/* 0: no collective in common; its clock kept */
	int64_t corr_ns;	/* added to its times (at t0_ns, with a rate) */
	int64_t lo_ns, hi_ns;	/* the bounds; lo > hi: they conflict */
	double rate;		/* the drift fitted (ns a ns), or 0 */
	int64_t t0_ns;		/* the raw time the rate counts from */
	uint32_t outside;	/* pairs whose bounds the line leaves (none kept) */
};

/* Whether an event of cat and name is a collective that synchronises
 * its ranks; its key if so: per communicator where comm_id (its
 * args.comm_id: --torch's process group, or the user's) says one. */
bool hostclock_collective(struct span cat, struct span name, struct span comm_id,
			  uint64_t *key);
void hostclock_note(struct coll_list *l, uint64_t key, uint32_t pid, int64_t start,
		    int64_t end);
/* Whether an event of cat and name is an NCCL call that synchronises
 * its ranks, on the communicator comm_id; its key if so. */
bool hostclock_nccl(struct span cat, struct span name, struct span comm_id, uint64_t *key);
/* Such a call, waiting for its synchronise (stream: its args.stream_id). */
void hostclock_nccl_call(struct coll_list *l, uint64_t key, uint32_t pid, uint32_t tid,
			 int64_t stream, int64_t start);
/* Whether an event of cat and name synchronises a stream (*all: every
 * stream of the context). */
bool hostclock_nccl_sync(struct span cat, struct span name, bool *all);
/* A synchronise of stream (all: every stream) by thread tid, ended at
 * end: the thread's calls waiting for it, noted. */
void hostclock_nccl_synced(struct coll_list *l, uint32_t pid, uint32_t tid, int64_t stream,
			   bool all, int64_t end);
void hostclock_free(struct coll_list *l);

struct source_set;
/* Each host's fit (*fits, one per group of dftrace inputs that named a
 * host; malloc'd): 0, or -ENOMEM. The sources are not changed. */
int hostclock_fit(const struct source_set *set, struct host_fit **fits, uint32_t *n);

#endif
