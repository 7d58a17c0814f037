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
#include "capture/attach.h"
#include "lib/clock.h"
#include "dftrace.h"
#include "lib/hmap.h"
#include "lib/procfs.h"

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif

/* Passes over /proc after the first: each finds only tasks born while the
 * one before ran, to parents not yet marked, so they dwindle fast. */
#define MAX_PASSES 8
/* Processes marked between two calls of keep_going. */
#define STEP_PROCS 32

static int pidfd_of(pid_t tid)
{
	int fd = syscall(SYS_pidfd_open, tid, PIDFD_THREAD);

	/* Kernels before 6.9 know only thread-group leaders. */
	if (fd < 0 && errno == EINVAL)
		fd = syscall(SYS_pidfd_open, tid, 0);
	return fd;
}

int attach_task(int tasks_fd, pid_t tid, uint64_t at)
{
	struct dft_task init = { .nr = -1, .start_ns = at, .image_ns = at };
	int fd = pidfd_of(tid), ret = 1;

	if (fd < 0)
		return -errno;
	if (bpf_map_update_elem(tasks_fd, &fd, &init, BPF_NOEXIST))
		ret = errno == EEXIST ? 0 : -errno;
	close(fd);
	return ret;
}

bool attach_proven(int tasks_fd, pid_t pid, uint64_t alive_ns)
{
	struct dft_task st;
	int fd = syscall(SYS_pidfd_open, pid, 0);
	bool ok;

	if (fd < 0)
		return false;
	ok = !bpf_map_lookup_elem(tasks_fd, &fd, &st) && st.start_ns <= alive_ns &&
	     st.image_ns <= alive_ns;
	close(fd);
	return ok;
}

/* The threads of the processes in the adopt map, marked by the kernel
 * side's iterator; the map emptied. How many were not marked before. */
static int adopt_pending(const struct attach_opts *o)
{
	__u32 tids[256], key, next;
	int fd, added = 0;
	ssize_t n;

	if (o->adopt_fd < 0 || bpf_map_get_next_key(o->adopt_fd, NULL, &next))
		return 0;
	fd = bpf_iter_create(o->adopt_iter_fd);
	while (fd >= 0 && (n = read(fd, tids, sizeof(tids))) > 0)
		added += n / sizeof(tids[0]);
	if (fd >= 0)
		close(fd);
	while (!bpf_map_get_next_key(o->adopt_fd, NULL, &key))
		bpf_map_delete_elem(o->adopt_fd, &key);
	return added;
}

/* Marks every thread of pid; returns how many were not marked before.
 * Those a pidfd cannot name (before 6.9) wait for adopt_pending(). */
static int attach_threads(const struct attach_opts *o, pid_t pid)
{
	char dir[64];
	struct dirent *de;
	int added = 0, ret;
	__u32 key = pid;
	__u8 one = 1;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/task", pid);
	d = opendir(dir);
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		pid_t tid = atoi(de->d_name);

		if (tid <= 0)
			continue;
		ret = attach_task(o->tasks_fd, tid, clock_mono_ns());
		if (ret == 1)
			added++;
		else if (ret == -EINVAL && tid != pid && o->adopt_fd >= 0)
			bpf_map_update_elem(o->adopt_fd, &key, &one, BPF_ANY);
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

	if (procfs_stat(pid, &state, &ppid, NULL) || state == 'X' ||
	    (state == 'Z' && procfs_threads(pid) <= 1))
		return -1;
	return ppid;
}

bool process_exited(pid_t pid)
{
	/* A zombie sends no more exit records: it has already exited. */
	return live_parent_of(pid) < 0;
}

bool process_gone(pid_t pid)
{
	char state;
	pid_t ppid;

	if (procfs_stat(pid, &state, &ppid, NULL))
		return errno == ENOENT || errno == ESRCH;
	return state == 'X' || (state == 'Z' && procfs_threads(pid) <= 1);
}

bool is_tracer_process(pid_t pid)
{
	char comm[DFT_COMM_LEN];

	return procfs_comm(pid, "comm", comm) && !strcmp(comm, DFT_TRACER_COMM);
}

int attach_check_target(pid_t pid, pid_t *tgid, char *err, size_t errlen)
{
	bool kthread = false;
	char state;
	pid_t ppid;

	*tgid = procfs_tgid(pid);
	if (*tgid <= 0 || procfs_stat(*tgid, &state, &ppid, &kthread)) {
		snprintf(err, errlen, "no such process '%d'", pid);
		return -ESRCH;
	}
	if (kthread) {
		snprintf(err, errlen, "cannot trace pid %d: it is a kernel thread, "
			 "which does no file I/O of its own", pid);
		return -EINVAL;
	}
	if (*tgid == getpid()) {
		snprintf(err, errlen, "cannot trace pid %d: it is the tracer itself",
			 pid);
		return -EINVAL;
	}
	return 0;
}

/* A process and its parent, as /proc showed them. */
struct pid_pair {
	pid_t pid, ppid;
};

static int by_ppid(const void *a, const void *b)
{
	const struct pid_pair *x = a, *y = b;

	return (x->ppid > y->ppid) - (x->ppid < y->ppid);
}

/* Every live process on the host with its parent, sorted by parent. */
static struct pid_pair *snapshot(size_t *n)
{
	struct pid_pair *all = NULL, *a;
	size_t cap = 0;
	struct dirent *de;
	DIR *d = opendir("/proc");

	*n = 0;
	if (!d)
		return NULL;
	while ((de = readdir(d))) {
		pid_t pid = atoi(de->d_name), ppid;

		if (pid <= 0 || (ppid = live_parent_of(pid)) < 0)
			continue;
		if (*n == cap) {
			cap = cap ? cap * 2 : 1024;
			a = realloc(all, cap * sizeof(*a));
			if (!a)
				break;
			all = a;
		}
		all[(*n)++] = (struct pid_pair){ pid, ppid };
	}
	closedir(d);
	qsort(all, *n, sizeof(*all), by_ppid);
	return all;
}

/* Index of the first process whose parent is ppid, or n. */
static size_t first_child(const struct pid_pair *all, size_t n, pid_t ppid)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (all[mid].ppid < ppid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Marks a process found in the tree; adopts it if it was not marked yet
 * (then it existed before its parent was: its fds need naming). */
static int mark_process(const struct attach_opts *o, pid_t pid)
{
	uint64_t at = clock_mono_ns();
	int leader = attach_task(o->tasks_fd, pid, at);
	int added = attach_threads(o, pid);

	if (leader == 1)
		o->adopt(pid, at, o->ctx);
	return added + (leader == 1);
}

/*
 * One pass: walks the tree breadth-first from the roots through a fresh
 * snapshot of /proc, marking as it goes.  Returns the tasks newly marked,
 * or -EINTR.
 */
static int attach_pass(const struct attach_opts *o, const pid_t *pids, int npids)
{
	size_t n, head = 0, tail = 0, steps = 0;
	struct pid_pair *all = snapshot(&n);
	pid_t *queue = malloc((n + npids) * sizeof(*queue));
	struct hmap seen = { 0 };	/* each process once: roots may nest */
	int added = 0;

	if (!queue || (!all && n)) {
		free(all);
		free(queue);
		return -ENOMEM;
	}
	for (int i = 0; i < npids; i++)
		if (hmap_add(&seen, pids[i], 0) == 1)
			queue[tail++] = pids[i];
	while (head < tail) {
		pid_t parent = queue[head++];

		for (size_t i = first_child(all, n, parent);
		     i < n && all[i].ppid == parent; i++) {
			/* not the tracer, nor another, nor what runs
			 * below them */
			if (all[i].pid == o->self || is_tracer_process(all[i].pid) ||
			    hmap_add(&seen, all[i].pid, 0) != 1)
				continue;
			queue[tail++] = all[i].pid;
			added += mark_process(o, all[i].pid);
			if (++steps % STEP_PROCS == 0 && !o->keep_going(o->ctx)) {
				added = -EINTR;
				goto out;
			}
		}
	}
out:
	if (added >= 0)
		added += adopt_pending(o);
	hmap_free(&seen);
	free(all);
	free(queue);
	return added;
}

int attach_tree(const struct attach_opts *o, const pid_t *pids, int npids,
		char *err, size_t errlen)
{
	int ret = 0, added;
	uint64_t at;

	for (int i = 0; i < npids; i++) {
		at = clock_mono_ns();
		ret = attach_task(o->tasks_fd, pids[i], at);
		if (o->skip_gone && (ret < 0 || process_exited(pids[i])))
			continue; /* a scope's process that has gone meanwhile */
		if (ret >= 0 && process_exited(pids[i])) {
			snprintf(err, errlen,
				 "cannot attach to pid %d: it has exited (a zombie "
				 "its parent has not reaped)", pids[i]);
			return -ESRCH;
		}
		if (ret < 0) {
			snprintf(err, errlen, "cannot attach to pid %d: %s",
				 pids[i], ret == -ESRCH ? "no such process" :
							   strerror(-ret));
			return ret;
		}
		attach_threads(o, pids[i]);
		o->adopt(pids[i], at, o->ctx);
	}
	adopt_pending(o);
	for (int pass = 0; pass < MAX_PASSES; pass++) {
		added = attach_pass(o, pids, npids);
		if (added <= 0)
			return added == -ENOMEM ? 0 : added;
		if (!o->keep_going(o->ctx))
			return -EINTR;
	}
	return 0;
}
