/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Calls folded into totals in the kernel (bpf/fold.h): every call under
 * --profile, and otherwise a call whose record the ring buffer had no
 * room for, so that overload loses no byte and no time. A thread adds to
 * a running total while its key stays the same, then sends it as a
 * record; when the ring is full, into one of two maps, one being filled
 * while user space drains the other (fold_gen flips them): a total is
 * never added to while it is read and deleted. Also each
 * thread's stack of region ids, which the totals are keyed by.
 * Included by dftrace.bpf.c, after the helpers it uses.
 */
#ifndef FOLD_BPF_H
#define FOLD_BPF_H

const volatile bool profile_on;	/* --profile: fold every call */
const volatile int nr_close = -1;

/* close's file, kept at its entry: a fold at its exit charges it */
static __always_inline void keep_close_file(struct dft_task *st, long nr)
{
	struct dft_file_id none = { 0, 0 };
	struct file *f;

	if (nr != nr_close)
		return;
	f = fd_file(st->args[0]);
	st->close_file = f ? file_id(f) : none;
}
__u32 fold_gen;			/* the map being filled: set by user space */
__u32 fold_made;		/* a total was made since user space cleared it */

struct fold_map {
	__uint(type, BPF_MAP_TYPE_HASH);	/* preallocated: no allocation per new key */
	__uint(max_entries, 8192);
	__type(key, struct dft_fold_key);
	__type(value, struct dft_fold);
};
struct fold_map fold0 SEC(".maps"), fold1 SEC(".maps");

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
 * innermost region of its name and those inside it. */
static __always_inline void track_phase(struct dft_task *st, int op, const char *cat,
					const char *name)
{
	__u32 id = dft_phase_id(cat, DFT_CAT_LEN, name, DFT_NAME_LEN);
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

static __always_inline void add_call(struct dft_fold *v, long ret, __u64 dur,
				     __u64 now, int fd)
{
	v->calls++;
	if (ret > 0)
		v->bytes += ret;
	else if (ret < 0)
		v->errors++;
	v->dur_ns += dur;
	v->last_ns = now;
	v->fd = fd;
	v->hist[dft_fold_bucket(dur) & (DFT_FOLD_BUCKETS - 1)]++;
}

/* The total of key in the map being filled, made if new; NULL if full. */
static __always_inline struct dft_fold *total_of(struct dft_fold_key *k, __u64 first_ns)
{
	void *map = fold_gen & 1 ? (void *)&fold1 : (void *)&fold0;
	struct dft_fold *v = bpf_map_lookup_elem(map, k);
	struct dft_fold zero = { .first_ns = first_ns };

	if (v)
		return v;
	if (!fold_made)
		fold_made = 1;
	bpf_map_update_elem(map, k, &zero, BPF_NOEXIST);
	return bpf_map_lookup_elem(map, k);
}

/* The thread's running total out: as a record, which user space adds to
 * the total of its key (a record costs less than a hash map update: a
 * new key is a lookup, an insert and a lookup again); into the map being
 * filled, for user space to drain, when the ring has no room for calls. False if
 * the map had none either. */
static __always_inline bool flush_acc(struct dft_task *st, struct task_struct *t)
{
	struct dft_fold_acc *a = &st->acc;
	struct dft_fold_rec *r;
	struct dft_fold *v;

	if (!a->used)
		return true;
	a->used = 0;
	r = ring_for_calls() ? bpf_ringbuf_reserve(&events, sizeof(*r), 0) : NULL;
	if (r) {
		fill_header(&r->h, DFT_EV_FOLD, t);
		r->key = a->key;
		r->fold = a->fold;
		bpf_ringbuf_submit(r, wakeup_flag());
		return true;
	}
	/* into the map being filled: one begun before a flip lands in the
	 * next interval, never in a map user space has drained already */
	v = total_of(&a->key, a->fold.first_ns);
	if (!v)
		return false;
	v->calls += a->fold.calls;
	v->bytes += a->fold.bytes;
	v->errors += a->fold.errors;
	v->dur_ns += a->fold.dur_ns;
	v->last_ns = a->fold.last_ns;
	v->fd = a->fold.fd;
	for (int i = 0; i < DFT_FOLD_BUCKETS; i++)
		v->hist[i] += a->fold.hist[i];
	return true;
}

/* The fd a call is about: -1 for calls whose file is not named by an
 * fd still open at their exit. */
static __always_inline int call_fd(long nr, const __u64 *args, long ret)
{
	unsigned char arg = sc_cfg[nr & NR_MASK].fd_arg;

	if (!arg || nr == nr_close)
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
	if (*fd >= 0 && st->fds_unchanged && a->used && a->fold.fd == *fd && files_own())
		return (struct file *)a->file;
	f = fd_file_fast(*fd);
	if (!f)
		*fd = -1;
	st->fds_unchanged = files_own();
	return f;
}

/* The call in flight (st->nr), ended now with ret, into its thread's
 * running total; false if the map had no room for the one it replaced. */
static __always_inline bool fold_call(struct dft_task *st, long ret, __u64 now)
{
	struct dft_fold_acc *a = &st->acc;
	__u32 phase = phase_now(st), gen = fold_gen;
	struct dft_file_id id = { 0, 0 };
	bool ok = true;
	struct file *f;
	int fd;

	f = call_file(st, ret, &fd);
	if (!a->used || a->key.nr != st->nr || a->fold.fd != fd || a->file != (__u64)f ||
	    a->key.phase != phase || a->gen != gen || st->nr == nr_close) {
		__u64 pid_tgid = bpf_get_current_pid_tgid();

		ok = flush_acc(st, bpf_get_current_task_btf());
		__builtin_memset(a, 0, sizeof(*a));
		a->key.tgid = pid_tgid >> 32;
		a->key.tid = (__u32)pid_tgid;
		a->key.phase = phase;
		a->key.nr = st->nr;
		if (st->nr == nr_close) /* gone by now: sys_enter kept it */
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
	add_call(&a->fold, ret, now - st->ts, now, fd);
	return ok;
}

struct flush_ctx {
	__u32 tgid;
	bool full;	/* a total found no room */
};

static long flush_one(void *map, struct dft_fold_key *k, struct dft_fold *v,
		      struct flush_ctx *c)
{
	struct dft_fold_rec *r;

	if (k->tgid != c->tgid)
		return 0;
	r = bpf_ringbuf_reserve(&events, sizeof(*r), 0);
	if (!r) {
		c->full = true;	/* no room: user space drains it later */
		return 1;
	}
	fill_header(&r->h, DFT_EV_FOLD, bpf_get_current_task_btf());
	r->key = *k;
	r->fold = *v;
	bpf_ringbuf_submit(r, 0);
	bpf_map_delete_elem(map, k);
	return 0;
}

/* A thread that folded calls exits: its running total goes out ahead of
 * its exit record; when the process ends, its totals in the map too
 * (looked for only if a total was made there since the maps last
 * flipped, which takes a full ring: a walk of the map costs ~0.5 ms),
 * while user space still knows the process. False if some found no room:
 * then no exit record may follow, or user space would forget the process
 * before it drains them. */
static __always_inline bool flush_folds(struct dft_task *st, struct task_struct *t,
					bool group_dead)
{
	struct flush_ctx c = { .tgid = t->tgid };

	if (!flush_acc(st, t))
		return false;
	if (!group_dead || !fold_made)
		return true;
	bpf_for_each_map_elem(fold_gen & 1 ? (void *)&fold1 : (void *)&fold0,
			      flush_one, &c, 0);
	return !c.full;
}

#endif
