// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Known I/O in each step, for --steps. Opens one file per step before the
 * first step annotation, then in step s (DFT_USDT_SET_STEP(s), inside a
 * compute.step region) writes 1000 + s bytes to file s and reads them
 * back; closes them all after the last step. Reports every call as io
 * records, and "step S" as each begins.
 * Usage: steps DIR NSTEPS
 */
#include <dftrace/usdt.h>
#include "workload.h"

#define MAX_STEPS 64

int main(int argc, char **argv)
{
	char path[MAX_STEPS][PATH_MAX], buf[1000 + MAX_STEPS];
	int fd[MAX_STEPS], n;

	if (argc != 3 || (n = atoi(argv[2])) < 1 || n > MAX_STEPS) {
		fprintf(stderr, "usage: steps DIR NSTEPS (1..%d)\n", MAX_STEPS);
		return 2;
	}
	memset(buf, 's', sizeof(buf));
	for (int s = 0; s < n; s++) {
		snprintf(path[s], sizeof(path[s]), "%s/step-%02d.dat", argv[1], s);
		fd[s] = open(path[s], O_RDWR | O_CREAT | O_TRUNC, 0644);
		if (fd[s] < 0)
			wl_die("open %s", path[s]);
		wl_io(path[s], "open", "openat", fd[s]);
	}
	for (int s = 0; s < n; s++) {
		ssize_t w, r;

		DFT_USDT_SET_STEP(s);
		wl_emit("step\t%d\n", s);
		DFT_USDT_STEP_BEGIN();
		w = pwrite(fd[s], buf, 1000 + s, 0);
		wl_io(path[s], "pwrite", "pwrite64", w);
		r = pread(fd[s], buf, 1000 + s, 0);
		wl_io(path[s], "pread", "pread64", r);
		DFT_USDT_STEP_END();
	}
	for (int s = 0; s < n; s++) {
		close(fd[s]);
		wl_io(path[s], "close", "close", 0);
	}
	return 0;
}
