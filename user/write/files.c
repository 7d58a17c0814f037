// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "write/files.h"

/* The single file's start took the root process's first id. */
#define ROOT_START_ID 1

void files_failed(struct files *f, int err, const char *msg)
{
	if (f->stats->write_error)
		return;
	f->stats->write_error = err ? err : -EIO;
	snprintf(f->stats->write_error_msg, sizeof(f->stats->write_error_msg),
		 "%s", msg);
}

void files_init(struct files *f, struct sink *single, struct outdir *outdir,
		struct loss_reader lost, struct writer *w,
		struct trace_stats *stats, const struct lifecycle *root)
{
	*f = (struct files){ .single = single, .outdir = outdir, .lost = lost,
			     .w = w, .stats = stats, .root = *root };
	f->root.id = ROOT_START_ID;
	if (single)
		writer_start(w, single, &f->root, 0); /* nothing traced yet */
}

void files_free(struct files *f)
{
	hmap_free(&f->by_pid);
}

static uint64_t sum(const uint64_t *v, size_t n)
{
	uint64_t s = 0;

	for (size_t i = 0; i < n; i++)
		s += v[i];
	return s;
}

/* What one process has lost so far (-D): its start event says so, for a
 * file opened after losses. */
static uint64_t lost_so_far(struct files *f, uint32_t pid)
{
	uint64_t lost[DFT_LOST_SLOTS];

	f->lost.read(f->lost.ctx, pid, lost, DFT_LOST_SLOTS, false);
	return sum(lost, DFT_LOST_SLOTS);
}

static struct lifecycle lifecycle_of(struct proc *p, uint64_t ts_us)
{
	return (struct lifecycle){ .pid = p->pid, .ppid = p->ppid,
				   .rank = p->job.rank, .world_size = p->job.world,
				   .id = p->next_id++, .ts_us = ts_us,
				   .exe = p->exe, .cwd = p->cwd };
}

static struct sink *open_file(struct files *f, struct proc *p)
{
	struct lifecycle l;
	char err[TRACE_ERR_LEN];
	struct sink *s;
	struct file_tag tag = { p->comm, p->job.rank };
	int rc = outdir_create(f->outdir, p->pid, &tag, &s, err, sizeof(err));

	if (!rc && (rc = hmap_put_ptr(&f->by_pid, p->pid, s))) {
		snprintf(err, sizeof(err), "cannot track the file of pid %u: %s",
			 p->pid, strerror(-rc));
		outdir_close_file(f->outdir, s, NULL, 0);
	}
	if (rc) {
		files_failed(f, rc, err);
		return NULL;
	}
	l = lifecycle_of(p, writer_now_us());
	writer_start(f->w, s, &l, lost_so_far(f, p->pid));
	if (f->flight) {
		sink_set_tee(s, f->flight);
		/* the start's SH lines are not the window's: written again at
		 * their next use (the exec's), they reach it */
		sink_forget_seen(s);
	}
	return s;
}

void files_set_flight(struct files *f, struct sink *flight)
{
	f->flight = flight;
	if (f->single)
		sink_set_tee(f->single, flight);
}

struct sink *files_event_sink(struct files *f, struct proc *p)
{
	return f->flight ? f->flight : files_sink(f, p);
}

void files_forget_names(struct files *f, const struct proc *p, uint32_t pid,
			uint32_t tid)
{
	struct sink *s = p ? files_sink_if_open(f, p) : NULL;

	if (s)
		writer_forget_names(s, pid, tid);
	if (f->flight)
		writer_forget_names(f->flight, pid, tid);
}

void files_adopted(struct files *f, struct proc *p)
{
	if (f->single && p->pid == f->root.pid && p->next_id <= ROOT_START_ID)
		p->next_id = ROOT_START_ID + 1;
}

struct sink *files_sink_if_open(struct files *f, const struct proc *p)
{
	return f->single ? f->single : hmap_get_ptr(&f->by_pid, p->pid);
}

struct sink *files_sink(struct files *f, struct proc *p)
{
	char err[TRACE_ERR_LEN];
	struct sink *s;
	int rc;

	if (f->single)
		return f->single;
	s = hmap_get_ptr(&f->by_pid, p->pid);
	if (!s)
		return open_file(f, p);
	rc = outdir_use(f->outdir, s, err, sizeof(err));
	if (rc) {
		files_failed(f, rc, err);
		return NULL;
	}
	return s;
}

void files_renamed(struct files *f, const struct proc *p)
{
	struct sink *s = f->outdir ? hmap_get_ptr(&f->by_pid, p->pid) : NULL;
	char err[TRACE_ERR_LEN];

	struct file_tag tag = { p->comm, p->job.rank };

	if (s && outdir_rename(f->outdir, s, &tag, err, sizeof(err)))
		fprintf(stderr, "dftrace-bpf: %s\n", err);
}

/* -D: ends a process's file with its losses and the end event. A process
 * whose every record was lost still gets a file, whose start counts them. */
static void close_file(struct files *f, struct proc *p, uint64_t ts_us)
{
	uint64_t lost[DFT_LOST_SLOTS];
	char err[TRACE_ERR_LEN];
	struct lifecycle l;
	struct sink *s;
	int64_t total;
	int rc;

	s = files_sink_if_open(f, p) || lost_so_far(f, p->pid) ?
		    files_sink(f, p) : NULL;
	f->lost.read(f->lost.ctx, p->pid, lost, DFT_LOST_SLOTS, true);
	if (!s)
		return;
	total = writer_lost(f->w, s, p->pid, lost, DFT_LOST_SLOTS);
	f->stats->lost_in_files += total;
	l = lifecycle_of(p, ts_us);
	writer_end(f->w, s, &l, total);
	hmap_del_ptr(&f->by_pid, p->pid);
	rc = outdir_close_file(f->outdir, s, err, sizeof(err));
	if (rc)
		files_failed(f, rc, err);
}

void files_close_process(struct files *f, struct proc *p, uint64_t ts_us)
{
	if (f->outdir)
		close_file(f, p, ts_us);
	else if (p->pid == f->root.pid)
		f->root_ids = p->next_id;
}

struct closing {
	struct files *f;
	uint64_t ts_us;
};

static void close_each(struct proc *p, void *ctx)
{
	struct closing *c = ctx;

	close_file(c->f, p, c->ts_us);
}

void files_finish(struct files *f, const struct model *m,
		  const uint64_t *lost, size_t nslots)
{
	struct closing c = { f, writer_now_us() };
	struct proc *root;
	uint64_t total;

	if (f->single) {
		root = proc_get(m, f->root.pid);
		f->root.id = root ? root->next_id++ : f->root_ids ? f->root_ids :
								      ROOT_START_ID + 1;
		f->root.ts_us = c.ts_us;
		total = writer_lost(f->w, f->single, f->root.pid, lost, nslots);
		writer_end(f->w, f->single, &f->root, total);
		return;
	}
	procs_each(m, close_each, &c);
	f->stats->files_reopened = f->outdir->suspensions;
	total = sum(lost, nslots);
	if (total > f->stats->lost_in_files)
		f->stats->lost_elsewhere = total - f->stats->lost_in_files;
}

int files_flush(struct files *f)
{
	uint64_t pid, v;
	size_t it = 0;
	int ret = 0;

	if (f->single)
		ret = sink_flush(f->single);
	while (!f->single && hmap_next(&f->by_pid, &it, &pid, &v))
		if (sink_flush((struct sink *)(uintptr_t)v) && !ret)
			ret = -EIO;
	if (ret)
		files_failed(f, ret, "cannot write the trace");
	return ret;
}
