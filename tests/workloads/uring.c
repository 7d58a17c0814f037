// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * uring DIR: a file opened, written, synced, read, stat'd and closed
 * through an io_uring (liburing), one request at a time: every request's
 * result is ground truth. A registered file is read by its index, and
 * plain syscalls on the ring's fds show that the tracer's fd table
 * followed the ring's opens and closes. Then requests whose fd field is
 * not a file ("nofile\tOPCODE\tRES").
 *
 * uring slow DIR MS: N 4 KiB reads of DIR/u through the ring, then one of
 * a pipe that a child fills after MS ("slow\tRES"), then N more: an
 * io_uring request whose completion waits (N: 100).
 */
#include <sys/wait.h>
#include <liburing.h>
#include "workload.h"

static struct io_uring ring;

static void submit_one(void)
{
	if (io_uring_submit(&ring) != 1)
		wl_die("io_uring_submit");
}

/* The next completion's result. */
static int wait_one(void)
{
	struct io_uring_cqe *cqe;
	int res;

	if (io_uring_wait_cqe(&ring, &cqe))
		wl_die("io_uring_wait_cqe");
	res = cqe->res;
	io_uring_cqe_seen(&ring, cqe);
	return res;
}

/* Submits the prepared request and returns its result. */
static int complete(void)
{
	submit_one();
	return wait_one();
}

static struct io_uring_sqe *sqe(void)
{
	struct io_uring_sqe *s = io_uring_get_sqe(&ring);

	if (!s)
		wl_die("io_uring_get_sqe");
	return s;
}

/* 100 reads of fd through the ring, each of 4096 bytes at 0. */
static void fast_reads(const char *path, int fd, char *buf)
{
	for (int i = 0; i < 100; i++) {
		io_uring_prep_read(sqe(), fd, buf, 4096, 0);
		wl_io(path, "io_uring_read", "-", complete());
	}
}

static int run_slow(const char *dir, long ms)
{
	static char buf[4096];
	char *path = wl_path(dir, "u");
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644), pipefd[2], res;
	struct timespec t = { ms / 1000, ms % 1000 * 1000000L };
	pid_t child;

	memset(buf, 'u', sizeof(buf));
	if (fd < 0 || pwrite(fd, buf, sizeof(buf), 0) != sizeof(buf) || pipe(pipefd))
		wl_die("slow: %s", path);
	wl_io(path, "open", "openat", fd);
	wl_io(path, "pwrite", "pwrite64", sizeof(buf));
	if (io_uring_queue_init(8, &ring, 0))
		wl_die("io_uring_queue_init");
	fast_reads(path, fd, buf);
	/* in flight before the child's wait begins: it takes MS at least */
	io_uring_prep_read(sqe(), pipefd[0], buf, 1, 0);
	submit_one();
	child = fork();
	if (child < 0)
		wl_die("fork");
	if (!child) {
		while (nanosleep(&t, &t) && errno == EINTR)
			;
		_exit(write(pipefd[1], "x", 1) != 1);
	}
	res = wait_one();
	wl_emit("slow\t%d\n", res);
	waitpid(child, NULL, 0);
	fast_reads(path, fd, buf);
	io_uring_queue_exit(&ring);
	return 0;
}

int main(int argc, char **argv)
{
	static char buf[3 * 4096];
	struct io_uring_sqe *s;
	char *path, *other;
	struct statx stx;
	int fd, res;

	if (argc == 4 && !strcmp(argv[1], "slow"))
		return run_slow(argv[2], atol(argv[3]));
	if (argc != 2)
		return 2;
	path = wl_path(argv[1], "u");
	other = wl_path(argv[1], "v");
	if (io_uring_queue_init(8, &ring, 0))
		wl_die("io_uring_queue_init");
	memset(buf, 'u', sizeof(buf));

	io_uring_prep_openat(sqe(), AT_FDCWD, path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	fd = complete();
	wl_io(path, "io_uring_openat", "-", fd);
	for (int i = 0; i < 3; i++) {
		io_uring_prep_write(sqe(), fd, buf, i < 2 ? 4096 : 100, i * 4096);
		wl_io(path, "io_uring_write", "-", complete());
	}
	io_uring_prep_fsync(sqe(), fd, 0);
	wl_io(path, "io_uring_fsync", "-", complete());
	io_uring_prep_read(sqe(), fd, buf, sizeof(buf), 0);
	wl_io(path, "io_uring_read", "-", complete());
	io_uring_prep_statx(sqe(), AT_FDCWD, path, 0, STATX_SIZE, &stx);
	wl_io(path, "io_uring_statx", "-", complete());
	/* by its index in the ring's table: the kernel names the file */
	if (io_uring_register_files(&ring, &fd, 1))
		wl_die("io_uring_register_files");
	s = sqe();
	io_uring_prep_read(s, 0, buf, 5000, 100);
	s->flags |= IOSQE_FIXED_FILE;
	res = complete();
	wl_io(path, "io_uring_read", "-", res);
	if (io_uring_unregister_files(&ring))
		wl_die("io_uring_unregister_files");
	/* a syscall on the ring's fd: named from the ring's open */
	wl_io(path, "pread", "pread64", wl_ok(pread(fd, buf, 10, 0), "pread"));
	io_uring_prep_close(sqe(), fd);
	wl_io(path, "io_uring_close", "-", complete());
	/* the number is free again: a syscall open takes it */
	res = wl_ok(open(other, O_RDWR | O_CREAT, 0644), "open");
	wl_io(other, "open", "openat", res);
	io_uring_prep_write(sqe(), res, buf, 10, 0);
	wl_io(other, "io_uring_write", "-", complete());
	wl_io(other, "close", "close", wl_ok(close(res), "close"));
	/* requests whose fd field is no file, set to 0 as in a zeroed SQE:
	 * a cancel of nothing, a timeout, a no-op */
	s = sqe();
	io_uring_prep_cancel64(s, 12345, 0);
	s->fd = 0;
	wl_emit("nofile\t%d\t%d\n", IORING_OP_ASYNC_CANCEL, complete());
	s = sqe();
	io_uring_prep_timeout(s, &(struct __kernel_timespec){ 0, 1000 }, 0, 0);
	s->fd = 0;
	wl_emit("nofile\t%d\t%d\n", IORING_OP_TIMEOUT, complete());
	s = sqe();
	io_uring_prep_nop(s);
	s->fd = 0;
	wl_emit("nofile\t%d\t%d\n", IORING_OP_NOP, complete());
	io_uring_queue_exit(&ring);
	return 0;
}
