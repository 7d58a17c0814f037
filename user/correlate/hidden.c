// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * I/O that no syscall shows whole: runs of pages through file mappings,
 * io_uring requests, AIO iocbs. Each becomes one POSIX event named so
 * that DFAnalyzer counts its bytes (mmap_read, io_uring_write, aio_read),
 * in the phase of the thread that did it; io_uring's opens and closes
 * change the fd table as their syscalls do.
 */
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/io_uring.h>
#include "correlate/state.h"
#include "model/paths.h"

/* The kernel's page size, which its page indexes count in. */
static uint64_t page_size(void)
{
	static uint64_t size;

	if (!size)
		size = (uint64_t)sysconf(_SC_PAGESIZE);
	return size;
}

/* io_uring's and AIO's operations, as events name them. */
static const char *uring_name(unsigned int op)
{
	switch (op) {
	case IORING_OP_READ: return "io_uring_read";
	case IORING_OP_WRITE: return "io_uring_write";
	case IORING_OP_READV: return "io_uring_readv";
	case IORING_OP_WRITEV: return "io_uring_writev";
	case IORING_OP_READ_FIXED: return "io_uring_read_fixed";
	case IORING_OP_WRITE_FIXED: return "io_uring_write_fixed";
	case IORING_OP_FSYNC: return "io_uring_fsync";
	case IORING_OP_OPENAT:
	case IORING_OP_OPENAT2: return "io_uring_openat";
	case IORING_OP_CLOSE: return "io_uring_close";
	case IORING_OP_STATX: return "io_uring_statx";
	case IORING_OP_FALLOCATE: return "io_uring_fallocate";
	case IORING_OP_SYNC_FILE_RANGE: return "io_uring_sync_file_range";
	default: return "io_uring_op";
	}
}

/* IOCB_CMD_*: include/uapi/linux/aio_abi.h */
static const char *aio_name(unsigned int op)
{
	static const char *const names[] = {
		"aio_read", "aio_write", "aio_fsync", "aio_fdsync", "aio_op",
		"aio_poll", "aio_noop", "aio_readv", "aio_writev",
	};

	return op < sizeof(names) / sizeof(names[0]) ? names[op] : "aio_op";
}

/* The names come from the fixed tables above, one after another mostly
 * the same: their index and kind are looked up when the name changes,
 * not for every request. */
static void count(struct trace *t, const char *name, const struct thread *th,
		  int64_t bytes)
{
	static const char *last;
	static int index;
	static bool moves;
	const struct phase_frame *top = phase_top(&th->phases);

	if (name != last) {
		last = name;
		index = sc_index_of_name(name);
		moves = sc_bytes_of(name, strlen(name)) != SC_BYTES_NONE;
	}
	stats_count(&t->stats, index, 1, moves, bytes,
		    top ? top->cat : NULL, top ? top->name : NULL);
}

/* --profile writes these too. Under --flight they go to the window
 * apart, not through the file's copy: there the window's own FH lines
 * name their files, written again whenever the window let them go. */
static void write_io(struct trace *t, struct proc *p, struct thread *th,
		     const struct hidden_io *io)
{
	struct sink *s = files_sink(&t->files, p), *w = t->files.flight;
	struct nesting n = nest_in(p, th);

	if (s) {
		files_own(s, true);
		writer_hidden_io(&t->writer, s, p, th, &n, io);
		end_event(t, s);
		files_own(s, false);
	}
	if (w) {
		writer_hidden_io(&t->writer, w, p, th, &n, io);
		end_event(t, w);
		flight_io(t, p, th->tid, io->ts_ns, io->dur_ns, io->file);
	}
	count(t, io->name, th, io->ret);
}

/* The run's ranges as the thread touched them (they may overlap: the
 * kernel side leaves the merging here), sorted and merged; how many. */
static unsigned int merge_ranges(const struct dft_mmap *e, uint64_t *lo, uint64_t *hi)
{
	unsigned int n = 0, m = e->n < DFT_MMAP_RANGES ? e->n : DFT_MMAP_RANGES;

	for (unsigned int i = 0; i < m; i++) {
		unsigned int j = n++;

		if (e->hi[i] <= e->lo[i]) {
			n--;
			continue;
		}
		/* insertion by lo: eight at most */
		for (; j > 0 && lo[j - 1] > e->lo[i]; j--) {
			lo[j] = lo[j - 1];
			hi[j] = hi[j - 1];
		}
		lo[j] = e->lo[i];
		hi[j] = e->hi[i];
	}
	m = n;
	n = 0;
	for (unsigned int i = 0; i < m; i++) {
		if (n && lo[i] <= hi[n - 1]) {
			hi[n - 1] = hi[i] > hi[n - 1] ? hi[i] : hi[n - 1];
			continue;
		}
		lo[n] = lo[i];
		hi[n++] = hi[i];
	}
	return n;
}

/* Pages of the run newly mapped in (a read), or dirtied (a write); and
 * the span they lie in. */
static uint64_t run_pages(struct proc *p, const struct dft_mmap *e,
			  uint64_t *first, uint64_t *end)
{
	struct pageset *set = e->write ? NULL : proc_pageset(p, e->file.dev, e->file.ino);
	uint64_t lo[DFT_MMAP_RANGES], hi[DFT_MMAP_RANGES], pages = 0;
	unsigned int n = merge_ranges(e, lo, hi);

	*first = n ? lo[0] : 0;
	*end = n ? hi[n - 1] : 0;
	for (unsigned int i = 0; i < n; i++)
		pages += set ? pageset_add(set, lo[i], hi[i]) : hi[i] - lo[i];
	return pages;
}

void on_mmap(struct trace *t, const struct dft_mmap *e)
{
	struct proc *p = trace_proc(t, e->h.tgid);
	struct thread *th = p ? trace_thread(t, p, e->h.tid) : NULL;
	uint64_t first, end, pages, page = page_size();
	struct istr *path;

	/* the launched command, before its exec, is the tracer's code */
	if (!th || (t->cfg.root_launched && !t->root_execd))
		return;
	/* loading a program or a library is not reading data; the kernel
	 * knows the program itself, not worth a look at /proc (each forked
	 * worker faults it in anew) */
	if (e->code) {
		fileid_learn(&t->fileids, e->file.dev, e->file.ino, NULL, true);
		return;
	}
	if (fileid_is_code(&t->fileids, e->file.dev, e->file.ino))
		return;
	/* named first: that learns from /proc whether it is code */
	path = fileid_path(&t->fileids, p, e->file.dev, e->file.ino);
	if (fileid_is_code(&t->fileids, e->file.dev, e->file.ino))
		return;
	pages = run_pages(p, e, &first, &end);
	struct event_arg args[] = {
		IO_ARG(offset, first * page),
		IO_ARG(span, (end - first) * page),
		IO_ARG(pages, pages),
		IO_ARG(faults, e->faults),
		IO_ARG(misses, e->misses),
	};
	struct hidden_io io = {
		.name = e->write ? "mmap_write" : "mmap_read",
		.ts_ns = e->h.ts, .dur_ns = e->last_ts - e->h.ts,
		.ret = pages * page, .args = args,
		/* dirtied pages: misses mean nothing there */
		.nargs = e->write ? 3 : 5,
	};

	io.file = path;
	write_io(t, p, th, &io);
}

void on_fileid(struct trace *t, const struct dft_fileid *e)
{
	struct proc *p = trace_proc(t, e->h.tgid);
	struct istr *path = p ? fd_path(p, e->fd) : NULL;

	if (!p)
		return;
	if (e->addr)
		map_set_file(p, e->addr, e->file.dev, e->file.ino);
	fileid_learn(&t->fileids, e->file.dev, e->file.ino, path, e->prot & PROT_EXEC);
}

/* io_uring requests whose fd field names no file they act on: it is
 * unused (0 in a zeroed SQE, which is stdin), another request's fd
 * (a cancel's), or a directory the path is seen from. Numbers of the
 * ABI: those past Debian 12's header are written out. */
static bool uring_fd_is_file(unsigned int op)
{
	switch (op) {
	case IORING_OP_NOP: case IORING_OP_POLL_REMOVE: case IORING_OP_TIMEOUT:
	case IORING_OP_TIMEOUT_REMOVE: case IORING_OP_ASYNC_CANCEL:
	case IORING_OP_LINK_TIMEOUT: case IORING_OP_FILES_UPDATE:
	case IORING_OP_PROVIDE_BUFFERS: case IORING_OP_REMOVE_BUFFERS:
	case IORING_OP_SOCKET: case IORING_OP_SETXATTR: case IORING_OP_GETXATTR:
	/* a directory fd */
	case IORING_OP_OPENAT: case IORING_OP_OPENAT2: case IORING_OP_STATX:
	case IORING_OP_RENAMEAT: case IORING_OP_UNLINKAT: case IORING_OP_MKDIRAT:
	case IORING_OP_SYMLINKAT: case IORING_OP_LINKAT:
	case 50: /* WAITID */
	case 51: case 52: case 53: /* FUTEX_WAIT, FUTEX_WAKE, FUTEX_WAITV */
	case 62: /* PIPE */
		return false;
	default:
		return true;
	}
}

/* The file a request is about: its fd, else what the kernel named. */
static const struct istr *async_file(struct trace *t, struct proc *p,
				     const struct dft_async *e)
{
	bool names = e->engine != DFT_ASYNC_URING || uring_fd_is_file(e->opcode);
	struct istr *f = names && !e->fixed && e->fd >= 0 ? fd_path(p, e->fd) : NULL;

	if (!e->file.ino)
		return f;
	/* a registered file's later requests name it this way */
	if (f)
		fileid_learn(&t->fileids, e->file.dev, e->file.ino, f, false);
	return f ? f : fileid_path(&t->fileids, p, e->file.dev, e->file.ino);
}

/* io_uring's opens and closes, as their syscalls would. */
static const struct istr *uring_effect(struct proc *p, const struct dft_async *e)
{
	struct istr *base = p->cwd, *path;
	size_t len = strnlen(e->path, sizeof(e->path));

	if (e->opcode == IORING_OP_CLOSE && !e->fixed && e->res == 0) {
		path = fd_path(p, e->fd);
		fd_close(p, e->fd);
		return path;
	}
	if ((e->opcode != IORING_OP_OPENAT && e->opcode != IORING_OP_OPENAT2 &&
	     e->opcode != IORING_OP_STATX) || !e->path_len)
		return NULL;
	if (len && e->path[0] != '/' && e->fd != AT_FDCWD)
		base = fd_path(p, e->fd);
	path = path_resolve(base, e->path, len, len == sizeof(e->path));
	if (e->opcode != IORING_OP_STATX && e->res >= 0)
		fd_assign(p, e->res, path, false);
	return path;
}

static void on_async(struct trace *t, const struct dft_async *e)
{
	struct proc *p = trace_proc(t, e->h.tgid);
	struct thread *th = p ? trace_thread(t, p, e->h.tid) : NULL;
	bool uring = e->engine == DFT_ASYNC_URING;
	struct event_arg args[] = {
		IO_ARG(fd, e->fd),
		IO_ARG(opcode, e->opcode),
		IO_ARG(fixed, e->fixed),
		IO_ARG(offset, e->offset),
		IO_ARG(count, e->len),
	};
	struct hidden_io io = {
		.name = uring ? uring_name(e->opcode) : aio_name(e->opcode),
		.op = uring ? "io_uring" : "aio",
		.ts_ns = e->h.ts, .dur_ns = e->dur, .ret = e->res,
		.args = args, .nargs = sizeof(args) / sizeof(args[0]),
	};
	const struct istr *named = NULL;

	if (!th)
		return;
	if (uring)
		named = uring_effect(p, e);
	if (e->h.flags & DFT_ASYNC_QUIET) /* outside --steps' windows */
		return;
	io.file = named ? named : async_file(t, p, e);
	write_io(t, p, th, &io);
}

/* The kernel sends only as much of the name as there is. */
static void read_async(struct dft_async *e, const void *data, size_t size)
{
	size_t n = size < sizeof(*e) ? size : sizeof(*e);

	memcpy(e, data, n);
	memset((char *)e + n, 0, sizeof(*e) - n);
	if (e->path_len > n - offsetof(struct dft_async, path))
		e->path_len = n - offsetof(struct dft_async, path);
}

void on_async_record(struct trace *t, const void *data, size_t size)
{
	struct dft_async e;

	read_async(&e, data, size);
	on_async(t, &e);
}

/* ---- io_uring: a request's two records, paired by its address ---- */

/* Requests never done (a lost end, a ring torn down) would pile up: past
 * this many kept, the older half goes, as the kernel's LRU map did. */
#define URING_PENDING_MAX 65536

static void forget_older_half(struct hmap *pending)
{
	uint64_t key, val, lo = UINT64_MAX, hi = 0, mid, *old;
	size_t it = 0, n = 0;

	while (hmap_next(pending, &it, &key, &val)) {
		uint64_t ts = ((struct dft_async *)(uintptr_t)val)->h.ts;

		lo = ts < lo ? ts : lo;
		hi = ts > hi ? ts : hi;
	}
	mid = lo + (hi - lo) / 2;
	old = malloc(pending->n * sizeof(*old));
	if (!old)
		return;
	for (it = 0; hmap_next(pending, &it, &key, &val);)
		if (((struct dft_async *)(uintptr_t)val)->h.ts <= mid)
			old[n++] = key;
	while (n)
		free(hmap_del_ptr(pending, old[--n]));
	free(old);
}

void on_uring_submit(struct trace *t, const void *data, size_t size)
{
	struct dft_async *e = malloc(sizeof(*e));

	if (!e)
		return;
	read_async(e, data, size);
	/* the address's request before this one lost its end */
	free(hmap_del_ptr(&t->uring_pending, e->req));
	if (t->uring_pending.n >= URING_PENDING_MAX)
		forget_older_half(&t->uring_pending);
	if (hmap_put_ptr(&t->uring_pending, e->req, e))
		free(e);
}

void on_uring_done(struct trace *t, const struct dft_uring_done *d)
{
	struct dft_async *e = hmap_del_ptr(&t->uring_pending, d->req);

	if (!e) /* submitted before the tracer came, or its start was lost */
		return;
	e->dur = d->h.ts - e->h.ts;
	e->res = d->res;
	e->file = d->file;
	on_async(t, e);
	free(e);
}

void uring_pending_free(struct trace *t)
{
	hmap_free_ptrs(&t->uring_pending);
}
