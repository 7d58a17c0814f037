/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* What the consumer knows about each traced process and thread: the fd
 * table (fd -> path), cwd, names, file mappings, and event numbering. */
#ifndef PROCS_H
#define PROCS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "dftrace.h"
#include "paths.h"
#include "phases.h"

#define FD_LIMIT (1u << 20) /* fds beyond this are not named */

struct fdent {
	struct path *path;
	bool cloexec;
};

struct mapping {
	uint64_t addr, len;
	struct path *path;
};

struct sink;

struct proc {
	uint32_t pid, ppid;
	struct fdent *fds;
	uint32_t nfds;
	struct path *cwd;
	struct path *exe;	/* the program file, from /proc at exec or attach */
	struct mapping *maps;
	uint32_t nmaps, capmaps;
	uint64_t next_id;	/* DFTracer's 1-based event index */
	uint32_t nthreads;
	bool named;		/* process_name written */
	char comm[DFT_COMM_LEN];
	struct path *cmdline;	/* NUL-separated argv, as an SH string */
	struct sink *sink;	/* per-process output, or NULL */
	struct phase_ctx ctx;	/* epoch, step and user keys from annotations */
};

struct thread {
	uint32_t tid, pid;
	bool named;		/* thread_name written since last rename */
	char comm[DFT_COMM_LEN];
	struct phase_stack phases;	/* open annotated regions */
};

struct proc *proc_get(uint32_t pid);
/* A process seen for the first time; its state is read from /proc. */
struct proc *proc_from_procfs(uint32_t pid);
/* A child created by fork: inherits fds, cwd, names and mappings. */
struct proc *proc_fork(struct proc *parent, uint32_t child_pid);
void proc_free(struct proc *p);
struct thread *thread_get(uint32_t tid);
struct thread *thread_add(uint32_t tid, uint32_t pid, const char *comm);
void thread_free(uint32_t tid);
/* Calls fn for every live process. */
void procs_each(void (*fn)(struct proc *p, void *ctx), void *ctx);
uint32_t procs_count(void);
void procs_free_all(void);

/* The path of fd; read from /proc/PID/fd when the table has no entry. */
struct path *fd_path(struct proc *p, int fd);
void fd_assign(struct proc *p, int fd, struct path *path, bool cloexec);
/* An fd made by a call we do not name (pipe, socket...): labelled from
 * /proc now, or with fallback if it is already gone. */
void fd_relabel(struct proc *p, int fd, const char *fallback, bool cloexec);
void fd_close(struct proc *p, int fd);
void fd_close_range(struct proc *p, unsigned int first, unsigned int last,
		    bool cloexec_only);
void fd_set_cloexec(struct proc *p, int fd, bool cloexec);
void fd_exec(struct proc *p); /* drops close-on-exec fds */

void map_add(struct proc *p, uint64_t addr, uint64_t len, struct path *path);
/* The file mapping containing addr, or NULL (anonymous memory). */
struct mapping *map_find(struct proc *p, uint64_t addr);
void map_remove(struct proc *p, uint64_t addr, uint64_t len);

/* Reads /proc/PID/comm and cmdline into p; false if the process is gone. */
bool proc_refresh_names(struct proc *p);

#endif
