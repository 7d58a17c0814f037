/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* What the user sees on stderr: a live status line on a terminal, and a
 * summary at exit. */
#ifndef REPORT_H
#define REPORT_H

#include <stddef.h>
#include <stdint.h>
#include "trace.h"

/* At start-up, and once the probes are live and the target marked. */
void report_init(void);
void report_begin(void);
void report_status(const struct trace_stats *st, const uint64_t *lost,
		   size_t nslots);
void report_summary(const struct trace_stats *st, const uint64_t *lost,
		    size_t nslots, const char *output);

#endif
