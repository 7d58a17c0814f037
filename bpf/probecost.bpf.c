// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Hook-cost probes for `make bench`: the same trivial body (pid filter,
 * count) behind a classic per-syscall tracepoint and behind the BTF raw
 * sys_enter tracepoint, so the dispatch cost of each can be measured here
 * rather than taken from published figures.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

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

SEC("tp_btf/sys_enter")
int BPF_PROG(floor_enter, struct pt_regs *regs, long nr)
{
	if (bpf_get_current_pid_tgid() >> 32 == target_tgid)
		last_ns = bpf_ktime_get_ns();
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(floor_exit, struct pt_regs *regs, long ret)
{
	if (bpf_get_current_pid_tgid() >> 32 == target_tgid)
		last_ns = bpf_ktime_get_ns() - last_ns;
	return 0;
}
