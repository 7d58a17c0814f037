/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A flat profile, as torch's key_averages() gives one: events grouped by
 * a key (op, phase, file, process, rank, epoch, step, or several of them
 * nested), with calls, total and self time, percentiles, bytes and
 * bandwidth per row; and the headline figures DFAnalyzer gives.
 *
 * A row holds the events whose keys equal its own. An event's op is its
 * name; its phase is the region itself for a region, else the innermost
 * region around it ("-" at the top level; in a merged file, for an event
 * with none of its own, the innermost torch range open on its thread when
 * it starts); its file, process, rank, epoch
 * and step are its own ("-" when it has none). Self time is an event's
 * duration minus that of its child regions (torch's operators included),
 * never minus the I/O or process events inside it: those are rows of
 * their own (--by phase,op shows them under their phase). A folded
 * total's calls count by its args.hist: each call as the middle of its
 * log2 bucket, the row's min and max as the buckets' bounds. One pass,
 * memory bounded by the rows and by what overlaps the sweep.
 */
#ifndef ANALYZE_PROFILE_H
#define ANALYZE_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "analyze/events.h"
#include "analyze/findings.h"
#include "analyze/gpu.h"
#include "analyze/overlap.h"
#include "analyze/sketch.h"
#include "lib/heap.h"
#include "lib/hmap.h"

enum by_key { BY_OP, BY_PHASE, BY_FILE, BY_PROCESS, BY_RANK, BY_EPOCH, BY_STEP, BY__COUNT };
#define PROFILE_MAX_KEYS 4
#define PROFILE_MAX_GROUPINGS 8

/* The name of a key ("op"...), and back: -1 if unknown. */
const char *by_key_name(enum by_key k);
int by_key_parse(const char *name, size_t len);

struct row {
	char *key;		/* the parts as shown, each ending in '\0' */
	char *material;		/* the parts as read (escaped), for lookups */
	size_t material_len;
	uint64_t calls;
	int64_t total, self, min, max;	/* ns (see above) */
	int64_t summed;		/* ns: each event's duration, added: Avg's */
	int64_t region_self;	/* self time of its regions alone: phases' own time */
	int64_t bytes;		/* moved by its I/O calls */
	int64_t data_time;	/* ns of the calls that moved bytes */
	struct sketch durations;
	/* Calls of folded totals are known by their log2 bucket alone:
	 * min and max may be a bucket's bound, a percentile its middle. */
	uint64_t log2_calls;
	struct sketch log2;	/* their values, as in durations */
	bool min_log2, max_log2;
};

struct grouping {
	enum by_key keys[PROFILE_MAX_KEYS];
	int nkeys;
	struct row *rows;
	uint32_t n, cap;
	struct hmap index;	/* hash of the key -> row index + 1 */
};

struct headline {
	uint64_t events;
	int64_t t_min, t_max;	/* ns: the span of all events */
	int64_t io_time;	/* ns in I/O calls (cat POSIX, STDIO) */
	int64_t unoverlapped_io; /* of which no compute region of the process overlaps */
	int64_t bytes_read, bytes_written, bytes_copied;
	int64_t data_time;	/* ns in the calls that moved those bytes */
	uint64_t files, processes, ranks;
	uint64_t late;		/* intervals beyond the sweep's window (approximate) */
};

struct profile {
	struct grouping *by;
	int nby;
	struct headline head;
	struct gpu_profile gpu;	/* GPU waits, device bytes, collectives */
	bool find;		/* findings asked for (profile_find()) */
	struct findings findings;	/* after profile_finish */
	/* internal */
	struct hmap seen;	/* regions that may still get children */
	struct heap seen_by_end;
	struct hmap pending;	/* child time waiting for its parent */
	struct hmap stacks;	/* torch's threads: open ranges, by start */
	struct hmap files, procs, ranks;
	struct overlap overlap;
	char *scratch;
	uint32_t scratch_cap;
};

/* A grouping such as "phase,op": 0, or -EINVAL with a message. */
int by_spec_check(const char *spec, char *err, size_t errlen);
/* specs: "op", "phase,op"...: 0, or -EINVAL with a message. */
int profile_init(struct profile *p, char *const *specs, int n, char *err,
		 size_t errlen);
/* An event of input number input (pids are per input). */
int profile_add(struct profile *p, const struct ev_input *in, uint16_t input,
		const struct ev *e);
/* Findings too, each costing at least min_share of the wall time. */
void profile_find(struct profile *p, double min_share);
int profile_finish(struct profile *p);
void profile_free(struct profile *p);

/* A row's average event, ns. */
int64_t row_avg(const struct row *r);
/* The q-quantile of a row's durations (within 1%, inside [min, max]). */
int64_t row_quantile(const struct row *r, double q);
/* Which of a row's figures come from log2 buckets (folded totals). */
enum { FROM_LOG2_MIN = 1, FROM_LOG2_MAX = 2, FROM_LOG2_P50 = 4, FROM_LOG2_P99 = 8 };
unsigned int row_from_log2(const struct row *r);
/* Row r's part k (unescaped), for printing. */
const char *row_part(const struct row *r, int k);

#endif
