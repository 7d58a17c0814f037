// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Task iterators, which user space reads (user/capture/attach.c,
 * folds.c) to do in the kernel what a pidfd cannot do before 6.9, where
 * pidfd_open() names no thread but a process's first:
 * - mark the threads of a process -p found running;
 * - at the end, hand over what live threads still keep (a batch of
 *   calls, a running total), which no hook will send any more.
 */
#include "core.bpf.h"

/* The processes whose threads adopt_threads marks. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u8);
} adopt SEC(".maps");

/* Each task newly marked: its thread id. */
SEC("iter/task")
int adopt_threads(struct bpf_iter__task *ctx)
{
	struct task_struct *t = ctx->task;
	__u32 tgid, tid;

	if (!t)
		return 0;
	tgid = t->tgid;
	if (!bpf_map_lookup_elem(&adopt, &tgid) || tracked(t) || !track(t))
		return 0;
	tid = t->pid;
	bpf_seq_write(ctx->meta->seq, &tid, sizeof(tid));
	return 0;
}

/* Each marked task that keeps calls, or has a ring of regions it may
 * have written to since it was last read: who and when, then its state. */
SEC("iter/task")
int kept_calls(struct bpf_iter__task *ctx)
{
	struct task_struct *t = ctx->task;
	struct dft_kept_head h;
	struct dft_task *st;

	if (!t)
		return 0;
	st = tracked(t);
	if (!st || !(st->nbatch || st->acc.used || (rings_on && st->ring)))
		return 0;
	h = (struct dft_kept_head){ t->tgid, t->pid, bpf_ktime_get_ns() };
	bpf_seq_write(ctx->meta->seq, &h, sizeof(h));
	bpf_seq_write(ctx->meta->seq, st, sizeof(*st));
	return 0;
}
