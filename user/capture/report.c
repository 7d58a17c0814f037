// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include "capture/report.h"
#include "lib/termsafe.h"
#include "lib/units.h"

static double since(const struct timespec *t)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - t->tv_sec) + (now.tv_nsec - t->tv_nsec) / 1e9;
}

static uint64_t sum(const uint64_t *v, size_t n)
{
	uint64_t s = 0;

	for (size_t i = 0; i < n; i++)
		s += v[i];
	return s;
}


void report_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "dftrace-bpf: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
}

void report_init(struct report *r)
{
	*r = (struct report){ 0 };
	clock_gettime(CLOCK_MONOTONIC, &r->launched);
}

void report_loaded(struct report *r)
{
	clock_gettime(CLOCK_MONOTONIC, &r->loaded);
}

void report_begin(struct report *r, bool quiet)
{
	clock_gettime(CLOCK_MONOTONIC, &r->started);
	r->last = r->started;
	r->live_line = !quiet && isatty(STDERR_FILENO);
}

void report_status(struct report *r, const struct trace_stats *st,
		   const uint64_t *lost, size_t nslots)
{
	double dt = since(&r->last);
	char bytes[32];

	if (!r->live_line || dt <= 0)
		return;
	units_bytes(bytes, sizeof(bytes), sum(st->bytes, TRACE_MAX_OPS));
	fprintf(stderr, "\r\033[Kdftrace-bpf: %.0f events/s, %s traced, %llu lost, %u processes",
		(st->events - r->last_events) / dt, bytes,
		(unsigned long long)sum(lost, nslots), st->live);
	fflush(stderr);
	r->last_events = st->events;
	clock_gettime(CLOCK_MONOTONIC, &r->last);
}

/* Time and bytes by annotated phase; bytes count I/O whose innermost
 * enclosing region is the phase. */
/* The exit summary's rows of phases: the first so many; the trace and
 * `dftrace-bpf summary --by phase` have them all. */
#define PHASE_ROWS 40

static void phase_row(const char *name, const struct phase_total *t)
{
	char bytes[32], time[32];

	units_bytes(bytes, sizeof(bytes), t->bytes);
	units_ns(time, sizeof(time), t->ns);
	fprintf(stderr, "  %-30.30s %8llu %12s %14s\n", name, (unsigned long long)t->count, time,
		t->bytes ? bytes : "-");
}

static void report_phases(const struct phase_totals *pt)
{
	char name[96], cat[48], sub[48];
	uint32_t rows = pt->n < PHASE_ROWS ? pt->n : PHASE_ROWS;

	if (!pt->n && !pt->other.count)
		return;
	fprintf(stderr, "  %-30s %8s %12s %14s\n", "phase (cat/name)", "count", "time", "bytes");
	for (uint32_t i = 0; i < rows; i++) {
		/* names a traced program chose: no control bytes to stderr */
		termsafe(cat, sizeof(cat), pt->t[i].cat->str);
		termsafe(sub, sizeof(sub), pt->t[i].name->str);
		snprintf(name, sizeof(name), "%s/%s", cat, sub);
		phase_row(name, &pt->t[i]);
	}
	if (pt->n > rows)
		fprintf(stderr, "  (%u more phases: dftrace-bpf summary --by phase)\n", pt->n - rows);
	if (!pt->other.count)
		return;
	phase_row("(other names)", &pt->other);
	fprintf(stderr, "  (names past the first %u are totalled as one; the trace has each region as named)\n",
		PHASE_TOTALS_MAX);
}


/* The counts of what went otherwise than it should, each said only
 * where it is not 0. */
static void report_counts(const struct trace_stats *st)
{
	static const struct {
		size_t off;
		const char *what, *why;
	} counts[] = {
		{ offsetof(struct trace_stats, files_reopened), "files reopened",
		  "descriptors ran short: files were closed while idle" },
		{ offsetof(struct trace_stats, privileged), "privileged programs not traced",
		  "setuid, setgid or file capabilities, under sudo" },
		{ offsetof(struct trace_stats, untracked_children), "untracked children",
		  "the kernel could not allocate their state" },
		{ offsetof(struct trace_stats, swept), "processes swept",
		  "gone, their exit records lost" },
		{ offsetof(struct trace_stats, folds_orphaned), "folded calls dropped",
		  "no memory for their process" },
	};

	for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
		uint64_t n = *(const uint64_t *)((const char *)st + counts[i].off);

		if (n)
			fprintf(stderr, "%s: %llu (%s)\n", counts[i].what,
				(unsigned long long)n, counts[i].why);
	}
}

void report_summary(struct report *r, const struct trace_stats *st,
		    const uint64_t *lost, size_t nslots, const char *output)
{
	struct rusage ru;
	char bytes[32], cpu[32], attach[32];

	if (r->live_line)
		fprintf(stderr, "\r\033[K");
	fprintf(stderr, "dftrace-bpf: %llu events in %.2f s\n",
		(unsigned long long)st->events, since(&r->started));
	fprintf(stderr, "  %-18s %12s %14s\n", "operation", "count", "bytes");
	for (int i = 0; i < sc_nnames(); i++) {
		if (!st->count[i])
			continue;
		units_bytes(bytes, sizeof(bytes), st->bytes[i]);
		fprintf(stderr, "  %-18s %12llu %14s\n", sc_name_at(i),
			(unsigned long long)st->count[i],
			st->bytes[i] ? bytes : "-");
	}
	report_phases(&st->phases);
	fprintf(stderr, "lost events: %llu\n", (unsigned long long)sum(lost, nslots));
	if (nslots > DFT_NR_MAX + DFT_EV_RING_TIME && lost[DFT_NR_MAX + DFT_EV_RING_TIME])
		fprintf(stderr, "  of which region records dropped: %llu (their times, from a thread's ring, out of order or ahead of the clock)\n",
			(unsigned long long)lost[DFT_NR_MAX + DFT_EV_RING_TIME]);
	if (st->lost_elsewhere)
		fprintf(stderr, "lost events in no process's file: %llu (of processes never seen, or too many processes lost events)\n",
			(unsigned long long)st->lost_elsewhere);
	getrusage(RUSAGE_SELF, &ru);
	units_ns(cpu, sizeof(cpu), (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ll +
		 (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ll);
	fprintf(stderr, "tracer cpu: %s\n", cpu);
	units_ns(attach, sizeof(attach), (r->started.tv_sec - r->launched.tv_sec) * 1000000000ll +
		 (r->started.tv_nsec - r->launched.tv_nsec));
	units_ns(cpu, sizeof(cpu), (r->loaded.tv_sec - r->launched.tv_sec) * 1000000000ll +
		 (r->loaded.tv_nsec - r->launched.tv_nsec));
	fprintf(stderr, "attach: %s\n", attach);
	fprintf(stderr, "load: %s (the kernel programs verified and attached, of the attach)\n", cpu);
	report_counts(st);
	fprintf(stderr, "trace: %s\n", output);
}
