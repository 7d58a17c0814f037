// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lib/procfs.h"
#include "lib/vec.h"
#include "model/gpucalls.h"
#include "model/paths.h"
#include "model/procs.h"

struct proc *proc_get(const struct model *m, uint32_t pid)
{
	return hmap_get_ptr(&m->procs, pid);
}

static struct proc *proc_new(struct model *m, uint32_t pid)
{
	struct proc *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->pid = pid;
	p->gate = &m->gate;
	p->next_id = 1;
	p->job = JOB_RANK_NONE;
	p->live.seen = true;	/* a record or an attach made it */
	if (hmap_put_ptr(&m->procs, pid, p)) {
		free(p);
		return NULL;
	}
	return p;
}

void proc_alive(struct proc *p, uint64_t ns)
{
	if (ns > p->alive_ns)
		p->alive_ns = ns;
}

bool proc_proven(const struct proc *p)
{
	return p->alive_ns && p->gate && p->gate->proven &&
	       p->gate->proven(p->gate->ctx, p->pid, p->alive_ns);
}

static struct istr *link_of(uint32_t pid, const char *what)
{
	char buf[PATH_MAX];
	ssize_t n = procfs_readlink(pid, what, buf, sizeof(buf));

	return n > 0 ? istr_intern(buf, n, false) : NULL;
}

struct istr *proc_link(const struct proc *p, const char *what)
{
	struct istr *s = link_of(p->pid, what);

	return s && proc_proven(p) ? s : NULL;
}

struct job_rank proc_job_rank(const struct proc *p)
{
	struct job_rank r = procfs_job_rank(p->pid);

	return proc_proven(p) ? r : JOB_RANK_NONE;
}

static void read_names(struct proc *p)
{
	char buf[4096];
	ssize_t n;

	memset(p->comm, 0, sizeof(p->comm));
	if (!procfs_comm(p->pid, "comm", p->comm))
		return;
	n = procfs_read(p->pid, "cmdline", buf, sizeof(buf));
	if (n > 0)
		p->cmdline = cmdline_intern(buf, n, n == sizeof(buf));
}

/* O_CLOEXEC of an fd that was open before we looked, from fdinfo. */
static bool fd_cloexec_from_procfs(uint32_t pid, long fd)
{
	char what[48], buf[256], *flags;

	snprintf(what, sizeof(what), "fdinfo/%ld", fd);
	if (procfs_read_text(pid, what, buf, sizeof(buf)) < 0)
		return false;
	flags = strstr(buf, "flags:");
	return flags && (strtoul(flags + 6, NULL, 8) & O_CLOEXEC);
}

static void read_fd_table(struct proc *p)
{
	char dir[64], link[96];
	struct dirent *de;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%u/fd", p->pid);
	d = opendir(dir);
	if (!d)
		return;
	while ((de = readdir(d))) {
		char *end;
		long fd = strtol(de->d_name, &end, 10);

		if (*end || de->d_name[0] == '.')
			continue;
		snprintf(link, sizeof(link), "fd/%ld", fd);
		fd_assign(p, fd, link_of(p->pid, link), fd_cloexec_from_procfs(p->pid, fd));
	}
	closedir(d);
}

/* What a process found running is, from /proc: kept only if it is
 * still the one its record showed alive. */
static void read_process(struct proc *p)
{
	char state;
	pid_t ppid;

	if (procfs_stat(p->pid, &state, &ppid, NULL) == 0 && ppid > 0)
		p->ppid = ppid;
	p->cwd = link_of(p->pid, "cwd");
	p->exe = link_of(p->pid, "exe");
	p->job = procfs_job_rank(p->pid);
	read_fd_table(p);
	read_names(p);
	if (proc_proven(p))
		return;
	p->ppid = 0;
	p->cwd = p->exe = p->cmdline = NULL;
	p->job = JOB_RANK_NONE;
	memset(p->comm, 0, sizeof(p->comm));
	free(p->fds);
	p->fds = NULL;
	p->nfds = 0;
}

struct proc *proc_from_procfs(struct model *m, uint32_t pid, uint64_t alive_ns)
{
	struct proc *p = proc_get(m, pid);

	if (p)
		return p;
	p = proc_new(m, pid);
	if (!p)
		return NULL;
	p->alive_ns = alive_ns;
	if (alive_ns)
		read_process(p);
	return p;
}

struct proc *proc_fork(struct model *m, struct proc *parent, uint32_t child_pid)
{
	struct proc *c = proc_get(m, child_pid);

	if (c)
		return c;
	c = proc_new(m, child_pid);
	if (!c)
		return NULL;
	c->ppid = parent->pid;
	c->cwd = parent->cwd;
	c->exe = parent->exe;
	c->cmdline = parent->cmdline;
	c->job = parent->job;
	memcpy(c->comm, parent->comm, sizeof(c->comm));
	c->fds_unknown = parent->fds_unknown;
	for (uint32_t fd = 0; fd < parent->nfds; fd++) {
		if (!parent->fds[fd].path && !parent->fds[fd].unknown)
			continue;
		fd_assign(c, fd, parent->fds[fd].path, parent->fds[fd].cloexec);
		if (fd < c->nfds)
			c->fds[fd].unknown = parent->fds[fd].unknown;
	}
	for (uint32_t i = 0; i < parent->nmaps; i++)
		(void)VEC_PUSH(c->maps, c->nmaps, c->capmaps, parent->maps[i]);
	ctx_copy(&c->ctx, &parent->ctx); /* the child has the same memory */
	return c;
}

static void forget_pagesets(struct proc *p)
{
	for (uint32_t i = 0; i < p->npagesets; i++)
		pageset_free(&p->pagesets[i]);
	p->npagesets = 0;
}

static void free_proc(struct proc *p)
{
	free(p->fds);
	free(p->closing);
	free(p->maps);
	forget_pagesets(p);
	free(p->pagesets);
	ctx_free(&p->ctx);
	hmap_free_ptrs(&p->folds);
	gpu_state_free(p->gpu);
	hmap_free_ptrs(&p->sites);
	free(p);
}

void proc_free(struct model *m, struct proc *p)
{
	if (!p)
		return;
	hmap_del_ptr(&m->procs, p->pid);
	free_proc(p);
}

struct thread *thread_get(const struct model *m, uint32_t tid)
{
	return hmap_get_ptr(&m->threads, tid);
}

struct thread *thread_add(struct model *m, uint32_t tid, uint32_t pid,
			  const char *comm)
{
	struct thread *t = thread_get(m, tid);
	struct proc *p;

	if (!t) {
		t = calloc(1, sizeof(*t));
		if (!t || hmap_put_ptr(&m->threads, tid, t)) {
			free(t);
			return NULL;
		}
		t->live.seen = true;
		p = proc_get(m, pid);
		if (p)
			p->nthreads++;
	}
	t->tid = tid;
	t->pid = pid;
	if (comm)
		memcpy(t->comm, comm, DFT_COMM_LEN);
	t->comm[DFT_COMM_LEN - 1] = 0;
	return t;
}

static void free_thread(struct thread *t)
{
	phase_stack_free(&t->phases);
	free(t);
}

void thread_free(struct model *m, uint32_t tid)
{
	struct thread *t = hmap_del_ptr(&m->threads, tid);
	struct proc *p;

	if (!t)
		return;
	p = proc_get(m, t->pid);
	if (p && p->nthreads)
		p->nthreads--;
	free_thread(t);
}

void procs_each(const struct model *m, void (*fn)(struct proc *p, void *ctx),
		void *ctx)
{
	uint64_t pid, p;
	size_t it = 0;

	while (hmap_next(&m->procs, &it, &pid, &p))
		fn((struct proc *)(uintptr_t)p, ctx);
}

void threads_each(const struct model *m, void (*fn)(struct thread *th, void *ctx),
		  void *ctx)
{
	uint64_t tid, th;
	size_t it = 0;

	while (hmap_next(&m->threads, &it, &tid, &th))
		fn((struct thread *)(uintptr_t)th, ctx);
}

uint32_t procs_count(const struct model *m)
{
	return m->procs.n;
}

void model_free(struct model *m)
{
	uint64_t key, v;
	size_t it = 0;

	while (hmap_next(&m->procs, &it, &key, &v))
		free_proc((struct proc *)(uintptr_t)v);
	it = 0;
	while (hmap_next(&m->threads, &it, &key, &v))
		free_thread((struct thread *)(uintptr_t)v);
	hmap_free(&m->procs);
	hmap_free(&m->threads);
}

/* /proc/PID/fd/N, interned. */
static struct istr *fd_link(const struct proc *p, int fd)
{
	char what[32];

	snprintf(what, sizeof(what), "fd/%d", fd);
	return proc_link(p, what);
}

struct istr *fd_path(struct proc *p, int fd)
{
	return fd_path_at(p, fd, UINT64_MAX);
}

/* The close still to come of the file fd named when a call that began
 * at ns ran: the first whose fd was taken after that; -1 if none. */
static int closing_at(const struct proc *p, int fd, uint64_t ns)
{
	if (fd < 0 || (uint32_t)fd >= p->nfds || !p->fds[fd].closing)
		return -1;
	for (uint32_t i = 0; i < p->nclosing; i++)
		if (p->closing[i].fd == fd && ns < p->closing[i].since)
			return i;
	return -1;
}

/* Forgets the closes still to come of fds in [first, last]. */
static void forget_closing(struct proc *p, unsigned int first, unsigned int last)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < p->nclosing; i++) {
		unsigned int fd = p->closing[i].fd;

		if (fd >= first && fd <= last)
			p->fds[fd].closing = false;
		else
			p->closing[n++] = p->closing[i];
	}
	p->nclosing = n;
	for (uint32_t i = 0; i < n; i++)
		p->fds[p->closing[i].fd].closing = true;
}

static void drop_closing(struct proc *p, uint32_t i)
{
	int fd = p->closing[i].fd;
	bool more = false;

	memmove(&p->closing[i], &p->closing[i + 1],
		(p->nclosing - i - 1) * sizeof(*p->closing));
	p->nclosing--;
	for (uint32_t j = 0; j < p->nclosing; j++)
		more |= p->closing[j].fd == fd;
	p->fds[fd].closing = more;
}

struct istr *fd_path_at(struct proc *p, int fd, uint64_t ns)
{
	struct istr *path;
	int i;

	if (fd < 0)
		return NULL;
	if ((i = closing_at(p, fd, ns)) >= 0)
		return p->closing[i].path;
	if ((uint32_t)fd < p->nfds && p->fds[fd].path)
		return p->fds[fd].path;
	if ((uint32_t)fd < p->nfds ? p->fds[fd].unknown : p->fds_unknown)
		return NULL;
	/* Opened in a way we do not trace (pipe, socket, SCM_RIGHTS...). */
	path = fd_link(p, fd);
	if (path)
		fd_assign(p, fd, path, false);
	return path;
}

struct istr *fd_label(const struct proc *p, int fd, const char *fallback)
{
	struct istr *path = fd_link(p, fd);

	return path ? path : istr_cstr(fallback);
}

void fd_assign(struct proc *p, int fd, struct istr *path, bool cloexec)
{
	if (fd < 0 || (uint32_t)fd >= FD_LIMIT ||
	    vec_reserve((void **)&p->fds, &p->nfds, fd + 1, sizeof(*p->fds)))
		return;
	p->fds[fd].path = path;
	p->fds[fd].cloexec = cloexec;
	p->fds[fd].unknown = false;
}

/*
 * Records reach the ring at their calls' exits, and a close frees its fd
 * before its exit: an open in another thread can take the fd and send
 * its record first, and its thread may close and take the fd again many
 * times before the late close comes. The late close began before the
 * open ended (it freed the fd the open took), and every later call on
 * the fd began after (its thread learnt the fd from the open): the entry
 * times tell the files apart until the close comes.
 */
void fd_take(struct proc *p, int fd, struct istr *path, bool cloexec,
	     uint64_t end_ns)
{
	struct istr *was = fd >= 0 && (uint32_t)fd < p->nfds ? p->fds[fd].path : NULL;
	struct fd_closing c = { fd, was, end_ns };

	if (was) {
		if (p->nclosing == FD_CLOSING_MAX)
			drop_closing(p, 0);
		if (!VEC_PUSH(p->closing, p->nclosing, p->capclosing, c))
			p->fds[fd].closing = true;
	}
	fd_assign(p, fd, path, cloexec);
}

void fd_unknown_all(struct proc *p)
{
	for (uint32_t fd = 0; fd < p->nfds; fd++)
		p->fds[fd] = (struct fdent){ .unknown = true };
	p->nclosing = 0;
	p->fds_unknown = true;
}

void fd_close(struct proc *p, int fd)
{
	fd_close_at(p, fd, UINT64_MAX);
}

void fd_close_at(struct proc *p, int fd, uint64_t ns)
{
	int i = closing_at(p, fd, ns);

	if (i >= 0)
		drop_closing(p, i);
	else if (fd >= 0 && (uint32_t)fd < p->nfds)
		p->fds[fd].path = NULL;
}

void fd_close_range(struct proc *p, unsigned int first, unsigned int last,
		    bool cloexec_only)
{
	for (uint32_t fd = first; fd <= last && fd < p->nfds; fd++) {
		if (cloexec_only)
			p->fds[fd].cloexec = true;
		else
			p->fds[fd].path = NULL;
	}
	if (!cloexec_only)
		forget_closing(p, first, last);
}

void fd_set_cloexec(struct proc *p, int fd, bool cloexec)
{
	if (fd >= 0 && (uint32_t)fd < p->nfds)
		p->fds[fd].cloexec = cloexec;
}

void fd_exec(struct proc *p)
{
	for (uint32_t fd = 0; fd < p->nfds; fd++)
		if (p->fds[fd].cloexec)
			p->fds[fd].path = NULL;
	/* the other threads are gone, and their closes with them */
	forget_closing(p, 0, UINT_MAX);
	p->nmaps = 0;
	forget_pagesets(p);
}

void map_add(struct proc *p, uint64_t addr, uint64_t len, struct istr *path)
{
	/* Out of memory: the mapping stays unnamed, which only matters for
	 * naming a later msync. */
	(void)VEC_PUSH(p->maps, p->nmaps, p->capmaps,
		       ((struct mapping){ addr, len, path, 0, 0 }));
}

struct mapping *map_find(struct proc *p, uint64_t addr)
{
	for (uint32_t i = 0; i < p->nmaps; i++)
		if (addr >= p->maps[i].addr &&
		    addr - p->maps[i].addr < p->maps[i].len)
			return &p->maps[i];
	return NULL;
}

static bool file_mapped(const struct proc *p, uint64_t dev, uint64_t ino)
{
	for (uint32_t i = 0; i < p->nmaps; i++)
		if (p->maps[i].dev == dev && p->maps[i].ino == ino)
			return true;
	return false;
}

/* A file no longer mapped: its pages count again when mapped again. */
static void drop_pageset(struct proc *p, uint64_t dev, uint64_t ino)
{
	for (uint32_t i = 0; i < p->npagesets; i++) {
		struct pageset *s = &p->pagesets[i];

		if (s->dev == dev && s->ino == ino && !file_mapped(p, dev, ino)) {
			pageset_free(s);
			*s = p->pagesets[--p->npagesets];
			return;
		}
	}
}

/* Forgets mappings that [addr, addr+len) covers entirely; a partial unmap
 * keeps the entry, which only matters for naming a later msync and for
 * counting its file's pages again. */
void map_remove(struct proc *p, uint64_t addr, uint64_t len)
{
	for (uint32_t i = 0; i < p->nmaps;) {
		struct mapping m = p->maps[i];

		if (m.addr >= addr && m.addr + m.len <= addr + len) {
			p->maps[i] = p->maps[--p->nmaps];
			if (m.ino)
				drop_pageset(p, m.dev, m.ino);
		} else {
			i++;
		}
	}
}

void map_set_file(struct proc *p, uint64_t addr, uint64_t dev, uint64_t ino)
{
	struct mapping *m = map_find(p, addr);

	if (m) {
		m->dev = dev;
		m->ino = ino;
	}
}

struct pageset *proc_pageset(struct proc *p, uint64_t dev, uint64_t ino)
{
	for (uint32_t i = 0; i < p->npagesets; i++)
		if (p->pagesets[i].dev == dev && p->pagesets[i].ino == ino)
			return &p->pagesets[i];
	if (VEC_PUSH(p->pagesets, p->npagesets, p->cappagesets,
		     ((struct pageset){ .dev = dev, .ino = ino })))
		return NULL;
	return &p->pagesets[p->npagesets - 1];
}
