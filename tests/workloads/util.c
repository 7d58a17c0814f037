/* Small helpers for the CLI tests.
 *
 *   util exit N          exit with status N
 *   util kill SIG        kill itself with signal SIG
 *   util wait            wl_wait_go(): ready file, heartbeat until SIGUSR1
 *                        (exits 0) or 600 s (the tests end it; a lab guest
 *                        beside a host suite took 130 s for one test)
 *   util marker DIR      write 4321 bytes to DIR/marker.dat, wait 2.5 s,
 *                        create $WL_CTL/done, then sleep (up to 60 s) until
 *                        killed; io records
 *   util whoami DIR      record "id UID GID EUID EGID"; create DIR/owned.dat
 *   util spam DIR N [SLOW_MS]
 *                        N one-byte pwrites to DIR/spam.dat (after SLOW_MS
 *                        of 100 pwrites per 100 ms)
 *   util zombie          fork a child that exits at once and is never
 *                        reaped: $WL_CTL/zombie holds its pid; then as wait
 *   util leaderexit DIR [wait]
 *                        the main thread exits (pthread_exit) at once; a
 *                        second thread (after wl_wait_go() with "wait")
 *                        writes DIR/leader.dat five times, 50 ms apart;
 *                        io records
 *   util write NAME DIR [wait]
 *                        rename itself NAME (prctl; "-": keep its name),
 *                        then (after wl_wait_go() with "wait") write 1234
 *                        bytes to DIR/write-PID.dat; io records
 *   util noise FILE      heavy I/O on FILE, forever: $WL_CTL/noise_ready
 *                        (holding the pid) after the first 100 writes; on
 *                        SIGTERM records "noise PID ITERATIONS" and exits 0
 *   util gated CMD...    ready ($WL_CTL/ready holds the pid; no heartbeat),
 *                        on SIGUSR1 runs CMD and waits for it, then
 *                        $WL_CTL/done, and exits with CMD's status on
 *                        SIGUSR1 again (tests/lib/common.bash's
 *                        stopped_while)
 */
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "workload.h"

#define R(x) ({ long r_ = (long)(x); r_ < 0 ? -(long)errno : r_; })

static volatile sig_atomic_t stop;

struct leader_job {
	const char *dir;
	int wait;
};

static void *leader_worker(void *arg)
{
	struct leader_job *j = arg;
	char *p = wl_path(j->dir, "leader.dat");
	long fd;

	if (j->wait && wl_wait_go(60))
		exit(1);
	fd = wl_ok(R(open(p, O_CREAT | O_WRONLY | O_TRUNC, 0644)), "open leader");
	wl_io(p, "open", "openat", fd);
	for (int i = 0; i < 5; i++) {
		wl_msleep(50);
		wl_io(p, "write", "write", R(write(fd, "x", 1)));
	}
	wl_io(p, "close", "close", R(close(fd)));
	return NULL;
}

/* util gated: CMD between two SIGUSR1s */
static int gated(char **cmd)
{
	struct timespec limit = { 60, 0 };
	sigset_t set;
	char txt[32];
	int status;
	pid_t child;

	wl_block_go(&set);
	snprintf(txt, sizeof(txt), "%d\n", wl_pid());
	wl_ctl_file("ready", txt);
	if (sigtimedwait(&set, NULL, &limit) != SIGUSR1)
		wl_die("no SIGUSR1 within 60 s");
	child = fork();
	if (child < 0)
		wl_die("fork");
	if (!child) {
		pthread_sigmask(SIG_UNBLOCK, &set, NULL);
		execvp(cmd[0], cmd);
		wl_die("exec %s", cmd[0]);
	}
	if (waitpid(child, &status, 0) < 0)
		wl_die("waitpid");
	wl_ctl_file("done", txt);
	if (sigtimedwait(&set, NULL, &limit) != SIGUSR1)
		wl_die("no second SIGUSR1 within 60 s");
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	char *buf = wl_buf(65536);

	if (strcmp(mode, "exit") == 0 && argc == 3)
		return atoi(argv[2]);
	if (strcmp(mode, "kill") == 0 && argc == 3) {
		signal(atoi(argv[2]), SIG_DFL);
		kill(wl_pid(), atoi(argv[2]));
		return 98;
	}
	if (strcmp(mode, "wait") == 0 && argc == 2)
		return wl_wait_go(600); /* the tests end it: a safety net only */
	if (strcmp(mode, "gated") == 0 && argc > 2)
		return gated(argv + 2);
	if (strcmp(mode, "keep") == 0 && argc == 4) {
		/* N preads, each with its truth line, are the last calls
		 * before the wait for SIGUSR1: with N <= 3, under a batch,
		 * they are still kept by the thread when -d stops the tracer */
		char *p = wl_path(argv[2], "kept.dat"), txt[32];
		long fd = wl_ok(R(open(p, O_CREAT | O_RDWR | O_TRUNC, 0644)), "open kept");
		struct timespec limit = { 60, 0 };
		sigset_t set;

		wl_io(p, "open", "openat", fd);
		wl_io(p, "write", "write", R(write(fd, buf, 4096)));
		wl_block_go(&set);
		snprintf(txt, sizeof(txt), "%d\n", wl_pid());
		wl_ctl_file("ready", txt);
		for (int i = 0; i < atoi(argv[3]); i++)
			wl_io(p, "pread", "pread64", R(pread(fd, buf, 100 + i, i)));
		if (sigtimedwait(&set, NULL, &limit) != SIGUSR1)
			wl_die("no SIGUSR1 within 60 s");
		wl_io(p, "close", "close", R(close(fd)));
		return 0;
	}
	if (strcmp(mode, "marker") == 0 && argc == 3) {
		char *p = wl_path(argv[2], "marker.dat"), txt[32];
		long fd = wl_ok(R(open(p, O_CREAT | O_WRONLY | O_TRUNC, 0644)),
				"open marker");

		wl_io(p, "open", "openat", fd);
		wl_io(p, "write", "write", R(write(fd, buf, 4321)));
		wl_io(p, "close", "close", R(close(fd)));
		wl_msleep(2500);
		snprintf(txt, sizeof(txt), "%d\n", wl_pid());
		wl_ctl_file("done", txt);
		for (int i = 0; i < 600; i++)
			wl_msleep(100);
		return 0;
	}
	if (strcmp(mode, "whoami") == 0 && argc == 3) {
		char *p = wl_path(argv[2], "owned.dat");
		long fd;

		wl_emit("id\t%d\t%d\t%d\t%d\n", (int)getuid(), (int)getgid(),
			(int)geteuid(), (int)getegid());
		fd = wl_ok(R(open(p, O_CREAT | O_WRONLY | O_TRUNC, 0644)),
			   "open owned");
		wl_io(p, "open", "openat", fd);
		wl_io(p, "write", "write", R(write(fd, buf, 99)));
		wl_io(p, "close", "close", R(close(fd)));
		return 0;
	}
	if (strcmp(mode, "spam") == 0 && (argc == 4 || argc == 5)) {
		char *p = wl_path(argv[2], "spam.dat");
		long n = atol(argv[3]), slow = argc == 5 ? atol(argv[4]) : 0, fd;

		fd = wl_ok(R(open(p, O_CREAT | O_WRONLY | O_TRUNC, 0644)),
			   "open spam");
		/* a slow start: 100 writes every 100 ms for SLOW_MS */
		for (long t = 0; t < slow; t += 100) {
			for (int i = 0; i < 100; i++)
				if (pwrite(fd, buf, 1, i) != 1)
					wl_die("pwrite");
			wl_msleep(100);
		}
		for (long i = 0; i < n; i++)
			if (pwrite(fd, buf + i % 26, 1, (i * 7919) % 65536) != 1)
				wl_die("pwrite");
		close(fd);
		return 0;
	}
	if (strcmp(mode, "zombie") == 0 && argc == 2) {
		char txt[32];
		pid_t child = fork();

		if (child < 0)
			wl_die("fork");
		if (child == 0)
			_exit(0);
		snprintf(txt, sizeof(txt), "%d\n", child);
		wl_ctl_file("zombie", txt);
		return wl_wait_go(600); /* the tests end it: a safety net only */
	}
	if (strcmp(mode, "leaderexit") == 0 && (argc == 3 || argc == 4)) {
		static struct leader_job job;
		sigset_t go;
		pthread_t t;

		job.dir = argv[2];
		job.wait = argc == 4;
		wl_block_go(&go); /* the worker waits for it, not us */
		if (pthread_create(&t, NULL, leader_worker, &job))
			wl_die("pthread_create");
		pthread_exit(NULL);
	}
	if (strcmp(mode, "write") == 0 && (argc == 4 || argc == 5)) {
		char name[64];
		char *p;
		long fd;

		if (strcmp(argv[2], "-") && prctl(PR_SET_NAME, argv[2], 0, 0, 0))
			wl_die("prctl");
		if (argc == 5 && wl_wait_go(60))
			return 1;
		snprintf(name, sizeof(name), "write-%d.dat", wl_pid());
		p = wl_path(argv[3], name);
		fd = wl_ok(R(open(p, O_CREAT | O_WRONLY | O_TRUNC, 0644)), "open");
		wl_io(p, "open", "openat", fd);
		wl_io(p, "write", "write", R(write(fd, buf, 1234)));
		wl_io(p, "close", "close", R(close(fd)));
		return 0;
	}
	if (strcmp(mode, "noise") == 0 && argc == 3) {
		struct sigaction sa = { .sa_handler = on_term };
		long fd, i;
		char txt[32];
		sigaction(SIGTERM, &sa, NULL);
		fd = wl_ok(R(open(argv[2], O_CREAT | O_RDWR | O_TRUNC, 0644)),
			   "open noise");
		struct timespec t0, t1;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (i = 0; !stop; i++) {
			if (i % 1024 == 0) { /* never outlive a dead test */
				clock_gettime(CLOCK_MONOTONIC, &t1);
				if (t1.tv_sec - t0.tv_sec > 120)
					break;
			}
			if (pwrite(fd, buf, 4096, (i % 256) * 4096) != 4096)
				wl_die("pwrite");
			if (pread(fd, buf, 512, (i % 256) * 4096) < 0)
				wl_die("pread");
			if (i == 100) {
				snprintf(txt, sizeof(txt), "%d\n", wl_pid());
				wl_ctl_file("noise_ready", txt);
			}
		}
		wl_emit("noise\t%d\t%ld\n", wl_pid(), i);
		return 0;
	}
	fprintf(stderr, "util: bad arguments\n");
	return 2;
}
