// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Not a traced workload: a generator of a multi-node job's rank traces,
 * as the tracer writes them, with known content (merge and summary at
 * scale, issue 37). Usage:
 *   ranktraces DIR FILES EVENTS [RANKS_PER_HOST [SKEW_US [SLOW_RANK SLOW_US]]]
 *       DIR/rank-NNNNN.pfw.gz for ranks 0 to FILES - 1, each of about
 *       EVENTS events (a multiple of 8), on host "node-H" (H = rank /
 *       RANKS_PER_HOST, default 8), pid 4000 + the rank's place on its
 *       host (hosts reuse pids, as they do). Host H's clock runs
 *       H * SKEW_US us ahead (default 0).
 * Each step of 10 ms: six preads of the rank's shard (4 KiB times 1 to
 * 16, by rank, step and call), a "forward" region (cat compute) and an
 * all_reduce region (cat comm) that every rank ends at the same true
 * time, having begun it 0 to 799 us apart. Every event has an id, 1 on.
 * Reports on stdout, one line a rank, "rank R HOST EVENTS CALLS BYTES",
 * EVENTS counting the X events (the start and end included).
 * With SLOW_RANK, that rank's forward takes SLOW_US more in every step,
 * and so every rank's step (the others wait in the all_reduce); then
 * also a line a rank, "own R US": its time between its all_reduces
 * (from one's end to the next's start), summed.
 */
#include <zlib.h>
#include "workload.h"

#define STEP_US 10000
#define READS 6
#define EVENTS_A_STEP (READS + 2)
#define BASE_US 1795000000000000LL

struct rank_file {
	gzFile gz;
	int rank, pid, host_id;
	long long id, calls, bytes;
	long long own_us, last_end;	/* its time between all_reduces; the last one's end */
	char host[32];
};

static void put(struct rank_file *f, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void put(struct rank_file *f, const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0 || n >= (int)sizeof(line) || gzwrite(f->gz, line, n) != n)
		wl_die("write rank %d", f->rank);
}

static void head(struct rank_file *f, long long ts)
{
	int p = f->pid;

	put(f, "[\n{\"name\":\"HH\",\"cat\":\"dftracer\",\"pid\":%d,\"tid\":%d,\"ph\":\"M\","
	    "\"args\":{\"hhash\":\"%016x\",\"name\":\"%s\",\"value\":\"%016x\"}}\n",
	    p, p, f->host_id + 1, f->host, f->host_id + 1);
	put(f, "{\"id\":%lld,\"name\":\"start\",\"cat\":\"dftracer\",\"pid\":%d,\"tid\":%d,"
	    "\"ts\":%lld,\"dur\":0,\"ph\":\"X\",\"args\":{\"version\":\"0.1.0\","
	    "\"cmd\":\"train.py\",\"cwd\":\"/job\",\"ppid\":1,\"lost\":0}}\n",
	    ++f->id, p, p, ts);
	put(f, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"args\":"
	    "{\"name\":\"python3\"}}\n", p, p);
	put(f, "{\"name\":\"PR\",\"cat\":\"dftracer\",\"pid\":%d,\"tid\":%d,\"ph\":\"M\","
	    "\"args\":{\"name\":\"rank\",\"value\":\"%d\"}}\n", p, p, f->rank);
	put(f, "{\"name\":\"FH\",\"cat\":\"dftracer\",\"pid\":%d,\"tid\":%d,\"ph\":\"M\","
	    "\"args\":{\"name\":\"/data/shard-%05d\",\"value\":\"%016x\"}}\n",
	    p, p, f->rank, f->rank + 0x1000);
}

static void region(struct rank_file *f, const char *name, const char *cat, long long ts,
		   long long dur, int step)
{
	put(f, "{\"id\":%lld,\"name\":\"%s\",\"cat\":\"%s\",\"pid\":%d,\"tid\":%d,\"ts\":%lld,"
	    "\"dur\":%lld,\"ph\":\"X\",\"args\":{\"level\":1,\"p_idx\":-1,\"epoch\":1,"
	    "\"step\":%d}}\n", ++f->id, name, cat, f->pid, f->pid, ts, dur, step);
}

/* The planted straggler, and how much slower it is each step. */
static int slow_rank = -1;
static long long slow_us;

static void step(struct rank_file *f, long long t0, int s)
{
	long long late = f->rank == slow_rank ? slow_us : 0, at = t0;

	for (int i = 0; i < READS; i++, at += 400) {
		long long n = 4096LL * (1 + (f->rank + s + i) % 16);

		put(f, "{\"id\":%lld,\"name\":\"pread\",\"cat\":\"POSIX\",\"pid\":%d,\"tid\":%d,"
		    "\"ts\":%lld,\"dur\":%d,\"ph\":\"X\",\"args\":{\"level\":1,\"p_idx\":-1,"
		    "\"epoch\":1,\"step\":%d,\"syscall\":\"pread64\",\"ret\":%lld,\"fd\":5,"
		    "\"count\":%lld,\"offset\":%lld,\"fhash\":\"%016x\"}}\n", ++f->id, f->pid,
		    f->pid, at, 20 + i, s, n, n, f->bytes, f->rank + 0x1000);
		f->calls++;
		f->bytes += n;
	}
	region(f, "forward", "compute", at, 5000 + late, s);
	/* every rank ends at t0 + 9900 (past the straggler's lateness),
	 * having come 0 to 799 us apart, and the straggler that late */
	at = t0 + 9000 + (f->rank * 37 + s * 11) % 800 + late;
	if (s)
		f->own_us += at - f->last_end;
	f->last_end = t0 + 9900 + slow_us;
	region(f, "all_reduce", "comm", at, f->last_end - at, s);
}

static void one_rank(const char *dir, int rank, long long steps, int per_host, long long skew)
{
	char path[PATH_MAX];
	int host = rank / per_host;
	long long t0 = BASE_US + host * skew;
	struct rank_file f = { .rank = rank, .pid = 4000 + rank % per_host, .host_id = host };

	snprintf(f.host, sizeof(f.host), "node-%d", host);
	snprintf(path, sizeof(path), "%s/rank-%05d.pfw.gz", dir, rank);
	f.gz = gzopen(path, "wb1");
	if (!f.gz || gzbuffer(f.gz, 1 << 18))
		wl_die("open %s", path);
	head(&f, t0);
	for (long long s = 0; s < steps; s++)
		step(&f, t0 + 100 + s * (STEP_US + slow_us), (int)s);
	put(&f, "{\"id\":%lld,\"name\":\"end\",\"cat\":\"dftracer\",\"pid\":%d,\"tid\":%d,"
	    "\"ts\":%lld,\"dur\":0,\"ph\":\"X\",\"args\":{\"num_events\":%lld,\"lost\":0}}\n]\n",
	    f.id + 1, f.pid, f.pid, t0 + 200 + steps * (STEP_US + slow_us), f.id + 1);
	if (gzclose(f.gz) != Z_OK)
		wl_die("close %s", path);
	wl_emit("rank\t%d\t%s\t%lld\t%lld\t%lld\n", rank, f.host, f.id + 1, f.calls, f.bytes);
	if (slow_rank >= 0)
		wl_emit("own\t%d\t%lld\n", rank, f.own_us);
}

int main(int argc, char **argv)
{
	int files, per_host = 8;
	long long events, skew = 0;

	if (argc < 4) {
		fprintf(stderr, "usage: ranktraces DIR FILES EVENTS [RANKS_PER_HOST [SKEW_US "
			"[SLOW_RANK SLOW_US]]]\n");
		return 2;
	}
	files = atoi(argv[2]);
	events = atoll(argv[3]);
	if (argc > 4)
		per_host = atoi(argv[4]);
	if (argc > 5)
		skew = atoll(argv[5]);
	if (argc > 7) {
		slow_rank = atoi(argv[6]);
		slow_us = atoll(argv[7]);
	}
	if (files < 1 || events < EVENTS_A_STEP || per_host < 1 || slow_us < 0) {
		fprintf(stderr, "ranktraces: FILES, EVENTS (8 or more) and RANKS_PER_HOST are "
			"positive\n");
		return 2;
	}
	for (int r = 0; r < files; r++)
		one_rank(argv[1], r, events / EVENTS_A_STEP, per_host, skew);
	return 0;
}
