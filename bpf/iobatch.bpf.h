/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Short records kept per thread and sent DFT_IO_BATCH at a time (see
 * struct dft_io): one ring reservation for eight calls. User space names
 * a record's fd by its model of the fd table, built from the records
 * before it, so a kept record must reach the ring before anything that
 * could change what its fd names, and before any other record of its
 * thread:
 *  - only a thread whose fd table no other task shares keeps records
 *    (threads share theirs; the clone that makes a sharer sends the
 *    batch first, as every call not sent as a dft_io does at its entry:
 *    close, dup2, open, exec, clone...);
 *  - so do the thread's other records (annotations, runs of mapped
 *    pages, a rename, its exit) and its io_uring requests, submitted or
 *    ended in its task work, which may close fds;
 *  - user space reads what live threads kept once the hooks are gone.
 * A batch the ring has no room for is folded, call by call, as a call
 * with no room is. The points where fds may change (fds_may_change())
 * also make a fold look its file up again (call_file() in fold.bpf.h).
 * Included by dftrace.bpf.c, after fold.bpf.h.
 */
#ifndef IOBATCH_BPF_H
#define IOBATCH_BPF_H

/* The call in flight as a dft_io: the arguments io_args names, packed. */
static __always_inline void fill_io(struct dft_io *e, struct dft_task *st,
				    unsigned int io_args, long ret, __u64 now)
{
	unsigned int n = 0;

	fill_call_header(&e->h, st, DFT_EV_IO);
	e->h.pad = now - st->ts;
	e->ret = ret;
	e->args[0] = e->args[1] = e->args[2] = 0;
	for (int i = 0; i < DFT_SC_NARGS; i++) {
		if (io_args & (1u << i) && n < DFT_IO_NARGS)
			e->args[n++] = st->args[i];
	}
}

/* The fd a kept record is about, and its file; fd -1 and NULL if none
 * (its fd_arg, found among the arguments io_args kept, in order). */
static __always_inline struct file *kept_file(const struct dft_io *e, int *fd)
{
	const volatile struct dft_sc_cfg *c = &sc_cfg[e->h.nr & NR_MASK];
	unsigned int arg = c->fd_arg, pos;
	struct file *f = NULL;

	*fd = -1;
	if (arg >= 1 && arg <= DFT_SC_NARGS) {
		pos = __builtin_popcount(c->io_args & ((1u << (arg - 1)) - 1));
		if (pos < DFT_IO_NARGS)
			f = fd_file_fast((int)e->args[pos]);
		if (f)
			*fd = (int)e->args[pos];
	}
	return f;
}

/* Kept record i of st into the map being filled. A global function: the
 * verifier checks it once, on its own, where inlined (or as a bpf_loop
 * body) it doubled the time to load every hook that flushes. */
__noinline int fold_kept(struct dft_task *st, __u32 i)
{
	struct dft_file_id id = { 0, 0 };
	struct dft_fold_key k = {};
	struct dft_fold *v;
	struct dft_io *e;
	struct file *f;
	long nr;
	int fd;

	if (!st)
		return 0;
	e = &st->batch[i & (DFT_IO_BATCH - 1)];
	nr = e->h.nr;
	f = kept_file(e, &fd);
	if (f)
		id = file_id(f);
	k.tgid = e->h.tgid;
	k.tid = e->h.tid;
	k.phase = phase_now(st);
	k.nr = nr;
	k.dev = id.dev;
	k.ino = id.ino;
	v = total_of(&k, e->h.ts);
	if (!v)
		count_lost(nr & NR_MASK);
	else
		add_call(v, e->ret, e->h.pad, e->h.ts + e->h.pad, fd);
	return 0;
}

/* What the thread kept, out as one record; folded if it has no room (or
 * leaves the ring to what can't be folded).
 * Global too, for the same reason; the hot path's test stays inline. */
__noinline int send_kept(struct dft_task *st)
{
	unsigned int n;

	if (!st)
		return 0;
	n = st->nbatch;
	st->nbatch = 0;
	if (n > DFT_IO_BATCH)
		n = DFT_IO_BATCH;
	if (!n || (ring_for_calls() &&
		   !bpf_ringbuf_output(&events, st->batch, n * sizeof(struct dft_io),
				       wakeup_flag())))
		return 0;
	for (unsigned int i = 0; i < DFT_IO_BATCH; i++) {
		if (i >= n)
			break;
		fold_kept(st, i);
	}
	return 0;
}

static __always_inline void flush_batch(struct dft_task *st)
{
	if (st->nbatch)
		send_kept(st);
}

/* What the thread's fds name may change: what it kept goes first, and
 * the next fold looks its file up again (see call_file()). */
static __always_inline void fds_may_change(struct dft_task *st)
{
	st->fds_unchanged = 0;
	flush_batch(st);
}

/* The call in flight as a dft_io: kept, or alone in the ring when the
 * thread shares its fd table. False if it found no room (then the caller
 * folds it); a kept call with no room is folded with its batch. */
static __always_inline bool emit_io(struct dft_task *st, unsigned int io_args,
				    long ret, __u64 now)
{
	unsigned int n = st->nbatch;
	struct dft_io *e;

	if (files_own() && n < DFT_IO_BATCH) {
		fill_io(&st->batch[n], st, io_args, ret, now);
		st->nbatch = ++n;
		if (n == DFT_IO_BATCH)
			flush_batch(st);
		return true;
	}
	flush_batch(st);
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e)
		return false;
	fill_io(e, st, io_args, ret, now);
	bpf_ringbuf_submit(e, wakeup_flag());
	return true;
}

#endif
