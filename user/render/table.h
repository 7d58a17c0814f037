/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* A profile as a table for people (torch's key_averages().table() shape),
 * as CSV, or as JSON, with the headline figures first. */
#ifndef RENDER_TABLE_H
#define RENDER_TABLE_H

#include <stdio.h>
#include "analyze/profile.h"

enum sort_col {
	SORT_TOTAL, SORT_SELF, SORT_CALLS, SORT_AVG, SORT_MIN, SORT_MAX, SORT_P50,
	SORT_P99, SORT_BYTES, SORT_BANDWIDTH, SORT_KEY, SORT__COUNT
};

/* "total", "self", ...; -1 if unknown. */
int sort_col_parse(const char *name);
const char *sort_col_names(void);	/* for messages: "total, self, ..." */

struct table_opts {
	enum sort_col sort;
	uint32_t top;		/* 0: every row */
};

/* Row indices of grouping g, sorted and cut to opts->top; *n of them
 * (malloc'd, NULL on failure). */
uint32_t *table_order(const struct grouping *g, const struct table_opts *o, uint32_t *n);

void table_text(FILE *out, const struct profile *p, const struct table_opts *o);
void table_csv(FILE *out, const struct profile *p, const struct table_opts *o);
/* 0, or -ENOMEM. */
int table_json(FILE *out, const struct profile *p, const struct table_opts *o);

#endif
