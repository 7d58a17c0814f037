/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Small readers of /proc/PID files. */
#ifndef LIB_PROCFS_H
#define LIB_PROCFS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "lib/jobenv.h"

/* read(2) of the small file /proc/PID/<what>: bytes read, or -1. */
ssize_t procfs_read(pid_t pid, const char *what, char *buf, size_t size);
/* The same as a C string (at most size - 1 bytes): its length, or -1. */
ssize_t procfs_read_text(pid_t pid, const char *what, char *buf, size_t size);
/* Fields of /proc/PID/stat: state letter, parent pid and whether it is a
 * kernel thread.  0, or -1 if the process is gone. */
int procfs_stat(pid_t pid, char *state, pid_t *ppid, bool *kthread);
/* When the task started (/proc/PID/stat's starttime, in clock ticks
 * since boot): another task that took the same id later started later.
 * 0 if gone. */
uint64_t procfs_start(pid_t pid);
/* A NUL-terminated string of pid's memory at addr into dst (size bytes
 * with the NUL), faulted in if need be (a uprobe cannot); empty if the
 * process is gone or the address unmapped. */
void procfs_read_str(uint32_t pid, uint64_t addr, char *dst, size_t size);
/* Threads of the process, from /proc/PID/status (0 if gone). */
int procfs_threads(pid_t pid);
/* Whether the process has a handler for signal sig now (SigCgt); false
 * if gone. */
bool procfs_catches(pid_t pid, int sig);
/* The process (thread group) of a task id, or -1 if gone. */
pid_t procfs_tgid(pid_t tid);
/* readlink of /proc/PID/<what> ("exe", "cwd", "fd/3") into buf, not
 * NUL-terminated: its length, or -1 if gone. */
ssize_t procfs_readlink(pid_t pid, const char *what, char *buf, size_t size);
/* The job rank its launcher's variables give (environ); -1s if none. */
struct job_rank procfs_job_rank(pid_t pid);
/* A comm file ("comm", "task/TID/comm") into comm, DFT_COMM_LEN bytes
 * without the newline; false (and "") if it cannot be read. */
bool procfs_comm(pid_t pid, const char *what, char *comm);

/* One line of /proc/PID/maps. */
struct procfs_map {
	unsigned long long start, end;	/* [start, end) */
	char perms[8];		/* "r-xp" */
	unsigned int major, minor;	/* the file's device; 0:0 for memory */
	unsigned long long ino;
	const char *path;	/* a path, "[heap]"..., or "" */
};
/* Each mapping of pid, in order, to fn; false if it cannot be read. */
bool procfs_each_map(pid_t pid, void (*fn)(const struct procfs_map *m, void *ctx), void *ctx);
/* Same, as pid's thread tid sees them: only while tid is one of pid's
 * (a bare /proc/TID may be another process's by then). */
bool procfs_each_task_map(pid_t pid, pid_t tid, void (*fn)(const struct procfs_map *m, void *ctx),
			  void *ctx);

#endif
