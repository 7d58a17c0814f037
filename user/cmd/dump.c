// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * dftrace-bpf dump PID: asks the tracer PID, run with --flight, for a
 * dump now (SIGUSR1). The pid is held by a pidfd from the check to the
 * signal, so that a tracer gone meanwhile never has its pid's next
 * owner signalled; a tracer without --flight is refused, since SIGUSR1
 * would end it, as is one that does not catch it yet (starting) or has
 * no command line to tell (mid-exec, or exited).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "cmd/cmd.h"
#include "dftrace.h"
#include "lib/procfs.h"

enum flight_seen { FLIGHT_NO, FLIGHT_YES, FLIGHT_NO_CMDLINE };

/* Whether the process's command line holds --flight (argv, NUL apart).
 * It has none to read while it execs (the exec names the process before
 * its new command line is in place) and once it has exited. */
static enum flight_seen runs_flight(pid_t pid)
{
	char buf[8192];
	ssize_t n = procfs_read_text(pid, "cmdline", buf, sizeof(buf));

	if (n <= 0)
		return FLIGHT_NO_CMDLINE;
	for (ssize_t i = 0; i < n; i += strlen(buf + i) + 1)
		if (!strcmp(buf + i, "--flight") || !strncmp(buf + i, "--flight=", 9))
			return FLIGHT_YES;
	return FLIGHT_NO;
}

static bool has_exited(pid_t pid)
{
	char state = 0;
	pid_t ppid;

	return procfs_stat(pid, &state, &ppid, NULL) || state == 'Z' || state == 'X';
}

static bool is_tracer(pid_t pid)
{
	char comm[DFT_COMM_LEN];

	return procfs_comm(pid, "comm", comm) && !strcmp(comm, DFT_TRACER_COMM);
}

int dump_main(int argc, char **argv)
{
	enum flight_seen seen;
	char *end;
	long pid;
	int fd, ret = 1;

	if (argc != 2 || !strcmp(argv[1], "--help")) {
		fprintf(argc == 2 ? stdout : stderr,
			"usage: dftrace-bpf dump PID\n"
			"Asks the tracer PID (run with --flight) to write its window now.\n");
		return argc == 2 ? 0 : 2;
	}
	errno = 0;
	pid = strtol(argv[1], &end, 10);
	if (errno || *end || end == argv[1] || pid <= 0 || pid > 0x7fffffff) {
		fprintf(stderr, "%s: invalid pid '%s'\n", argv[0], argv[1]);
		return 2;
	}
	fd = (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);
	if (fd < 0) {
		fprintf(stderr, "%s: no process '%ld': %s\n", argv[0], pid, strerror(errno));
		return 1;
	}
	if (!is_tracer(pid))
		fprintf(stderr, "%s: process '%ld' is not a running dftrace-bpf\n", argv[0], pid);
	else if ((seen = runs_flight(pid)) == FLIGHT_NO_CMDLINE && has_exited(pid))
		fprintf(stderr, "%s: tracer '%ld' has exited\n", argv[0], pid);
	else if (seen == FLIGHT_NO)
		fprintf(stderr, "%s: tracer '%ld' runs without --flight: it has no window to dump\n",
			argv[0], pid);
	/* a tracer catches it from the moment it has read its options;
	 * before, the signal would end it */
	else if (seen == FLIGHT_NO_CMDLINE || !procfs_catches(pid, SIGUSR1))
		fprintf(stderr, "%s: tracer '%ld' is still starting: ask again in a moment\n",
			argv[0], pid);
	else if (syscall(SYS_pidfd_send_signal, fd, SIGUSR1, NULL, 0))
		fprintf(stderr, "%s: cannot signal tracer '%ld': %s\n", argv[0], pid,
			strerror(errno));
	else
		ret = 0;
	close(fd);
	return ret;
}
