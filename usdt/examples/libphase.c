// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* A shared library with its own annotations, loaded with dlopen() by
 * dlopen_phase: its probes and semaphores belong to this DSO. */
#include <fcntl.h>
#include <unistd.h>
#include <dftrace/usdt.h>

long phase_preprocess(const char *path);

long phase_preprocess(const char *path)
{
	char buf[4096];
	long total = 0;
	ssize_t n;
	int fd;

	DFT_USDT_PREPROCESS();
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		total += n;
	close(fd);
	return total;
}
