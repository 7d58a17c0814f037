// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * For `make bench`: reads FILE through a mapping, one byte a page, PASSES
 * times, mapping it afresh each pass so that every pass faults. Times
 * only its own passes. Prints "loop_ns N pages N".
 *   mmapscan FILE PASSES
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
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
	long long t0, t1, pages = 0;
	unsigned long sum = 0;
	struct stat st;
	int fd, passes;

	if (argc != 3 || (fd = open(argv[1], O_RDONLY)) < 0 || fstat(fd, &st)) {
		fprintf(stderr, "usage: mmapscan FILE PASSES\n");
		return 2;
	}
	passes = atoi(argv[2]);
	t0 = now_ns();
	for (int p = 0; p < passes; p++) {
		volatile const unsigned char *m = mmap(NULL, st.st_size, PROT_READ, MAP_SHARED, fd, 0);

		if (m == MAP_FAILED) {
			perror("mmapscan: mmap");
			return 1;
		}
		for (off_t o = 0; o < st.st_size; o += 4096, pages++)
			sum += m[o];
		munmap((void *)m, st.st_size);
	}
	t1 = now_ns();
	printf("loop_ns %lld pages %lld sum %lu\n", t1 - t0, pages, sum);
	return 0;
}
