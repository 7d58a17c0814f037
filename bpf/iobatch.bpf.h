/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Short records kept per thread and sent DFT_IO_BATCH at a time (struct
 * dft_kept, in a dft_kept_batch): one ring reservation for that many
 * calls, or regions' begins and ends at known sites (which name no fd:
 * any thread keeps those). User space names
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
 * The hot part is inline here; what sends or folds a batch is in
 * iobatch.bpf.c.
 */
#ifndef IOBATCH_BPF_H
#define IOBATCH_BPF_H

#include "core.bpf.h"

/* What the thread kept, out as one record; folded if it has no room. */
int send_kept(struct dft_task *st);

/* The call in flight as a dft_io: the arguments io_args names, packed
 * (io_arg says which goes where). An index is masked to 8 for the
 * verifier: the config never names one past the sixth. */
static __always_inline void fill_io(struct dft_io *e, struct dft_task *st,
				    const volatile struct dft_sc_cfg *c, long ret, __u64 now)
{
	const __u64 *args = st->args;

	fill_call_header(&e->h, st, DFT_EV_IO);
	e->h.io_dur = now - st->ts;
	e->ret = ret;
	e->args[0] = args[c->io_arg[0] & 7];
	e->args[1] = args[c->io_arg[1] & 7];
	e->args[2] = args[c->io_arg[2] & 7];
}

static __always_inline void flush_batch(struct dft_task *st)
{
	if (st->nbatch)
		send_kept(st);
}

/* The entry the thread keeps next, for a record at ts: the batch's
 * first starts it (its header says the thread and the time, once), and
 * a time the header's can't reach in 32 bits (earlier, or 4.3 s on)
 * sends what is kept first. */
static __always_inline struct dft_kept *kept_next(struct dft_task *st, __u64 ts)
{
	unsigned int n = st->nbatch;
	__u64 dts = ts - st->kept.h.ts;
	struct dft_kept *k;

	if (n && dts > 0xffffffffull) {
		send_kept(st);
		n = 0;
	}
	if (!n) {
		__u64 pid_tgid = bpf_get_current_pid_tgid();

		st->kept.h.kind = DFT_EV_KEPT;
		st->kept.h.flags = 0;
		st->kept.h.tgid = pid_tgid >> 32;
		st->kept.h.tid = (__u32)pid_tgid;
		st->kept.h.io_dur = 0;
		st->kept.h.ts = ts;
		dts = 0;
	}
	k = &st->kept.e[n & (DFT_IO_BATCH - 1)];
	k->dts = dts;
	st->nbatch = n + 1;
	return k;
}

/* Sent once the batch is full: after its last entry is written. */
static __always_inline void kept_done(struct dft_task *st)
{
	if (st->nbatch >= DFT_IO_BATCH)
		send_kept(st);
}

/* A region's begin or end at a known site, kept with the thread's calls
 * (the batch keeps their order): no ring reservation of its own. flags:
 * 0, or DFT_ANNOT_RING for one read from the thread's ring at place. */
static __always_inline void keep_annot(struct dft_task *st, __u32 op, __u64 cat, __u64 name,
				       long long value, __u64 ts, __u32 flags, __u32 place)
{
	struct dft_kept *k;

	if (st->nbatch >= DFT_IO_BATCH)
		send_kept(st);
	k = kept_next(st, ts);
	k->dur = place;
	k->nr = op;
	k->kind = DFT_EV_ANNOT;
	k->flags = DFT_ANNOT_CACHED | flags;
	k->fd = 0;
	k->annot.value = value;
	k->annot.cat_ptr = cat;
	k->annot.name_ptr = name;
	st->kept_annots++;
	kept_done(st);
}

/* The call in flight, kept: its first argument (an fd) in 32 bits, the
 * others, its result and its duration as a dft_io holds them. */
static __always_inline void keep_io(struct dft_task *st, const volatile struct dft_sc_cfg *c,
				    long ret, __u64 now)
{
	const __u64 *args = st->args;
	struct dft_kept *k = kept_next(st, st->ts);

	k->dur = now - st->ts;
	k->nr = st->nr;
	k->kind = DFT_EV_IO;
	k->flags = 0;
	k->fd = args[c->io_arg[0] & 7];
	k->io.ret = ret;
	k->io.args[0] = args[c->io_arg[1] & 7];
	k->io.args[1] = args[c->io_arg[2] & 7];
	kept_done(st);
}

/* What the thread's fds name may change: what it kept goes first, and
 * the next fold looks its file up again (see call_file()). */
static __always_inline void fds_may_change(struct dft_task *st)
{
	st->fds_unchanged = 0;
	st->own_table = 0;
	flush_batch(st);
}

/* The call in flight: kept, or alone in the ring as a dft_io when the
 * thread shares its fd table. False if it found no room, or calls leave
 * the ring to what can't be folded (then the caller folds it); a kept
 * call with no room is folded with its batch, when it goes. */
static __always_inline bool emit_io(struct dft_task *st, const volatile struct dft_sc_cfg *c,
				    long ret, __u64 now)
{
	struct dft_io *e;

	if (table_own(st) && st->nbatch < DFT_IO_BATCH) {
		keep_io(st, c, ret, now);
		return true;
	}
	flush_batch(st);
	e = ring_for_calls() ? bpf_ringbuf_reserve(&events, sizeof(*e), 0) : NULL;
	if (!e)
		return false;
	fill_io(e, st, c, ret, now);
	bpf_ringbuf_submit(e, wakeup_flag());
	return true;
}

#endif
