// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Programs that use the threads' region rings (include/dftrace/usdt.h)
 * as a careless or hostile program would. Each prints, as annot.py check
 * takes them, the regions and I/O the trace must show.
 *
 *   rings DIR clonevm N: N parent.work regions with no syscall, while a
 *       child made by clone(CLONE_VM), a process sharing the parent's
 *       memory (as vfork and posix_spawn make), writes DIR/child.dat one
 *       byte a raw syscall, in no region of its own.
 *   rings DIR signals N: N main.loop regions, while a 50 us timer's
 *       handler makes a signal.handler region each time it runs: the
 *       handler often lands while its thread is writing the ring.
 *   rings DIR interrupted: what the signals run makes now and then, at
 *       will: a main.outer region's end is being written (the ring
 *       marked busy, its time taken) when a handler's signal.handler
 *       region goes through the probes, and the tracer reads the record
 *       (at a syscall) before the thread could take its time again.
 *   rings DIR times: besides real regions, records written straight into
 *       the ring with forged times: a pair 2^62 ns ahead (146 years), and,
 *       in a thread, a pair from before that thread began. The tracer
 *       must drop the 4 and say so; DIR/times.dat is written in each
 *       real region, so that the ring is read there.
 *   rings DIR stale: a child maps a page at STALE_ADDR without touching
 *       it and writes $WL_CTL/mapped; once $WL_CTL/go is there it writes
 *       one region to its ring named by that page, which the tracer can
 *       read only later, from user space, and exits. Its parent reaps it,
 *       writes its pid to $WL_CTL/reaped, and ends once $WL_CTL/done is
 *       there. (The test stops the tracer meanwhile and lets another
 *       process take the child's pid: rings DIR impostor PID.)
 *   rings DIR live N: ready for -p (wl_wait_go); once going, a thread
 *       makes N spin.work regions with no syscall and then spins on,
 *       still making none, while the main thread writes $WL_CTL/spun; at
 *       the next SIGUSR1 it prints its regions and ends. The last
 *       regions are in the thread's ring only when tracing stops.
 *   rings DIR names N: N data regions, each named after a file of its
 *       own ("file0" ...): names computed at run time, each distinct.
 *   rings DIR impostor PID: an untraced process that takes pid PID
 *       (ns_last_pid) and holds "SECRET_OF_ANOTHER" at STALE_ADDR; it
 *       writes its pid to $WL_CTL/impostor and waits to be killed.
 */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <dftrace/usdt.h>
#include "workload.h"

static void region_line(pid_t pid, const char *cat, const char *name)
{
	printf("{\"kind\":\"region\",\"pid\":%d,\"cat\":\"%s\",\"name\":\"%s\"}\n", pid, cat, name);
}

/* A little work that makes no syscall, so that the regions are the
 * ring's alone. */
static void spin(long n)
{
	for (volatile long i = 0; i < n; i++)
		;
}

/* ---- clonevm ---- */

static volatile int clone_stop;
static volatile long clone_writes;
static int clone_fd;

/* In the parent's memory with the parent's TLS: raw syscalls only. */
static int clone_child(void *arg)
{
	char c = 'x';

	(void)arg;
	while (!clone_stop)
		if (syscall(SYS_write, clone_fd, &c, 1) == 1)
			clone_writes = clone_writes + 1;
	syscall(SYS_exit, 0);
	return 0;
}

static int clone_vm(const char *dir, long n)
{
	const size_t stack_size = 256 << 10;
	char path[4096], *stack = malloc(stack_size);
	pid_t child;
	int status;

	snprintf(path, sizeof(path), "%s/child.dat", dir);
	clone_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (!stack || clone_fd < 0)
		wl_die("clonevm: %s", strerror(errno));
	/* the parent's ring is known to the tracer before the clone */
	DFT_USDT_REGION_BEGIN("parent", "work");
	DFT_USDT_REGION_END("parent", "work");
	child = clone(clone_child, stack + stack_size, CLONE_VM | SIGCHLD, NULL);
	if (child < 0)
		wl_die("clone: %s", strerror(errno));
	while (!clone_writes)
		;
	for (long i = 1; i < n; i++) {
		DFT_USDT_REGION_BEGIN("parent", "work");
		spin(20);
		DFT_USDT_REGION_END("parent", "work");
	}
	clone_stop = 1;
	if (waitpid(child, &status, 0) != child || !WIFEXITED(status))
		wl_die("clonevm: the child did not exit");
	for (long i = 0; i < n; i++)
		region_line(wl_pid(), "parent", "work");
	printf("{\"kind\":\"io\",\"pid\":%d,\"op\":\"write\",\"path\":\"%s\",\"cat\":null,"
	       "\"name\":null,\"epoch\":-1,\"step\":-1,\"bytes\":%ld}\n",
	       child, path, clone_writes);
	return 0;
}

/* ---- signals ---- */

static volatile sig_atomic_t handled;

static void on_alarm(int sig)
{
	(void)sig;
	DFT_USDT_REGION_BEGIN("signal", "handler");
	handled = handled + 1;
	DFT_USDT_REGION_END("signal", "handler");
}

static int signals(long n)
{
	struct itimerval every = { { 0, 50 }, { 0, 50 } }, off = { { 0, 0 }, { 0, 0 } };
	struct sigaction sa = { .sa_handler = on_alarm, .sa_flags = SA_RESTART };
	sigset_t alarm;

	sigemptyset(&sa.sa_mask);
	sigemptyset(&alarm);
	sigaddset(&alarm, SIGALRM);
	/* a tracer's test may have blocked it for us */
	if (sigaction(SIGALRM, &sa, NULL) || sigprocmask(SIG_UNBLOCK, &alarm, NULL) ||
	    setitimer(ITIMER_REAL, &every, NULL))
		wl_die("signals: %s", strerror(errno));
	for (long i = 0; i < n; i++) {
		DFT_USDT_REGION_BEGIN("main", "loop");
		spin(20);
		DFT_USDT_REGION_END("main", "loop");
	}
	if (setitimer(ITIMER_REAL, &off, NULL) || sigprocmask(SIG_BLOCK, &alarm, NULL))
		wl_die("signals: %s", strerror(errno));
	for (long i = 0; i < n; i++)
		region_line(wl_pid(), "main", "loop");
	for (long i = 0; i < handled; i++)
		region_line(wl_pid(), "signal", "handler");
	fprintf(stderr, "rings: %ld handler regions\n", (long)handled);
	return 0;
}

/* ---- a record interrupted ---- */

static int interrupted(void)
{
	struct dft_usdt_ring *r = &dftrace_usdt_ring_v1;
	struct dft_usdt_ring_rec *e;
	uint64_t sent;

	DFT_USDT_REGION_BEGIN("main", "outer");
	/* dft__ring_put, stopped where a signal would stop it */
	sent = r->sent;
	r->sent = sent | DFT__RING_BUSY;
	e = &r->rec[r->head & (DFT_USDT_RING_LEN - 1)];
	e->ts_end = dft__now_ns() << 1 | 1;
	e->cat = "main";
	e->name = "outer";
	e->count = 0;
	/* the handler: its region through the probes, the ring busy */
	DFT_USDT_REGION_BEGIN("signal", "handler");
	DFT_USDT_REGION_END("signal", "handler");
	r->head++;
	/* a syscall: the tracer reads the ring before the thread goes on */
	if (getppid() < 0)
		wl_die("getppid");
	r->sent = sent;
	region_line(wl_pid(), "main", "outer");
	region_line(wl_pid(), "signal", "handler");
	return 0;
}

/* ---- times ---- */

/* A record as the header writes one, with any time: the tracer reads it
 * at the thread's next syscall. */
static void forge(uint64_t ts, int end, const char *cat, const char *name)
{
	struct dft_usdt_ring *r = &dftrace_usdt_ring_v1;
	struct dft_usdt_ring_rec *e = &r->rec[r->head & (DFT_USDT_RING_LEN - 1)];

	e->ts_end = ts << 1 | (uint64_t)end;
	e->cat = cat;
	e->name = name;
	e->count = 0;
	r->head++;
}

static int times_fd;
static char times_path[4096];

static void real_io(const char *name)
{
	if (write(times_fd, "x", 1) != 1)
		wl_die("write: %s", strerror(errno));
	region_line(wl_pid(), "real", name);
	printf("{\"kind\":\"io\",\"pid\":%d,\"op\":\"write\",\"path\":\"%s\",\"cat\":\"real\","
	       "\"name\":\"%s\",\"epoch\":-1,\"step\":-1,\"bytes\":1}\n",
	       wl_pid(), times_path, name);
}

/* literal names: the ring's */
#define REAL_REGION(name)                                                      \
	do {                                                                   \
		DFT_USDT_REGION_BEGIN("real", name);                           \
		real_io(name);                                                 \
		DFT_USDT_REGION_END("real", name);                             \
	} while (0)

static uint64_t before_thread;

static void *times_thread(void *arg)
{
	(void)arg;
	REAL_REGION("thread");
	forge(before_thread, 0, "forged", "before_thread");
	forge(before_thread + 1, 1, "forged", "before_thread");
	REAL_REGION("thread_after");
	return NULL;
}

static int times(const char *dir)
{
	pthread_t th;

	snprintf(times_path, sizeof(times_path), "%s/times.dat", dir);
	times_fd = open(times_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (times_fd < 0)
		wl_die("open: %s", strerror(errno));
	REAL_REGION("before");
	forge((uint64_t)1 << 62, 0, "forged", "future");
	forge(((uint64_t)1 << 62) + 1000, 1, "forged", "future");
	REAL_REGION("after");
	before_thread = dft__now_ns();
	if (pthread_create(&th, NULL, times_thread, NULL) || pthread_join(th, NULL))
		wl_die("pthread: %s", strerror(errno));
	return 0;
}

/* ---- live ---- */

static volatile int spun;

static void *spinner(void *arg)
{
	long n = (long)arg;

	for (long i = 0; i < n; i++) {
		DFT_USDT_REGION_BEGIN("spin", "work");
		spin(20);
		DFT_USDT_REGION_END("spin", "work");
	}
	spun = 1;
	for (;;)
		spin(1000);
	return NULL;
}

static int live(long n)
{
	pthread_t th;
	sigset_t go;

	wl_wait_go(60);
	if (pthread_create(&th, NULL, spinner, (void *)n))
		wl_die("pthread: %s", strerror(errno));
	while (!spun)
		wl_msleep(5);
	wl_ctl_file("spun", "");
	wl_block_go(&go);
	while (sigwaitinfo(&go, NULL) != SIGUSR1)
		;
	for (long i = 0; i < n; i++)
		region_line(wl_pid(), "spin", "work");
	fflush(stdout);
	_exit(0);
}

/* ---- names ---- */

static int names(long n)
{
	char name[32];

	for (long i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "file%ld", i);
		DFT_USDT_REGION_BEGIN("data", name);
		DFT_USDT_REGION_END("data", name);
		region_line(wl_pid(), "data", name);
	}
	return 0;
}

/* ---- stale ---- */

#define STALE_ADDR ((void *)0x6d0000000000ull)
#define SECRET "SECRET_OF_ANOTHER"

static void wait_ctl(const char *name)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", wl_ctl(), name);
	for (int i = 0; i < 60 * 50 && access(path, F_OK); i++)
		wl_msleep(20);
	if (access(path, F_OK))
		wl_die("no %s", path);
}

static int stale(void)
{
	char txt[32];
	pid_t child = fork(), got;
	int status;

	if (child < 0)
		wl_die("fork: %s", strerror(errno));
	if (child == 0) {
		const char *s = mmap(STALE_ADDR, 4096, PROT_READ,
				     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);

		if (s != STALE_ADDR)
			wl_die("mmap: %s", strerror(errno));
		if (!DFT__ON(DFT_USDT_RING_PROBE))
			wl_die("no tracer took the ring");
		wl_ctl_file("mapped", "");
		wait_ctl("go");
		/* the thread's first record: the tracer reads it at once, and
		 * cannot read a name in a page never touched */
		dft__ring_put(0, s, s, 0);
		dft__ring_put(1, s, s, 0);
		_exit(0);
	}
	got = waitpid(child, &status, 0);
	if (got != child || !WIFEXITED(status) || WEXITSTATUS(status))
		wl_die("the child failed");
	snprintf(txt, sizeof(txt), "%d", child);
	wl_ctl_file("reaped", txt);
	wait_ctl("done");
	return 0;
}

/* ns_last_pid: the next process made takes the pid after it, if nobody
 * on the host forks first: tried again until it holds. */
static int impostor(pid_t want)
{
	char txt[32];

	for (int tries = 0; tries < 1000; tries++) {
		int fd = open("/proc/sys/kernel/ns_last_pid", O_WRONLY), ready[2];
		pid_t child;

		snprintf(txt, sizeof(txt), "%d", want - 1);
		if (fd < 0 || write(fd, txt, strlen(txt)) < 0)
			wl_die("ns_last_pid: %s", strerror(errno));
		close(fd);
		if (pipe(ready))
			wl_die("pipe: %s", strerror(errno));
		child = fork();
		if (child < 0)
			wl_die("fork: %s", strerror(errno));
		if (child == 0) {
			char *s;

			if (getpid() != want)
				_exit(1);
			s = mmap(STALE_ADDR, 4096, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
			if (s != STALE_ADDR)
				_exit(2);
			strcpy(s, SECRET);
			snprintf(txt, sizeof(txt), "%d", want);
			wl_ctl_file("impostor", txt);
			/* written: the parent may say so */
			if (write(ready[1], "", 1) != 1)
				_exit(3);
			for (;;)
				pause();
		}
		close(ready[1]);
		if (child == want) {
			char c;

			/* its file written before this returns (or it died) */
			if (read(ready[0], &c, 1) != 1)
				wl_die("the impostor %d ended before it was ready", want);
			close(ready[0]);
			return 0;
		}
		close(ready[0]);
		waitpid(child, NULL, 0);
	}
	wl_die("pid %d was never free", want);
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[2], "clonevm"))
		return clone_vm(argv[1], atol(argv[3]));
	if (argc == 4 && !strcmp(argv[2], "signals"))
		return signals(atol(argv[3]));
	if (argc == 3 && !strcmp(argv[2], "times"))
		return times(argv[1]);
	if (argc == 3 && !strcmp(argv[2], "interrupted"))
		return interrupted();
	if (argc == 3 && !strcmp(argv[2], "stale"))
		return stale();
	if (argc == 4 && !strcmp(argv[2], "names"))
		return names(atol(argv[3]));
	if (argc == 4 && !strcmp(argv[2], "live"))
		return live(atol(argv[3]));
	if (argc == 4 && !strcmp(argv[2], "impostor"))
		return impostor(atoi(argv[3]));
	fprintf(stderr, "usage: rings DIR clonevm|signals|live|names N | rings DIR times|stale|interrupted | "
			"rings DIR impostor PID\n");
	return 2;
}
