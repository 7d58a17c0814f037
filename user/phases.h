/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Annotated phases: per-thread stacks of open regions, per-process
 * context (epoch, step, user keys) and per-phase totals. */
#ifndef PHASES_H
#define PHASES_H

#include <stdbool.h>
#include <stdint.h>
#include "paths.h"

struct ctx_entry {
	const struct path *key;
	const struct path *str;	/* string value, or NULL */
	int64_t num;
};

struct phase_ctx {
	struct ctx_entry *e;
	uint32_t n, cap;
};

struct phase_frame {
	const struct path *cat, *name; /* interned strings */
	uint64_t ts;		/* CLOCK_MONOTONIC ns at begin */
	uint64_t id;		/* the event id it will be written with */
	int64_t count;		/* iteration count, 0 if none */
	struct phase_ctx args;	/* this region's own args (arg_int/arg_str) */
};

struct phase_stack {
	struct phase_frame *f;
	uint32_t depth, cap;
};

struct phase_frame *phase_push(struct phase_stack *s);
/* Index of the innermost open frame named cat/name, or -1. */
int phase_find(const struct phase_stack *s, const struct path *cat,
	       const struct path *name);
static inline struct phase_frame *phase_top(const struct phase_stack *s)
{
	return s && s->depth ? &s->f[s->depth - 1] : NULL;
}
/* Drops the innermost frame and its args. */
void phase_pop(struct phase_stack *s);
void phase_stack_free(struct phase_stack *s);

/* The entry for key (interned: compared by pointer), or NULL; c may be
 * NULL. */
struct ctx_entry *ctx_find(const struct phase_ctx *c, const struct path *key);
void ctx_set(struct phase_ctx *c, const struct path *key,
	     const struct path *str, int64_t num);
/* key NULL: every key but epoch and step. */
void ctx_clear(struct phase_ctx *c, const struct path *key);
int ctx_copy(struct phase_ctx *dst, const struct phase_ctx *src);
void ctx_free(struct phase_ctx *c);

/* Totals for the exit summary. */
struct phase_total {
	const struct path *cat, *name;
	uint64_t ns, bytes, count;
};

void phase_add_time(const struct path *cat, const struct path *name,
		    uint64_t ns);
void phase_add_bytes(const struct path *cat, const struct path *name,
		     uint64_t bytes);
const struct phase_total *phase_totals(int *n);

#endif
