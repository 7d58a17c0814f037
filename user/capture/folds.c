// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <string.h>
#include "capture/folds.h"
#include "capture/recording.h"
#include "capture/liverings.h"
#include "dftrace.skel.h"

void folds_init(struct folds *f, struct dftrace_bpf *skel, int kept_iter_fd,
		uint64_t interval_ns)
{
	f->map_fd[0] = bpf_map__fd(skel->maps.fold0);
	f->map_fd[1] = bpf_map__fd(skel->maps.fold1);
	f->names_fd = bpf_map__fd(skel->maps.lost_names);
	f->kept_iter_fd = kept_iter_fd;
	f->gen = &skel->bss->fold_gen;
	f->made = &skel->bss->fold_made;
	f->interval_ns = interval_ns;
	f->next_ns = 0;
}

union drain_key {
	struct dft_fold_key fold;
	struct dft_name_key name;
};

union drain_val {
	struct dft_fold fold;
	char path[DFT_PATH_MAX];
};

/* Every entry of a map, taken out of it and handed to take. */
static void drain(struct folds *f, int fd, struct trace *t,
		  void (*take)(struct folds *f, struct trace *t, const union drain_key *k,
			       const union drain_val *v))
{
	union drain_key key, next;
	union drain_val val;
	int more = bpf_map_get_next_key(fd, NULL, &next) == 0;

	while (more) {
		key = next;
		more = bpf_map_get_next_key(fd, &key, &next) == 0;
		if (bpf_map_lookup_and_delete_elem(fd, &key, &val) == 0)
			take(f, t, &key, &val);
	}
}

/* $DFTRACE_BPF_RECORD is on (an item is made only then). */
static bool recording(const struct folds *f)
{
	return f->recording && *f->recording;
}

/* A total to the trace, and to the recording. */
static void fold_to(struct folds *f, struct trace *t, const struct dft_fold_key *k,
		    const struct dft_fold *v)
{
	if (recording(f)) {
		struct rec_fold r = { .kind = REC_FOLD, .key = *k, .val = *v };

		recording_put(f->recording, &r, sizeof(r));
	}
	trace_fold(t, k, v);
}

static void write_folds(struct folds *f, struct trace *t)
{
	uint8_t kind = REC_WRITE_FOLDS;

	if (recording(f))
		recording_put(f->recording, &kind, 1);
	trace_write_folds(t);
}

static void take_fold(struct folds *f, struct trace *t, const union drain_key *k,
		      const union drain_val *v)
{
	fold_to(f, t, &k->fold, &v->fold);
}

static void take_name(struct folds *f, struct trace *t, const union drain_key *k,
		      const union drain_val *v)
{
	if (recording(f)) {
		struct rec_name r = { .kind = REC_NAME, .pid = k->name.tgid, .dev = k->name.dev,
				      .ino = k->name.ino };

		memcpy(r.path, v->path, sizeof(r.path));
		recording_put(f->recording, &r, sizeof(r));
	}
	trace_name_file(t, k->name.tgid, k->name.dev, k->name.ino, v->path, sizeof(v->path));
}

void folds_tick(struct folds *f, struct trace *t, uint64_t now_ns)
{
	uint32_t old = *f->gen & 1;
	struct timespec grace = { 0, 1000000 };

	if (now_ns < f->next_ns)
		return;
	f->next_ns = now_ns + f->interval_ns;
	/* cleared first: a total made meanwhile sets it again */
	*(volatile uint32_t *)f->made = 0;
	*(volatile uint32_t *)f->gen = old ^ 1;
	/* a hook that read the old number is done within microseconds */
	nanosleep(&grace, NULL);
	/* names first: the totals may charge those files */
	drain(f, f->names_fd, t, take_name);
	drain(f, f->map_fd[old], t, take_fold);
	write_folds(f, t);
}

/* Entries of one process: its threads have all exited, so none is
 * added to while it is taken. */
static void drain_process(struct folds *f, int fd, struct trace *t, uint32_t pid)
{
	struct dft_fold_key key, next;
	struct dft_fold val;
	int more = bpf_map_get_next_key(fd, NULL, &next) == 0;

	while (more) {
		key = next;
		more = bpf_map_get_next_key(fd, &key, &next) == 0;
		if (key.tgid == pid && bpf_map_lookup_and_delete_elem(fd, &key, &val) == 0)
			fold_to(f, t, &key, &val);
	}
}

void folds_process_ended(void *ctx, struct trace *t, uint32_t pid)
{
	struct folds *f = ctx;

	/* only the map being filled can hold some, and only if a total
	 * was made there since the last flip: usually none */
	if (*(volatile uint32_t *)f->made)
		drain_process(f, f->map_fd[*f->gen & 1], t, pid);
}

bool folds_lost_name(void *ctx, const struct dft_name_key *k, char *path, size_t size)
{
	struct folds *f = ctx;

	return size >= DFT_PATH_MAX &&
	       bpf_map_lookup_and_delete_elem(f->names_fd, k, path) == 0;
}

/* A live thread's state, as the kernel side's kept_calls iterator gives
 * it: the calls it kept to send in a batch (its last records), the
 * regions in its ring since, and what it added to a total since its
 * last flush. */
static void take_kept(struct folds *f, struct trace *t, const struct dft_kept_head *k,
		      const struct dft_task *st)
{
	if (st->nbatch) {
		uint32_t size = sizeof(st->kept.h) +
				(st->nbatch < DFT_IO_BATCH ? st->nbatch : DFT_IO_BATCH) *
				sizeof(st->kept.e[0]);

		if (recording(f))
			recording_put(f->recording, &st->kept, size);
		trace_handle_record(t, (void *)&st->kept, size);
	}
	if (f->rings)
		liverings_take(f->rings, t, k, st, false);
	if (st->acc.used)
		fold_to(f, t, &st->acc.key, &st->acc.fold);
}

/* Each live thread's state, as the kept_calls iterator gives it, to
 * take: an iterator, not a lookup per thread (before 6.9 a pidfd names
 * no thread but a process's first). */
static void each_kept(struct folds *f, struct trace *t,
		      void (*take)(struct folds *f, struct trace *t, const struct dft_kept_head *k,
				   const struct dft_task *st))
{
	int fd = f->kept_iter_fd >= 0 ? bpf_iter_create(f->kept_iter_fd) : -1;
	struct dft_kept_head k;
	struct dft_task st;

	while (fd >= 0 && read(fd, &k, sizeof(k)) == sizeof(k) &&
	       read(fd, &st, sizeof(st)) == sizeof(st))
		take(f, t, &k, &st);
	if (fd >= 0)
		close(fd);
}

/* What a live thread keeps, read before it is sent: its batch, then what
 * its ring holds since (which the kernel side reads at its next call). */
static void peek_kept(struct folds *f, struct trace *t, const struct dft_kept_head *k,
		      const struct dft_task *st)
{
	if (st->nbatch)
		trace_peek_kept(t, &st->kept, st->nbatch);
	if (f->rings)
		liverings_take(f->rings, t, k, st, true);
}

void folds_peek_kept(void *ctx, struct trace *t)
{
	each_kept(ctx, t, peek_kept);
}

void folds_finish(struct folds *f, struct trace *t)
{
	drain(f, f->names_fd, t, take_name);
	drain(f, f->map_fd[0], t, take_fold);
	drain(f, f->map_fd[1], t, take_fold);
	each_kept(f, t, take_kept);
	write_folds(f, t);
}
