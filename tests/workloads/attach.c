/* Workloads that the tracer attaches to with -p.  Each one sets up, then
 * calls wl_wait_go(): $WL_CTL/ready holds its pid, a heartbeat runs until
 * SIGUSR1 (the test sends it once the heartbeat shows in the trace).
 *
 *   attach attach DIR   Before attach: opens files (one dup'ed to fd 100),
 *                       a pipe, starts a thread and a child that has a child
 *                       of its own; all wait.  After attach: I/O on the
 *                       pre-existing fds in every one of them, plus a new
 *                       thread and a new child.  Records only what happens
 *                       after SIGUSR1.
 *   attach loss DIR N   After attach: N one-byte reads, as fast as possible
 *                       (run with a tiny ring buffer).  Records "count read N".
 */
#include <pthread.h>
#include <sys/wait.h>
#include "workload.h"

#define R(x) ({ long r_ = (long)(x); r_ < 0 ? -(long)errno : r_; })

static char *buf, rbuf[65536];
static const char *D;

static long xopen(const char *path, int flags)
{
	return wl_ok(R(open(path, flags, 0644)), path);
}

static pthread_barrier_t bar;
static char *p_thread, *p_post_thread;
static long fd_thread;
static pid_t t1_tid, t2_tid;

/* started before attach; writes after it, on an fd opened before it */
static void *pre_thread(void *arg)
{
	(void)arg;
	t1_tid = wl_tid();
	pthread_barrier_wait(&bar);
	wl_io(p_thread, "write", "write", R(write(fd_thread, buf, 3001)));
	return NULL;
}

static void *post_thread(void *arg)
{
	long fd;

	(void)arg;
	t2_tid = wl_tid();
	fd = wl_ok(R(open(p_post_thread, O_CREAT | O_WRONLY | O_TRUNC, 0644)),
		   "post_thread");
	wl_io(p_post_thread, "open", "openat", fd);
	wl_io(p_post_thread, "write", "write", R(write(fd, buf, 3004)));
	wl_io(p_post_thread, "close", "close", R(close(fd)));
	return NULL;
}

static void reap(pid_t pid)
{
	int st;

	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		wl_die("waitpid %d", pid);
	wl_emit("exit\t%d\t%d\n", pid, st); /* the raw wait(2) status */
}

static void attach(void)
{
	char *p_read = wl_path(D, "pre_read.dat");
	char *p_write = wl_path(D, "pre_write.dat");
	char *p_child = wl_path(D, "pre_child.dat");
	char *p_gchild = wl_path(D, "pre_grandchild.dat");
	char *p_post_child = wl_path(D, "post_child.dat");
	char *pipe_n;
	long fd_r, fd_w, fd_c, fd_g, fd_pc, fd;
	int p[2];
	pthread_t t1, t2;
	pid_t c1, c2, me, mytid;
	sigset_t go;

	p_thread = wl_path(D, "pre_thread.dat");
	p_post_thread = wl_path(D, "post_thread.dat");

	/* --- before attach: nothing here is recorded --- */
	fd = xopen(p_read, O_CREAT | O_WRONLY | O_TRUNC);
	if (write(fd, buf, 4096) != 4096)
		wl_die("write");
	close(fd);
	fd_r = xopen(p_read, O_RDONLY);
	fd_w = xopen(p_write, O_CREAT | O_WRONLY | O_TRUNC);
	if (dup2(fd_w, 100) != 100)
		wl_die("dup2");
	fd_thread = xopen(p_thread, O_CREAT | O_WRONLY | O_TRUNC);
	fd_c = xopen(p_child, O_CREAT | O_WRONLY | O_TRUNC);
	fd_g = xopen(p_gchild, O_CREAT | O_WRONLY | O_TRUNC);
	fd_pc = xopen(p_post_child, O_CREAT | O_WRONLY | O_TRUNC);
	if (pipe(p) < 0)
		wl_die("pipe");
	pipe_n = wl_fdpath(p[0]);

	wl_block_go(&go);
	pthread_barrier_init(&bar, NULL, 2);
	if (pthread_create(&t1, NULL, pre_thread, NULL))
		wl_die("pthread_create");

	c1 = fork();
	if (c1 < 0)
		wl_die("fork");
	if (c1 == 0) {
		/* existing child, with an existing child of its own; both
		 * wait for SIGUSR2 (not in a traced syscall, whose entry the
		 * tracer could not have seen) */
		sigset_t set;
		pid_t g;

		sigemptyset(&set);
		sigaddset(&set, SIGUSR2);
		sigprocmask(SIG_BLOCK, &set, NULL);
		g = fork();
		if (g < 0)
			wl_die("fork");
		wl_emit("task\t%d\t%d\n", wl_pid(), wl_tid());
		/* bounded: never outlive a test whose parent died */
		struct timespec limit = { 120, 0 };

		if (sigtimedwait(&set, NULL, &limit) != SIGUSR2)
			_exit(99);
		if (g == 0) {
			wl_io(p_gchild, "write", "write",
			      R(write(fd_g, buf, 3003)));
			_exit(22);
		}
		kill(g, SIGUSR2);
		wl_io(p_child, "write", "write", R(write(fd_c, buf, 3002)));
		reap(g);
		_exit(21);
	}

	if (wl_wait_go(60))
		return;
	/* --- after attach: every file syscall is recorded --- */
	me = wl_pid();
	mytid = wl_tid();
	wl_io(p_read, "read", "read", R(read(fd_r, rbuf, 1000)));
	wl_io(p_read, "read", "read", R(read(fd_r, rbuf, 1000)));
	wl_io(p_read, "pread", "pread64", R(pread(fd_r, rbuf, 4000, 1000)));
	wl_io(p_write, "write", "write", R(write(fd_w, buf, 500)));
	wl_io(p_write, "write", "write", R(write(100, buf, 700)));
	wl_io(p_write, "pwrite", "pwrite64", R(pwrite(fd_w, buf, 10, 0)));
	wl_io(pipe_n, "write", "write", R(write(p[1], buf, 64)));
	wl_io(pipe_n, "read", "read", R(read(p[0], rbuf, 64)));
	kill(c1, SIGUSR2);
	pthread_barrier_wait(&bar);

	if (pthread_create(&t2, NULL, post_thread, NULL))
		wl_die("pthread_create");
	c2 = fork();
	if (c2 < 0)
		wl_die("fork");
	if (c2 == 0) {
		wl_io(p_post_child, "write", "write", R(write(fd_pc, buf, 3005)));
		_exit(23);
	}
	wl_emit("spawn\t%d\t%d\tclone\t%d\n", me, mytid, c2);
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	wl_emit("task\t%d\t%d\n", me, t1_tid);
	wl_emit("task\t%d\t%d\n", me, t2_tid);
	wl_emit("spawn\t%d\t%d\tclone\t%d\n", me, mytid, t2_tid);
	reap(c1);
	reap(c2);
	wl_io(p_read, "close", "close", R(close(fd_r)));
	wl_io(p_write, "close", "close", R(close(fd_w)));
	wl_io(p_write, "close", "close", R(close(100)));
	wl_io(p_thread, "close", "close", R(close(fd_thread)));
	wl_io(pipe_n, "close", "close", R(close(p[0])));
}

static void loss(long n)
{
	char *path = wl_path(D, "tiny.dat");
	long fd = xopen(path, O_CREAT | O_RDWR | O_TRUNC), i, r;
	char c;

	if (ftruncate(fd, n) < 0)
		wl_die("ftruncate");
	if (wl_wait_go(60))
		return;
	for (i = 0; i < n; i++) {
		r = read(fd, &c, 1);
		if (r != 1)
			wl_die("read %ld returned %ld", i, r);
	}
	wl_emit("count\tread\t%ld\n", n);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: attach attach|loss DIR [N]\n");
		return 2;
	}
	D = argv[2];
	buf = wl_buf(65536);
	if (strcmp(argv[1], "attach") == 0)
		attach();
	else if (strcmp(argv[1], "loss") == 0 && argc == 4)
		loss(atol(argv[3]));
	else {
		fprintf(stderr, "attach: bad arguments\n");
		return 2;
	}
	return 0;
}
