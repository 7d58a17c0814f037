// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Syscall-heavy microbenchmark for `make bench`: times only its own loop,
 * so tracer start-up does not count. Prints "loop_ns N calls N".
 *   ioloop pread FILE N   N x 4 KiB pread64 over a cached file
 *   ioloop write FILE N   N x 64-byte write to FILE
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
	int fd, pread_mode;
	off_t size;

	if (argc != 4) {
		fprintf(stderr, "usage: ioloop pread|write FILE N\n");
		return 2;
	}
	pread_mode = !strcmp(argv[1], "pread");
	n = atol(argv[3]);
	fd = open(argv[2], pread_mode ? O_RDONLY : O_WRONLY | O_CREAT | O_TRUNC, 0644);
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
		ssize_t r = pread_mode ?
			pread(fd, buf, sizeof(buf), (i * sizeof(buf)) % (size - sizeof(buf) + 1) & ~4095L) :
			write(fd, buf, 64);
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
