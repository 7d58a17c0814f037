/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Stragglers (summary --by rank,step, issue 37): per step, the rank the
 * others waited for in the step's collectives, how long they waited, and
 * what that rank did meanwhile.
 *
 * A synchronising collective (analyze/hostclock.h: a comm region, or an
 * NCCL call, whose start is when its rank came) ends for every rank only
 * once the last has come: each rank's wait in one is the latest rank's
 * start minus its own. The n-th call of a name (and communicator) in a
 * step, on every rank, is one collective. Per step, the rank whose
 * lateness the others waited for most is its straggler; its I/O in the
 * step (time, bytes, the file it spent most on) and its innermost phases
 * say why.
 *
 * Bounded: at most STRAGGLER_CALLS collectives and STRAGGLER_SLOTS
 * (rank, step) slots are kept; what lies past them is counted, and said.
 */
#ifndef ANALYZE_STRAGGLER_H
#define ANALYZE_STRAGGLER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "analyze/events.h"
#include "lib/hmap.h"

#define STRAGGLER_CALLS (1u << 22)
#define STRAGGLER_SLOTS (1u << 20)
/* The files and phases kept per (rank, step); the rest are "other". */
#define STRAGGLER_TOP 4

struct strag_call {
	int32_t rank;
	int64_t step;
	uint64_t key;		/* the name's */
	uint32_t seq;		/* the rank's seq-th call of the name in the step */
	int64_t start, end;
};

struct strag_item {
	uint64_t hash;
	char *name;
	int64_t ns, bytes;
};

/* What one rank did in one step. */
struct strag_slot {
	int64_t io_ns, io_bytes;
	struct strag_item files[STRAGGLER_TOP], phases[STRAGGLER_TOP];
	int64_t other_file_ns, other_phase_ns;
};

struct straggler {
	struct strag_call *calls;
	uint32_t ncalls, capcalls;
	struct hmap seq;	/* (rank, step, key) -> calls so far */
	struct hmap slots;	/* (rank, step) -> struct strag_slot * */
	uint64_t calls_left_out, slots_left_out;
};

/* scan_visit's shape (cmd/scan.h): ctx is the struct straggler. */
int straggler_visit(void *ctx, const struct ev_input *in, uint16_t input, const struct ev *e);
/* The steps' stragglers, most waited for first, top of them (0: all),
 * as text. */
void straggler_print(struct straggler *s, FILE *out, int top);
void straggler_free(struct straggler *s);

#endif
