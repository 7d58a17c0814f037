// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Writes under a changing epoch and step, for totals that must carry
 * those of their calls, not those the process has when they are written.
 * Prints "pos FILE EPOCH STEP BYTES" per file written ("-": not set).
 * Usage: position DIR
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <dftrace/usdt.h>

static int put(const char *dir, const char *name, size_t n, const char *epoch,
	       const char *step)
{
	static char buf[4096];
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, buf, n) != (ssize_t)n || close(fd))
		return 1;
	printf("pos\t%s\t%s\t%s\t%zu\n", path, epoch, step, n);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: position DIR\n");
		return 2;
	}
	if (put(argv[1], "A.bin", 1000, "-", "-"))
		return 1;
	DFT_USDT_SET_EPOCH(1);
	if (put(argv[1], "B.bin", 2000, "1", "-"))
		return 1;
	DFT_USDT_SET_STEP(7);
	if (put(argv[1], "C.bin", 3000, "1", "7"))
		return 1;
	DFT_USDT_SET_EPOCH(2);
	if (put(argv[1], "D.bin", 500, "2", "7"))
		return 1;
	return 0;
}
