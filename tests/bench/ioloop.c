// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Syscall-heavy microbenchmark for `make bench`: times only its own loop,
 * so tracer start-up does not count. Prints "loop_ns N calls N".
 *   ioloop pread FILE N   N x 4 KiB pread64 over a cached file
 *   ioloop write FILE N   N x 64-byte write to FILE
 *   ioloop lseek FILE N   N x lseek(SEEK_CUR): the cheapest recorded call,
 *                         to measure how many events/s the tracer sustains
 *   ioloop turns FILE N   pread's loop in turns, for tests/bench/turns.py:
 *                         says "ready", then for each "x" read from stdin
 *                         runs N calls and prints "loop_ns N"; for each
 *                         "n" hands the turns on to a new child process
 *                         (which says "ready") and waits for it; exits at
 *                         EOF
 *   ioloop exec-turns CMD [ARG...]
 *                         the same turns of a whole command instead: runs
 *                         CMD (its stdin and stdout /dev/null) for each
 *                         "x" and prints "loop_ns N", its wall time; says
 *                         "ready" again for each "n" (each turn is a new
 *                         process already)
 * An optional 4th argument paces the loop to that many calls per second.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

enum mode { PREAD, WRITE, LSEEK };

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* n calls of the mode on fd, paced to rate calls a second (0: unpaced);
 * returns the nanoseconds they took, or -1 */
static long long calls(enum mode mode, int fd, off_t size, long n, double rate)
{
	static char buf[4096];
	long long t0 = now_ns();
	long i;

	for (i = 0; i < n; i++) {
		ssize_t r;

		/* Pacing: every 256 calls, wait until the schedule allows. */
		if (rate > 0 && (i & 255) == 0)
			while ((now_ns() - t0) * rate < i * 1e9)
				;
		if (mode == LSEEK)
			r = lseek(fd, 0, SEEK_CUR);
		else if (mode == PREAD)
			r = pread(fd, buf, sizeof(buf),
				  (i * sizeof(buf)) % (size - sizeof(buf) + 1) & ~4095L);
		else
			r = write(fd, buf, 64);
		if (r < 0) {
			perror("ioloop");
			return -1;
		}
	}
	return now_ns() - t0;
}

/* The child's exit status, or -1 where it did not exit (a signal) or
 * could not be waited for. */
static int reap(pid_t child)
{
	int status;

	while (waitpid(child, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* The turns go on in a new child; this process waits for it and exits
 * as it did. */
static void hand_on(void)
{
	pid_t child = fork();
	int status;

	if (child == 0)
		return;
	if (child < 0) {
		perror("ioloop: fork");
		exit(1);
	}
	status = reap(child);
	exit(status < 0 ? 1 : status);
}

/* One run of argv, its stdin and stdout /dev/null: its wall time in
 * ns, or -1 where it could not run or did not exit 0. */
static long long run_once(char **argv)
{
	long long t0 = now_ns();
	pid_t child = fork();

	if (child < 0)
		return -1;
	if (child == 0) {
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);

		if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0)
			_exit(127);
		execvp(argv[0], argv);
		perror(argv[0]);
		_exit(127);
	}
	return reap(child) == 0 ? now_ns() - t0 : -1;
}

/* The turns protocol: "ready", then one(ctx) for each "x" on stdin,
 * its time on stdout as "loop_ns N" (flushed: the driver waits for it
 * before the next side's turn); for each "n", the turns handed on to a
 * new child first where fork_on_n, then "ready" again; 0 at EOF, 1
 * where a turn failed. */
static int serve_turns(long long (*one)(void *), void *ctx, int fork_on_n)
{
	for (;;) {
		char go = 0;

		printf("ready\n");
		fflush(stdout);
		while (read(0, &go, 1) == 1 && go == 'x') {
			long long ns = one(ctx);

			if (ns < 0)
				return 1;
			printf("loop_ns %lld\n", ns);
			fflush(stdout);
			go = 0;
		}
		if (go != 'n')
			return 0;
		if (fork_on_n)
			hand_on();
	}
}

struct pread_turn {
	int fd;
	off_t size;
	long n;
};

static long long pread_turn(void *ctx)
{
	struct pread_turn *t = ctx;

	return calls(PREAD, t->fd, t->size, t->n, 0);
}

static long long exec_turn(void *ctx)
{
	char **argv = ctx;
	long long ns = run_once(argv);

	if (ns < 0)
		fprintf(stderr, "ioloop: '%s' failed\n", argv[0]);
	return ns;
}

int main(int argc, char **argv)
{
	int turns_mode = argc > 1 && !strcmp(argv[1], "turns");
	enum mode mode = WRITE;
	double rate = argc > 4 ? atof(argv[4]) : 0;
	long long ns;
	off_t size = 0;
	long n;
	int fd;

	if (argc > 2 && !strcmp(argv[1], "exec-turns"))
		return serve_turns(exec_turn, argv + 2, 0);
	if (argc != 4 && argc != 5) {
		fprintf(stderr, "usage: ioloop pread|write|lseek|turns FILE N [CALLS_PER_S], or ioloop exec-turns CMD [ARG...]\n");
		return 2;
	}
	if (turns_mode || !strcmp(argv[1], "pread"))
		mode = PREAD;
	else if (!strcmp(argv[1], "lseek"))
		mode = LSEEK;
	n = atol(argv[3]);
	fd = open(argv[2], mode != WRITE ? O_RDONLY : O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0) {
		perror(argv[2]);
		return 1;
	}
	if (mode == PREAD) {
		size = lseek(fd, 0, SEEK_END);
		if (size < 4096) {
			fprintf(stderr, "ioloop: '%s' must hold at least 4 KiB\n", argv[2]);
			return 1;
		}
	}
	if (turns_mode) {
		struct pread_turn t = { fd, size, n };

		return serve_turns(pread_turn, &t, 1);
	}
	ns = calls(mode, fd, size, n, rate);
	if (ns < 0)
		return 1;
	printf("loop_ns %lld calls %ld\n", ns, n);
	close(fd);
	return 0;
}
