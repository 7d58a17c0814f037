// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Syscall-heavy microbenchmark for `make bench`: times only its own loop,
 * so tracer start-up does not count. Prints "loop_ns N calls N".
 *   ioloop pread FILE N   N x 4 KiB pread64 over a cached file
 *   ioloop write FILE N   N x 64-byte write to FILE
 *   ioloop lseek FILE N   N x lseek(SEEK_CUR): the cheapest recorded call,
 *                         to measure how many events/s the tracer sustains
 * An optional 4th argument paces the loop to that many calls per second.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	static char buf[4096];
	long n, i;
	long long t0, t1;
	int fd, pread_mode, lseek_mode;
	double rate = argc > 4 ? atof(argv[4]) : 0;
	off_t size;

	if (argc != 4 && argc != 5) {
		fprintf(stderr, "usage: ioloop pread|write|lseek FILE N [CALLS_PER_S]\n");
		return 2;
	}
	pread_mode = !strcmp(argv[1], "pread");
	lseek_mode = !strcmp(argv[1], "lseek");
	n = atol(argv[3]);
	fd = open(argv[2], pread_mode || lseek_mode ? O_RDONLY : O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0) {
		perror(argv[2]);
		return 1;
	}
	size = pread_mode ? lseek(fd, 0, SEEK_END) : 0;
	if (pread_mode && size < (off_t)sizeof(buf)) {
		fprintf(stderr, "ioloop: '%s' must hold at least 4 KiB\n", argv[2]);
		return 1;
	}
	t0 = now_ns();
	for (i = 0; i < n; i++) {
		ssize_t r;

		/* Pacing: every 256 calls, wait until the schedule allows. */
		if (rate > 0 && (i & 255) == 0)
			while ((now_ns() - t0) * rate < i * 1e9)
				;
		if (lseek_mode)
			r = lseek(fd, 0, SEEK_CUR);
		else if (pread_mode)
			r = pread(fd, buf, sizeof(buf),
				  (i * sizeof(buf)) % (size - sizeof(buf) + 1) & ~4095L);
		else
			r = write(fd, buf, 64);
		if (r < 0) {
			perror("ioloop");
			return 1;
		}
	}
	t1 = now_ns();
	printf("loop_ns %lld calls %ld\n", t1 - t0, n);
	close(fd);
	return 0;
}
