/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * I/O submitted now and done later, which syscalls do not show whole:
 * io_uring requests (io_uring_submit_req, io_uring_complete: a record at
 * each, which user space pairs by the request) and Linux AIO iocbs
 * (decoded at io_submit's return, paired here with io_getevents' events
 * by the iocb's address: one record per iocb). What, on which file, when
 * submitted, how long, what result.
 * A ring's SQPOLL thread and io-wq workers are threads of its owner
 * process: their requests are charged to the thread that made the ring.
 * Included by dftrace.bpf.c, after the helpers it uses.
 */
#ifndef ASYNCIO_BPF_H
#define ASYNCIO_BPF_H

#define AIO_BATCH 64	/* iocbs or events looked at per call */

const volatile int nr_io_submit = -1, nr_io_getevents = -1, nr_io_pgetevents = -1;
const volatile int nr_io_uring_register = -1;

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
		read_filename(a, BPF_CORE_READ(o, filename));
	} else if (op == IORING_OP_STATX) {
		struct io_statx *s = (void *)&req->cmd;

		a->fd = BPF_CORE_READ(s, dfd);
		read_filename(a, BPF_CORE_READ(s, filename));
	} else if (op == IORING_OP_CLOSE) {
		struct io_close *c = (void *)&req->cmd;

		a->fd = BPF_CORE_READ(c, fd);
	}
}

SEC("tp_btf/io_uring_submit_req")
int BPF_PROG(io_uring_submit_req, struct io_kiocb *req)
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
		a->h.flags |= DFT_F_QUIET;
	describe_req(a, req);
	send_async(a);
	return 0;
}

SEC("tp_btf/io_uring_complete")
int BPF_PROG(io_uring_complete, void *ring, void *req_ptr, struct io_uring_cqe *cqe)
{
	struct io_kiocb *req = kernel_ptr(struct io_kiocb, req_ptr);
	struct task_struct *t = bpf_get_current_task_btf();
	__u64 key = (__u64)ring;
	struct dft_uring_done *e;
	struct dft_task *st;
	struct file *f;
	int op;

	/* completed in any context: the ring says whose it is */
	if (!bpf_map_lookup_elem(&ring_owner, &key))
		return 0;
	/* in a thread's task work (a deferred close...): its calls kept
	 * since the submission go ahead of this end */
	st = tracked(t);
	if (st)
		fds_may_change(st);
	e = reserve(sizeof(*e), DFT_NR_MAX + DFT_EV_ASYNC);
	if (!e)
		return 0;
	fill_header(&e->h, DFT_EV_URING_DONE, t);
	e->req = (__u64)req_ptr;
	e->res = cqe->res;
	e->file.dev = e->file.ino = 0;
	op = req->opcode;
	f = req->file;
	if (f && op != IORING_OP_OPENAT && op != IORING_OP_OPENAT2 &&
	    op != IORING_OP_STATX && op != IORING_OP_CLOSE)
		e->file = file_id(f);
	bpf_ringbuf_submit(e, wakeup_flag());
	return 0;
}

/* Registered files: requests will name them by index, and the kernel
 * by (dev, ino); say now which paths those are. */
static __always_inline bool uring_register_exit(struct dft_task *st, long nr, long ret)
{
	int *fds = (void *)st->args[2];

	if (nr != nr_io_uring_register)
		return false;
	if (ret < 0 || st->args[1] != IORING_REGISTER_FILES)
		return true;
	for (int i = 0; i < REGISTER_FILES_MAX; i++) {
		int fd;

		if (i >= st->args[3] || bpf_probe_read_user(&fd, sizeof(fd), &fds[i]))
			break;
		if (fd >= 0)
			emit_fileid(nr, fd, 0, 0);
	}
	return true;
}

/* ---- Linux AIO ---- */

/* io_submit returned ret: its first ret iocbs are in flight. */
static __always_inline void aio_submitted(struct dft_task *st, long ret)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct iocb **list = (void *)st->args[2];

	for (int i = 0; i < AIO_BATCH; i++) {
		struct async_key key = { 0, t->tgid, DFT_ASYNC_AIO };
		struct iocb cb, *ucb;
		struct dft_async *a;

		if (i >= ret)
			break;
		if (bpf_probe_read_user(&ucb, sizeof(ucb), &list[i]) ||
		    bpf_probe_read_user(&cb, sizeof(cb), ucb))
			break;
		a = new_async(t, t->pid, DFT_ASYNC_AIO);
		if (!a)
			break;
		a->h.ts = st->ts;
		a->opcode = cb.aio_lio_opcode;
		a->fd = cb.aio_fildes;
		a->offset = cb.aio_offset;
		a->len = cb.aio_nbytes;
		key.ptr = (__u64)ucb;
		bpf_map_update_elem(&inflight, &key, a, BPF_ANY);
	}
}

/* io_getevents returned ret events: each ends its iocb. */
static __always_inline void aio_completed(struct dft_task *st, long ret)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct io_event *ev = (void *)st->args[3];
	__u64 now = bpf_ktime_get_ns();

	for (int i = 0; i < AIO_BATCH; i++) {
		struct async_key key = { 0, t->tgid, DFT_ASYNC_AIO };
		struct dft_async *a;
		struct io_event e;

		if (i >= ret)
			break;
		if (bpf_probe_read_user(&e, sizeof(e), &ev[i]))
			break;
		key.ptr = e.obj;
		a = async_done(&key);
		if (!a)
			continue;
		a->dur = now - a->h.ts;
		a->res = e.res;
		send_async(a);
	}
}

/* At sys_exit: true if nr was AIO's, handled here (no syscall record). */
static __always_inline bool aio_exit(struct dft_task *st, long nr, long ret)
{
	if (nr == nr_io_submit) {
		if (ret > 0)
			aio_submitted(st, ret);
		return true;
	}
	if (nr == nr_io_getevents || nr == nr_io_pgetevents) {
		if (ret > 0)
			aio_completed(st, ret);
		return true;
	}
	return false;
}

#endif
