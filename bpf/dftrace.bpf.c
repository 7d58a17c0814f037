// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Kernel side of dftrace-bpf: syscall I/O and lifecycle of a process tree.
 *
 * Hooks are tp_btf (BTF raw tracepoints): no tracefs needed, and cheaper
 * than classic per-syscall tracepoints. Every hook starts with a filter
 * that costs one array load for syscalls we never record, and one task
 * storage lookup for tasks outside the tracked tree.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#define BPF_USDT_MAX_SPEC_CNT 1024
#include <bpf/usdt.bpf.h>
#include "usdtargs.bpf.h"
#include "dftrace.h"
#include "syscall_regs.h"

/* UAPI constants vmlinux.h does not carry (they are #defines). */
#ifndef MAP_ANONYMOUS
#define MAP_ANONYMOUS 0x20
#endif
#ifndef PROT_EXEC
#define PROT_EXEC 0x4
#endif
#ifndef F_DUPFD
#define F_DUPFD 0
#endif
#ifndef F_SETFD
#define F_SETFD 2
#endif
#ifndef F_DUPFD_CLOEXEC
#define F_DUPFD_CLOEXEC 1030
#endif

#define NR_MASK (DFT_NR_MAX - 1) /* a bound the verifier can see */

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Set by the loader before load. */
const volatile struct dft_sc_cfg sc_cfg[DFT_NR_MAX];
/* records a CPU writes between two wakeups of the consumer */
const volatile __u32 wakeup_records = 4096;
/* Calls stop taking the ring past this many bytes unread (see
 * ring_for_calls()); each CPU looks every calls_check records. */
const volatile __u64 calls_max = ~0ull;
const volatile __u32 calls_check = 64;
/* This architecture's numbers of the calls recorded only in some forms;
 * -1 until the loader sets them from <sys/syscall.h>. */
const volatile int nr_mmap = -1, nr_fcntl = -1, nr_openat2 = -1;
/* -D: count losses per process too, so that each file reports its own. */
const volatile bool lost_by_proc_on;
/* Under sudo: a program that raises privileges (setuid...) is not traced,
 * since the invoking user could not watch it either. */
const volatile bool hide_privileged;
/* --steps: the schedule, and whether the step last set is in an active
 * window (set by the step annotation, read by the syscall hooks; one for
 * the whole trace: the window follows the last step any process set). */
const volatile bool steps_on;
const volatile struct dft_steps steps;
__u32 step_active = 1;
/* -a, --cgroup, --uid, --comm; scope.self_tgid also for every mode */
const volatile bool scope_on;
const volatile struct dft_scope scope;

#define PF_KTHREAD 0x00200000

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 20);
} events SEC(".maps");

/* Presence of an entry is what makes a task tracked. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct dft_task);
} tasks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, DFT_LOST_SLOTS);
	__type(key, __u32);
	__type(value, __u64);
} lost SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} since_wakeup SEC(".maps");

/* Per CPU: records since it last asked how full the ring is, and the
 * answer: whether calls fold. */
struct ring_view {
	__u32 since_query;
	__u32 calls_fold;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ring_view);
} ring_views SEC(".maps");

struct path_scratch {
	struct dft_paths p;
	char data[2 * DFT_PATH_MAX];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct path_scratch);
} scratch SEC(".maps");

struct name_path {
	char path[DFT_PATH_MAX];
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1024);
	__type(key, struct dft_name_key);
	__type(value, struct name_path);
} lost_names SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, DFT_LOST_PROCS);
	__type(key, struct dft_lost_key);
	__type(value, __u64);
} lost_by_proc SEC(".maps");

/* Runs only when a record could not be written: off the hot path. */
static __always_inline void count_lost(__u32 slot)
{
	struct dft_lost_key key = { .tgid = bpf_get_current_pid_tgid() >> 32,
				    .slot = slot };
	__u64 one = 1, *n = bpf_map_lookup_elem(&lost, &slot);

	if (n)
		*n += 1;
	if (!lost_by_proc_on)
		return;
	n = bpf_map_lookup_elem(&lost_by_proc, &key);
	/* A failed insert is a race with another CPU (look again) or a
	 * full map (the loss stays in the global count only). */
	if (!n && bpf_map_update_elem(&lost_by_proc, &key, &one, BPF_NOEXIST))
		n = bpf_map_lookup_elem(&lost_by_proc, &key);
	if (n)
		__sync_fetch_and_add(n, 1);
}

/* Wake the consumer only when a batch is waiting: a wakeup per record
 * costs more than the rest of the probe. Counted per CPU: asking the ring
 * how full it is (bpf_ringbuf_query) reads the consumer's position, a
 * cache line the consumer writes on another CPU: 180 ns a record here. */
static __always_inline __u64 wakeup_flag(void)
{
	__u32 zero = 0, *n = bpf_map_lookup_elem(&since_wakeup, &zero);

	if (!n || ++*n < wakeup_records)
		return BPF_RB_NO_WAKEUP;
	*n = 0;
	return BPF_RB_FORCE_WAKEUP;
}

/* Whether a call may take the ring. A call can be folded into a total;
 * a fork, an exec, an exit, a run of mapped pages, a name, an annotation
 * or an io_uring request can't: calls leave them the ring's last part,
 * and fold past calls_max bytes unread. Asking is the 180 ns read above,
 * so each CPU asks every calls_check records, few enough that all CPUs
 * together cannot overrun the part left between two asks. */
static __always_inline bool ring_for_calls(void)
{
	__u32 zero = 0;
	struct ring_view *v = bpf_map_lookup_elem(&ring_views, &zero);

	if (!v)
		return true;
	if (++v->since_query >= calls_check) {
		v->since_query = 0;
		v->calls_fold = bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) > calls_max;
	}
	return !v->calls_fold;
}

/* A record of the given size, or NULL after counting it as lost. */
static __always_inline void *reserve(__u64 size, __u32 lost_slot)
{
	void *e = bpf_ringbuf_reserve(&events, size, 0);

	if (!e)
		count_lost(lost_slot);
	return e;
}

static __always_inline struct dft_task *tracked(struct task_struct *t)
{
	return bpf_task_storage_get(&tasks, t, 0, 0);
}

/* ---- scopes: where a task enters (exec, rename, a move between
 * cgroups); the tracer's start-up marks those already in ---- */

static __always_inline bool comm_in_scope(const char *comm)
{
	for (int i = 0; i < DFT_SCOPE_COMMS; i++) {
		bool same = i < scope.ncomms;

		for (int j = 0; same && j < DFT_COMM_LEN; j++) {
			if (comm[j] != scope.comms[i][j])
				same = false;
			else if (!comm[j])
				break;
		}
		if (same)
			return true;
	}
	return false;
}

/* The --cgroup directory is cg or one of its ancestors. */
static __always_inline bool cgroup_in_scope(struct cgroup *cg)
{
	struct cgroup *anc;
	int level = scope.cgroup_level;

	if (!level || !cg || cg->level < level || level > DFT_CGROUP_LEVEL_MAX)
		return false;
	if (bpf_core_read(&anc, sizeof(anc), &cg->ancestors[level]))
		return false;
	return anc && BPF_CORE_READ(anc, kn, id) == scope.cgroup_id;
}

static __always_inline bool in_scope(struct task_struct *t, const char *comm)
{
	if (!scope_on || t->flags & PF_KTHREAD || t->tgid == scope.self_tgid)
		return false;
	if (scope.all)
		return true;
	for (int i = 0; i < DFT_SCOPE_UIDS; i++)
		if (i < scope.nuids && t->real_cred->uid.val == scope.uids[i])
			return true;
	return (scope.ncomms && comm_in_scope(comm)) ||
	       cgroup_in_scope(t->cgroups->dfl_cgrp);
}

/* Starts tracking t if it has entered a scope; its state, or NULL. */
static __always_inline struct dft_task *enter_scope(struct task_struct *t,
						     const char *comm)
{
	struct dft_task *st;

	if (!in_scope(t, comm))
		return NULL;
	st = bpf_task_storage_get(&tasks, t, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (st)
		st->nr = -1;
	return st;
}

static __always_inline void fill_header(struct dft_header *h, int kind,
					struct task_struct *t)
{
	h->kind = kind;
	h->flags = 0;
	h->nr = 0;
	h->tgid = t->tgid;
	h->tid = t->pid;
	h->pad = 0;
	h->ts = bpf_ktime_get_ns();
}

/* Calls we record only in some forms: file mmaps, fd-duplicating fcntls. */
static __always_inline bool wanted(long nr, struct pt_regs *regs)
{
	if (nr == nr_mmap)
		return !(SC_ARG3(regs) & MAP_ANONYMOUS) && (int)SC_ARG4(regs) >= 0;
	if (nr == nr_fcntl) {
		long cmd = SC_ARG1(regs);

		return cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC || cmd == F_SETFD;
	}
	return true;
}

/* The filter every syscall hook starts with: one array load for calls we
 * never record, one task storage lookup for tasks outside the tree.
 * Returns the task's state, or NULL. */
static __always_inline struct dft_task *traced_call(long nr)
{
	if ((unsigned long)nr >= DFT_NR_MAX || !sc_cfg[nr].interest)
		return NULL;
	return tracked(bpf_get_current_task_btf());
}

/* Outside --steps' active windows only the calls the fd tables need go
 * on, to be applied and not written. */
static __always_inline bool quiet_step(void)
{
	return steps_on && !step_active;
}

/* A kernel pointer, typed again however it was read: its fields are then
 * plain loads, where a BPF_CORE_READ is a helper call (~35 ns each here).
 * The cast itself costs nothing: the verifier makes it a move. */
extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym;
#define kernel_ptr(type, p) \
	((type *)bpf_rdonly_cast((const void *)(p), bpf_core_type_id_kernel(type)))

/* An inode's (dev, ino): the kernel's name for a file (see dftrace.h). */
static __always_inline struct dft_file_id inode_id(struct inode *ip)
{
	struct inode *i = kernel_ptr(struct inode, ip);
	struct dft_file_id id = { i->i_sb->s_dev, i->i_ino };

	/* clang would share the loads with a caller's other branch, a map
	 * value's: one instruction may not take both kinds of pointer */
	barrier_var(id.dev);
	barrier_var(id.ino);
	return id;
}

static __always_inline struct dft_file_id file_id(struct file *f)
{
	return inode_id(kernel_ptr(struct file, f)->f_inode);
}

/* The file behind an fd of the current task, or NULL. */
static __always_inline struct file *fd_file(long fd)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct fdtable *fdt = BPF_CORE_READ(t, files, fdt);
	struct file **fds = BPF_CORE_READ(fdt, fd);
	struct file *f = NULL;

	if (fd < 0 || fd >= BPF_CORE_READ(fdt, max_fds) ||
	    bpf_probe_read_kernel(&f, sizeof(f), &fds[fd]))
		return NULL;
	return f;
}

/* The same for the hot path (--profile, a call per fold): loads through
 * the task's BTF pointers are plain loads, where the above makes three
 * helper calls; the verifier pays more for them, so not in loops. */
static __always_inline struct file *fd_file_fast(long fd)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct fdtable *fdt = t->files->fdt;
	struct file **fds = fdt->fd;
	struct file *f = NULL;

	if (fd < 0 || fd >= fdt->max_fds ||
	    bpf_probe_read_kernel(&f, sizeof(f), &fds[fd]))
		return NULL;
	return f;
}

/* No other task can close or replace the current task's fds: it shares
 * its table with none (a thread does, and io_uring's workers). */
static __always_inline bool files_own(void)
{
	struct task_struct *t = bpf_get_current_task_btf();

	return t->files->count.counter == 1;
}

/* Inode number behind an fd: it names pipes and sockets ("pipe:[ino]")
 * even when they are closed before we look. */
static __always_inline __u64 fd_ino(long fd)
{
	struct file *f = fd_file(fd);

	return f ? file_id(f).ino : 0;
}

/* fd's file by (dev, ino), for I/O that will name it so (see dftrace.h);
 * false if it had no room. */
static __always_inline bool emit_fileid(long nr, long fd, __u64 addr, __u32 prot)
{
	struct file *f = fd_file(fd);
	struct dft_fileid *e;

	if (!f)
		return true;
	e = reserve(sizeof(*e), DFT_NR_MAX + DFT_EV_FILEID);
	if (!e)
		return false;
	fill_header(&e->h, DFT_EV_FILEID, bpf_get_current_task_btf());
	e->h.nr = nr;
	e->file = file_id(f);
	e->addr = addr;
	e->fd = fd;
	e->prot = prot;
	bpf_ringbuf_submit(e, wakeup_flag());
	return true;
}

/* The header of the call in flight: it began at st->ts. */
static __always_inline void fill_call_header(struct dft_header *h,
					     struct dft_task *st, int kind)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();

	h->kind = kind;
	h->flags = 0;
	h->nr = st->nr;
	h->tgid = pid_tgid >> 32;
	h->tid = (__u32)pid_tgid;
	h->pad = 0;
	h->ts = st->ts;
}

#include "fold.bpf.h"
#include "iobatch.bpf.h"
#include "mmapio.bpf.h"
#include "asyncio.bpf.h"

SEC("tp_btf/sys_enter")
int BPF_PROG(sys_enter, struct pt_regs *regs, long nr)
{
	struct dft_task *st = traced_call(nr);

	if (!st)
		return 0;
	/* a syscall ends the thread's run of mapped pages */
	if (st->run.n)
		flush_run(st, bpf_get_current_task_btf());
	if (!wanted(nr, regs))
		return 0;
	if (quiet_step() && sc_cfg[nr & NR_MASK].interest != DFT_INTEREST_MODEL)
		return 0;
	if (!sc_cfg[nr & NR_MASK].io_args)
		fds_may_change(st);
	st->args[0] = SC_ARG0(regs);
	st->args[1] = SC_ARG1(regs);
	st->args[2] = SC_ARG2(regs);
	st->args[3] = SC_ARG3(regs);
	st->args[4] = SC_ARG4(regs);
	st->args[5] = SC_ARG5(regs);
	st->nr = nr;
	keep_close_file(st, nr);
	st->ts = bpf_ktime_get_ns();
	return 0;
}

static __always_inline void fill_syscall(struct dft_syscall *e,
					 struct dft_task *st, long ret,
					 __u64 now, int kind)
{
	fill_call_header(&e->h, st, kind);
	e->dur = now - st->ts;
	e->ret = ret;
	e->args[0] = st->args[0];
	e->args[1] = st->args[1];
	e->args[2] = st->args[2];
	e->args[3] = st->args[3];
	e->args[4] = st->args[4];
	e->args[5] = st->args[5];
}

static __always_inline __u64 arg_at(struct dft_task *st, int i)
{
	return i >= 0 && i < DFT_SC_NARGS ? st->args[i] : 0;
}

/* pipe/socketpair: the new fds live in user memory. args[5] carries
 * them, args[3] and args[4] their inode numbers. */
static __always_inline void fill_fd_pair(struct dft_syscall *e,
					 struct dft_task *st, int arg)
{
	int fds[2];

	if (bpf_probe_read_user(fds, sizeof(fds), (void *)arg_at(st, arg))) {
		e->args[5] = ~0ull;
		return;
	}
	e->args[5] = (__u32)fds[0] | (__u64)(__u32)fds[1] << 32;
	e->args[3] = fd_ino(fds[0]);
	e->args[4] = fd_ino(fds[1]);
}

/* Reads one user string into dst; returns its length with the NUL, and
 * flags truncation (longer than DFT_PATH_MAX) or a fault. */
static __always_inline __u32 read_path(char *dst, __u64 uptr, __u8 *flags,
				       int trunc_flag, int fault_flag)
{
	long n = bpf_probe_read_user_str(dst, DFT_PATH_MAX, (void *)uptr);
	char next = 0;

	if (n <= 0) {
		*flags |= fault_flag;
		dst[0] = 0;
		return 1;
	}
	if (n == DFT_PATH_MAX &&
	    !bpf_probe_read_user(&next, 1, (void *)(uptr + DFT_PATH_MAX - 1)) &&
	    next)
		*flags |= trunc_flag;
	return n;
}

/* openat2's flags and mode live in its struct open_how (args 2 and 3 are
 * its address and size): they replace those two args in the record. */
static __always_inline void read_open_how(struct dft_syscall *e)
{
	__u64 how[2] = { 0, 0 };	/* struct open_how: flags, mode, ... */

	if (e->args[3] < sizeof(how) ||
	    bpf_probe_read_user(how, sizeof(how), (void *)e->args[2]))
		how[0] = how[1] = 0;
	e->args[2] = how[0];
	e->args[3] = how[1];
}

/* False if the record found no room (the call is folded). */
static __always_inline bool emit_paths(struct dft_task *st, long ret,
				       __u64 now, unsigned char which, bool quiet)
{
	__u32 zero = 0, len0, len1 = 0, off;
	struct path_scratch *s = bpf_map_lookup_elem(&scratch, &zero);
	int a0 = (which & 0xf) - 1, a1 = (which >> 4) - 1;
	__u8 flags = 0;
	__u64 size;

	if (!s)
		return true;
	fill_syscall(&s->p.sc, st, ret, now, DFT_EV_PATHS);
	if (st->nr == nr_openat2)
		read_open_how(&s->p.sc);
	len0 = read_path(s->data, arg_at(st, a0), &flags, DFT_F_TRUNC0,
			 DFT_F_FAULT0);
	if (a1 >= 0) {
		off = len0 > DFT_PATH_MAX ? DFT_PATH_MAX : len0;
		len1 = read_path(s->data + off, arg_at(st, a1), &flags,
				 DFT_F_TRUNC1, DFT_F_FAULT1);
	}
	s->p.sc.h.flags = flags | (quiet ? DFT_F_QUIET : 0);
	s->p.len[0] = len0;
	s->p.len[1] = len1;
	size = sizeof(s->p) + len0 + len1;
	if (size > sizeof(*s))
		size = sizeof(*s);
	return !bpf_ringbuf_output(&events, s, size, wakeup_flag());
}

/* No room to name a file just opened: its path (still in the scratch)
 * waits in lost_names, by (dev, ino), for user space. */
static __always_inline void keep_name(long fd, unsigned char which)
{
	struct dft_name_key k = { .tgid = bpf_get_current_pid_tgid() >> 32 };
	struct file *f = fd_file(fd);
	__u32 zero = 0;
	struct path_scratch *s = bpf_map_lookup_elem(&scratch, &zero);
	struct dft_file_id id;

	if (!f || !s || (which & 0xf) == 0)
		return;
	id = file_id(f);
	k.dev = id.dev;
	k.ino = id.ino;
	bpf_map_update_elem(&lost_names, &k, s->data, BPF_ANY);
}

/* The record of the call in flight: false if it found no room. */
static __always_inline bool emit_syscall(struct dft_task *st, const volatile struct dft_sc_cfg *c,
					 long nr, long ret, __u64 now, bool quiet)
{
	struct dft_syscall *e;
	bool sent = true;

	if (c->path_args) {
		sent = emit_paths(st, ret, now, c->path_args, quiet);
	} else if (c->io_args && !quiet && now - st->ts <= DFT_IO_DUR_MAX) {
		sent = emit_io(st, c->io_args, ret, now);
	} else {
		flush_batch(st);
		e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
		if (!e)
			return false;
		fill_syscall(e, st, ret, now, DFT_EV_SYSCALL);
		if (quiet)
			e->h.flags |= DFT_F_QUIET;
		if (c->fd_pair_arg)
			fill_fd_pair(e, st, c->fd_pair_arg - 1);
		else if (c->new_fd_ino)
			e->args[5] = fd_ino(ret);
		/* not woken even for a library mapped executable, which may
		 * have annotations to attach: the consumer looks every 10 ms
		 * anyway, and a wakeup costs the mapping process ~25 us */
		bpf_ringbuf_submit(e, wakeup_flag());
		if (nr == nr_mmap && (unsigned long)ret < -4095ul)
			emit_fileid(nr, st->args[4], ret, st->args[2]);
	}
	/* a new file's kernel name, for totals that will charge it */
	if (c->fd_arg == DFT_FD_RET && ret >= 0 && (!emit_fileid(nr, ret, 0, 0) || !sent))
		keep_name(ret, c->path_args);
	return sent;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(sys_exit, struct pt_regs *regs, long ret)
{
	long nr = SC_NR(regs);
	struct dft_task *st = traced_call(nr);
	const volatile struct dft_sc_cfg *c;
	bool sent = false;
	__u64 now;

	if (!st || st->nr != nr)
		return 0;
	if (aio_exit(st, nr, ret) || uring_register_exit(st, nr, ret)) {
		st->nr = -1;
		return 0;
	}
	c = &sc_cfg[nr & NR_MASK];
	now = bpf_ktime_get_ns();
	/* under --profile only what changes the fd tables goes, for the
	 * model only; past calls_max, only that too */
	if (c->interest == DFT_INTEREST_MODEL || (!profile_on && ring_for_calls()))
		sent = emit_syscall(st, c, nr, ret, now, profile_on || quiet_step());
	/* folded: all under --profile, else what was not sent */
	if ((profile_on || !sent) && !fold_call(st, ret, now))
		count_lost(nr & NR_MASK);
	st->nr = -1;
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(sched_process_fork, struct task_struct *parent,
	     struct task_struct *child)
{
	struct dft_task *st = tracked(parent);
	struct dft_fork *e;

	if (!st)
		return 0;
	/* a thread shares the parent's fd table from here */
	fds_may_change(st);
	st = bpf_task_storage_get(&tasks, child, 0,
				  BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (st)
		st->nr = -1;
	e = reserve(sizeof(*e), DFT_NR_MAX + DFT_EV_FORK);
	if (!e)
		return 0;
	fill_header(&e->h, DFT_EV_FORK, parent);
	e->child_tgid = child->tgid;
	e->child_tid = child->pid;
	if (child->tgid == parent->tgid)
		e->h.flags |= DFT_F_THREAD;
	/* A child we failed to track would silently vanish: say so. */
	if (!st)
		e->h.flags |= DFT_F_UNTRACKED;
	bpf_probe_read_kernel_str(e->comm, sizeof(e->comm), child->comm);
	bpf_ringbuf_submit(e, wakeup_flag());
	return 0;
}

static __always_inline bool is_tracer(const char *comm)
{
	static const char me[] = "dftrace-bpf";

	for (int i = 0; i < (int)sizeof(me); i++)
		if (comm[i] != me[i])
			return false;
	return true;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(sched_process_exec, struct task_struct *p, pid_t old_pid,
	     struct linux_binprm *bprm)
{
	struct dft_task *st = tracked(p);
	struct mm_struct *mm;
	struct dft_exec *e;
	__u64 start, len;
	bool privileged, left;

	/* execve is no call of the table: what the thread kept goes ahead
	 * of the exec, which closes fds (and may untrack it) */
	if (st)
		fds_may_change(st);
	else if (!enter_scope(p, p->comm))
		return 0;
	/* another tracer's process is its own, not ours */
	left = is_tracer(p->comm);
	if (left)
		bpf_task_storage_delete(&tasks, p);
	/* secureexec: what glibc sees as AT_SECURE, set for every exec that
	 * raises privileges. Untracked at once, even if no record fits. */
	privileged = hide_privileged && BPF_CORE_READ_BITFIELD(bprm, secureexec);
	if (privileged)
		bpf_task_storage_delete(&tasks, p);
	e = reserve(sizeof(*e), DFT_NR_MAX + DFT_EV_EXEC);
	if (!e)
		return 0;
	fill_header(&e->h, DFT_EV_EXEC, p);
	if (privileged)
		e->h.flags |= DFT_F_PRIVILEGED;
	if (left)
		e->h.flags |= DFT_F_LEFT;
	e->old_tid = old_pid;
	bpf_probe_read_kernel_str(e->comm, sizeof(e->comm), p->comm);
	mm = p->mm;
	start = BPF_CORE_READ(mm, arg_start);
	len = BPF_CORE_READ(mm, arg_end) - start;
	if (len > DFT_ARGV_MAX)
		len = DFT_ARGV_MAX;
	if (bpf_probe_read_user(e->argv, len, (void *)start))
		len = 0;
	e->argv_len = len;
	len = bpf_probe_read_kernel_str(e->filename, sizeof(e->filename),
					BPF_CORE_READ(bprm, filename));
	e->filename_len = (long)len > 0 ? len : 0;
	start = BPF_CORE_READ(mm, env_start);
	len = BPF_CORE_READ(mm, env_end) - start;
	if (len > DFT_ENV_MAX)
		len = DFT_ENV_MAX;
	if (bpf_probe_read_user(e->env, len, (void *)start))
		len = 0;
	e->env_len = len;
	/* Promptly: the new program's annotations are attached from here. */
	bpf_ringbuf_submit(e, BPF_RB_FORCE_WAKEUP);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(sched_process_exit, struct task_struct *p, bool group_dead)
{
	struct dft_task *st = tracked(p);
	struct dft_exit *e;

	if (!st)
		return 0;
	flush_batch(st);
	flush_run(st, p);
	if (!flush_folds(st, p, group_dead)) {
		count_lost(DFT_NR_MAX + DFT_EV_EXIT);
		return 0;
	}
	e = reserve(sizeof(*e), DFT_NR_MAX + DFT_EV_EXIT);
	if (!e)
		return 0;
	fill_header(&e->h, DFT_EV_EXIT, p);
	if (group_dead)
		e->h.flags |= DFT_F_GROUP_DEAD;
	e->exit_code = group_dead ? p->signal->group_exit_code | p->exit_code :
				    p->exit_code;
	/* Exits must reach the consumer promptly: they end the trace. */
	bpf_ringbuf_submit(e, group_dead ? BPF_RB_FORCE_WAKEUP : wakeup_flag());
	return 0;
}

static __always_inline void emit_comm(struct task_struct *task, const char *comm)
{
	struct dft_comm *e = reserve(sizeof(*e), DFT_NR_MAX + DFT_EV_COMM);

	if (!e)
		return;
	fill_header(&e->h, DFT_EV_COMM, task);
	bpf_probe_read_kernel_str(e->comm, sizeof(e->comm), comm);
	bpf_ringbuf_submit(e, wakeup_flag());
}

SEC("tp_btf/task_rename")
int BPF_PROG(task_rename, struct task_struct *task, const char *comm)
{
	struct dft_task *st = tracked(task);
	char name[DFT_COMM_LEN];

	if (!st) {
		/* --comm: the new name may put it in scope */
		if (!scope.ncomms || bpf_probe_read_kernel_str(name, sizeof(name), comm) < 0 ||
		    !enter_scope(task, name))
			return 0;
	} else if (task == bpf_get_current_task_btf()) {
		flush_batch(st);	/* its calls go under the name they ran with */
	}
	emit_comm(task, comm);
	return 0;
}

/* --cgroup: a task moved into the directory (a job step, a container, a
 * systemd scope) is traced from there. */
SEC("tp_btf/cgroup_attach_task")
int BPF_PROG(cgroup_attach_task, struct cgroup *dst_cgrp, const char *path,
	     struct task_struct *task, bool threadgroup)
{
	struct dft_task *st;

	if (!scope.cgroup_level || tracked(task) || !cgroup_in_scope(dst_cgrp) ||
	    task->flags & PF_KTHREAD || task->tgid == scope.self_tgid)
		return 0;
	st = bpf_task_storage_get(&tasks, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (st) {
		st->nr = -1;
		emit_comm(task, task->comm); /* user space learns of it */
	}
	return 0;
}

/* ---- annotations: the dftrace USDT probes of include/dftrace/usdt.h ---- */

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct dft_annot);
} annot_scratch SEC(".maps");

#define FROM_BPF_A 1 /* string a is this program's own, not the user's */
#define FROM_BPF_B 2

static __always_inline int emit_annot_from(int op, const char *a,
					   const char *b, long long value,
					   int from_bpf)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct dft_task *st = tracked(t);
	struct dft_annot *e, *rec;
	__u32 zero = 0;

	if (!st)
		return 0;
	flush_batch(st);
	/* pages mapped so far belong to the phase that is ending or enclosing */
	if (st->run.n)
		flush_run(st, t);
	/* with no room the strings are still read: the region stack needs them */
	rec = reserve(sizeof(*rec), DFT_NR_MAX + DFT_EV_ANNOT);
	e = rec ? rec : bpf_map_lookup_elem(&annot_scratch, &zero);
	if (!e)
		return 0;
	fill_header(&e->h, DFT_EV_ANNOT, t);
	e->h.nr = op;
	e->value = value;
	/* user-space fallback addresses: only for the user's strings */
	e->cat_ptr = from_bpf & FROM_BPF_A ? 0 : (unsigned long)a;
	e->name_ptr = from_bpf & FROM_BPF_B ? 0 : (unsigned long)b;
	e->cat[0] = e->name[0] = 0;
	if (from_bpf & FROM_BPF_A)
		bpf_probe_read_kernel_str(e->cat, sizeof(e->cat), a);
	else if (a && bpf_probe_read_user_str(e->cat, sizeof(e->cat), a) < 0)
		e->h.flags |= DFT_F_FAULT0;
	if (from_bpf & FROM_BPF_B)
		bpf_probe_read_kernel_str(e->name, sizeof(e->name), b);
	else if (b && bpf_probe_read_user_str(e->name, sizeof(e->name), b) < 0)
		e->h.flags |= DFT_F_FAULT1;
	if (op == DFT_ANNOT_BEGIN || op == DFT_ANNOT_END)
		track_phase(st, op, e->cat, e->name);
	if (rec)
		bpf_ringbuf_submit(rec, wakeup_flag());
	return 0;
}

static __always_inline int emit_annot(int op, const char *a, const char *b,
				      long long value)
{
	return emit_annot_from(op, a, b, value, 0);
}

SEC("usdt")
int DFT_USDT(region_begin, const char *cat, const char *name, long long count)
{
	return emit_annot(DFT_ANNOT_BEGIN, cat, name, count);
}

SEC("usdt")
int DFT_USDT(region_end, const char *cat, const char *name, long long count)
{
	return emit_annot(DFT_ANNOT_END, cat, name, count);
}

SEC("usdt")
int DFT_USDT(meta, const char *cat, const char *name, long long is_end)
{
	return emit_annot(DFT_ANNOT_META, cat, name, is_end);
}

/* The step annotation moves --steps' window. */
static __always_inline void set_step(const char *key, long long value)
{
	char k[8] = {};

	if (bpf_probe_read_user_str(k, sizeof(k), key) == 5 && k[0] == 's' &&
	    k[1] == 't' && k[2] == 'e' && k[3] == 'p')
		step_active = dft_step_active(&steps, value);
}

SEC("usdt")
int DFT_USDT(ctx_int, const char *key, long long value)
{
	if (steps_on && tracked(bpf_get_current_task_btf()))
		set_step(key, value);
	return emit_annot(DFT_ANNOT_CTX_INT, key, NULL, value);
}

SEC("usdt")
int DFT_USDT(ctx_str, const char *key, const char *value)
{
	return emit_annot(DFT_ANNOT_CTX_STR, key, value, 0);
}

SEC("usdt")
int DFT_USDT(ctx_clear, const char *key)
{
	return emit_annot(DFT_ANNOT_CTX_CLEAR, key, NULL, 0);
}

SEC("usdt")
int DFT_USDT(arg_int, const char *key, long long value)
{
	return emit_annot(DFT_ANNOT_ARG_INT, key, NULL, value);
}

SEC("usdt")
int DFT_USDT(arg_str, const char *key, const char *value)
{
	return emit_annot(DFT_ANNOT_ARG_STR, key, value, 0);
}

/* ---- CPython's own probes (provider "python"): regions in cat "python" ---- */

/* Both strings are ours: cat "python" and the region's name. */
static __always_inline int python_region(int op, const char *name)
{
	return emit_annot_from(op, "python", name, 0, FROM_BPF_A | FROM_BPF_B);
}

SEC("usdt")
int DFT_USDT(py_gc_start, int generation)
{
	python_region(DFT_ANNOT_BEGIN, "gc");
	return emit_annot_from(DFT_ANNOT_ARG_INT, "generation", NULL, generation,
			       FROM_BPF_A);
}

SEC("usdt")
int DFT_USDT(py_gc_done, long long collected)
{
	emit_annot_from(DFT_ANNOT_ARG_INT, "collected", NULL, collected, FROM_BPF_A);
	return python_region(DFT_ANNOT_END, "gc");
}

SEC("usdt")
int DFT_USDT(py_import_start, const char *module)
{
	python_region(DFT_ANNOT_BEGIN, "import");
	return emit_annot_from(DFT_ANNOT_ARG_STR, "module", module, 0, FROM_BPF_A);
}

SEC("usdt")
int DFT_USDT(py_import_done, const char *module, int found)
{
	emit_annot_from(DFT_ANNOT_ARG_INT, "found", NULL, found, FROM_BPF_A);
	return python_region(DFT_ANNOT_END, "import");
}
