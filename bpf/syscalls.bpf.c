// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Syscall I/O: sys_enter keeps a tracked thread's call and its
 * arguments, sys_exit records it (a dft_kept in its thread's batch, a
 * dft_io, a dft_syscall, or a dft_paths with the paths it names) or folds it into
 * a total (--profile, or no room in the ring). The table of what each
 * syscall number means is the loader's (sc_cfg, from
 * user/model/syscalls.c): no number is written here.
 *
 * Hooks are tp_btf (BTF raw tracepoints): no tracefs needed, and cheaper
 * than classic per-syscall tracepoints. Every hook starts with a filter
 * that costs one array load for syscalls we never record, and one task
 * storage lookup for tasks outside the tracked tree.
 */
#include "core.bpf.h"
#include "asyncio.bpf.h"
#include "fold.bpf.h"
#include "iobatch.bpf.h"
#include "mmapio.bpf.h"
#include "ring.bpf.h"

/* UAPI constants vmlinux.h does not carry (they are #defines). */
#define MAP_ANONYMOUS 0x20
#define F_DUPFD 0
#define F_SETFD 2
#define F_DUPFD_CLOEXEC 1030

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

/* A file opened when the ring buffer had no room to say so: its name
 * waits here, by (dev, ino), for user space (user/capture/folds.c). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1024);
	__type(key, struct dft_name_key);
	__type(value, struct name_path);
} lost_names SEC(".maps");

/* Calls we record only in some forms: file mmaps, fd-duplicating fcntls. */
static __always_inline bool wanted(unsigned char kind, struct pt_regs *regs)
{
	if (kind == DFT_SC_MMAP)
		return !(SC_ARG3(regs) & MAP_ANONYMOUS) && (int)SC_ARG4(regs) >= 0;
	if (kind == DFT_SC_FCNTL) {
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

/* close's file, kept at its entry: a fold at its exit charges it */
static __always_inline void keep_close_file(struct dft_task *st)
{
	struct dft_file_id none = { 0, 0 };
	struct file *f = fd_file(st->args[0]);

	st->close_file = f ? file_id(f) : none;
}

/* A syscall's entry, from the sys_enter tracepoint or a function's
 * fentry (call_entry). */
static __always_inline int on_entry(struct pt_regs *regs, long nr)
{
	struct dft_task *st = traced_call(nr);
	const volatile struct dft_sc_cfg *c;

	if (!st)
		return 0;
	/* the regions it is in, from its ring, before it */
	take_ring(st);
	c = &sc_cfg[nr & NR_MASK];
	if (c->interest == DFT_INTEREST_RING)
		return 0;
	/* a syscall ends the thread's run of mapped pages */
	flush_run(st);
	if (!wanted(c->kind, regs))
		return 0;
	if (quiet_step() && c->interest != DFT_INTEREST_MODEL)
		return 0;
	if (!c->io_args)
		fds_may_change(st);
	st->args[0] = SC_ARG0(regs);
	st->args[1] = SC_ARG1(regs);
	st->args[2] = SC_ARG2(regs);
	st->args[3] = SC_ARG3(regs);
	st->args[4] = SC_ARG4(regs);
	st->args[5] = SC_ARG5(regs);
	st->nr = nr;
	if (c->kind == DFT_SC_CLOSE)
		keep_close_file(st);
	st->ts = bpf_ktime_get_ns();
	return 0;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(sys_enter, struct pt_regs *regs, long nr)
{
	return on_entry(regs, nr);
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

/* The call in flight with the paths it names, from the scratch: 0 if
 * the record found no room (the call is folded). Global: two string
 * reads, checked once, apart from the rest of sys_exit. */
__noinline int send_paths(struct dft_task *st, long ret, __u64 now, __u32 which,
			  __u32 quiet)
{
	__u32 zero = 0, len0, len1 = 0, off;
	struct path_scratch *s = bpf_map_lookup_elem(&scratch, &zero);
	int a0 = (which & 0xf) - 1, a1 = ((which >> 4) & 0xf) - 1;
	__u8 flags = 0;
	__u64 size;

	if (!s || !st)
		return 1;
	fill_syscall(&s->p.sc, st, ret, now, DFT_EV_PATHS);
	if (sc_cfg[st->nr & NR_MASK].kind == DFT_SC_OPENAT2)
		read_open_how(&s->p.sc);
	len0 = read_path(s->data, arg_at(st, a0), &flags, DFT_CALL_TRUNC0,
			 DFT_CALL_FAULT0);
	if (a1 >= 0) {
		off = len0 > DFT_PATH_MAX ? DFT_PATH_MAX : len0;
		len1 = read_path(s->data + off, arg_at(st, a1), &flags,
				 DFT_CALL_TRUNC1, DFT_CALL_FAULT1);
	}
	s->p.sc.h.flags = flags | (quiet ? DFT_CALL_QUIET : 0);
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

__noinline int emit_fileid(long nr, long fd, __u64 addr, __u32 prot)
{
	struct dft_file_id id = { 0, 0 };	/* on the stack: see core.bpf.h */
	struct file *f = fd_file(fd);
	struct dft_fileid *e;

	if (!f)
		return 1;
	/* a mapping by the file it maps (overlayfs maps another) */
	if (addr)
		mapped_file_id((__u64)f, addr, &id);
	else
		file_id_of((__u64)f, &id);
	e = reserve(sizeof(*e), DFT_NR_MAX + DFT_EV_FILEID);
	if (!e)
		return 0;
	fill_header(&e->h, DFT_EV_FILEID, bpf_get_current_task_btf());
	e->h.nr = nr;
	e->file = id;
	e->addr = addr;
	e->fd = fd;
	e->prot = prot;
	bpf_ringbuf_submit(e, wakeup_flag());
	return 1;
}

/* A call with no short form: a dft_syscall. False if it found no room. */
static __always_inline bool emit_full(struct dft_task *st, const volatile struct dft_sc_cfg *c,
				      long nr, long ret, __u64 now, bool quiet)
{
	struct dft_syscall *e;

	flush_batch(st);
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e)
		return false;
	fill_syscall(e, st, ret, now, DFT_EV_SYSCALL);
	if (quiet)
		e->h.flags |= DFT_CALL_QUIET;
	if (c->fd_pair_arg)
		fill_fd_pair(e, st, c->fd_pair_arg - 1);
	else if (c->new_fd_ino)
		e->args[5] = fd_ino(ret);
	/* not woken even for a library mapped executable, which may have
	 * annotations to attach: the consumer looks every 10 ms anyway,
	 * and a wakeup costs the mapping process ~25 us */
	bpf_ringbuf_submit(e, wakeup_flag());
	if (c->kind == DFT_SC_MMAP && (unsigned long)ret < MAX_ERRNO_RET)
		emit_fileid(nr, st->args[4], ret, st->args[2]);
	return true;
}

/* The record of the call in flight: false if it found no room, or if
 * calls leave the ring to what can't be folded (ring_for_calls()), but
 * for a call the fd tables need (model), which takes it regardless. A
 * call kept in a batch is asked about when the batch goes. */
static __always_inline bool emit_syscall(struct dft_task *st, const volatile struct dft_sc_cfg *c,
					 long nr, long ret, __u64 now, bool quiet, bool model)
{
	bool sent;

	if (c->path_args)
		sent = (model || ring_for_calls()) &&
		       send_paths(st, ret, now, c->path_args, quiet);
	else if (c->io_args && !quiet && now - st->ts <= DFT_IO_DUR_MAX)
		sent = emit_io(st, c, ret, now);
	else
		sent = (model || ring_for_calls()) && emit_full(st, c, nr, ret, now, quiet);
	/* a new file's kernel name, for totals that will charge it */
	if (c->fd_arg == DFT_FD_RET && ret >= 0 && (!emit_fileid(nr, ret, 0, 0) || !sent))
		keep_name(ret, c->path_args);
	return sent;
}

/* Whether the thread's records may go: not while user space has yet to
 * learn that a call that changed fds was lost (DFT_EV_FDS_LOST), which
 * goes first, ahead of any of them that names an fd. */
static __always_inline bool fds_known(struct dft_task *st)
{
	struct dft_header *h;

	if (!st->fds_lost)
		return true;
	/* not counted: the call was, and this is asked again */
	h = bpf_ringbuf_reserve(&events, sizeof(*h), 0);
	if (!h)
		return false;
	fill_header(h, DFT_EV_FDS_LOST, bpf_get_current_task_btf());
	bpf_ringbuf_submit(h, wakeup_flag());
	st->fds_lost = 0;
	return true;
}

/* A syscall's exit, from the sys_exit tracepoint or a function's fexit
 * (call_exit). */
static __always_inline int on_exit(struct pt_regs *regs, long ret)
{
	long nr = SC_NR(regs);
	struct dft_task *st = traced_call(nr);
	const volatile struct dft_sc_cfg *c;
	bool sent = false, model, full;
	__u64 now;

	if (!st || st->nr != nr)
		return 0;
	c = &sc_cfg[nr & NR_MASK];
	if (c->kind >= DFT_SC_AIO_SUBMIT) {
		async_exit(st, c->kind, ret);
		st->nr = -1;
		return 0;
	}
	now = bpf_ktime_get_ns();
	/* under --profile only what changes the fd tables goes, for the
	 * model only (but --flight's, whole); past calls_max, only that too */
	model = c->interest == DFT_INTEREST_MODEL;
	full = !profile_on || flight_on;
	if ((model || full) && fds_known(st))
		sent = emit_syscall(st, c, nr, ret, now, !full || quiet_step(), model);
	if (model && !sent) {
		/* user space's fd table can't follow it: it learns that
		 * ahead of the thread's next record. Not folded, where it
		 * would look applied (but under --profile, where its total
		 * is its only trace) */
		st->fds_lost = 1;
		if (!profile_on) {
			count_lost(nr & NR_MASK);
			st->nr = -1;
			return 0;
		}
	}
	/* folded: all under --profile, else what was not sent. Under
	 * --flight user space folds what it was sent: folding it here too
	 * cost the traced call as much again as sending it */
	if (((profile_on && !flight_on) || !sent) && !fold_call(st, ret, now))
		count_lost(nr & NR_MASK);
	st->nr = -1;
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(sys_exit, struct pt_regs *regs, long ret)
{
	return on_exit(regs, ret);
}

/*
 * Per-syscall attachment (the fentry_syscalls feature), where the kernel
 * has it: instead of the two raw tracepoints, which every syscall of
 * every task on the host passes through while they are attached, each
 * recorded syscall's function (__x64_sys_read...) gets a fentry and a
 * fexit. A program can be attached to the function it was loaded for
 * only, so user space loads a stub of a few instructions for each
 * (capture/schooks.c), which tail-calls the entry or exit program here,
 * loaded once. A stub may tail-call only a program whose function has
 * the same prototype (the kernel compares the BTF types: x86-64's
 * syscall functions come in two, a parameter named regs or __unused),
 * so each prototype has its pair (CALL_HOOKS(n)), loaded for one of its
 * functions by user space and attached only through the stubs.
 */
#define CALL_HOOKS(n)                                                          \
	struct {                                                               \
		__uint(type, BPF_MAP_TYPE_PROG_ARRAY);                         \
		__uint(max_entries, 1);                                        \
		__type(key, __u32);                                            \
		__type(value, __u32);                                          \
	} call_entries##n SEC(".maps"), call_exits##n SEC(".maps");            \
                                                                               \
	SEC("fentry")                                                          \
	int BPF_PROG(call_entry##n, struct pt_regs *regs)                      \
	{                                                                      \
		return on_entry(regs, SC_NR(regs));                            \
	}                                                                      \
                                                                               \
	SEC("fexit")                                                           \
	int BPF_PROG(call_exit##n, struct pt_regs *regs, long ret)             \
	{                                                                      \
		return on_exit(regs, ret);                                     \
	}

CALL_HOOKS(0)
CALL_HOOKS(1)
