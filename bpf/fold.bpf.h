/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Calls folded in the kernel into totals (bpf/fold.h): every call under
 * --profile, and otherwise a call whose record the ring buffer had no
 * room for, so that overload loses no byte and no time. A thread adds to
 * a running total while its key stays the same, then sends it as a
 * record; when the ring is full, into the fold map being filled (see
 * core.bpf.h). Also each thread's stack of region ids, which the totals
 * are keyed by. The hot part is inline here; flush_acc() is in
 * fold.bpf.c.
 */
#ifndef FOLD_BPF_H
#define FOLD_BPF_H

#include "core.bpf.h"

/* The thread's running total out: as a record, or into the map being
 * filled when the ring has no room for calls. 0 if the map had none. */
int flush_acc(struct dft_task *st);

/* The thread's innermost region, as its id; 0: none. */
static __always_inline __u32 phase_now(struct dft_task *st)
{
	__u32 d = st->phase_depth;

	if (!d)
		return 0;
	if (d > DFT_PHASE_DEPTH)
		d = DFT_PHASE_DEPTH;
	return st->phase[(d - 1) & (DFT_PHASE_DEPTH - 1)];
}

/* A region began or ended: as the trace's stack does, an end closes the
 * innermost region of its name (id: its dft_phase_id) and those inside it. */
static __always_inline void track_phase(struct dft_task *st, int op, __u32 id)
{
	__u32 d = st->phase_depth;

	if (op == DFT_ANNOT_BEGIN) {
		if (d < DFT_PHASE_DEPTH)
			st->phase[d & (DFT_PHASE_DEPTH - 1)] = id;
		if (d < 255)
			st->phase_depth = d + 1;
		return;
	}
	for (int i = DFT_PHASE_DEPTH - 1; i >= 0; i--) {
		if (i < d && st->phase[i] == id) {
			/* deeper than the stack keeps: closes those first */
			st->phase_depth = d > DFT_PHASE_DEPTH && i == DFT_PHASE_DEPTH - 1 ?
					  d - 1 : i;
			return;
		}
	}
}

/* The process's epoch and step, as the thread last read them: read
 * again only when some process changed its own (pos_seq moved). */
static __always_inline const struct dft_pos *pos_now(struct dft_task *st)
{
	__u32 seq = pos_seq, tgid;
	struct dft_pos *p;

	if (st->pos.seq == seq)
		return &st->pos;
	tgid = bpf_get_current_pid_tgid() >> 32;
	p = bpf_map_lookup_elem(&positions, &tgid);
	if (p) {
		st->pos = *p;
	} else {
		st->pos.set = st->pos.str = 0;
		st->pos.epoch = st->pos.step = 0;
	}
	st->pos.seq = seq;
	return &st->pos;
}

static __always_inline bool same_pos(const struct dft_fold_key *k, const struct dft_pos *p)
{
	return k->pos_set == p->set && k->pos_str == p->str && k->epoch == p->epoch &&
	       k->step == p->step;
}

/* The total of key in the map being filled, made if new; NULL if full. */
static __always_inline struct dft_fold *total_of(struct dft_fold_key *k, __u64 first_ns)
{
	void *map = fold_gen & 1 ? (void *)&fold1 : (void *)&fold0;
	struct dft_fold *v = bpf_map_lookup_elem(map, k);

	if (v)
		return v;
	if (!fold_made)
		fold_made = 1;
	bpf_map_update_elem(map, k, (void *)&fold_zero, BPF_NOEXIST);
	v = bpf_map_lookup_elem(map, k);
	/* another CPU may have made it first, with its own first call */
	if (v && !v->first_ns)
		v->first_ns = first_ns;
	return v;
}

/* The fd a call is about: -1 for calls whose file is not named by an
 * fd still open at their exit. */
static __always_inline int call_fd(long nr, const __u64 *args, long ret)
{
	const volatile struct dft_sc_cfg *c = &sc_cfg[nr & NR_MASK];
	unsigned char arg = c->fd_arg;

	if (!arg || c->kind == DFT_SC_CLOSE)
		return -1;
	return arg == DFT_FD_RET ? ret : arg <= DFT_SC_NARGS ? (int)args[(arg - 1) & 7] : -1;
}

/* The file the call in flight is about, and its fd (-1 and NULL if none).
 * The running total holds the last fd and file: while none of the
 * thread's fds can have changed since (see fds_may_change()) that fd is
 * still that file, and the lookup, most of a fold's cost, is skipped. */
static __always_inline struct file *call_file(struct dft_task *st, long ret, int *fd)
{
	struct dft_fold_acc *a = &st->acc;
	struct file *f;

	*fd = call_fd(st->nr, st->args, ret);
	if (*fd >= 0 && st->fds_unchanged && a->used && a->fold.fd == *fd && table_own(st))
		return (struct file *)a->file;
	f = fd_file(*fd);
	if (!f)
		*fd = -1;
	st->fds_unchanged = table_own(st);
	return f;
}

/* The call in flight (st->nr), ended now with ret, into its thread's
 * running total; false if the map had no room for the one it replaced. */
static __always_inline bool fold_call(struct dft_task *st, long ret, __u64 now)
{
	struct dft_fold_acc *a = &st->acc;
	__u32 phase = phase_now(st), gen = fold_gen;
	const struct dft_pos *pos = pos_now(st);
	bool closing = sc_cfg[st->nr & NR_MASK].kind == DFT_SC_CLOSE;
	struct dft_file_id id = { 0, 0 };
	bool ok = true;
	struct file *f;
	int fd;

	f = call_file(st, ret, &fd);
	if (!a->used || a->key.nr != st->nr || a->fold.fd != fd || a->file != (__u64)f ||
	    a->key.phase != phase || !same_pos(&a->key, pos) || a->gen != gen || closing) {
		__u64 pid_tgid = bpf_get_current_pid_tgid();

		ok = flush_acc(st);
		__builtin_memset(a, 0, sizeof(*a));
		a->key.tgid = pid_tgid >> 32;
		a->key.tid = (__u32)pid_tgid;
		a->key.phase = phase;
		a->key.nr = st->nr;
		a->key.pos_set = pos->set;
		a->key.pos_str = pos->str;
		a->key.epoch = pos->epoch;
		a->key.step = pos->step;
		if (closing) /* gone by now: sys_enter kept it */
			id = st->close_file;
		else if (f)
			id = file_id(f);
		a->key.dev = id.dev;
		a->key.ino = id.ino;
		a->file = (__u64)f;
		a->gen = gen;
		a->fold.first_ns = st->ts;
		a->used = 1;
	}
	dft_fold_add_call(&a->fold, ret, now - st->ts, now, fd);
	return ok;
}

#endif
