/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* What the consumer knows about each traced process and thread: the fd
 * table (fd -> path), cwd, names, file mappings, annotated regions and
 * context, and event numbering. How they are written is the writer's
 * business, not theirs. */
#ifndef MODEL_PROCS_H
#define MODEL_PROCS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "dftrace.h"
#include "lib/jobenv.h"
#include "lib/hmap.h"
#include "model/istr.h"
#include "model/pageset.h"
#include "model/phases.h"

#define FD_LIMIT (1u << 20) /* fds beyond this are not named */

struct fdent {
	struct istr *path;
	bool cloexec;
	/* a call that changed fds was lost since: not named (not even from
	 * /proc, which tells the present) until a record says again */
	bool unknown;
	bool closing;	/* proc.closing holds closes of it still to come */
};

/* A file whose fd another thread's close freed, the close's record (sent
 * at its exit) yet to come, when a call that ended at since took the fd
 * again (fd_take()). Calls that began before since name it; the late
 * close forgets it. */
struct fd_closing {
	int fd;
	struct istr *path;
	uint64_t since;
};
#define FD_CLOSING_MAX 64	/* a process's, at most: the oldest go */

struct mapping {
	uint64_t addr, len;
	struct istr *path;
	uint64_t dev, ino;	/* the file, once the kernel said: else 0, 0 */
};

/* What the sweep of the dead knows of a process or thread. */
struct liveness {
	bool seen;		/* a record since the last sweep */
	bool gone;		/* found gone by a sweep; forgotten by a later one */
	uint64_t start;		/* procfs_start() when a sweep first saw it silent */
};

/*
 * Whether the process at a pid is still a traced one: proven is true
 * only if the process there now is the one a record showed alive at
 * alive_ns, with the memory it had then (the capture side asks the
 * kernel side). A pid is reused once its process is gone, by any process
 * of any user: what is read of a traced process from /proc (its memory,
 * files, environment) is read first, and kept only if the gate says so
 * after, for from alive_ns until then the pid was that process's.
 */
struct proc_gate {
	bool (*proven)(void *ctx, uint32_t pid, uint64_t alive_ns);
	void *ctx;
};

struct proc {
	uint32_t pid, ppid;
	/* the latest time a record of it showed it alive (bpf_ktime_get_ns),
	 * 0 if none has: what its gate checks */
	uint64_t alive_ns;
	const struct proc_gate *gate;
	struct fdent *fds;
	uint32_t nfds;
	bool fds_unknown;	/* as fdent.unknown, for fds past nfds */
	struct fd_closing *closing;	/* oldest first */
	uint32_t nclosing, capclosing;
	struct istr *cwd;
	struct istr *exe;	/* the program file */
	struct mapping *maps;
	uint32_t nmaps, capmaps;
	struct pageset *pagesets;	/* per mapped file, the pages counted */
	uint32_t npagesets, cappagesets;
	uint64_t next_id;	/* DFTracer's 1-based event index */
	uint32_t nthreads;
	/* A thread's exit guessed it was the last (DFT_EXIT_GROUP_GUESSED)
	 * while others were known: the process ends with the last of them,
	 * with that exit's code. */
	bool ending;
	int end_code;
	char comm[DFT_COMM_LEN];
	struct istr *cmdline;	/* argv, space-separated, as an SH string */
	struct phase_ctx ctx;	/* epoch, step and user keys from annotations */
	struct job_rank job;	/* its launcher's rank variables, at exec */
	struct hmap folds;	/* totals not written yet: key hash -> malloc'd total */
	struct fold_total *fold_last;	/* of folds, the one a call went to last */
	struct gpu_state *gpu;	/* what its GPU calls made (model/gpucalls.h) */
	/* annotation sites seen: hash of (cat, name) addresses -> malloc'd
	 * struct annot_site (correlate/annot.c) */
	struct hmap sites;
	struct liveness live;	/* for the sweep of the dead (trace_sweep()) */
};

struct thread {
	uint32_t tid, pid;
	char comm[DFT_COMM_LEN];
	struct phase_stack phases;	/* open annotated regions */
	uint64_t data_ts;	/* entry of its last call that moved bytes */
	uint64_t seen_ts;	/* the latest start of its calls and regions taken */
	/* the starts of records taken from its batch in the kernel before
	 * the batch was sent (trace_peek_kept()): each dropped when it comes */
	uint64_t peeked[DFT_IO_BATCH];
	uint8_t npeeked;
	/* the regions of its ring a peek took (trace_ring_peeked()): those
	 * before ring_peeked there, the last at ring_peeked_ts (0: none) */
	uint32_t ring_peeked;
	uint64_t ring_peeked_ts;
	struct liveness live;
};

/* Every traced process and thread. */
struct model {
	struct hmap procs;	/* pid -> struct proc */
	struct hmap threads;	/* tid -> struct thread */
	struct proc_gate gate;	/* every proc's; none: nothing is read */
};

struct proc *proc_get(const struct model *m, uint32_t pid);
/* A process seen for the first time, alive at alive_ns (a record's
 * time, 0 if none); its state is read from /proc where the gate lets. */
struct proc *proc_from_procfs(struct model *m, uint32_t pid, uint64_t alive_ns);
/* A record showed p alive at ns. */
void proc_alive(struct proc *p, uint64_t ns);
/* p is still the process at its pid (struct proc_gate): what was read
 * from /proc/PID before the call is its. */
bool proc_proven(const struct proc *p);
/* A child created by fork: inherits fds, cwd, names and mappings. */
struct proc *proc_fork(struct model *m, struct proc *parent, uint32_t child_pid);
void proc_free(struct model *m, struct proc *p);
/* readlink of /proc/PID/<what> ("exe", "cwd") of p, interned; NULL if
 * gone, or no longer provably p. */
struct istr *proc_link(const struct proc *p, const char *what);
/* The job rank p's launcher's variables give (its environ); -1s if
 * none, or if the process is no longer provably p. */
struct job_rank proc_job_rank(const struct proc *p);

struct thread *thread_get(const struct model *m, uint32_t tid);
struct thread *thread_add(struct model *m, uint32_t tid, uint32_t pid,
			  const char *comm);
void thread_free(struct model *m, uint32_t tid);

/* Calls fn for every live process. */
void procs_each(const struct model *m, void (*fn)(struct proc *p, void *ctx),
		void *ctx);
uint32_t procs_count(const struct model *m);
/* Calls fn for every thread. */
void threads_each(const struct model *m, void (*fn)(struct thread *th, void *ctx),
		  void *ctx);
/* Forgets every process and thread. */
void model_free(struct model *m);

/* The path of fd; read from /proc/PID/fd when the table has no entry. */
struct istr *fd_path(struct proc *p, int fd);
/* The same for a call that began at ns (its record's entry time): a
 * file another thread's close freed while the call ran is still its. */
struct istr *fd_path_at(struct proc *p, int fd, uint64_t ns);
/* fd now names path: dup2 and the like, which replace what it was. */
void fd_assign(struct proc *p, int fd, struct istr *path, bool cloexec);
/* A call that ended at end_ns took fd, which was free (open, dup,
 * socket...): what the model still has there is closing. */
void fd_take(struct proc *p, int fd, struct istr *path, bool cloexec,
	     uint64_t end_ns);
/* The name of an fd made by a call we do not name (pipe, socket...):
 * from /proc now, or fallback if it is already gone. */
struct istr *fd_label(const struct proc *p, int fd, const char *fallback);
void fd_close(struct proc *p, int fd);
/* A close that began at ns: of the closing file, if the fd was taken
 * again after the close began (fd_take()). */
void fd_close_at(struct proc *p, int fd, uint64_t ns);
/* A call that changed p's fds was lost: no fd is named until a record
 * names it again. */
void fd_unknown_all(struct proc *p);
void fd_close_range(struct proc *p, unsigned int first, unsigned int last,
		    bool cloexec_only);
void fd_set_cloexec(struct proc *p, int fd, bool cloexec);
void fd_exec(struct proc *p); /* drops close-on-exec fds */

void map_add(struct proc *p, uint64_t addr, uint64_t len, struct istr *path);
/* The file mapping containing addr, or NULL (anonymous memory). */
struct mapping *map_find(struct proc *p, uint64_t addr);
void map_remove(struct proc *p, uint64_t addr, uint64_t len);
/* The mapping at addr is of file (dev, ino). */
void map_set_file(struct proc *p, uint64_t addr, uint64_t dev, uint64_t ino);
/* The pages of (dev, ino) counted while it stays mapped; NULL if out of
 * memory. Forgotten when its last known mapping goes, and at exec. */
struct pageset *proc_pageset(struct proc *p, uint64_t dev, uint64_t ino);

#endif
