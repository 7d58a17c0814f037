/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Annotated phases: per-thread stacks of open regions, per-process
 * context (epoch, step, user keys) and per-phase totals. */
#ifndef MODEL_PHASES_H
#define MODEL_PHASES_H

#include <stdbool.h>
#include <stdint.h>
#include "lib/hmap.h"
#include "model/istr.h"

struct ctx_entry {
	const struct istr *key;
	const struct istr *str;	/* string value, or NULL */
	int64_t num;
};

struct phase_ctx {
	struct ctx_entry *e;
	uint32_t n, cap;
};

struct phase_frame {
	/* interned strings, or loose ones the frame owns (past the names a
	 * trace keeps: correlate/annot.c) */
	const struct istr *cat, *name;
	uint64_t ts;		/* CLOCK_MONOTONIC ns at begin */
	uint64_t id;		/* the event id it will be written with */
	int64_t count;		/* iteration count, 0 if none */
	uint64_t children;	/* events written inside it so far */
	struct phase_ctx args;	/* this region's own args (arg_int/arg_str) */
	/* --steps: whether the window was open at its begin, and how often
	 * it had opened by then */
	bool began_open;
	uint64_t openings;
	/* the id the kernel side gives it (dft_phase_id), once asked: 0 not
	 * yet (correlate/folded.c) */
	uint32_t kernel_id;
};

struct phase_stack {
	struct phase_frame *f;
	uint32_t depth, cap;
};

struct phase_frame *phase_push(struct phase_stack *s);
/* Index of the innermost open frame named cat/name (istr_same), or -1. */
int phase_find(const struct phase_stack *s, const struct istr *cat,
	       const struct istr *name);
static inline struct phase_frame *phase_top(const struct phase_stack *s)
{
	return s && s->depth ? &s->f[s->depth - 1] : NULL;
}
/* Drops the innermost frame, its args, and its names if loose. */
void phase_pop(struct phase_stack *s);
void phase_stack_free(struct phase_stack *s);

/* The entry for key (interned: compared by pointer), or NULL; c may be
 * NULL. */
struct ctx_entry *ctx_find(const struct phase_ctx *c, const struct istr *key);
void ctx_set(struct phase_ctx *c, const struct istr *key,
	     const struct istr *str, int64_t num);
void ctx_clear(struct phase_ctx *c, const struct istr *key);
/* Every key but keep1 and keep2. */
void ctx_clear_except(struct phase_ctx *c, const struct istr *keep1,
		      const struct istr *keep2);
int ctx_copy(struct phase_ctx *dst, const struct phase_ctx *src);
void ctx_free(struct phase_ctx *c);

/* Time and bytes by phase, for the exit summary: by name up to
 * PHASE_TOTALS_MAX (cat, name) pairs, in the order they came; the rest,
 * and loose names, in other, with cat and name NULL. */
#define PHASE_TOTALS_MAX 10000

struct phase_total {
	const struct istr *cat, *name;
	uint64_t ns, bytes, count;
};

struct phase_totals {
	struct phase_total *t;
	uint32_t n, cap;
	struct hmap index;	/* hash of the pair's pointers -> its index + 1 */
	struct phase_total other;
};

void phase_add_time(struct phase_totals *pt, const struct istr *cat,
		    const struct istr *name, uint64_t ns);
void phase_add_bytes(struct phase_totals *pt, const struct istr *cat,
		     const struct istr *name, uint64_t bytes);
void phase_totals_free(struct phase_totals *pt);

#endif
