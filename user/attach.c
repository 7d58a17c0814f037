// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "attach.h"
#include "dftrace.h"
#include "idmap.h"
#include "procs.h"

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif

static int pidfd_of(pid_t tid)
{
	int fd = syscall(SYS_pidfd_open, tid, PIDFD_THREAD);

	/* Kernels before 6.9 know only thread-group leaders. */
	if (fd < 0 && errno == EINVAL)
		fd = syscall(SYS_pidfd_open, tid, 0);
	return fd;
}

int attach_task(int tasks_fd, pid_t tid)
{
	struct dft_task init = { .nr = -1 };
	int fd = pidfd_of(tid), err = 0;

	if (fd < 0)
		return -errno;
	if (bpf_map_update_elem(tasks_fd, &fd, &init, BPF_NOEXIST) &&
	    errno != EEXIST)
		err = -errno;
	close(fd);
	return err;
}

/* Marks every thread of pid not marked yet; returns how many. */
static int attach_threads(int tasks_fd, pid_t pid, struct idmap *marked)
{
	char dir[64];
	struct dirent *de;
	int added = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/task", pid);
	d = opendir(dir);
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		pid_t tid = atoi(de->d_name);

		if (tid <= 0 || idmap_get(marked, tid))
			continue;
		if (!attach_task(tasks_fd, tid)) {
			idmap_put(marked, tid, (void *)1);
			added++;
		}
	}
	closedir(d);
	return added;
}

/*
 * The parent of a live process; -1 when pid is gone or a zombie. A main
 * thread that called pthread_exit() shows as a zombie too, while its other
 * threads run on: the process has exited only once it is the last one.
 */
static pid_t live_parent_of(pid_t pid)
{
	char state;
	pid_t ppid;

	if (procfs_stat(pid, &state, &ppid) || state == 'X' ||
	    (state == 'Z' && procfs_threads(pid) <= 1))
		return -1;
	return ppid;
}

bool process_exited(pid_t pid)
{
	/* A zombie sends no more exit records: it has already exited. */
	return live_parent_of(pid) < 0;
}

/* Adds to procs every process whose parent is in procs. */
static int add_children(struct idmap *procs, void (*adopt)(pid_t))
{
	struct dirent *de;
	int added = 0;
	DIR *d = opendir("/proc");

	if (!d)
		return 0;
	while ((de = readdir(d))) {
		pid_t pid = atoi(de->d_name), ppid;

		if (pid <= 0 || idmap_get(procs, pid))
			continue;
		ppid = live_parent_of(pid);
		if (ppid > 0 && idmap_get(procs, ppid)) {
			idmap_put(procs, pid, (void *)1);
			adopt(pid);
			added++;
		}
	}
	closedir(d);
	return added;
}

int attach_tree(int tasks_fd, const pid_t *pids, int npids,
		void (*adopt)(pid_t pid), char *err, size_t errlen)
{
	struct idmap procs = { 0 }, marked = { 0 };
	int ret = 0, added;

	for (int i = 0; i < npids; i++) {
		ret = attach_task(tasks_fd, pids[i]);
		if (!ret && process_exited(pids[i])) {
			snprintf(err, errlen,
				 "cannot attach to pid %d: it has exited (a zombie "
				 "its parent has not reaped)", pids[i]);
			ret = -ESRCH;
			goto cleanup;
		}
		if (ret) {
			snprintf(err, errlen, "cannot attach to pid %d: %s",
				 pids[i], ret == -ESRCH ? "no such process" :
							   strerror(-ret));
			goto cleanup;
		}
		idmap_put(&procs, pids[i], (void *)1);
		adopt(pids[i]);
	}
	do {
		added = 0;
		for (size_t i = 0; i < procs.cap; i++)
			if (procs.keys[i])
				added += attach_threads(tasks_fd, procs.keys[i],
							&marked);
		added += add_children(&procs, adopt);
	} while (added);
cleanup:
	idmap_free(&procs);
	idmap_free(&marked);
	return ret;
}
