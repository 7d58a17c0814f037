/* Workloads that push the tracer: event floods, churning trees, many
 * processes at once, pid reuse.
 *
 *   stress flood NTHREADS   NTHREADS threads lseek() as fast as they can
 *                           until SIGUSR1 (or 60 s); ready file first;
 *                           records "flood PID CALLS" at the end
 *   stress churn DIR NFD    holds DIR/pre.dat (4 MiB) open and NFD more fds,
 *                           forks a child every 5 ms that lives 20 ms (so
 *                           holds them too), with a heartbeat; on SIGUSR1
 *                           stops forking, preads 1 MiB of pre.dat through
 *                           the fd opened before (io records), exits 0
 *   stress many DIR N       N children, all alive at once, each writes
 *                           i+1 bytes to DIR/c<i>.dat (io records); they
 *                           exit when all have written
 *   stress reuse DIR        a child writes DIR/a.dat (111 bytes) and exits;
 *                           a second child, made with clone3 to have the
 *                           same pid, writes DIR/b.dat (222 bytes); records
 *                           "reuse PID"
 *   stress readfile PATH    reads PATH (io records); for setuid copies
 *   stress execafter DIR    a child writes DIR/pre.dat (io records), then
 *                           execs cat; records "execafter CHILD"
 *   stress spawn N          N short-lived children, one after another,
 *                           each opening /dev/null and writing a byte
 */
#include <linux/sched.h>
#include <pthread.h>
#include <sys/wait.h>
#include "workload.h"

#define R(x) ({ long r_ = (long)(x); r_ < 0 ? -(long)errno : r_; })

static volatile sig_atomic_t stop;

static void *flood_thread(void *arg)
{
	long fd = (long)arg, n = 0;

	while (!stop) {
		for (int i = 0; i < 1024; i++)
			if (lseek(fd, i, SEEK_SET) < 0)
				wl_die("lseek");
		n += 1024;
	}
	return (void *)n;
}

static void on_go(int sig)
{
	(void)sig;
	stop = 1;
}

static int flood(int nthreads)
{
	struct sigaction sa = { .sa_handler = on_go };
	pthread_t t[64];
	long calls = 0, fd = wl_ok(open("/dev/zero", O_RDONLY), "open");
	char txt[32];

	if (nthreads < 1 || nthreads > 64)
		return 2;
	sigaction(SIGUSR1, &sa, NULL);
	alarm(60);
	for (int i = 0; i < nthreads; i++)
		if (pthread_create(&t[i], NULL, flood_thread, (void *)fd))
			wl_die("pthread_create");
	snprintf(txt, sizeof(txt), "%d\n", wl_pid());
	wl_ctl_file("ready", txt);
	for (int i = 0; i < nthreads; i++) {
		void *n;

		pthread_join(t[i], &n);
		calls += (long)n;
	}
	wl_emit("flood\t%d\t%ld\n", wl_pid(), calls);
	return 0;
}

static int churn(const char *dir, int nfd)
{
	char *p = wl_path(dir, "pre.dat"), *buf = wl_buf(1 << 20), hb[PATH_MAX];
	struct timespec ts = { 0, 5 * 1000000L };
	long fd = wl_ok(R(open(p, O_CREAT | O_RDWR | O_TRUNC, 0644)), "open");
	sigset_t set;
	char txt[32];

	for (int i = 0; i < 4; i++)
		if (write(fd, buf, 1 << 20) != 1 << 20)
			wl_die("write");
	for (int i = 0; i < nfd; i++)
		wl_ok(open("/dev/null", O_RDONLY), "open /dev/null");
	wl_block_go(&set);
	snprintf(hb, sizeof(hb), "%s/heartbeat", wl_ctl());
	snprintf(txt, sizeof(txt), "%d\n", wl_pid());
	wl_ctl_file("ready", txt);
	for (long i = 0; i < 60 * 200; i++) {
		pid_t c = fork();

		if (c < 0)
			wl_die("fork");
		if (c == 0) {
			wl_msleep(20);
			_exit(0);
		}
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		if (i % 4 == 0) {
			int h = open(hb, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);

			if (h >= 0 && pwrite(h, "h", 1, 0) == 1)
				close(h);
		}
		if (sigtimedwait(&set, NULL, &ts) == SIGUSR1)
			break;
	}
	while (wait(NULL) > 0)
		;
	for (int i = 0; i < 256; i++)
		wl_io(p, "pread", "pread64", R(pread(fd, buf, 4096, i * 4096L)));
	wl_io(p, "close", "close", R(close(fd)));
	return 0;
}

static int many(const char *dir, int n)
{
	int hold[2], done[2];
	char *buf = wl_buf(n + 1), c;

	if (pipe(hold) || pipe(done))
		wl_die("pipe");
	for (int i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid < 0)
			wl_die("fork %d", i);
		if (pid == 0) {
			char name[32], *p;
			long fd;

			close(hold[1]);
			snprintf(name, sizeof(name), "c%d.dat", i);
			p = wl_path(dir, name);
			fd = wl_ok(R(open(p, O_CREAT | O_WRONLY | O_TRUNC, 0644)), "open");
			wl_io(p, "open", "openat", fd);
			wl_io(p, "write", "write", R(write(fd, buf, i + 1)));
			wl_io(p, "close", "close", R(close(fd)));
			if (write(done[1], "d", 1) != 1 || read(hold[0], &c, 1) < 0)
				wl_die("pipe");
			_exit(0);
		}
	}
	close(hold[0]);
	close(done[1]);
	for (int i = 0; i < n; i++)
		if (read(done[0], &c, 1) != 1)
			wl_die("children");
	close(hold[1]);
	while (wait(NULL) > 0)
		;
	return 0;
}

static void write_file(const char *dir, const char *name, int bytes)
{
	char *p = wl_path(dir, name), *buf = wl_buf(bytes);
	long fd = wl_ok(R(open(p, O_CREAT | O_WRONLY | O_TRUNC, 0644)), "open");

	wl_io(p, "open", "openat", fd);
	wl_io(p, "write", "write", R(write(fd, buf, bytes)));
	wl_io(p, "close", "close", R(close(fd)));
}

/* fork(), with the child given the pid `want` (0: any). */
static pid_t fork_as(pid_t want)
{
	struct clone_args a = { .exit_signal = SIGCHLD };

	if (!want)
		return fork();
	a.set_tid = (unsigned long)&want;
	a.set_tid_size = 1;
	return syscall(SYS_clone3, &a, sizeof(a));
}

static int reuse(const char *dir)
{
	pid_t first = 0, pid;

	for (int round = 0; round < 2; round++) {
		pid = fork_as(first);
		if (pid < 0)
			wl_die("clone3 with pid %d", first);
		if (pid == 0) {
			write_file(dir, round ? "b.dat" : "a.dat", round ? 222 : 111);
			_exit(0);
		}
		if (waitpid(pid, NULL, 0) != pid)
			wl_die("waitpid");
		first = pid;
	}
	wl_emit("reuse\t%d\n", first);
	return 0;
}

static int readfile(const char *p)
{
	char buf[4096];
	long fd = wl_ok(R(open(p, O_RDONLY)), "open");

	wl_io(p, "open", "openat", fd);
	wl_io(p, "read", "read", R(read(fd, buf, sizeof(buf))));
	wl_io(p, "close", "close", R(close(fd)));
	return 0;
}

static int execafter(const char *dir)
{
	pid_t pid = fork();
	int null;

	if (pid < 0)
		wl_die("fork");
	if (pid == 0) {
		write_file(dir, "pre.dat", 10);
		null = open("/dev/null", O_WRONLY);
		if (null < 0 || dup2(null, 1) < 0)
			wl_die("/dev/null");
		execl("/bin/cat", "cat", "/etc/hostname", (char *)NULL);
		wl_die("exec cat");
	}
	if (waitpid(pid, NULL, 0) != pid)
		wl_die("waitpid");
	wl_emit("execafter\t%d\n", pid);
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	if (!strcmp(mode, "flood") && argc == 3)
		return flood(atoi(argv[2]));
	if (!strcmp(mode, "churn") && argc == 4)
		return churn(argv[2], atoi(argv[3]));
	if (!strcmp(mode, "many") && argc == 4)
		return many(argv[2], atoi(argv[3]));
	if (!strcmp(mode, "reuse") && argc == 3)
		return reuse(argv[2]);
	if (!strcmp(mode, "spawn") && argc == 3) {
		for (long i = atol(argv[2]); i > 0; i--) {
			pid_t c = fork();

			if (c == 0) {
				int fd = open("/dev/null", O_WRONLY);

				_exit(fd < 0 || write(fd, "x", 1) != 1);
			}
			if (c < 0 || waitpid(c, NULL, 0) != c)
				wl_die("fork");
		}
		return 0;
	}
	if (!strcmp(mode, "execafter") && argc == 3)
		return execafter(argv[2]);
	if (!strcmp(mode, "readfile") && argc == 3)
		return readfile(argv[2]);
	fprintf(stderr, "stress: bad arguments\n");
	return 2;
}
