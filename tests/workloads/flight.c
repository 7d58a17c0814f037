// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Incidents for --flight, each with known I/O.
 * Usage:
 *   flight steps DIR NSTEPS SLOW STEP_MS STALL_MS
 *       step s (DFT_USDT_SET_STEP(s)) writes 1000 + s bytes to
 *       DIR/step-SS.dat and reads them back, then sleeps STEP_MS, and
 *       step SLOW STALL_MS more; a last step annotation (NSTEPS) ends the
 *       last step. Reports the io records, and "step S BEGIN END" in
 *       CLOCK_MONOTONIC ns as each ends.
 *   flight hang DIR NSTEPS STEP_MS HANG_MS RELEASE
 *       NSTEPS steps as above, then one that does its I/O (its file
 *       left open), a region flight/prepare and begins flight/wait, both
 *       after its last call, and sleeps HANG_MS without ending; then
 *       says "woke" (a call: the kernel side reads its ring) and waits
 *       for the file RELEASE to exist.
 *   flight slowio DIR N SLOW_MS
 *       N 4 KiB preads of DIR/fast.dat, then one read of a pipe that a
 *       child fills after SLOW_MS, then N more preads.
 *   flight abort DIR
 *       writes 4096 bytes to DIR/last.dat, fsyncs, then abort()s.
 *   flight files DIR N
 *       N files, each named with 150 more characters, written one byte
 *       each and closed: N names for the window to keep (no records).
 */
#include <stdbool.h>
#include <sys/wait.h>
#include <dftrace/usdt.h>
#include "workload.h"

static uint64_t mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000ull + t.tv_nsec;
}

static void sleep_ms(long ms)
{
	struct timespec t = { ms / 1000, ms % 1000 * 1000000L };

	while (nanosleep(&t, &t) && errno == EINTR)
		;
}

/* DIR/NAME made anew, its path in path (PATH_MAX). */
static int create(const char *dir, const char *name, int flags, char *path)
{
	int fd;

	snprintf(path, PATH_MAX, "%s/%s", dir, name);
	fd = open(path, flags | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		wl_die("open %s", path);
	return fd;
}

static int open_step(const char *dir, int s, char *path)
{
	char name[32];
	int fd;

	snprintf(name, sizeof(name), "step-%02d.dat", s);
	fd = create(dir, name, O_RDWR, path);
	wl_io(path, "open", "openat", fd);
	return fd;
}

/* Step s's I/O: 1000 + s bytes written and read back, then closed
 * unless keep_open (left open till the process ends). */
static void step_io_of(const char *dir, int s, bool keep_open)
{
	char path[PATH_MAX], buf[4096];
	int fd = open_step(dir, s, path);
	ssize_t n;

	memset(buf, 's', sizeof(buf));
	n = pwrite(fd, buf, 1000 + s, 0);
	wl_io(path, "pwrite", "pwrite64", n);
	n = pread(fd, buf, 1000 + s, 0);
	wl_io(path, "pread", "pread64", n);
	if (keep_open)
		return;
	close(fd);
	wl_io(path, "close", "close", 0);
}

static void step_io(const char *dir, int s)
{
	step_io_of(dir, s, false);
}

static int run_steps(const char *dir, int n, int slow, long step_ms, long stall_ms)
{
	uint64_t begin;

	for (int s = 0; s < n; s++) {
		DFT_USDT_SET_STEP(s);
		begin = mono_ns();
		step_io(dir, s);
		sleep_ms(step_ms + (s == slow ? stall_ms : 0));
		wl_emit("step\t%d\t%llu\t%llu\n", s, (unsigned long long)begin,
			(unsigned long long)mono_ns());
	}
	DFT_USDT_SET_STEP(n);
	return 0;
}

static int run_hang(const char *dir, int n, long step_ms, long hang_ms, const char *release)
{
	run_steps(dir, n, -1, step_ms, 0);
	/* its file left open: the thread's last calls are the step's own
	 * reads and writes (no close sends what the kernel keeps) */
	step_io_of(dir, n, true);
	wl_emit("hang\t%d\t%llu\n", n, (unsigned long long)mono_ns());
	/* where the regions probe is on, the first record of the thread's
	 * ring is read at once, the others at its next call (none here) */
	DFT_USDT_REGION_BEGIN("flight", "prepare");
	DFT_USDT_REGION_END("flight", "prepare");
	DFT_USDT_REGION_BEGIN("flight", "wait");
	sleep_ms(hang_ms);
	wl_emit("woke\t%llu\n", (unsigned long long)mono_ns());
	while (access(release, F_OK))
		sleep_ms(20);
	return 0;
}

static int run_slowio(const char *dir, int n, long slow_ms)
{
	char path[PATH_MAX], buf[4096];
	int fd, pipefd[2];
	ssize_t r;
	pid_t child;

	fd = create(dir, "fast.dat", O_RDWR, path);
	memset(buf, 'f', sizeof(buf));
	if (pwrite(fd, buf, sizeof(buf), 0) != sizeof(buf))
		wl_die("pwrite %s", path);
	if (pipe(pipefd))
		wl_die("pipe");
	for (int half = 0; half < 2; half++) {
		for (int i = 0; i < n; i++)
			if (pread(fd, buf, sizeof(buf), 0) != sizeof(buf))
				wl_die("pread %s", path);
		if (half)
			break;
		child = fork();
		if (child < 0)
			wl_die("fork");
		if (!child) {
			sleep_ms(slow_ms);
			_exit(write(pipefd[1], "x", 1) != 1);
		}
		r = read(pipefd[0], buf, 1);
		wl_emit("slow\t%ld\t%llu\n", (long)r, (unsigned long long)mono_ns());
		waitpid(child, NULL, 0);
	}
	close(fd);
	return 0;
}

static int run_abort(const char *dir)
{
	char path[PATH_MAX], buf[4096];
	int fd;
	ssize_t n;

	fd = create(dir, "last.dat", O_WRONLY, path);
	wl_io(path, "open", "openat", fd);
	memset(buf, 'a', sizeof(buf));
	n = write(fd, buf, sizeof(buf));
	wl_io(path, "write", "write", n);
	fsync(fd);
	wl_io(path, "fsync", "fsync", 0);
	abort();
}

static int run_files(const char *dir, int n)
{
	char path[PATH_MAX], pad[151];
	int fd;

	memset(pad, 'n', sizeof(pad) - 1);
	pad[sizeof(pad) - 1] = 0;
	for (int i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/f%06d-%s.dat", dir, i, pad);
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0 || write(fd, "x", 1) != 1)
			wl_die("write %s", path);
		close(fd);
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 2 ? argv[1] : "";

	if (!strcmp(mode, "steps") && argc == 7)
		return run_steps(argv[2], atoi(argv[3]), atoi(argv[4]), atol(argv[5]),
				 atol(argv[6]));
	if (!strcmp(mode, "hang") && argc == 7)
		return run_hang(argv[2], atoi(argv[3]), atol(argv[4]), atol(argv[5]), argv[6]);
	if (!strcmp(mode, "slowio") && argc == 5)
		return run_slowio(argv[2], atoi(argv[3]), atol(argv[4]));
	if (!strcmp(mode, "abort") && argc == 3)
		return run_abort(argv[2]);
	if (!strcmp(mode, "files") && argc == 4)
		return run_files(argv[2], atoi(argv[3]));
	fprintf(stderr, "usage: flight steps DIR NSTEPS SLOW STEP_MS STALL_MS | "
			"hang DIR NSTEPS STEP_MS HANG_MS | slowio DIR N SLOW_MS | abort DIR | "
			"files DIR N\n");
	return 2;
}
