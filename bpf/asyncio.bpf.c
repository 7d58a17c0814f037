// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * I/O submitted now and done later (see asyncio.bpf.h): io_uring's
 * hooks, and what sys_exit hands over for AIO's calls and io_uring's
 * registered files.
 */
#include "asyncio.bpf.h"
#include "iobatch.bpf.h"

#define AIO_BATCH 64	/* iocbs or events looked at per call */

#define REGISTER_FILES_MAX 64	/* fds of one registration named */

/* AIO's iocbs in flight: (process, iocb) */
struct async_key {
	__u64 ptr;
	__u32 tgid;
	__u32 engine;
};

/* a request's record up to its name: most have none (an iocb has none) */
#define ASYNC_HEAD __builtin_offsetof(struct dft_async, path)

struct async_head { char bytes[ASYNC_HEAD]; };

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);	/* cancelled ones age out */
	__uint(max_entries, 65536);
	__type(key, struct async_key);
	__type(value, struct async_head);
} inflight SEC(".maps");

/* The rings tracked tasks submit to, whose completions are sent: each
 * with the thread that made it, to charge its SQPOLL thread's requests
 * (0: made before the tracer came). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, __u32);
} ring_owner SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct dft_async);
} async_scratch SEC(".maps");

static __always_inline struct dft_async *new_async(struct task_struct *t, __u32 tid,
						   int engine)
{
	__u32 zero = 0;
	struct dft_async *a = bpf_map_lookup_elem(&async_scratch, &zero);

	if (!a)
		return NULL;
	/* the name is sent only as far as it goes: not cleared */
	__builtin_memset(a, 0, ASYNC_HEAD);
	a->h.kind = DFT_EV_ASYNC;
	a->h.tgid = t->tgid;
	a->h.tid = tid;
	a->h.ts = bpf_ktime_get_ns();
	a->engine = engine;
	a->offset = -1;
	return a;
}

static __always_inline void send_async(struct dft_async *a)
{
	__u64 size = ASYNC_HEAD + a->path_len;

	if (size > sizeof(*a))
		size = sizeof(*a);
	if (bpf_ringbuf_output(&events, a, size, wakeup_flag()))
		count_lost(DFT_NR_MAX + DFT_EV_ASYNC);
}

/* The iocb of key, done: its record in the scratch, out of the map. */
static __always_inline struct dft_async *async_done(struct async_key *key)
{
	__u32 zero = 0;
	struct dft_async *a = bpf_map_lookup_elem(&async_scratch, &zero);
	void *head = bpf_map_lookup_elem(&inflight, key);

	if (!a || !head)
		return NULL;
	__builtin_memcpy(a, head, ASYNC_HEAD);
	bpf_map_delete_elem(&inflight, key);
	return a;
}

/* ---- io_uring ---- */

SEC("tp_btf/io_uring_create")
int BPF_PROG(io_uring_create, int fd, void *ring, __u32 sq_entries,
	     __u32 cq_entries, __u32 flags)
{
	struct task_struct *t = bpf_get_current_task_btf();
	__u64 key = (__u64)ring;
	__u32 tid = t->pid;

	if (tracked(t))
		bpf_map_update_elem(&ring_owner, &key, &tid, BPF_ANY);
	return 0;
}

static __always_inline void read_filename(struct dft_async *a, struct filename *f)
{
	long n = bpf_probe_read_kernel_str(a->path, sizeof(a->path), BPF_CORE_READ(f, name));

	a->path_len = n > 0 ? n : 0;
}

/* 7.x: openat's and statx's name is a struct delayed_filename, its
 * struct filename copied at prepare (only its audit comes at issue). */
struct delayed_filename___7_x {
	struct filename *__incomplete_filename;
};
struct io_open___7_x {
	struct delayed_filename___7_x filename;
};
struct io_statx___7_x {
	struct delayed_filename___7_x filename;
};

/* The name of an openat or a statx, as this kernel keeps it. */
#define READ_REQ_FILENAME(a, type, req)						\
	do {									\
		struct type *o_ = (void *)&(req)->cmd;				\
		struct type##___7_x *d_ = (void *)o_;				\
										\
		if (bpf_core_field_exists(o_->filename))			\
			read_filename(a, BPF_CORE_READ(o_, filename));		\
		else if (bpf_core_field_exists(d_->filename))			\
			read_filename(a, BPF_CORE_READ(d_, filename.__incomplete_filename)); \
	} while (0)

/* What the request says, as prepared: offsets, lengths, names. */
static __always_inline void describe_req(struct dft_async *a, struct io_kiocb *req)
{
	int op = a->opcode;

	if (op == IORING_OP_READ || op == IORING_OP_WRITE || op == IORING_OP_READV ||
	    op == IORING_OP_WRITEV || op == IORING_OP_READ_FIXED ||
	    op == IORING_OP_WRITE_FIXED) {
		struct io_rw *rw = (void *)&req->cmd;

		a->offset = rw->kiocb.ki_pos;
		a->len = rw->len;
	} else if (op == IORING_OP_OPENAT || op == IORING_OP_OPENAT2) {
		struct io_open *o = (void *)&req->cmd;

		a->fd = BPF_CORE_READ(o, dfd);
		READ_REQ_FILENAME(a, io_open, req);
	} else if (op == IORING_OP_STATX) {
		struct io_statx *s = (void *)&req->cmd;

		a->fd = BPF_CORE_READ(s, dfd);
		READ_REQ_FILENAME(a, io_statx, req);
	} else if (op == IORING_OP_CLOSE) {
		struct io_close *c = (void *)&req->cmd;

		a->fd = BPF_CORE_READ(c, fd);
	}
}

/* A request submitted; req the hook's own pointer. */
static __always_inline int on_submit(struct io_kiocb *req)
{
	struct task_struct *t = bpf_get_current_task_btf();
	__u64 ring = (__u64)req->ctx;
	__u32 *owner, tid = t->pid, unknown = 0;
	struct dft_task *st = tracked(t);
	struct dft_async *a;

	/* the SQPOLL thread is a thread of the ring's owner, untracked */
	if (!st && !tracked(t->group_leader))
		return 0;
	if (st)
		fds_may_change(st);	/* the request may close or open fds */
	owner = bpf_map_lookup_elem(&ring_owner, &ring);
	if (!owner)
		bpf_map_update_elem(&ring_owner, &ring, &unknown, BPF_NOEXIST);
	if (!st) {
		/* loaded apart: one load may not take two kinds of pointer */
		__u32 leader = BPF_CORE_READ(t, group_leader, pid);

		tid = owner && *owner ? *owner : leader;
	}
	a = new_async(t, tid, DFT_ASYNC_URING);
	if (!a)
		return 0;
	a->h.kind = DFT_EV_URING_SUBMIT;
	a->req = (__u64)req;
	a->opcode = req->opcode;
	a->fd = req->cqe.fd;
	a->fixed = req->flags & REQ_F_FIXED_FILE ? 1 : 0;
	/* outside --steps' windows: its fd effects only */
	if (quiet_step())
		a->h.flags |= DFT_ASYNC_QUIET;
	describe_req(a, req);
	send_async(a);
	return 0;
}

/* The same hook, named io_uring_submit_sqe before 6.4 (the loader
 * loads whichever this kernel has). */
SEC("tp_btf/io_uring_submit_req")
int BPF_PROG(io_uring_submit_req, struct io_kiocb *req)
{
	return on_submit(req);
}

SEC("tp_btf/io_uring_submit_sqe")
int BPF_PROG(io_uring_submit_sqe, struct io_kiocb *req)
{
	return on_submit(req);
}

/* The completion's result, in the tracepoint's form for this kernel:
 * (ctx, req, cqe) from 6.14, (ctx, req, user_data, res, ...) before.
 * Raw arguments: the form this kernel lacks is never read. */
static __always_inline long complete_res(__u64 *ctx)
{
	if (kshape.uring_complete == DFT_URING_COMPLETE_CQE) {
		struct io_uring_cqe *cqe = (void *)ctx[2];

		return cqe->res;
	}
	return (int)ctx[3];
}

SEC("tp_btf/io_uring_complete")
int io_uring_complete(__u64 *ctx)
{
	void *req_ptr = (void *)ctx[1];
	struct task_struct *t = bpf_get_current_task_btf();
	__u64 key = ctx[0];
	struct dft_uring_done *e;
	struct dft_file_id id = { 0, 0 };	/* on the stack: see core.bpf.h */
	struct dft_task *st;
	__u64 f = 0;
	int op;

	/* completed in any context: the ring says whose it is */
	if (!bpf_map_lookup_elem(&ring_owner, &key))
		return 0;
	/* in a thread's task work (a deferred close...): its calls kept
	 * since the submission go ahead of this end */
	st = tracked(t);
	if (st)
		fds_may_change(st);
	op = uring_req_of((__u64)req_ptr, &f);
	if (f && op != IORING_OP_OPENAT && op != IORING_OP_OPENAT2 &&
	    op != IORING_OP_STATX && op != IORING_OP_CLOSE)
		file_id_of(f, &id);
	e = reserve(sizeof(*e), DFT_NR_MAX + DFT_EV_ASYNC);
	if (!e)
		return 0;
	fill_header(&e->h, DFT_EV_URING_DONE, t);
	e->req = (__u64)req_ptr;
	e->res = complete_res(ctx);
	e->file = id;
	bpf_ringbuf_submit(e, wakeup_flag());
	return 0;
}

/* The registered fd at ufd, of call nr: its file named. 0 if it can't be
 * read. Global, as aio_submitted_one() below. */
__noinline int uring_registered_one(__u64 ufd, long nr)
{
	int fd;

	if (bpf_probe_read_user(&fd, sizeof(fd), (void *)ufd))
		return 0;
	if (fd >= 0)
		emit_fileid(nr, fd, 0, 0);
	return 1;
}

/* Registered files: requests will name them by index, and the kernel
 * by (dev, ino); say now which paths those are. */
static __always_inline void uring_registered(struct dft_task *st, long ret)
{
	int *fds = (void *)st->args[2];

	if (ret < 0 || st->args[1] != IORING_REGISTER_FILES)
		return;
	for (int i = 0; i < REGISTER_FILES_MAX; i++) {
		if (i >= st->args[3] || !uring_registered_one((__u64)&fds[i], st->nr))
			break;
	}
}

/* ---- Linux AIO ---- */

/* The iocb at ucb, submitted at ts: in flight. 0 if it can't be read.
 * Global, as the next: the verifier checks its body once, not once for
 * each of a loop's AIO_BATCH turns. */
__noinline int aio_submitted_one(__u64 ucb, __u64 ts)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct async_key key = { ucb, t->tgid, DFT_ASYNC_AIO };
	struct dft_async *a;
	struct iocb cb;

	if (bpf_probe_read_user(&cb, sizeof(cb), (void *)ucb))
		return 0;
	a = new_async(t, t->pid, DFT_ASYNC_AIO);
	if (!a)
		return 0;
	a->h.ts = ts;
	a->opcode = cb.aio_lio_opcode;
	a->fd = cb.aio_fildes;
	a->offset = cb.aio_offset;
	a->len = cb.aio_nbytes;
	bpf_map_update_elem(&inflight, &key, a, BPF_ANY);
	return 1;
}

/* The event at ev, now: its iocb is done. 0 if it can't be read. */
__noinline int aio_completed_one(__u64 ev, __u64 now)
{
	struct async_key key = { 0, bpf_get_current_pid_tgid() >> 32, DFT_ASYNC_AIO };
	struct dft_async *a;
	struct io_event e;

	if (bpf_probe_read_user(&e, sizeof(e), (void *)ev))
		return 0;
	key.ptr = e.obj;
	a = async_done(&key);
	if (a) {
		a->dur = now - a->h.ts;
		a->res = e.res;
		send_async(a);
	}
	return 1;
}

/* io_submit returned ret: its first ret iocbs are in flight. */
static __always_inline void aio_submitted(struct dft_task *st, long ret)
{
	struct iocb **list = (void *)st->args[2];
	__u64 ucb;

	for (int i = 0; i < AIO_BATCH; i++) {
		if (i >= ret || bpf_probe_read_user(&ucb, sizeof(ucb), &list[i]) ||
		    !aio_submitted_one(ucb, st->ts))
			break;
	}
}

/* io_getevents returned ret events: each ends its iocb. */
static __always_inline void aio_completed(struct dft_task *st, long ret)
{
	struct io_event *ev = (void *)st->args[3];
	__u64 now = bpf_ktime_get_ns();

	for (int i = 0; i < AIO_BATCH; i++) {
		if (i >= ret || !aio_completed_one((__u64)&ev[i], now))
			break;
	}
}

__noinline int async_exit(struct dft_task *st, __u32 kind, long ret)
{
	if (!st)
		return 0;
	if (kind == DFT_SC_AIO_SUBMIT && ret > 0)
		aio_submitted(st, ret);
	else if (kind == DFT_SC_AIO_EVENTS && ret > 0)
		aio_completed(st, ret);
	else if (kind == DFT_SC_URING_REGISTER)
		uring_registered(st, ret);
	return 0;
}
