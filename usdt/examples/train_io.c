// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A miniature training job for the demo: two data-loader worker
 * processes read sample files and pass them through pipes, the main
 * process "computes" on them, and a checkpoint is written every epoch.
 * Usage: train_io DIR [EPOCHS] [STEPS]
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define SAMPLE_BYTES (256 << 10)
#define WORKERS 2

static char dir[4096];

static void die(const char *what)
{
	fprintf(stderr, "train_io: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void path_of(char *out, size_t len, const char *kind, int i)
{
	snprintf(out, len, "%s/%s_%03d.bin", dir, kind, i);
}

static void make_dataset(int n)
{
	static char buf[SAMPLE_BYTES];
	char path[4200];

	for (int i = 0; i < n; i++) {
		int fd;

		path_of(path, sizeof(path), "sample", i);
		memset(buf, 'a' + i % 26, sizeof(buf));
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0 || write(fd, buf, sizeof(buf)) != sizeof(buf))
			die(path);
		close(fd);
	}
}

/* A worker loads every WORKERS-th sample and sends a checksum. */
static void worker(int id, int steps, int out)
{
	static char buf[64 << 10];
	char path[4200];

	prctl(PR_SET_NAME, "data_worker");
	for (int s = id; s < steps; s += WORKERS) {
		long sum = 0;
		ssize_t n;
		int fd;

		path_of(path, sizeof(path), "sample", s);
		fd = open(path, O_RDONLY);
		if (fd < 0)
			die(path);
		while ((n = read(fd, buf, sizeof(buf))) > 0)
			sum += buf[0] * n;
		close(fd);
		if (write(out, &sum, sizeof(sum)) != sizeof(sum))
			die("pipe");
	}
	_exit(0);
}

static void checkpoint(int epoch, long state)
{
	static char buf[1 << 20];
	char path[4200];
	int fd;

	path_of(path, sizeof(path), "checkpoint", epoch);
	memset(buf, (int)(state & 0x7f), sizeof(buf));
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, buf, sizeof(buf)) != sizeof(buf) || fsync(fd))
		die(path);
	close(fd);
}

static long run_epoch(int steps)
{
	int pipes[WORKERS][2];
	long state = 0;

	for (int w = 0; w < WORKERS; w++) {
		if (pipe(pipes[w]))
			die("pipe");
		if (fork() == 0) {
			close(pipes[w][0]);
			worker(w, steps, pipes[w][1]);
		}
		close(pipes[w][1]);
	}
	for (int s = 0; s < steps; s++) {
		long sum;

		if (read(pipes[s % WORKERS][0], &sum, sizeof(sum)) != sizeof(sum))
			die("worker");
		for (volatile int k = 0; k < 200000; k++) /* the compute phase */
			state += (sum ^ k) & 1;
	}
	for (int w = 0; w < WORKERS; w++) {
		close(pipes[w][0]);
		wait(NULL);
	}
	return state;
}

int main(int argc, char **argv)
{
	int epochs = argc > 2 ? atoi(argv[2]) : 2, steps = argc > 3 ? atoi(argv[3]) : 8;

	if (argc < 2 || epochs < 1 || steps < 1) {
		fprintf(stderr, "usage: train_io DIR [EPOCHS] [STEPS]\n");
		return 2;
	}
	snprintf(dir, sizeof(dir), "%s", argv[1]);
	if (mkdir(dir, 0755) && errno != EEXIST)
		die(dir);
	make_dataset(steps);
	for (int e = 0; e < epochs; e++)
		checkpoint(e, run_epoch(steps));
	printf("train_io: %d epochs x %d steps, %d KiB per sample, checkpoints in %s\n",
	       epochs, steps, SAMPLE_BYTES >> 10, dir);
	return 0;
}
