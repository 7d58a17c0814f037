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
 */
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

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[2], "clonevm"))
		return clone_vm(argv[1], atol(argv[3]));
	if (argc == 4 && !strcmp(argv[2], "signals"))
		return signals(atol(argv[3]));
	fprintf(stderr, "usage: rings DIR clonevm|signals N\n");
	return 2;
}
