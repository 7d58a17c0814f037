/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* What the user sees on stderr while tracing: a live status line on a
 * terminal, and a summary at exit. */
#ifndef CAPTURE_REPORT_H
#define CAPTURE_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include "model/stats.h"

struct report {
	bool live_line;		/* a status line is being redrawn */
	uint64_t last_events;
	/* start-up: launched, the kernel programs loaded and attached,
	 * tracing begun */
	struct timespec launched, loaded, started, last;
};

/* "dftrace-bpf: <message>": one line on stderr. */
void report_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* At start-up. */
void report_init(struct report *r);
/* The kernel programs are loaded and attached (most of start-up). */
void report_loaded(struct report *r);
/* Once the probes are live and the target marked; quiet: nothing live. */
void report_begin(struct report *r, bool quiet);
void report_status(struct report *r, const struct trace_stats *st,
		   const uint64_t *lost, size_t nslots);
void report_summary(struct report *r, const struct trace_stats *st,
		    const uint64_t *lost, size_t nslots, const char *output);

#endif
