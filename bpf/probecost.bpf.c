// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Hook-cost probes for `make bench`: the same trivial body (pid filter,
 * count) behind a classic per-syscall tracepoint and behind the BTF raw
 * sys_enter tracepoint, so the dispatch cost of each can be measured here
 * rather than taken from published figures. Also the floors of a syscall
 * tracer and of an annotation tracer, for make bench to run beside ours.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/usdt.bpf.h> /* the maps libbpf's USDT attach wants */

char LICENSE[] SEC("license") = "Dual BSD/GPL";

const volatile __u32 target_tgid;
const volatile long lseek_nr = -1; /* SYS_lseek, set by the loader */
__u64 hits;

SEC("tracepoint/syscalls/sys_enter_lseek")
int classic_lseek(void *ctx)
{
	if (bpf_get_current_pid_tgid() >> 32 == target_tgid)
		__sync_fetch_and_add(&hits, 1);
	return 0;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(raw_enter, struct pt_regs *regs, long nr)
{
	if (nr == lseek_nr && bpf_get_current_pid_tgid() >> 32 == target_tgid)
		__sync_fetch_and_add(&hits, 1);
	return 0;
}

/* The floor a syscall tracer cannot go below: both hooks, the pid filter
 * and a clock read each, nothing kept. */
__u64 last_ns;

static __always_inline void floor_begin(void)
{
	if (bpf_get_current_pid_tgid() >> 32 == target_tgid)
		last_ns = bpf_ktime_get_ns();
}

static __always_inline void floor_end(void)
{
	if (bpf_get_current_pid_tgid() >> 32 == target_tgid)
		last_ns = bpf_ktime_get_ns() - last_ns;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(floor_enter, struct pt_regs *regs, long nr)
{
	floor_begin();
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(floor_exit, struct pt_regs *regs, long ret)
{
	floor_end();
	return 0;
}

/* The same floor attached to the one syscall the bench's loop makes
 * (pread64) through BPF trampolines: the syscall slow path stays off,
 * so the other syscalls, and every process's, pay nothing; a pread of
 * any process pays the trampoline and the filter. x86-64's symbol. */
SEC("fentry/__x64_sys_pread64")
int BPF_PROG(fentry_enter, struct pt_regs *regs)
{
	floor_begin();
	return 0;
}

SEC("fexit/__x64_sys_pread64")
int BPF_PROG(fentry_exit, struct pt_regs *regs, long ret)
{
	floor_end();
	return 0;
}

/* The same floor for a tracer that follows a process tree, whose filter
 * is the task's own storage (children get theirs at fork; here the
 * target's task marks itself at its first call): what following a tree
 * costs over the pid filter. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u64);
} marks SEC(".maps");

/* The current task's mark, the clock's time in it: the task, its
 * storage, the clock (three helper calls). */
static __always_inline void mark_now(void)
{
	struct task_struct *t = bpf_get_current_task_btf();
	__u64 *ts = bpf_task_storage_get(&marks, t, 0, 0);

	if (!ts && t->tgid == target_tgid)
		ts = bpf_task_storage_get(&marks, t, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (ts)
		*ts = bpf_ktime_get_ns();
}

SEC("tp_btf/sys_enter")
int BPF_PROG(tree_enter, struct pt_regs *regs, long nr)
{
	mark_now();
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(tree_exit, struct pt_regs *regs, long ret)
{
	__u64 *ts = bpf_task_storage_get(&marks, bpf_get_current_task_btf(), 0, 0);

	if (ts)
		last_ns = bpf_ktime_get_ns() - *ts;
	return 0;
}

/* What keeping each call costs on top of the tree floor, in two ways: a
 * record in a BPF ring buffer, reserved, filled and submitted without a
 * wakeup (what the full trace sends; user space drains it every 10 ms),
 * or a slot of a per-CPU window the kernel overwrites in turn and user
 * space reads only when it wants (what a flight recorder could keep).
 * 56 bytes each, as the tracer's struct dft_io. */
struct kept_call {
	__u64 ts, dur, pid_tgid;
	__s64 ret;
	__u64 a0, a1, a2;
};

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 22);
} kept_ring SEC(".maps");

/* the window: WINDOW_SLOTS a CPU (max_entries: CPUs x slots, set by the
 * loader), each CPU's next slot in its own head */
#define WINDOW_SLOTS 4096
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, WINDOW_SLOTS);
	__type(key, __u32);
	__type(value, struct kept_call);
} kept_window SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} window_head SEC(".maps");

/* the arguments stand in for those the tracer keeps from the enter
 * hook: the cost measured is the store's */
static __always_inline void fill_call(struct kept_call *k, __u64 start, long ret)
{
	k->ts = start;
	k->dur = bpf_ktime_get_ns() - start;
	k->pid_tgid = bpf_get_current_pid_tgid();
	k->ret = ret;
	k->a0 = start;
	k->a1 = ret;
	k->a2 = k->pid_tgid;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(ring_exit, struct pt_regs *regs, long ret)
{
	__u64 *ts = bpf_task_storage_get(&marks, bpf_get_current_task_btf(), 0, 0);
	struct kept_call *k;

	if (!ts)
		return 0;
	k = bpf_ringbuf_reserve(&kept_ring, sizeof(*k), 0);
	if (!k)
		return 0;
	fill_call(k, *ts, ret);
	bpf_ringbuf_submit(k, BPF_RB_NO_WAKEUP);
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(window_exit, struct pt_regs *regs, long ret)
{
	__u64 *ts = bpf_task_storage_get(&marks, bpf_get_current_task_btf(), 0, 0);
	__u32 zero = 0, slot;
	struct kept_call *k;
	__u64 *head;

	if (!ts)
		return 0;
	head = bpf_map_lookup_elem(&window_head, &zero);
	if (!head)
		return 0;
	slot = bpf_get_smp_processor_id() * WINDOW_SLOTS + (*head)++ % WINDOW_SLOTS;
	k = bpf_map_lookup_elem(&kept_window, &slot);
	if (k)
		fill_call(k, *ts, ret);
	return 0;
}

/* The floor of an annotation tracer: the least a region's begin or end
 * needs to become a timestamped record of its thread, the same three
 * calls, with the record kept nowhere. dftrace-bpf's annotation programs
 * do this and keep the record; bpftrace's count() does none of it. */
SEC("usdt")
int annot_floor(struct pt_regs *ctx)
{
	mark_now();
	return 0;
}

/* Beside the floor in make bench's bpf_stats: a per-CPU counter, as
 * bpftrace's count() keeps at each hit, and one clock read alone. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} counts SEC(".maps");

SEC("usdt")
int annot_count(struct pt_regs *ctx)
{
	__u32 zero = 0;
	__u64 *n = bpf_map_lookup_elem(&counts, &zero);

	if (n)
		(*n)++;
	return 0;
}

SEC("usdt")
int annot_clock(struct pt_regs *ctx)
{
	last_ns = bpf_ktime_get_ns();
	return 0;
}
