/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What each input of a merge is, from one pass over it: a dftrace-bpf or
 * DFTracer trace (host, rank, processes, the dftrace.profiler anchors and
 * torch traces it recorded) or a torch.profiler trace (its clock, rank,
 * anchors). Then: which torch trace belongs to which trace, the clock
 * offset that puts every input on one timeline, and process and thread
 * ids that never collide across hosts and ranks.
 */
#ifndef ANALYZE_SOURCES_H
#define ANALYZE_SOURCES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "analyze/hostclock.h"
#include "lib/hmap.h"
#include "model/profiler.h"
#include "read/reader.h"

/* dftrace.profiler's anchor ranges in torch's trace, "dftrace::anchor#N"
 * (its records: DFT_PROFILER_CAT). */
#define TORCH_ANCHOR_PREFIX "dftrace::anchor#"

/* torch.profiler times its events to the µs. */
#define TORCH_RESOLUTION_NS 1000

/* SRC_MERGED: an earlier merge's output, whose processes, threads and
 * their names are kept as they are. */
enum source_kind { SRC_DFTRACE, SRC_TORCH, SRC_MERGED };

/* A dftrace.profiler anchor as one side saw it: ns, on that side's clock. */
struct anchor {
	int64_t n;
	int64_t start, end;
	uint32_t pid;
};

/* A torch trace a dftrace trace recorded, and the process that did. */
struct torch_path {
	char *path;
	uint32_t pid;
};

struct source {
	char *path;
	bool discovered;	/* a torch trace a trace recorded, not given */
	enum source_kind kind;
	bool torch_legacy;	/* torch without Kineto: pid "CPU functions" */
	bool has_base;		/* Kineto's baseTimeNanoseconds */
	int64_t base_ns;
	char host[256];		/* from its HH line; "" if unknown */
	int rank, world;	/* -1 if unknown */
	uint32_t root_pid;	/* dftrace: the process its start event is about */
	int64_t min_ts, max_ts;	/* raw, as read (ns) */
	uint64_t events;	/* with a time */
	uint64_t records;	/* all, as the first read counted them */
	struct anchor *anchors;
	uint32_t nanchors, capanchors;
	struct torch_path *torch_paths;	/* dftrace: torch traces it recorded */
	uint32_t ntorch, captorch;
	struct hmap ranks;	/* dftrace: pid -> rank, where a process said */
	struct hmap comm;	/* dftrace: pid -> strdup'd process name */
	struct coll_list colls;	/* dftrace: its collectives (analyze/hostclock.h) */
	struct hmap pids;	/* pids of its events */
	struct hmap tids;	/* their tids (one id space with the pids) */
	/* decided after all are read */
	struct source *paired;	/* torch: the trace its ops belong to */
	uint32_t paired_pid;	/* torch: the process in it that ran torch */
	uint32_t group;		/* pid namespace: one per host */
	int64_t offset_ns;	/* raw ts + offset = ns since the epoch */
	double rate;		/* and its host's drift: + rate * (raw - rate_t0) */
	int64_t rate_t0;
	int64_t align_err_ns;	/* how far the offset may be off */
	uint32_t nanchors_used;
};

struct source_set {
	struct source *src;
	uint32_t n, cap;
	struct hmap ids;	/* (group << 32 | id) -> output id */
	uint32_t next_id;	/* for ids that collide */
	struct hmap used;	/* every id of every input */
	int64_t base_ns;	/* the output's time zero */
	bool strict;		/* a trace cut short, or an event out of range, is
				 * refused (READER_STRICT) */
	bool align_hosts;	/* hosts' clocks lined up from their collectives */
	struct host_fit *fits;	/* each host's, once decided */
	uint32_t nfits;
};

/* Reads every input once, on jobs cores (0: all it may use): 0, or
 * -errno with a one-line message (the first input's that failed). */
int sources_scan(struct source_set *set, char *const *paths, int n, int jobs, char *err,
		 size_t errlen);
/* Torch traces a dftrace trace recorded and that were not given: their
 * paths, to be scanned as more inputs (NULL-terminated, malloc'd). */
char **sources_discovered(const struct source_set *set);
/* One of those: read only if a regular file, and if it cannot be read
 * whole, left out again: 0, or -errno with a message. */
int sources_scan_discovered(struct source_set *set, const char *path, char *err,
			    size_t errlen);
/* The reader_open flags the conversion opens s with. */
unsigned int source_reader_flags(const struct source *s);
/* Pairs, aligns and assigns ids: 0, or -EINVAL with a message. */
int sources_decide(struct source_set *set, char *err, size_t errlen);
/* An output id no input uses and none was given: for a new track. */
uint32_t sources_spare_id(struct source_set *set);
/* The output id of a process or thread id of source s. */
uint32_t sources_id(struct source_set *set, const struct source *s, uint32_t id);
void sources_free(struct source_set *set);

/* t moved by an offset, and by a rate from t0. */
static inline int64_t clock_shift(int64_t t, int64_t offset, double rate, int64_t t0)
{
	return t + offset + (rate ? (int64_t)(rate * (double)(t - t0)) : 0);
}

/* Raw time t of s on the merged clock (ns since the epoch). */
static inline int64_t source_time(const struct source *s, int64_t t)
{
	return clock_shift(t, s->offset_ns, s->rate, s->rate_t0);
}

/* The rank of process pid of s (dftrace), else of s; -1 if unknown. */
int sources_rank(const struct source *s, uint32_t pid);

/* Whether name is torch's side of an anchor, "dftrace::anchor#N": N. */
bool sources_torch_anchor(struct span name, int64_t *n);

/* The time of a CM mark (DFTracer's custom metadata), in µs. */
bool sources_mark_us(const struct rec *e, int64_t *us);


#endif
