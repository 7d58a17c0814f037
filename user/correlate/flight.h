/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * --flight: the run's totals are written as --profile writes them, and
 * the last SECONDS of what a full trace would write are kept in memory
 * (write/flightbuf.h) until a trigger fires; then the window, from
 * SECONDS before the trigger to --flight-after after it, is written as a
 * standalone trace: flight-N-REASON.pfw.gz.
 */
#ifndef CORRELATE_FLIGHT_H
#define CORRELATE_FLIGHT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct trace;
struct invoker;

/* The triggers, in the order the end event counts them. */
#define FLIGHT_REASONS(X) X(slow_step, "slow-step") X(hang, "hang") \
	X(slow_io, "slow-io") X(exit, "exit") X(signal, "signal")

enum flight_reason {
#define FLIGHT_ENUM(id, text) FLIGHT_##id,
	FLIGHT_REASONS(FLIGHT_ENUM)
#undef FLIGHT_ENUM
	FLIGHT__COUNT
};

const char *flight_reason_name(enum flight_reason r);

struct flight_opts {
	uint64_t keep_ns;	/* --flight SECONDS */
	uint64_t after_ns;	/* --flight-after */
	size_t mem;		/* --flight-mem, bytes */
	uint32_t max_dumps;	/* --flight-max */
	bool on[FLIGHT__COUNT];	/* --trigger (signal: always) */
	double step_k;		/* slow-step=K */
	uint64_t hang_ns;	/* hang=SECONDS */
	uint64_t io_ns;		/* slow-io=MS */
	/* Where dumps go: <prefix>flight-N-REASON.pfw.gz, made in dir_fd
	 * if not NULL (-D), else in the prefix's directory (-o). */
	const char *prefix;
	const int *dir_fd;
	int gzip_level;
	const struct invoker *as;
};

/* Turns --flight on for t, before any record: 0 or -errno. */
int trace_flight_start(struct trace *t, const struct flight_opts *o);
/* Between batches of records: the window takes the new lines and lets
 * the old go, hang is looked at, and the dumps that are due are written. */
void trace_flight_tick(struct trace *t, uint64_t now_ns);
/* SIGUSR1, `dftrace-bpf dump`: a dump of now. trace_finish() writes
 * the dumps still waiting for their after-time. */
void trace_flight_signal(struct trace *t, uint64_t now_ns);

#endif
