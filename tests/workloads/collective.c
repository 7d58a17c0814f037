// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * One rank of a two-rank job whose collectives are annotated regions
 * (cat "comm", name all_reduce), for merge's alignment of hosts' clocks.
 * Usage:
 *   collective RANK ROUNDS TO FROM [SLOW_STEP SLOW_MS FILE]
 *       ROUNDS times, round i step i (DFT_USDT_SET_STEP): a pause that
 *       depends on the rank and the round (0 to 4 ms: one rank comes
 *       late, as ranks do), then the all_reduce: a byte written to the
 *       FIFO TO, a byte read from the FIFO FROM (the other rank's), inside
 *       the region. Reports each round as "coll RANK ROUND START END",
 *       CLOCK_REALTIME ns just outside the region's begin and end. Rank 0
 *       opens TO first, rank 1 FROM. With SLOW_STEP, this rank reads FILE
 *       whole in that step (a "slowread PATH BYTES" record) and then sleeps SLOW_MS, before
 *       its all_reduce: a straggler.
 */
#include <dftrace/usdt.h>
#include "workload.h"

/* FILE read whole in 64 KiB preads, then ms asleep. */
static void straggle(const char *path, long ms)
{
	struct timespec t = { ms / 1000, ms % 1000 * 1000000L };
	static char buf[65536];
	int fd = open(path, O_RDONLY);
	ssize_t n;
	off_t at = 0;

	if (fd < 0)
		wl_die("open %s", path);
	while ((n = pread(fd, buf, sizeof(buf), at)) > 0)
		at += n;
	close(fd);
	wl_emit("slowread\t%s\t%lld\n", path, (long long)at);
	while (nanosleep(&t, &t) && errno == EINTR)
		;
}

int main(int argc, char **argv)
{
	int rank, rounds, to, from;
	unsigned long long start, end;
	char c = 'x';

	int slow_step = argc == 8 ? atoi(argv[5]) : -1;

	if (argc != 5 && argc != 8)
		wl_die("usage: collective RANK ROUNDS TO FROM [SLOW_STEP SLOW_MS FILE]");
	rank = atoi(argv[1]);
	rounds = atoi(argv[2]);
	wl_open_pair(rank, argv[3], argv[4], &to, &from);
	for (int i = 0; i < rounds; i++) {
		struct timespec pause = { 0, ((i * 7 + rank * 3) % 5) * 1000000L };

		DFT_USDT_SET_STEP(i);
		if (i == slow_step)
			straggle(argv[7], atol(argv[6]));
		nanosleep(&pause, NULL);
		start = wl_wall_ns();
		DFT_USDT_REGION_BEGIN("comm", "all_reduce");
		if (write(to, &c, 1) != 1 || read(from, &c, 1) != 1)
			wl_die("all_reduce %d", i);
		DFT_USDT_REGION_END("comm", "all_reduce");
		end = wl_wall_ns();
		wl_emit("coll\t%d\t%d\t%llu\t%llu\n", rank, i, start, end);
	}
	return 0;
}
