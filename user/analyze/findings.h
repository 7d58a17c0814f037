/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Findings: the I/O problems a trace's events show, each with where it
 * is, the time it costs, the numbers that show it and what to try (issue
 * 39). A rule finds a problem only where its cost reaches min_share of
 * the wall time; each finding's time counts each call once. The rules
 * and their thresholds are in the README ("Findings"):
 *
 *   small_io         a file's data calls: more than half move less than
 *                    64 KiB (at least 16 calls); cost: those calls' time
 *   random_access    a file's positioned data calls (pread, pwrite...):
 *                    more than half do not start where the process's
 *                    previous call on it ended (at least 16); cost:
 *                    those calls' time
 *   metadata_heavy   a phase's metadata calls (open, stat, close,
 *                    getdents, unlink, mkdir, rename...) take longer
 *                    than its data calls; cost: the metadata calls' time
 *   checkpoint_blocking  a phase that syncs what it writes (fsync,
 *                    fdatasync, msync, sync_file_range): its thread waits
 *                    for the device; cost: its writes' and syncs' time
 *                    while no compute region of their process ran
 *   unoverlapped_io  a process with compute regions whose I/O runs while
 *                    none of them does (analyze/overlap.h); cost: that
 *                    I/O's time
 *   repeated_reads   a file's reads in an epoch (at least 16): more than
 *                    half read only bytes read before in it
 *                    (analyze/rereads.h); cost: those reads' time
 *   input_bound      a process's steps (at least 3): in more than half,
 *                    the data loader's wait is more than half the step
 *                    (analyze/loader.h: its wait regions, or without
 *                    them, a thread's reads in the steps its events
 *                    carry); cost: those steps' waits
 *   rank_imbalance   of 3 ranks or more, one whose I/O time is more than
 *                    twice the median rank's; cost: its time past the
 *                    median
 *   gpu_waits_on_io  a process whose data reads run while its GPU has
 *                    nothing queued: after a thread's wait for the device
 *                    (a synchronize) returned and before its next launch,
 *                    copy or collective; cost: those reads' time in such
 *                    gaps (analyze/overlap.h, the gaps as the cover)
 *   page_cache_misses  a file's reads through a mapping that read at
 *                    least 16 pages from storage (the page_misses
 *                    feature's args.misses); cost: the time of the runs
 *                    of faults that did
 *
 * One pass, memory bounded by the files and phases kept (FINDINGS_KEYS
 * of each; past them, not judged).
 */
#ifndef ANALYZE_FINDINGS_H
#define ANALYZE_FINDINGS_H

#include <stdbool.h>
#include <stdint.h>
#include "analyze/loader.h"
#include "analyze/overlap.h"
#include "analyze/rankwork.h"
#include "analyze/rereads.h"
#include "lib/hmap.h"

struct ev;
struct ev_input;

#define FINDINGS_KEYS 65536
#define FINDINGS_SMALL_BYTES (64 << 10)
#define FINDINGS_MIN_CALLS 16
#define FINDINGS_MIN_SHARE 0.05	/* of the wall time, by default */

enum finding_rule {
	RULE_SMALL_IO, RULE_RANDOM_ACCESS, RULE_METADATA_HEAVY, RULE_CHECKPOINT_BLOCKING,
	RULE_UNOVERLAPPED_IO, RULE_REPEATED_READS, RULE_INPUT_BOUND, RULE_RANK_IMBALANCE,
	RULE_PAGE_CACHE_MISSES, RULE_GPU_WAITS_ON_IO, RULE__COUNT
};

const char *finding_rule_name(enum finding_rule r);
const char *finding_advice(enum finding_rule r);

/* What a rule saw where it fired: calls looked at, those that meet the
 * rule, and (by rule) their bytes or the other calls' time. */
struct finding_evidence {
	int64_t calls, hits;
	int64_t hit_bytes;	/* small_io, random_access: bytes the hits moved */
	int64_t other_ns;	/* metadata_heavy: the phase's data calls' time;
				 * checkpoint_blocking: its syncs'; unoverlapped_io:
				 * the process's I/O */
	int64_t compute_ns;	/* unoverlapped_io: the process's compute */
	int64_t distinct;	/* repeated_reads: the bytes read once or more */
	int64_t epoch;		/* repeated_reads: the epoch, -1 if none */
	int64_t step_ns;	/* input_bound: its steps' time (calls: steps, hits:
				 * those bound, other_ns: all their waits) */
	int64_t rank_ns;	/* rank_imbalance: the rank's own time between its
				 * collectives, or where no ranks have them its
				 * I/O time (calls: the ranks, other_ns: the
				 * median's) */
	int64_t collectives;	/* rank_imbalance: the rank's; 0: by I/O */
	int64_t misses;		/* page_cache_misses: pages read from storage
				 * (calls: the runs of faults, hits: those that
				 * missed, hit_bytes: the bytes they mapped) */
	int64_t idle_ns;	/* gpu_waits_on_io: the GPU's gaps (other_ns:
				 * the process's data reads) */
};

struct finding {
	enum finding_rule rule;
	char *file;		/* unescaped; NULL where the rule is by phase */
	char *phase;		/* "cat/name", "-" outside any; NULL by file */
	char *process;		/* "comm [pid]" where the rule is by process */
	int64_t rank;		/* where the rule is by rank; else -1 */
	int64_t ns;		/* what it costs */
	double share;		/* ns over the wall time */
	struct finding_evidence ev;
};

/* A file's or a phase's figures while the events come. */
struct finding_key {
	char *name;		/* unescaped */
	uint32_t id;		/* from 1: a phase's writes' and syncs' overlap tag */
	int64_t data_calls, data_ns;
	int64_t small_calls, small_ns, small_bytes;
	int64_t pos_calls, jumps, jump_ns, jump_bytes;
	int64_t meta_calls, meta_ns;
	int64_t write_calls, write_ns, sync_calls, sync_ns;
	int64_t map_runs, miss_runs, miss_ns, miss_bytes, misses;
};

struct findings {
	double min_share;
	struct hmap files, phases;	/* hash -> struct finding_key * */
	struct hmap next_off;		/* (input, pid, file) -> the offset after the last call + 1 */
	struct hmap proc_names;		/* input << 32 | pid -> "comm [pid]", malloc'd */
	struct rereads rereads;
	struct loader_waits loader;
	struct rank_work ranks;
	struct hmap gpu_gap;		/* (input, tid) -> where its GPU gap began + 1 */
	struct overlap gpu_idle;	/* data reads against the GPU's gaps */
	uint64_t dropped;		/* keys past FINDINGS_KEYS */
	uint32_t keys;			/* made so far: the last id */
	uint32_t tag;			/* the last event's overlap tag, or 0 */
	struct finding *list;		/* after findings_finish: by ns, longest first */
	uint32_t n, cap;
	int err;
};

void findings_init(struct findings *f, double min_share);
void findings_add(struct findings *f, const struct ev_input *in, uint16_t input,
		  const struct ev *e);
/* The tag the event findings_add was just given goes into the overlap
 * with (analyze/overlap.h): its phase's, if it is a write or a sync. */
static inline uint32_t findings_overlap_tag(const struct findings *f)
{
	return f->tag;
}
/* Judges what was seen against a wall time of wall_ns, and the processes'
 * overlap of I/O and compute: 0 or -ENOMEM. */
int findings_finish(struct findings *f, int64_t wall_ns, const struct overlap *o);
void findings_free(struct findings *f);

#endif
