/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Whether the service's client may trace a process: the client is who
 * the kernel says (SO_PEERCRED), and a process is its own when the
 * kernel says that too, at a moment a pidfd proves it was that process.
 */
#ifndef SERVICE_PEER_H
#define SERVICE_PEER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct peer {
	pid_t pid;
	uid_t uid;
	gid_t gid;
	gid_t groups[64];
	int ngroups;
	char name[64];		/* the user's, for SUDO_USER and the log */
};

/* The client on socket fd: 0, or -errno with why. */
int peer_of(int fd, struct peer *p, char *why, size_t len);

/* pid is p's to trace: its real, effective, saved and file-system uids
 * all p's, no effective capability, dumpable (its /proc directory is
 * p's); with parent > 0, parent's child too. Read while pidfd (opened
 * here if -1; else one the client passed, which must be pid's) holds
 * the process, and checked alive after: a pid reused meanwhile is never
 * taken for it. 0, or -EPERM or -ESRCH with why. */
int peer_may_trace(const struct peer *p, pid_t pid, pid_t parent, int pidfd, char *why,
		   size_t len);
/* A pidfd of pid (-1 with errno if none), for peer_may_trace and to
 * prove later that pid is still the process checked. */
int peer_pidfd(pid_t pid);
/* Whether a pidfd's process still lives: then a pid attached to by
 * number since the check was that process. */
bool peer_alive(int pidfd);

#endif
