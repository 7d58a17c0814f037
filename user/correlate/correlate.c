// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What each syscall does to the model of processes: which files its
 * arguments name (resolved before its effects apply), then its effects on
 * the fd table, cwd and mappings (after its event is written: that order
 * is what names a close's file). Forks, execs, exits and renames change
 * the processes themselves (lifecycle.c).
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include "correlate/state.h"
#include "lib/procfs.h"
#include "lib/vec.h"
#include "model/paths.h"

/* A syscall's return value below this is an error (-errno). */
#define MAX_ERRNO 4095
/* close_range(2)'s flag, not in Debian 12's headers. */
#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1u << 2)
#endif

static bool is_error(int64_t ret)
{
	return ret < 0 && ret >= -MAX_ERRNO;
}

struct proc *trace_proc(struct trace *t, uint32_t pid)
{
	struct proc *p = proc_get(&t->model, pid);
	uint64_t alive = pid == t->rec_pid ? t->rec_ns : 0;

	if (p) {
		p->live.seen = true;
		proc_alive(p, alive);
	} else {
		p = proc_from_procfs(&t->model, pid, alive);
		if (p) {
			t->stats.live++;
			files_adopted(&t->files, p);
			if (t->cfg.on_found)
				t->cfg.on_found(t->cfg.on_program_ctx, pid, p->alive_ns);
		}
	}
	return p;
}

struct thread *trace_thread(struct trace *t, struct proc *p, uint32_t tid)
{
	struct thread *th = thread_get(&t->model, tid);
	char comm[DFT_COMM_LEN], what[32];

	if (th) {
		th->live.seen = true;
		return th;
	}
	snprintf(what, sizeof(what), "task/%u/comm", tid);
	if (!procfs_comm(p->pid, what, comm) || !proc_proven(p))
		comm[0] = 0;
	return thread_add(&t->model, tid, p->pid, comm[0] ? comm : p->comm);
}

void end_event(struct trace *t, struct sink *s)
{
	if (writer_end_event(s))
		files_failed(&t->files, -EIO, "cannot write the trace");
	if (__builtin_expect(s == t->files.flight, 0) &&
	    s->buf.len + s->recs.len >= FLIGHT_TAKE_BYTES)
		flight_take(t);
}

/* The file(s) a syscall touches, resolved before its effects apply. */
struct named_files {
	struct istr *f[2];
};

static struct istr *resolve_arg(struct proc *p, const struct sc_desc *d,
				const struct dft_syscall *e, int i,
				const char *str, size_t len, bool trunc)
{
	struct istr *base = p->cwd;

	if ((len == 0 || str[0] != '/') && i > 0 &&
	    d->args[i - 1].type == ARG_DIRFD && (int)e->args[i - 1] != AT_FDCWD)
		base = fd_path_at(p, (int)e->args[i - 1], e->h.ts);
	return path_resolve(base, str, len, trunc);
}

static void name_files(struct proc *p, const struct sc_desc *d,
		       const struct dft_syscall *e, const char **str,
		       const size_t *len, uint8_t flags, struct named_files *out)
{
	int npath = 0;

	out->f[0] = out->f[1] = NULL;
	for (int i = 0; i < DFT_SC_NARGS; i++) {
		switch (d->args[i].type) {
		case ARG_FD:
			out->f[0] = fd_path_at(p, (int)e->args[i], e->h.ts);
			break;
		case ARG_FD2:
			out->f[1] = fd_path_at(p, (int)e->args[i], e->h.ts);
			break;
		case ARG_PATH:
			if (npath < 2 && str[npath])
				out->f[npath] = resolve_arg(
					p, d, e, i, str[npath], len[npath],
					flags & (npath ? DFT_CALL_TRUNC1 : DFT_CALL_TRUNC0));
			npath++;
			break;
		default:
			break;
		}
	}
	if (d->effect == FX_MUNMAP) {
		struct mapping *m = map_find(p, e->args[0]);

		out->f[0] = m ? m->path : NULL;
	}
}

/* O_CLOEXEC in a "flags" argument (openat2's comes from its open_how). */
static bool cloexec_requested(const struct sc_desc *d,
			      const struct dft_syscall *e)
{
	for (int i = 0; i < DFT_SC_NARGS; i++)
		if (d->args[i].key && !strcmp(d->args[i].key, "flags"))
			return e->args[i] & O_CLOEXEC;
	return false;
}

/* How /proc/PID/fd shows an fd made by a call we do not name. Pipes and
 * sockets are exact from the inode number the kernel side read; other
 * anonymous inodes are read from /proc, or named after their call. */
static const char *new_fd_kind(const struct sc_desc *d)
{
	static const struct { const char *prefix, *kind; } kinds[] = {
		{ "pipe", "pipe" }, { "socket", "socket" }, { "accept", "socket" },
		{ "eventfd", "anon_inode:[eventfd]" },
		{ "epoll", "anon_inode:[eventpoll]" },
		{ "timerfd", "anon_inode:[timerfd]" },
		{ "signalfd", "anon_inode:[signalfd]" },
		{ "inotify", "anon_inode:inotify" },
		{ "fanotify", "anon_inode:[fanotify]" },
		{ "userfaultfd", "anon_inode:[userfaultfd]" },
		{ "perf_event", "anon_inode:[perf_event]" },
		{ "pidfd", "anon_inode:[pidfd]" },
		{ "io_uring", "anon_inode:[io_uring]" },
		{ "memfd", "memfd:?" },
	};

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (!strncmp(d->syscall, kinds[i].prefix, strlen(kinds[i].prefix)))
			return kinds[i].kind;
	return "handle:?";
}

static void label_new_fd(struct proc *p, const struct sc_desc *d,
			 const struct dft_syscall *e, int fd, uint64_t ino)
{
	const char *kind = new_fd_kind(d);
	struct istr *label;
	char s[64];
	int n;

	if (ino && (!strcmp(kind, "pipe") || !strcmp(kind, "socket"))) {
		n = snprintf(s, sizeof(s), "%s:[%llu]", kind, (unsigned long long)ino);
		label = istr_intern(s, n, false);
	} else {
		label = fd_label(p, fd, kind);
	}
	fd_take(p, fd, label, cloexec_requested(d, e), e->h.ts + e->dur);
}

static void apply_fcntl(struct proc *p, const struct dft_syscall *e,
			const struct named_files *f)
{
	if ((int)e->args[1] == F_SETFD)
		fd_set_cloexec(p, e->args[0], e->args[2] & FD_CLOEXEC);
	else
		fd_take(p, e->ret, f->f[0], (int)e->args[1] == F_DUPFD_CLOEXEC,
			e->h.ts + e->dur);
}

static void apply_mmap(struct trace *t, struct proc *p,
		       const struct dft_syscall *e, const struct named_files *f)
{
	if (is_error(e->ret))
		return;
	map_add(p, e->ret, e->args[1], f->f[0]);
	if ((e->args[2] & PROT_EXEC) && f->f[0] && t->cfg.on_program)
		t->cfg.on_program(t->cfg.on_program_ctx, p->pid, f->f[0]->str, e->ret,
				  e->args[1]);
}

/* A munmap that succeeded: memory gone from the process (msync, whose
 * address also names a mapping, has the same effect class and unmaps
 * nothing). */
static bool unmapped(const struct sc_desc *d, int64_t ret)
{
	return d->effect == FX_MUNMAP && ret == 0 && !strcmp(d->syscall, "munmap");
}

/* The launched command before its exec: the tracer's code, not its. */
static bool launched_not_execd(const struct trace *t, const struct proc *p)
{
	return t->cfg.root_launched && !t->root_execd && p->pid == t->cfg.root_pid;
}

/* fd-table and mapping updates, applied after the event is written. */
static void apply_effect(struct trace *t, struct proc *p, const struct sc_desc *d,
			 const struct dft_syscall *e, const struct named_files *f)
{
	int64_t ret = e->ret;

	switch (d->effect) {
	case FX_OPEN:
		if (ret >= 0)
			fd_take(p, ret, f->f[0], cloexec_requested(d, e), e->h.ts + e->dur);
		break;
	case FX_DUP2:	/* replaces what the fd was, at once */
		if (ret >= 0)
			fd_assign(p, ret, f->f[0], cloexec_requested(d, e));
		break;
	case FX_NEWFD:
		if (ret >= 0)
			label_new_fd(p, d, e, ret, d->silent ? e->args[5] : 0);
		break;
	case FX_NEWFD_PAIR:
		if (ret == 0 && e->args[5] != ~0ull) {
			label_new_fd(p, d, e, (int32_t)e->args[5], e->args[3]);
			label_new_fd(p, d, e, (int32_t)(e->args[5] >> 32), e->args[4]);
		}
		break;
	case FX_CLOSE:
		if (ret == 0)
			fd_close_at(p, e->args[0], e->h.ts);
		break;
	case FX_CLOSE_RANGE:
		if (ret == 0)
			fd_close_range(p, e->args[0], e->args[1],
				       e->args[2] & CLOSE_RANGE_CLOEXEC);
		break;
	case FX_DUP:
		if (ret >= 0)
			fd_take(p, ret, f->f[0], false, e->h.ts + e->dur);
		break;
	case FX_FCNTL:
		if (ret >= 0)
			apply_fcntl(p, e, f);
		break;
	case FX_CHDIR:
	case FX_FCHDIR:
		if (ret == 0 && f->f[0])
			p->cwd = f->f[0];
		break;
	case FX_MMAP:
		apply_mmap(t, p, e, f);
		break;
	case FX_MUNMAP:
		if (unmapped(d, ret))
			map_remove(p, e->args[0], e->args[1]);
		break;
	default:
		break;
	}
}

static void count_op(struct trace *t, const struct sc_desc *d,
		     const struct thread *th, int64_t ret)
{
	const struct phase_frame *top = th ? phase_top(&th->phases) : NULL;

	stats_count(&t->stats, sc_name_index(d), 1, d->moves_bytes, ret,
		    top ? top->cat : NULL, top ? top->name : NULL);
}

/* --flight: the kernel folds none of the calls it sends (bpf/core.bpf.h:
 * flight_on), so each is folded here, once: as it comes from the ring,
 * not as a peek takes it (the kernel folds a batch the ring has no room
 * for, peeked or not). Keyed by the file the kernel would key it by: the
 * one its fd_arg names, while the call is in flight. */
static void fold_sent(struct trace *t, struct proc *p, const struct sc_desc *d,
		      const struct dft_syscall *e, const struct named_files *f)
{
	const struct istr *file = NULL;
	int fd = -1;

	if (!t->flight || t->peeking)
		return;
	if (d->fd_arg == DFT_FD_RET ? e->ret >= 0 : d->fd_arg) {
		fd = d->fd_arg == DFT_FD_RET ? (int)e->ret : (int)e->args[d->fd_arg - 1];
		file = f->f[0];
	}
	fold_sent_call(t, p, thread_get(&t->model, e->h.tid), e, file, file ? fd : -1);
}

void on_syscall(struct trace *t, const struct dft_syscall *e,
		const char **str, const size_t *len, uint8_t flags)
{
	const struct sc_desc *d = sc_lookup(e->h.nr);
	struct named_files f;
	struct nesting n;
	struct thread *th;
	struct proc *p;
	struct sink *s;

	if (!d)
		return;
	if (!(p = trace_proc(t, e->h.tgid))) { /* no memory for it */
		t->stats.folds_orphaned += t->flight && !t->peeking && !d->silent;
		return;
	}
	if (d->silent) {
		apply_effect(t, p, d, e, NULL);
		return;
	}
	/* a library unloaded: its annotations' strings with it (whatever
	 * the model knew of the mapping), and maybe its probes */
	if (p->sites.n && unmapped(d, e->ret))
		forget_sites(t, p, e->args[0], e->args[1]);
	if (unmapped(d, e->ret) && t->cfg.on_unmapped && !launched_not_execd(t, p))
		t->cfg.on_unmapped(t->cfg.on_program_ctx, p->pid, e->h.tid, e->args[0],
				   e->args[1], e->h.ts);
	name_files(p, d, e, str, len, flags, &f);
	fold_sent(t, p, d, e, &f);
	if (e->h.flags & DFT_CALL_QUIET) { /* outside --steps' windows */
		apply_effect(t, p, d, e, &f);
		return;
	}
	if (d->effect == FX_MUNMAP && !f.f[0])
		return; /* anonymous memory: not file I/O */
	th = trace_thread(t, p, e->h.tid);
	if (th && !record_is_new(th, e->h.ts))
		return;
	s = files_event_sink(&t->files, p);
	if (s) {
		n = nest_in(p, th);
		writer_syscall(&t->writer, s, p, th, &n, d, e, f.f[0], f.f[1]);
		end_event(t, s);
		flight_io(t, p, e->h.tid, e->h.ts, e->dur, f.f[0]);
	}
	if (!t->cfg.profile) /* --profile, --flight: its total counts it */
		count_op(t, d, th, e->ret);
	if (th && d->moves_bytes && e->ret > 0 && !is_error(e->ret))
		th->data_ts = e->h.ts; /* no thread: no memory for it */
	apply_effect(t, p, d, e, &f);
}

void on_paths(struct trace *t, const struct dft_paths *e, size_t size)
{
	const char *data = (const char *)(e + 1);
	size_t avail = size - sizeof(*e), len[2] = { 0, 0 };
	const char *str[2] = { NULL, NULL };

	for (int i = 0, off = 0; i < 2; i++) {
		size_t n = e->len[i];

		if (!n || off + n > avail)
			break;
		str[i] = data + off;
		len[i] = strnlen(str[i], n);
		off += n;
	}
	on_syscall(t, &e->sc, str, len, e->sc.h.flags);
}
