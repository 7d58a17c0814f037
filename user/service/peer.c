// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "service/peer.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif

int peer_of(int fd, struct peer *p, char *why, size_t len)
{
	struct ucred cred;
	socklen_t n = sizeof(cred);
	struct passwd pw, *found = NULL;
	char buf[4096];

	memset(p, 0, sizeof(*p));
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &n) || cred.pid <= 0) {
		snprintf(why, len, "cannot tell who the client is: %s", strerror(errno));
		return -EPERM;
	}
	p->pid = cred.pid;
	p->uid = cred.uid;
	p->gid = cred.gid;
	if (getpwuid_r(cred.uid, &pw, buf, sizeof(buf), &found) || !found) {
		snprintf(why, len, "uid %u has no user name", (unsigned)cred.uid);
		return -EPERM;
	}
	snprintf(p->name, sizeof(p->name), "%s", pw.pw_name);
	p->ngroups = sizeof(p->groups) / sizeof(*p->groups);
	if (getgrouplist(pw.pw_name, pw.pw_gid, p->groups, &p->ngroups) < 0)
		p->ngroups = 0; /* more than we keep: none taken for host-wide */
	return 0;
}

/* What /proc/PID/status says: uids, parent, effective capabilities. */
struct status {
	unsigned int uid[4];
	pid_t ppid;
	unsigned long long cap_eff;
	int got;
};

static int read_status(pid_t pid, struct status *st)
{
	char path[64], line[256];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -ESRCH;
	memset(st, 0, sizeof(*st));
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "Uid: %u %u %u %u", &st->uid[0], &st->uid[1], &st->uid[2],
			   &st->uid[3]) == 4)
			st->got |= 1;
		else if (sscanf(line, "PPid: %d", &st->ppid) == 1)
			st->got |= 2;
		else if (sscanf(line, "CapEff: %llx", &st->cap_eff) == 1)
			st->got |= 4;
	}
	fclose(f);
	return st->got == 7 ? 0 : -ESRCH;
}

/* The pid a pidfd holds, from its fdinfo; -1 if none (it has exited). */
static pid_t pidfd_pid(int pidfd)
{
	char path[64], line[128];
	pid_t pid = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", pidfd);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Pid: %d", &pid) == 1)
			break;
	fclose(f);
	return pid;
}

static int refuse(char *why, size_t len, int err, const char *fmt, pid_t pid)
{
	snprintf(why, len, fmt, (int)pid);
	return err;
}

static int check(const struct peer *p, pid_t pid, pid_t parent, char *why, size_t len)
{
	char path[64];
	struct status st;
	struct stat dir;

	if (read_status(pid, &st))
		return refuse(why, len, -ESRCH, "no process %d", pid);
	for (int i = 0; i < 4; i++)
		if (st.uid[i] != p->uid)
			return refuse(why, len, -EPERM, "process %d is not yours", pid);
	if (st.cap_eff)
		return refuse(why, len, -EPERM, "process %d is privileged (it has "
			      "capabilities)", pid);
	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	/* a process that is not dumpable (setuid, setgid, or said so) has
	 * its /proc directory owned by root */
	if (stat(path, &dir) || dir.st_uid != p->uid)
		return refuse(why, len, -EPERM, "process %d is privileged (not dumpable)",
			      pid);
	if (parent > 0 && st.ppid != parent)
		return refuse(why, len, -EPERM, "process %d is not your command", pid);
	return 0;
}

int peer_pidfd(pid_t pid)
{
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

bool peer_alive(int pidfd)
{
	return !syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0);
}

int peer_may_trace(const struct peer *p, pid_t pid, pid_t parent, int pidfd, char *why,
		   size_t len)
{
	int fd = pidfd >= 0 ? pidfd : peer_pidfd(pid);
	int err;

	if (pid <= 0 || fd < 0)
		return refuse(why, len, -ESRCH, "no process %d", pid);
	if (pidfd_pid(fd) != pid)
		err = refuse(why, len, -ESRCH, "process %d is not the one given", pid);
	else
		err = check(p, pid, parent, why, len);
	/* the checks were of the pidfd's process only if it still lives */
	if (!err && !peer_alive(fd))
		err = refuse(why, len, -ESRCH, "process %d has exited", pid);
	if (pidfd < 0)
		close(fd);
	return err;
}
