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

/* The fd a kept call is about, and its file; fd -1 and NULL if none
 * (its fd_arg, found among the arguments io_args kept, in order: the
 * first in k->fd, the others in k->io.args). */
static __always_inline struct file *kept_file(const struct dft_kept *k, int *fd)
{
	const volatile struct dft_sc_cfg *c = &sc_cfg[k->nr & NR_MASK];
	unsigned int arg = c->fd_arg, pos;
	struct file *f = NULL;
	int n = -1;

	*fd = -1;
	if (arg >= 1 && arg <= DFT_SC_NARGS) {
		pos = __builtin_popcount(c->io_args & ((1u << (arg - 1)) - 1));
		if (pos == 0)
			n = k->fd;
		else if (pos < DFT_IO_NARGS)
			n = (int)k->io.args[(pos - 1) & 1];
		f = n >= 0 ? fd_file(n) : NULL;
		if (f)
			*fd = n;
	}
	return f;
}

/* Kept record i of st into the map being filled. */
__noinline int fold_kept(struct dft_task *st, __u32 i)
{
	struct dft_file_id id = { 0, 0 };
	struct dft_fold_key key = {};
	struct dft_fold *v;
	struct dft_kept *k;
	struct file *f;
	__u64 ts;
	long nr;
	int fd;

	if (!st)
		return 0;
	k = &st->kept.e[i & (DFT_IO_BATCH - 1)];
	if (k->kind != DFT_EV_IO) {
		/* a region's begin or end: lost, with nothing to fold into */
		count_lost(DFT_NR_MAX + DFT_EV_ANNOT);
		return 0;
	}
	nr = k->nr;
	f = kept_file(k, &fd);
	if (f)
		id = file_id(f);
	ts = st->kept.h.ts + k->dts;
	key.tgid = st->kept.h.tgid;
	key.tid = st->kept.h.tid;
	key.phase = phase_now(st);
	key.nr = nr;
	key.dev = id.dev;
	key.ino = id.ino;
	v = total_of(&key, ts);
	if (!v)
		count_lost(nr & NR_MASK);
	else
		dft_fold_add_call(v, k->io.ret, k->dur, ts + k->dur, fd);
	return 0;
}

/* Kept records [from, from + DFT_IO_BATCH / 2) of st's first n,
 * folded. A global function called for each half of the batch: the
 * verifier walks its loop once for each program that sends, where a
 * loop over the whole batch cost each of them ~1,000 instructions more
 * at 64 than at 32. */
__noinline int fold_kept_part(struct dft_task *st, __u32 from, __u32 n)
{
	if (!st)
		return 0;
	for (unsigned int i = 0; i < DFT_IO_BATCH / 2; i++) {
		if (from + i >= n)
			break;
		fold_kept(st, from + i);
	}
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
	st->kept.h.nr = n;
	/* folded too when calls leave the ring to what can't be folded,
	 * unless regions' begins and ends, which can't, are among them */
	if (!n || ((annots || ring_for_calls()) &&
		   !bpf_ringbuf_output(&events, &st->kept,
				       sizeof(st->kept.h) + n * sizeof(struct dft_kept),
				       wakeup_flag())))
		return 0;
	fold_kept_part(st, 0, n);
	fold_kept_part(st, DFT_IO_BATCH / 2, n);
	return 0;
}
