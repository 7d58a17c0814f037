/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What every unit of the kernel side shares: the ring buffer, the task
 * storage that says who is tracked, the loss counters, the loader's
 * configuration, and the short helpers of the hot path, inline.
 *
 * The kernel side is one unit per feature (bpf/NAME.bpf.c), linked into one
 * object (bpftool gen object): a feature, its programs and its maps are
 * found together, and the loader turns a feature's programs off alone
 * where this kernel lacks its hooks (user/capture/features.c).
 * core.bpf.c defines what is declared here (DFT_CORE_UNIT); the other
 * units see the same declarations as extern.
 */
#ifndef CORE_BPF_H
#define CORE_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "dftrace.h"
#include "arch.h"

#ifdef DFT_CORE_UNIT
#define DFT_SHARED
#else
#define DFT_SHARED extern
#endif

#define NR_MASK (DFT_NR_MAX - 1) /* a bound the verifier can see */
#define PF_KTHREAD 0x00200000
/* a syscall's return value at or above this is an error (-errno) */
#define MAX_ERRNO_RET (-4095ul)

/* ---- set by the loader before load (user/capture/loader.c) ---- */

DFT_SHARED const volatile struct dft_sc_cfg sc_cfg[DFT_NR_MAX];
DFT_SHARED const volatile struct dft_kernel_shape kshape;
/* records a CPU writes between two wakeups of the consumer */
DFT_SHARED const volatile __u32 wakeup_records;
/* Calls stop taking the ring past this many bytes unread (see
 * ring_for_calls()); each CPU looks every calls_check records. */
DFT_SHARED const volatile __u64 calls_max;
DFT_SHARED const volatile __u32 calls_check;
/* -D: count losses per process too, so that each file reports its own. */
DFT_SHARED const volatile bool lost_by_proc_on;
/* Under sudo: a program that raises privileges (setuid...) is not traced,
 * since the invoking user could not watch it either. */
DFT_SHARED const volatile bool hide_privileged;
/* --profile: fold every call (bpf/fold.bpf.h) */
DFT_SHARED const volatile bool profile_on;
/* --flight: with profile_on, every call is sent as a full trace sends
 * it, for user space's window of the last seconds, and folded there;
 * here only those the ring had no room for (syscalls.bpf.c: on_exit) */
DFT_SHARED const volatile bool flight_on;
/* --steps: the schedule, and whether the step last set is in an active
 * window (set by the step annotation, read by the syscall hooks; one for
 * the whole trace: the window follows the last step any process set). */
DFT_SHARED const volatile bool steps_on;
DFT_SHARED const volatile struct dft_steps steps;
DFT_SHARED __u32 step_active;
/* regions from threads' rings (annot.bpf.c), where files have them;
 * records older than rings_since (ns) are another tracer's */
DFT_SHARED const volatile bool rings_on;
DFT_SHARED const volatile __u64 rings_since;
/* -a, --cgroup, --uid, --comm; scope.self_tgid also for every mode */
DFT_SHARED const volatile bool scope_on;
DFT_SHARED const volatile struct dft_scope scope;
/* --cgroup's directory id, apart from scope: user space follows the
 * directory when it is removed and made anew under the same name */
DFT_SHARED __u64 scope_cgroup_id;

/* ---- maps every feature writes to ---- */

/* Maps shared between units have named types: libbpf 1.1's linker loses
 * the place of an extern map whose type has no name. */
struct events_map {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 20);
};
DFT_SHARED struct events_map events SEC(".maps");

/* Presence of an entry is what makes a task tracked. */
struct tasks_map {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct dft_task);
};
DFT_SHARED struct tasks_map tasks SEC(".maps");

struct lost_map {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, DFT_LOST_SLOTS);
	__type(key, __u32);
	__type(value, __u64);
};
DFT_SHARED struct lost_map lost SEC(".maps");

struct lost_by_proc_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, DFT_LOST_PROCS);
	__type(key, struct dft_lost_key);
	__type(value, __u64);
};
DFT_SHARED struct lost_by_proc_map lost_by_proc SEC(".maps");

/* Per CPU: records since the consumer was last woken; records since it
 * last asked how full the ring is, and the answer: whether calls fold. */
struct ring_view {
	__u32 since_wakeup;
	__u32 since_query;
	__u32 calls_fold;
};

struct ring_views_map {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ring_view);
};
DFT_SHARED struct ring_views_map ring_views SEC(".maps");

/* Totals of folded calls, when the ring has no room for them (see
 * bpf/fold.bpf.h): two maps, one being filled while user space drains
 * the other (fold_gen flips them), so that a total is never added to
 * while it is read and deleted. */
struct fold_map {
	__uint(type, BPF_MAP_TYPE_HASH);	/* preallocated: no allocation per new key */
	__uint(max_entries, 8192);
	__type(key, struct dft_fold_key);
	__type(value, struct dft_fold);
};
DFT_SHARED struct fold_map fold0 SEC(".maps"), fold1 SEC(".maps");
DFT_SHARED __u32 fold_gen;	/* the map being filled: set by user space */
DFT_SHARED __u32 fold_made;	/* a total was made since user space cleared it */
/* a new total's value, inserted then filled: not made on the stack, which
 * older kernels limit to 512 bytes for a program and what it calls */
DFT_SHARED const volatile struct dft_fold fold_zero;

/* Each process's epoch and step, as its annotations set them (annot.bpf.c),
 * for the totals its calls fold into; gone with the process. A thread
 * reads its process's again only when pos_seq, bumped at every change,
 * has moved (fold.bpf.h): the hot path reads one number. */
struct positions_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, DFT_LOST_PROCS);
	__type(key, __u32);
	__type(value, struct dft_pos);
};
DFT_SHARED struct positions_map positions SEC(".maps");
DFT_SHARED __u32 pos_seq;

/* ---- the ring ---- */

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
	__u32 zero = 0;
	struct ring_view *v = bpf_map_lookup_elem(&ring_views, &zero);

	if (!v || ++v->since_wakeup < wakeup_records)
		return BPF_RB_NO_WAKEUP;
	v->since_wakeup = 0;
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

/* A record made in a scratch buffer, copied into the ring. Where the
 * record may be made with or without room for it (an annotation's
 * strings feed the region stack either way), a reservation and a
 * scratch behind one pointer are more than older verifiers follow. */
static __always_inline void send(void *rec, __u64 size, __u32 lost_slot)
{
	if (bpf_ringbuf_output(&events, rec, size, wakeup_flag()))
		count_lost(lost_slot);
}

/* ---- tasks ---- */

static __always_inline struct dft_task *tracked(struct task_struct *t)
{
	return bpf_task_storage_get(&tasks, t, 0, 0);
}

/* A task's memory, as a number. Read with a helper, not loaded: from
 * 6.5 the verifier looks each pointer loaded through a trusted one (a
 * hook's task) up in the kernel's BTF, ~0.8 ms a load here (kread.bpf.c,
 * current_to_read()); this is read once a task, an exec or a rename. */
static __always_inline __u64 task_mm(struct task_struct *t)
{
	return (__u64)BPF_CORE_READ(t, mm);
}

static __always_inline struct dft_task *track(struct task_struct *t)
{
	struct dft_task *st = bpf_task_storage_get(&tasks, t, 0,
						   BPF_LOCAL_STORAGE_GET_F_CREATE);

	if (st) {
		st->nr = -1;
		/* as task_mm() */
		st->start_ns = st->image_ns = BPF_CORE_READ(t, group_leader, start_time);
		st->mm = task_mm(t);
	}
	return st;
}

/* The task's memory is another from now (an exec): reads of its process
 * made for records from before are refused (dftrace.h). */
static __always_inline void new_image(struct dft_task *st, struct task_struct *t)
{
	st->image_ns = bpf_ktime_get_ns();
	st->mm = task_mm(t);
}

static __always_inline void fill_header(struct dft_header *h, int kind,
					struct task_struct *t)
{
	h->kind = kind;
	h->flags = 0;
	h->nr = 0;
	h->tgid = t->tgid;
	h->tid = t->pid;
	h->io_dur = 0;
	h->ts = bpf_ktime_get_ns();
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
	h->io_dur = 0;
	h->ts = st->ts;
}

/* A task's name: how user space learns of a task that entered the trace
 * (a rename, a move into --cgroup's directory). */
static __always_inline void emit_comm(struct task_struct *task, const char *comm)
{
	struct dft_comm *e = reserve(sizeof(*e), DFT_NR_MAX + DFT_EV_COMM);

	if (!e)
		return;
	fill_header(&e->h, DFT_EV_COMM, task);
	bpf_probe_read_kernel_str(e->comm, sizeof(e->comm), comm);
	bpf_ringbuf_submit(e, wakeup_flag());
}

/* Outside --steps' active windows only the calls the fd tables need go
 * on, to be applied and not written. */
static __always_inline bool quiet_step(void)
{
	return steps_on && !step_active;
}

/* ---- files, as the kernel names them ---- */

/* An inode's (dev, ino), i a pointer the verifier knows (a hook's
 * argument, or a field of one): plain loads. */
static __always_inline struct dft_file_id inode_id(struct inode *i)
{
	struct dft_file_id id = { i->i_sb->s_dev, i->i_ino };

	/* clang would share the loads with a caller's other branch, a map
	 * value's: one instruction may not take both kinds of pointer */
	barrier_var(id.dev);
	barrier_var(id.ino);
	return id;
}

/* Reads through a kernel pointer held as a number (kread.bpf.c). Their
 * results go to the stack: before 6.2 a global function takes no
 * pointer into a ring buffer reservation. */
int file_id_of(__u64 file, struct dft_file_id *id);
int uring_req_of(__u64 req, __u64 *file);
/* The file mapped at addr in the current task, into *id if any. */
int mapping_file_id(__u64 addr, struct dft_file_id *id);
/* The same for file, mapped at addr: on a stacking filesystem
 * (overlayfs) the mapping's own file, which its pages' faults name. */
int mapped_file_id(__u64 file, __u64 addr, struct dft_file_id *id);

/* The (dev, ino) of a file read as a number (from an fd table). */
static __always_inline struct dft_file_id file_id(struct file *f)
{
	struct dft_file_id id = { 0, 0 };

	file_id_of((__u64)f, &id);
	return id;
}

/* The file behind an fd of the current task, as a number; 0 if none
 * (kread.bpf.c). */
__u64 fd_file_of(long fd);

static __always_inline struct file *fd_file(long fd)
{
	return (struct file *)fd_file_of(fd);
}

/* No other task can close or replace the current task's fds: it shares
 * its table with none (a thread does, and io_uring's workers). */
int files_own(void);
/* The current process's program file, into *id. */
int exe_file_id(struct dft_file_id *id);

/* files_own(), asked of the kernel once between the points where the
 * answer can become no (fds_may_change()), where asking at each call
 * cost ~8 ns. Another task comes to share the table only through a clone
 * of one that holds it: the thread's own clone (the fork hook), or the
 * kernel's io_uring threads, made while the thread sets up or enters a
 * ring (calls that pass there) or in the task work of one already made.
 * Only yes is kept: a shared table becomes the thread's own when the
 * others exit. */
static __always_inline bool table_own(struct dft_task *st)
{
	if (!st->own_table)
		st->own_table = files_own();
	return st->own_table;
}

/* Inode number behind an fd: it names pipes and sockets ("pipe:[ino]")
 * even when they are closed before we look. */
static __always_inline __u64 fd_ino(long fd)
{
	struct file *f = fd_file(fd);

	return f ? file_id(f).ino : 0;
}

/* ---- shared by the units, verified once per program that calls them ---- */

/* fd's file by (dev, ino), for I/O that will name it so (see dftrace.h);
 * 0 if it had no room (bpf/syscalls.bpf.c). */
int emit_fileid(long nr, long fd, __u64 addr, __u32 prot);

#endif
