// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The life of processes and threads in the model: forks, execs (a new
 * program, its fds closed on exec), exits, renames, and the sweep of
 * those whose exit record was lost. What their syscalls do to them is
 * correlate.c's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "correlate/state.h"
#include "lib/clock.h"
#include "lib/procfs.h"
#include "lib/vec.h"
#include "model/gpucalls.h"
#include "model/paths.h"

/* ---- processes ---- */

/* A PROC event of p's thread tid, left open for its args; NULL if p's
 * file cannot be written. */
static struct sink *proc_event(struct trace *t, struct proc *p, uint32_t tid,
			       const char *name, uint64_t ts_ns)
{
	struct sink *s = files_sink(&t->files, p);
	struct thread *th;
	struct nesting n;

	if (!s)
		return NULL;
	th = trace_thread(t, p, tid);
	writer_names(&t->writer, s, p, th);
	n = nest_in(p, th);
	writer_proc_event(&t->writer, s, p, tid, &n, name, ts_ns);
	return s;
}

void on_fork(struct trace *t, const struct dft_fork *e)
{
	struct proc *p = trace_proc(t, e->h.tgid), *c;

	if (!p)
		return;
	if (e->h.flags & DFT_FORK_UNTRACKED)
		t->stats.untracked_children++;
	if (e->h.flags & DFT_FORK_THREAD) {
		thread_add(&t->model, e->child_tid, p->pid, e->comm);
		return;
	}
	c = proc_get(&t->model, e->child_tgid);
	if (!c) {
		c = proc_fork(&t->model, p, e->child_tgid);
		if (c)
			t->stats.live++;
		/* its mappings are its parent's (a child found before its
		 * fork record came had its own read from /proc) */
		if (c && t->cfg.on_forked && !(e->h.flags & DFT_FORK_UNTRACKED))
			t->cfg.on_forked(t->cfg.on_program_ctx, p->pid, c->pid);
	}
	if (c) {
		/* the record was made once the child was */
		proc_alive(c, e->h.ts);
		thread_add(&t->model, e->child_tid, c->pid, e->comm);
	}
}

/* The number in "/proc/self/fd/N" or "/dev/fd/N" style names, or -1. */
static int fd_in_name(const char *name, const char *prefix)
{
	size_t n = strlen(prefix);
	char *end;
	long fd;

	if (strncmp(name, prefix, n) || !name[n])
		return -1;
	fd = strtol(name + n, &end, 10);
	return *end || fd < 0 || fd > INT32_MAX ? -1 : (int)fd;
}

/*
 * The program an exec runs, from the name execve() was given (the
 * kernel's bprm->filename), as the process saw it before the exec:
 * /proc/self/exe is the program it was running, /dev/fd/N (fexecve) the
 * file behind its fd N, a relative name is seen from its cwd. The name is
 * in the record, so a process that is gone by the time the record is read
 * is named too. Sets *indirect for a name that says nothing of the program.
 */
static struct istr *exec_program(struct proc *p, const struct dft_exec *e,
				 bool *indirect)
{
	size_t n = strnlen(e->filename, sizeof(e->filename));
	int fd;

	*indirect = false;
	if (!e->filename_len || !n)
		return proc_link(p, "exe");
	if (!strcmp(e->filename, "/proc/self/exe") ||
	    !strcmp(e->filename, "/proc/thread-self/exe")) {
		*indirect = true;
		return p->exe ? p->exe : proc_link(p, "exe");
	}
	fd = fd_in_name(e->filename, "/dev/fd/");
	if (fd < 0)
		fd = fd_in_name(e->filename, "/proc/self/fd/");
	if (fd >= 0) {
		*indirect = true;
		return fd_path(p, fd);
	}
	return path_resolve(p->cwd, e->filename, n, n == DFT_PATH_MAX - 1);
}

/* A program run through /proc/self/exe or an fd is named after itself,
 * not "exe" or "3" as the kernel names it. */
static void name_after(struct proc *p, struct thread *th, const struct istr *prog)
{
	const char *base = strrchr(prog->str, '/');

	base = base ? base + 1 : prog->str;
	if (!*base)
		return;
	snprintf(p->comm, sizeof(p->comm), "%s", base);
	if (th)
		memcpy(th->comm, p->comm, DFT_COMM_LEN);
}

/* The old program's regions, context, close-on-exec fds and mappings end
 * with it; names come from the new one. */
static struct thread *become_new_program(struct trace *t, struct proc *p,
					 const struct dft_exec *e)
{
	struct thread *th = thread_get(&t->model, e->old_tid);
	struct istr *prog;
	bool indirect;

	if (th && th->phases.depth)
		close_regions(t, p, th, 0, e->h.ts, "open_at_exec");
	ctx_free(&p->ctx);
	fileid_forget_process(&t->fileids, p->pid);
	if (e->old_tid != e->h.tid)
		thread_free(&t->model, e->old_tid);
	prog = exec_program(p, e, &indirect);
	/* from the record: the process may be gone by now */
	p->job = job_rank_parse(e->env, e->env_len < DFT_ENV_MAX ? e->env_len : DFT_ENV_MAX);
	if (p->job.rank < 0 && e->env_len >= DFT_ENV_MAX)
		p->job = proc_job_rank(p); /* past the part copied */
	fd_exec(p);
	if (t->cfg.on_unmapped)
		t->cfg.on_unmapped(t->cfg.on_program_ctx, p->pid, e->h.tid, 0, UINT64_MAX,
				   e->h.ts);
	gpu_state_free(p->gpu); /* a new program: none of it is its */
	p->gpu = NULL;
	forget_sites(t, p, 0, UINT64_MAX);
	memcpy(p->comm, e->comm, DFT_COMM_LEN);
	p->comm[DFT_COMM_LEN - 1] = 0;
	if (e->argv_len)
		p->cmdline = cmdline_intern(e->argv, e->argv_len,
					    e->argv_len >= DFT_ARGV_MAX);
	th = thread_add(&t->model, e->h.tid, p->pid, p->comm);
	p->exe = prog;
	/* their pages are loading code, by the ids their faults name them
	 * with (on overlayfs, not those /proc shows) */
	if (e->prog.ino)
		fileid_learn(&t->fileids, e->prog.dev, e->prog.ino, NULL, true);
	if (e->entry.ino)
		fileid_learn(&t->fileids, e->entry.dev, e->entry.ino, NULL, true);
	if (prog && indirect)
		name_after(p, th, prog);
	return th;
}

/* A thread has ended: nothing of it is kept. */
static void forget_thread(struct trace *t, struct proc *p, uint32_t tid)
{
	if (p)
		fold_write_totals(t, p, tid);
	files_forget_names(&t->files, p, 0, tid);
	thread_free(&t->model, tid);
}

static void forget_process(struct trace *t, struct proc *p, uint32_t tid,
			   uint64_t ts_ns)
{
	fold_write_totals(t, p, 0);
	flight_forget(t, p->pid);
	fileid_forget_process(&t->fileids, p->pid);
	forget_sites(t, p, 0, UINT64_MAX);
	if (t->cfg.on_unmapped)
		t->cfg.on_unmapped(t->cfg.on_program_ctx, p->pid, 0, 0, UINT64_MAX, 0);
	files_forget_names(&t->files, p, p->pid, tid);
	thread_free(&t->model, tid);
	files_close_process(&t->files, p, writer_wall_us(&t->writer, ts_ns));
	proc_free(&t->model, p);
	if (t->stats.live)
		t->stats.live--;
}

void on_exec(struct trace *t, const struct dft_exec *e)
{
	bool privileged = e->h.flags & DFT_EXEC_PRIVILEGED;
	/* it became another tracer: its own, not ours */
	bool left = e->h.flags & DFT_EXEC_LEFT;
	struct proc *p = trace_proc(t, e->h.tgid);
	struct sink *s;

	if (!p)
		return;
	if (p->pid == t->cfg.root_pid)
		t->root_execd = true;
	become_new_program(t, p, e);
	files_renamed(&t->files, p);
	/* the new name may have been written already (a record the exec
	 * itself made came first): again, now with the rank */
	if (p->job.rank >= 0)
		files_forget_names(&t->files, p, p->pid, e->h.tid);
	/* A new program may carry annotations. */
	if (p->exe && !privileged && !left && t->cfg.on_program)
		t->cfg.on_program(t->cfg.on_program_ctx, p->pid, p->exe->str, 0, 0);
	s = files_sink(&t->files, p);
	if (s) {
		if (p->cmdline)
			writer_sh(&t->writer, s, p->pid, p->cmdline);
		if (p->exe)
			writer_sh(&t->writer, s, p->pid, p->exe);
	}
	if ((s = proc_event(t, p, e->h.tid, "exec", e->h.ts))) {
		writer_exec_args(&t->writer, s, p, privileged);
		end_event(t, s);
	}
	/* The kernel side has stopped tracing it: this is its last record. */
	if (privileged)
		t->stats.privileged++;
	if (privileged || left)
		forget_process(t, p, e->h.tid, e->h.ts);
}

/* Whether e's thread is the last of p's: the kernel side says so, or
 * guessed so (before 6.16, bpf/lifecycle.bpf.c), or guessed so of
 * another thread, and it is the last this side knows. */
static bool last_thread(struct proc *p, const struct thread *th, const struct dft_exit *e)
{
	bool others = p->nthreads > (th ? 1u : 0u);

	if ((e->h.flags & DFT_EXIT_GROUP_DEAD) && !p->ending) {
		p->ending = true;
		p->end_code = e->exit_code;
	}
	if (!(e->h.flags & DFT_EXIT_GROUP_DEAD) || (e->h.flags & DFT_EXIT_GROUP_GUESSED))
		return p->ending && !others;
	return true;
}

void on_exit_record(struct trace *t, const struct dft_exit *e)
{
	struct proc *p = proc_get(&t->model, e->h.tgid);
	struct thread *th = thread_get(&t->model, e->h.tid);
	struct sink *s;

	if (p && th && th->phases.depth)
		close_regions(t, p, th, 0, e->h.ts, "open_at_exit");
	if (!p || !last_thread(p, th, e)) {
		forget_thread(t, p, e->h.tid);
		return;
	}
	if (t->cfg.process_ended)
		t->cfg.process_ended(t->cfg.lost_name_ctx, t, p->pid);
	flight_exit(t, p, e->h.tid, p->end_code, e->h.ts);
	if ((s = proc_event(t, p, e->h.tid, "exit", e->h.ts))) {
		writer_exit_args(s, p->end_code);
		end_event(t, s);
	}
	forget_process(t, p, e->h.tid, e->h.ts);
}

void on_comm(struct trace *t, const struct dft_comm *e)
{
	struct proc *p = trace_proc(t, e->h.tgid);

	if (!p)
		return;
	thread_add(&t->model, e->h.tid, p->pid, e->comm);
	if (e->h.tid == p->pid) {
		memcpy(p->comm, e->comm, DFT_COMM_LEN);
		p->comm[DFT_COMM_LEN - 1] = 0;
	}
}

void on_fds_lost(struct trace *t, const struct dft_header *h)
{
	struct proc *p = proc_get(&t->model, h->tgid);

	if (p)
		fd_unknown_all(p);
}

/* ---- the sweep of the dead ---- */

struct sweep {
	struct trace *t;
	bool (*exited)(pid_t pid);
	bool caught_up;
	uint32_t *ids;
	uint32_t n, cap;
};

/* Gone, or its id now names a task that started later (pids wrap). */
static bool found_gone(struct liveness *l, bool (*exited)(pid_t pid), uint32_t id)
{
	uint64_t now;

	if (exited(id))
		return true;
	now = procfs_start(id);
	if (!now) /* unreadable now (no fd left?): asked again next time */
		return false;
	if (!l->start)
		l->start = now;
	return now != l->start;
}

/* Silent since the last sweep and gone: its exit record was lost, or
 * waits in the ring behind a backlog. So it is forgotten at a later
 * sweep, the ring read up to where it ended at this one: a record of it written before
 * it was found gone has been read by then, and would have made it seen
 * (forgotten earlier, its late exit record made it anew, a zombie's
 * file opened a second time). */
static bool swept(struct liveness *l, bool (*exited)(pid_t pid), uint32_t id, bool caught_up)
{
	bool silent = !l->seen;

	l->seen = false;
	if (!silent) {
		l->gone = false;
		return false;
	}
	if (l->gone)
		return caught_up;
	l->gone = found_gone(l, exited, id);
	return false;
}

static void sweep_proc(struct proc *p, void *ctx)
{
	struct sweep *s = ctx;

	if (swept(&p->live, s->exited, p->pid, s->caught_up))
		(void)VEC_PUSH(s->ids, s->n, s->cap, p->pid);
}

/* A thread of a process that is gone, or was never known, goes too. */
static void sweep_thread(struct thread *th, void *ctx)
{
	struct sweep *s = ctx;

	if (swept(&th->live, s->exited, th->tid, s->caught_up) ||
	    !proc_get(&s->t->model, th->pid))
		(void)VEC_PUSH(s->ids, s->n, s->cap, th->tid);
}

void trace_sweep(struct trace *t, bool (*exited)(pid_t pid), bool caught_up)
{
	struct sweep s = { t, exited, caught_up, NULL, 0, 0 };
	uint64_t now = clock_mono_ns();
	struct thread *th;
	struct proc *p;

	/* threads first: a process's regions end, and its totals go,
	 * while it is known (a dead process's threads were silent too) */
	threads_each(&t->model, sweep_thread, &s);
	for (uint32_t i = 0; i < s.n; i++) {
		th = thread_get(&t->model, s.ids[i]);
		p = th ? proc_get(&t->model, th->pid) : NULL;
		if (p && th->phases.depth)
			close_regions(t, p, th, 0, now, "open_at_exit");
		forget_thread(t, p, s.ids[i]);
	}
	s.n = 0;
	procs_each(&t->model, sweep_proc, &s);
	for (uint32_t i = 0; i < s.n; i++) {
		if (!(p = proc_get(&t->model, s.ids[i])))
			continue;
		if (t->cfg.process_ended)
			t->cfg.process_ended(t->cfg.lost_name_ctx, t, p->pid);
		forget_process(t, p, p->pid, now);
		t->stats.swept++;
	}
	free(s.ids);
}
