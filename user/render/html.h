/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The report: one self-contained HTML page (inline CSS and SVG; no script,
 * nothing fetched), pictures first and tables after. Every number in a
 * table cell also sits in its data-v attribute, raw, as summary --json
 * gives it.
 */
#ifndef RENDER_HTML_H
#define RENDER_HTML_H

#include <stdint.h>
#include "analyze/profile.h"
#include "analyze/straggler.h"
#include "analyze/timeline.h"
#include "lib/json.h"

/* The groupings a report's profile must have, in this order. */
enum report_grouping {
	RG_OP, RG_PHASE, RG_FILE, RG_PROCESS, RG_EPOCH_PHASE, RG_STEP_PHASE,
	RG__COUNT
};
extern char *const report_specs[RG__COUNT];

struct report_data {
	const struct profile *p;
	const struct timeline *t;
	char *const *inputs;
	uint32_t ninputs;
	struct straggler *strag;	/* the steps' stragglers, or NULL */
};

/* 0, or -ENOMEM. */
int html_report(struct jbuf *b, const struct report_data *d);

#endif
