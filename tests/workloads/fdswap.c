// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * An fd that changes file while the ring buffer is full: the test stops
 * the tracer (SIGSTOP) between "ready" and the first SIGUSR1, so that
 * the calls made then find no room. fd 3 is A, 100 bytes are read from
 * it; a flood of lseeks fills the ring, then dup2 makes fd 3 A again
 * (1000 times, the last ones finding no room), and at last B. After the
 * second SIGUSR1 (the tracer has drained the ring) 5000 bytes are read
 * from fd 3, now B. Prints "fdswap\tPATH\tBYTES" for A and B, and
 * "dup2\tCALLS".
 * Usage: fdswap DIR
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>
#include "workload.h"

#define REPEATS 1000

static void wait_usr1(void)
{
	sigset_t set;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigwait(&set, &sig);
}

int main(int argc, char **argv)
{
	char *a, *b, buf[16], pid[32];
	int fd, again, fb;
	sigset_t set;

	if (argc != 2)
		wl_die("usage: fdswap DIR");
	a = wl_path(argv[1], "A");
	b = wl_path(argv[1], "B");
	fd = wl_ok(open(a, O_RDONLY), "open A");
	again = wl_ok(open(a, O_RDONLY), "open A");
	fb = wl_ok(open(b, O_RDONLY), "open B");
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	snprintf(pid, sizeof(pid), "%d\n", wl_pid());
	wl_ctl_file("ready", pid);
	wait_usr1();
	for (int i = 0; i < 100; i++)
		wl_ok(pread(fd, buf, 1, i), "pread A");
	for (int i = 0; i < 20000; i++)
		lseek(fd, 0, SEEK_SET);
	for (int i = 0; i < REPEATS; i++)
		wl_ok(dup2(again, fd), "dup2 A");
	wl_ok(dup2(fb, fd), "dup2 B");
	wl_ctl_file("mid", pid);
	wait_usr1();
	for (int i = 0; i < 5000; i++)
		wl_ok(pread(fd, buf, 1, i), "pread B");
	wl_emit("fdswap\t%s\t%d\n", a, 100);
	wl_emit("fdswap\t%s\t%d\n", b, 5000);
	wl_emit("dup2\t%d\n", REPEATS + 1);
	return 0;
}
