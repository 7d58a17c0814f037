// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The record path's front door: each ring-buffer record is checked for
 * the size its kind needs before anything reads it, then handed to the
 * code that knows what it means. This is the consumer's hot path: no
 * stdio, no allocation per event once paths and tasks are known.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "correlate/state.h"
#include "lib/procfs.h"

/* readlink of /proc/PID/<what> of the first process, interned. By pid,
 * before any record (not through a proc's gate): the tracer's own
 * child, whose pid nobody else can take until the tracer reaps it, or
 * the process the user named, found there just now. */
static struct istr *root_link(uint32_t pid, const char *what)
{
	char buf[4096];
	ssize_t n = procfs_readlink(pid, what, buf, sizeof(buf));

	return n > 0 ? istr_intern(buf, n, false) : NULL;
}

/* What the single file's start and end say of the traced program: the
 * first process as it is (-p), or as it will be once it execs (-- CMD). */
static struct lifecycle describe_root(const struct trace_config *cfg)
{
	/* the tracer's own rank: a -p root may be any process */
	struct lifecycle l = { .pid = cfg->root_pid, .rank = -1, .world_size = -1 };
	char state;
	pid_t ppid;

	if (cfg->root_exe)
		l.exe = istr_cstr(cfg->root_exe);
	else if (!cfg->root_launched)
		l.exe = root_link(cfg->root_pid, "exe");
	l.cwd = root_link(cfg->root_pid, "cwd");
	if (procfs_stat(cfg->root_pid, &state, &ppid, NULL) == 0 && ppid > 0)
		l.ppid = ppid;
	l.ts_us = writer_now_us();
	return l;
}

int trace_new(struct trace **out, const struct trace_config *cfg)
{
	struct trace *t = calloc(1, sizeof(*t));
	struct lifecycle root;
	int err;

	if (!t)
		return -ENOMEM;
	t->cfg = *cfg;
	t->model.gate = (struct proc_gate){ cfg->proven, cfg->proven_ctx };
	err = sc_init();
	if (!err)
		err = writer_init(&t->writer, cfg->cmdline, cfg->inline_paths,
				  &t->stats);
	if (err) {
		free(t);
		return err;
	}
	t->writer.v2 = cfg->format == TRACE_V2;
	if (cfg->clock_offset_ns)
		t->writer.clock_offset_ns = cfg->clock_offset_ns;
	t->writer.cfg = cfg->v2_cfg;
	window_init(&t->window, cfg->steps);
	t->writer.window = &t->window;
	t->writer.features = cfg->features;
	root = describe_root(cfg);
	files_init(&t->files, cfg->single, cfg->outdir, cfg->lost, &t->writer,
		   &t->stats, &root);
	*out = t;
	return 0;
}

void trace_free(struct trace *t)
{
	if (!t)
		return;
	flight_free(t);
	files_free(&t->files);
	writer_free(&t->writer);
	model_free(&t->model);
	fileids_free(&t->fileids);
	fold_phases_free(t);
	uring_pending_free(t);
	phase_totals_free(&t->stats.phases);
	free(t);
}

void trace_adopt(struct trace *t, uint32_t pid, uint64_t alive_ns)
{
	t->rec_pid = pid;
	t->rec_ns = alive_ns;
	trace_proc(t, pid);
	t->rec_pid = 0;
}

static void on_syscall_record(struct trace *t, const struct dft_syscall *e)
{
	const char *str[2] = { NULL, NULL };
	size_t len[2] = { 0, 0 };

	on_syscall(t, e, str, len, 0);
}

/* One dft_io: a call of a thread that shares its fd table. */
static void on_io_record(struct trace *t, const struct dft_io *io)
{
	struct dft_syscall e;

	sc_expand_io(io, &e);
	on_syscall_record(t, &e);
}

/* A call or a region's begin or end its thread kept, in the batch whose
 * header is head. */
static void on_kept(struct trace *t, const struct dft_header *head, const struct dft_kept *k)
{
	struct dft_syscall e;
	struct dft_annot a;

	if (k->kind == DFT_EV_IO) {
		sc_expand_kept(head, k, &e);
		on_syscall_record(t, &e);
	} else if (k->kind == DFT_EV_ANNOT) {
		/* a cached dft_annot: on_annot reads no further than name_ptr */
		a.h = (struct dft_header){ .kind = DFT_EV_ANNOT,
					   .flags = k->flags | DFT_ANNOT_CACHED,
					   .nr = k->nr, .tgid = head->tgid, .tid = head->tid,
					   .io_dur = k->dur, .ts = head->ts + k->dts };
		a.value = k->annot.value;
		a.cat_ptr = k->annot.cat_ptr;
		a.name_ptr = k->annot.name_ptr;
		on_annot(t, &a);
	}
}

/* A thread's batch: its header, then whole entries to the record's end. */
static void on_kept_record(struct trace *t, const struct dft_kept_batch *b, size_t size)
{
	size_t n = (size - sizeof(b->h)) / sizeof(b->e[0]);

	for (size_t i = 0; i < n && i < DFT_IO_BATCH; i++)
		on_kept(t, &b->h, &b->e[i]);
}

bool record_is_new(struct thread *th, uint64_t ts)
{
	for (uint8_t i = 0; i < th->npeeked; i++) {
		if (th->peeked[i] != ts)
			continue;
		th->peeked[i] = th->peeked[--th->npeeked];
		return false;
	}
	if (ts > th->seen_ts)
		th->seen_ts = ts;
	return true;
}

bool annot_is_new(struct thread *th, const struct dft_header *h)
{
	if (!record_is_new(th, h->ts))
		return false;
	/* a place before the peek's last, no later: a ring begun anew (an
	 * exec's) counts its places from its start again, later */
	return !(h->flags & DFT_ANNOT_RING) || !th->ring_peeked_ts ||
	       (int32_t)(h->io_dur - th->ring_peeked) >= 0 || h->ts > th->ring_peeked_ts;
}

void trace_ring_peeked(struct trace *t, uint32_t tid, uint32_t upto, uint64_t last_ts)
{
	struct thread *th = thread_get(&t->model, tid);

	if (th) {
		th->ring_peeked = upto;
		th->ring_peeked_ts = last_ts;
	}
}

void trace_peek_kept(struct trace *t, const struct dft_kept_batch *b, uint32_t n)
{
	struct thread *th = thread_get(&t->model, b->h.tid);

	t->peeking = true;
	for (uint32_t i = 0; i < n && i < DFT_IO_BATCH; i++) {
		uint64_t ts = b->h.ts + b->e[i].dts;

		/* taken already, or no room to drop it when it comes */
		if (th && (ts <= th->seen_ts || th->npeeked == DFT_IO_BATCH))
			continue;
		on_kept(t, &b->h, &b->e[i]);
		th = th ? th : thread_get(&t->model, b->h.tid);
		if (th && th->seen_ts == ts)
			th->peeked[th->npeeked++] = ts;
	}
	t->peeking = false;
}

/* One record of a kind the kernel side sends, checked for its size. */
static void dispatch(struct trace *t, const struct dft_header *h, void *data, size_t size)
{
	switch (h->kind) {
	case DFT_EV_SYSCALL:
		if (size >= sizeof(struct dft_syscall))
			on_syscall_record(t, data);
		break;
	case DFT_EV_IO:
		if (size >= sizeof(struct dft_io))
			on_io_record(t, data);
		break;
	case DFT_EV_KEPT:
		if (size >= sizeof(struct dft_header))
			on_kept_record(t, data, size);
		break;
	case DFT_EV_PATHS:
		if (size >= sizeof(struct dft_paths))
			on_paths(t, data, size);
		break;
	case DFT_EV_FORK:
		if (size >= sizeof(struct dft_fork))
			on_fork(t, data);
		break;
	case DFT_EV_EXEC:
		if (size >= sizeof(struct dft_exec))
			on_exec(t, data);
		break;
	case DFT_EV_EXIT:
		if (size >= sizeof(struct dft_exit))
			on_exit_record(t, data);
		break;
	case DFT_EV_COMM:
		if (size >= sizeof(struct dft_comm))
			on_comm(t, data);
		break;
	case DFT_EV_ANNOT: /* a known site's: without the strings */
		if (size >= sizeof(struct dft_annot) ||
		    (size >= offsetof(struct dft_annot, cat) && h->flags & DFT_ANNOT_CACHED))
			on_annot(t, data);
		break;
	case DFT_EV_MMAP:
		if (size >= sizeof(struct dft_mmap))
			on_mmap(t, data);
		break;
	case DFT_EV_FILEID:
		if (size >= sizeof(struct dft_fileid))
			on_fileid(t, data);
		break;
	case DFT_EV_FOLD:
		if (size >= sizeof(struct dft_fold_rec))
			on_fold_record(t, data);
		break;
	case DFT_EV_ASYNC:
		if (size >= offsetof(struct dft_async, path))
			on_async_record(t, data, size);
		break;
	case DFT_EV_URING_SUBMIT:
		if (size >= offsetof(struct dft_async, path))
			on_uring_submit(t, data, size);
		break;
	case DFT_EV_URING_DONE:
		if (size >= sizeof(struct dft_uring_done))
			on_uring_done(t, data);
		break;
	case DFT_EV_FDS_LOST:
		on_fds_lost(t, h);
		break;
	case DFT_EV_GPU:
		if (size >= offsetof(struct dft_gpu, str))
			on_gpu(t, data, size);
		break;
	}
}

int trace_handle_record(void *ctx, void *data, size_t size)
{
	const struct dft_header *h = data;
	struct trace *t = ctx;

	t->stats.records++;
	if (size < sizeof(*h))
		return 0;
	t->rec_pid = h->tgid;
	t->rec_ns = h->ts;
	dispatch(t, h, data, size);
	/* what is read of a process outside a record of its own is read as
	 * of its last */
	t->rec_pid = 0;
	return 0;
}

void trace_finish(struct trace *t, const uint64_t *lost, size_t nslots)
{
	flight_finish(t);
	files_finish(&t->files, &t->model, lost, nslots);
}

int trace_flush(struct trace *t)
{
	return files_flush(&t->files);
}

const struct trace_stats *trace_stats(const struct trace *t)
{
	return &t->stats;
}

const struct model *trace_model(const struct trace *t)
{
	return &t->model;
}
