// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A thread's kept calls, sent as one record, or folded call by call when
 * the ring has no room for them (see iobatch.bpf.h). Global functions:
 * the verifier checks each once for every program that calls it, on its
 * own, where inlined (or as a bpf_loop body) it doubled the time to load
 * every hook that flushes.
 */
#include "iobatch.bpf.h"
#include "fold.bpf.h"

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
			f = fd_file((int)e->args[pos]);
		if (f)
			*fd = (int)e->args[pos];
	}
	return f;
}

/* Kept record i of st into the map being filled. */
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
	if (e->h.kind != DFT_EV_IO) {
		/* a region's begin or end: lost, with nothing to fold into */
		count_lost(DFT_NR_MAX + DFT_EV_ANNOT);
		return 0;
	}
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
		dft_fold_add_call(v, e->ret, e->h.io_dur, e->h.ts + e->h.io_dur, fd);
	return 0;
}

__noinline int send_kept(struct dft_task *st)
{
	unsigned int n, annots;

	if (!st)
		return 0;
	n = st->nbatch;
	annots = st->kept_annots;
	st->nbatch = 0;
	st->kept_annots = 0;
	if (n > DFT_IO_BATCH)
		n = DFT_IO_BATCH;
	/* folded too when calls leave the ring to what can't be folded,
	 * unless regions' begins and ends, which can't, are among them */
	if (!n || ((annots || ring_for_calls()) &&
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
