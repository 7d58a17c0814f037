// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdbool.h>
#include <stdio.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include "env.h"
#include "report.h"
#include "phases.h"
#include "syscalls.h"

static bool live_line;
static uint64_t last_events;
static struct timespec launched, started, last;

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

static void human_bytes(char *buf, size_t len, uint64_t b)
{
	static const char *units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double v = b;
	int u = 0;

	while (v >= 1024 && u < 4)
		v /= 1024, u++;
	snprintf(buf, len, u ? "%.1f %s" : "%.0f %s", v, units[u]);
}

void report_init(void)
{
	clock_gettime(CLOCK_MONOTONIC, &launched);
}

void report_begin(void)
{
	clock_gettime(CLOCK_MONOTONIC, &started);
	last = started;
	live_line = !env.quiet && isatty(STDERR_FILENO);
}

void report_status(const struct trace_stats *st, const uint64_t *lost,
		   size_t nslots)
{
	double dt = since(&last);
	char bytes[32];

	if (!live_line || dt <= 0)
		return;
	human_bytes(bytes, sizeof(bytes), sum(st->bytes, TRACE_MAX_OPS));
	fprintf(stderr, "\r\033[Kdftrace-bpf: %.0f events/s, %s traced, %llu lost, %u processes",
		(st->events - last_events) / dt, bytes,
		(unsigned long long)sum(lost, nslots), st->live);
	fflush(stderr);
	last_events = st->events;
	clock_gettime(CLOCK_MONOTONIC, &last);
}

/* Time and bytes by annotated phase; bytes count I/O whose innermost
 * enclosing region is the phase. */
static void report_phases(void)
{
	int n;
	const struct phase_total *t = phase_totals(&n);
	char bytes[32], name[96];

	if (!n)
		return;
	fprintf(stderr, "  %-30s %8s %12s %14s\n", "phase (cat/name)", "count", "time", "bytes");
	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "%s/%s", t[i].cat->str, t[i].name->str);
		human_bytes(bytes, sizeof(bytes), t[i].bytes);
		fprintf(stderr, "  %-30.30s %8llu %10.3f s %14s\n", name,
			(unsigned long long)t[i].count, t[i].ns / 1e9,
			t[i].bytes ? bytes : "-");
	}
}

void report_summary(const struct trace_stats *st, const uint64_t *lost,
		    size_t nslots, const char *output)
{
	struct rusage ru;
	char bytes[32];

	if (live_line)
		fprintf(stderr, "\r\033[K");
	fprintf(stderr, "dftrace-bpf: %llu events in %.2f s\n",
		(unsigned long long)st->events, since(&started));
	fprintf(stderr, "  %-18s %12s %14s\n", "operation", "count", "bytes");
	for (int i = 0; i < sc_nnames(); i++) {
		if (!st->count[i])
			continue;
		human_bytes(bytes, sizeof(bytes), st->bytes[i]);
		fprintf(stderr, "  %-18s %12llu %14s\n", sc_name_at(i),
			(unsigned long long)st->count[i],
			st->bytes[i] ? bytes : "-");
	}
	report_phases();
	fprintf(stderr, "lost events: %llu\n", (unsigned long long)sum(lost, nslots));
	if (st->lost_elsewhere)
		fprintf(stderr, "lost events in no process's file: %llu (of processes never seen, or too many processes lost events)\n",
			(unsigned long long)st->lost_elsewhere);
	getrusage(RUSAGE_SELF, &ru);
	fprintf(stderr, "tracer cpu: %llu ns\n",
		(unsigned long long)((ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ull +
				     (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ull));
	fprintf(stderr, "attach: %.1f ms\n",
		((started.tv_sec - launched.tv_sec) + (started.tv_nsec - launched.tv_nsec) / 1e9) * 1e3);
	if (st->files_reopened)
		fprintf(stderr, "files reopened: %llu (descriptors ran short: files were closed while idle)\n",
			(unsigned long long)st->files_reopened);
	if (st->privileged)
		fprintf(stderr, "privileged programs not traced: %llu (setuid, setgid or file capabilities, under sudo)\n",
			(unsigned long long)st->privileged);
	if (st->untracked_children)
		fprintf(stderr, "untracked children: %llu (the kernel could not allocate their state)\n",
			(unsigned long long)st->untracked_children);
	fprintf(stderr, "trace: %s\n", output);
}
