// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "idmap.h"
#include "procfs.h"
#include "procs.h"

static struct idmap procs, threads;

struct proc *proc_get(uint32_t pid)
{
	return idmap_get(&procs, pid);
}

static struct proc *proc_new(uint32_t pid)
{
	struct proc *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->pid = pid;
	p->next_id = 1;
	if (idmap_put(&procs, pid, p)) {
		free(p);
		return NULL;
	}
	return p;
}

bool proc_refresh_names(struct proc *p)
{
	char buf[4096];
	ssize_t n;

	memset(p->comm, 0, sizeof(p->comm));
	if (!procfs_comm(p->pid, "comm", p->comm))
		return false;
	n = procfs_read(p->pid, "cmdline", buf, sizeof(buf));
	if (n > 0)
		p->cmdline = cmdline_intern(buf, n, n == sizeof(buf));
	return true;
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
		snprintf(link, sizeof(link), "%s/%ld", dir, fd);
		fd_assign(p, fd, procfs_read_link(link),
			  fd_cloexec_from_procfs(p->pid, fd));
	}
	closedir(d);
}

struct proc *proc_from_procfs(uint32_t pid)
{
	struct proc *p = proc_get(pid);
	char state;
	pid_t ppid;

	if (p)
		return p;
	p = proc_new(pid);
	if (!p)
		return NULL;
	if (procfs_stat(pid, &state, &ppid, NULL) == 0 && ppid > 0)
		p->ppid = ppid;
	p->cwd = procfs_link(pid, "cwd");
	p->exe = procfs_link(pid, "exe");
	read_fd_table(p);
	proc_refresh_names(p);
	return p;
}

struct proc *proc_fork(struct proc *parent, uint32_t child_pid)
{
	struct proc *c = proc_get(child_pid);

	if (c)
		return c;
	c = proc_new(child_pid);
	if (!c)
		return NULL;
	c->ppid = parent->pid;
	c->cwd = parent->cwd;
	c->exe = parent->exe;
	c->cmdline = parent->cmdline;
	memcpy(c->comm, parent->comm, sizeof(c->comm));
	for (uint32_t fd = 0; fd < parent->nfds; fd++)
		if (parent->fds[fd].path)
			fd_assign(c, fd, parent->fds[fd].path,
			       parent->fds[fd].cloexec);
	for (uint32_t i = 0; i < parent->nmaps; i++)
		map_add(c, parent->maps[i].addr, parent->maps[i].len,
			parent->maps[i].path);
	ctx_copy(&c->ctx, &parent->ctx); /* the child has the same memory */
	return c;
}

void proc_free(struct proc *p)
{
	if (!p)
		return;
	idmap_del(&procs, p->pid);
	free(p->fds);
	free(p->maps);
	ctx_free(&p->ctx);
	free(p);
}

struct thread *thread_get(uint32_t tid)
{
	return idmap_get(&threads, tid);
}

struct thread *thread_add(uint32_t tid, uint32_t pid, const char *comm)
{
	struct thread *t = thread_get(tid);
	struct proc *p;

	if (!t) {
		t = calloc(1, sizeof(*t));
		if (!t || idmap_put(&threads, tid, t)) {
			free(t);
			return NULL;
		}
		p = proc_get(pid);
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

void thread_free(uint32_t tid)
{
	struct thread *t = idmap_del(&threads, tid);
	struct proc *p;

	if (!t)
		return;
	p = proc_get(t->pid);
	if (p && p->nthreads)
		p->nthreads--;
	phase_stack_free(&t->phases);
	free(t);
}

void procs_each(void (*fn)(struct proc *p, void *ctx), void *ctx)
{
	for (size_t i = 0; i < procs.cap; i++)
		if (procs.keys[i])
			fn(procs.vals[i], ctx);
}

uint32_t procs_count(void)
{
	return procs.n;
}

void procs_free_all(void)
{
	for (size_t i = 0; i < procs.cap; i++) {
		struct proc *p = procs.vals[i];

		if (procs.keys[i]) {
			free(p->fds);
			free(p->maps);
			ctx_free(&p->ctx);
			free(p);
		}
	}
	for (size_t i = 0; i < threads.cap; i++) {
		struct thread *t = threads.vals[i];

		if (threads.keys[i]) {
			phase_stack_free(&t->phases);
			free(t);
		}
	}
	idmap_free(&procs);
	idmap_free(&threads);
}

static bool fd_room(struct proc *p, uint32_t fd)
{
	uint32_t n;
	struct fdent *f;

	if (fd < p->nfds)
		return true;
	if (fd >= FD_LIMIT)
		return false;
	for (n = p->nfds ? p->nfds : 64; n <= fd; n *= 2)
		;
	f = realloc(p->fds, n * sizeof(*f));
	if (!f)
		return false;
	memset(f + p->nfds, 0, (n - p->nfds) * sizeof(*f));
	p->fds = f;
	p->nfds = n;
	return true;
}

struct path *fd_path(struct proc *p, int fd)
{
	char link[64];
	struct path *path;

	if (fd < 0)
		return NULL;
	if ((uint32_t)fd < p->nfds && p->fds[fd].path)
		return p->fds[fd].path;
	/* Opened in a way we do not trace (pipe, socket, SCM_RIGHTS...). */
	snprintf(link, sizeof(link), "/proc/%u/fd/%d", p->pid, fd);
	path = procfs_read_link(link);
	if (path)
		fd_assign(p, fd, path, false);
	return path;
}

void fd_relabel(struct proc *p, int fd, const char *fallback, bool cloexec)
{
	char link[64];
	struct path *path;

	snprintf(link, sizeof(link), "/proc/%u/fd/%d", p->pid, fd);
	path = procfs_read_link(link);
	fd_assign(p, fd, path ? path : path_intern(fallback, strlen(fallback), false),
		  cloexec);
}

void fd_assign(struct proc *p, int fd, struct path *path, bool cloexec)
{
	if (fd < 0 || !fd_room(p, fd))
		return;
	p->fds[fd].path = path;
	p->fds[fd].cloexec = cloexec;
}

void fd_close(struct proc *p, int fd)
{
	if (fd >= 0 && (uint32_t)fd < p->nfds)
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
	p->nmaps = 0;
}

void map_add(struct proc *p, uint64_t addr, uint64_t len, struct path *path)
{
	struct mapping *m;

	if (p->nmaps == p->capmaps) {
		uint32_t n = p->capmaps ? p->capmaps * 2 : 16;

		m = realloc(p->maps, n * sizeof(*m));
		if (!m)
			return;
		p->maps = m;
		p->capmaps = n;
	}
	p->maps[p->nmaps++] = (struct mapping){ addr, len, path };
}

struct mapping *map_find(struct proc *p, uint64_t addr)
{
	for (uint32_t i = 0; i < p->nmaps; i++)
		if (addr >= p->maps[i].addr &&
		    addr - p->maps[i].addr < p->maps[i].len)
			return &p->maps[i];
	return NULL;
}

/* Forgets mappings that [addr, addr+len) covers entirely; a partial unmap
 * keeps the entry, which only matters for naming a later msync. */
void map_remove(struct proc *p, uint64_t addr, uint64_t len)
{
	for (uint32_t i = 0; i < p->nmaps;) {
		struct mapping *m = &p->maps[i];

		if (m->addr >= addr && m->addr + m->len <= addr + len)
			*m = p->maps[--p->nmaps];
		else
			i++;
	}
}
