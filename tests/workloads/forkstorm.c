// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Children forked one after another, each writing its own file a byte at
 * a time, for counting every call of a tree whose fork and exit records
 * may find no room. Ready ($WL_CTL/ready holds the pid), it waits for
 * SIGUSR1, forks, then writes $WL_CTL/done and waits for SIGUSR1 again
 * (the test may stop the tracer meanwhile). Prints "pwrite\tCALLS".
 * Usage: forkstorm DIR CHILDREN CALLS
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include "workload.h"

static void wait_usr1(const sigset_t *set)
{
	int sig;

	sigwait(set, &sig);
}

static void child(const char *dir, int i, long calls)
{
	char name[32], *path;
	int fd;

	snprintf(name, sizeof(name), "c%d", i);
	path = wl_path(dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		_exit(1);
	for (long j = 0; j < calls; j++)
		if (pwrite(fd, "x", 1, j) != 1)
			_exit(1);
	_exit(0);
}

int main(int argc, char **argv)
{
	long children, calls;
	char pid[32];
	sigset_t set;
	int st;

	if (argc != 4)
		wl_die("usage: forkstorm DIR CHILDREN CALLS");
	children = atol(argv[2]);
	calls = atol(argv[3]);
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	snprintf(pid, sizeof(pid), "%d\n", wl_pid());
	wl_ctl_file("ready", pid);
	wait_usr1(&set);
	for (long i = 0; i < children; i++) {
		pid_t c = fork();

		if (c < 0)
			wl_die("fork");
		if (c == 0)
			child(argv[1], i, calls);
		if (waitpid(c, &st, 0) != c || !WIFEXITED(st) || WEXITSTATUS(st))
			wl_die("child %ld failed", i);
	}
	wl_ctl_file("done", pid);
	wait_usr1(&set);
	wl_emit("pwrite\t%ld\n", children * calls);
	return 0;
}
