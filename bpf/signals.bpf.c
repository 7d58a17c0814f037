// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Which stop signals the tracer got were sent to the launched command
 * too, by the same sender: a terminal's Ctrl-C, a kill of the process
 * group, a batch system's kill of each process. The tracer passes on
 * only the others, so that the command gets each SIGINT, SIGTERM or
 * SIGHUP once. Attached apart from the hooks: it stays while the tracer
 * waits for the command, after tracing has stopped.
 */
#include "core.bpf.h"

/* set by user space once the command is forked; 0: none */
__u32 command_tgid;
/* per stop signal (SIGINT, SIGTERM, SIGHUP): the signals the tracer got
 * whose sender sent the command one too */
__u64 stops_shared[3];
/* per stop signal: the sending thread of the last one each side got
 * that the other has not matched yet */
static __u64 unmatched_command[3], unmatched_tracer[3];

static __always_inline int stop_slot(int sig)
{
	return sig == 2 ? 0 : sig == 15 ? 1 : sig == 1 ? 2 : -1;
}

/* A signal to one side: shared if its sender sent the other side one it
 * has not matched, else waiting for the other side's. */
static __always_inline void match(int slot, __u64 *mine, __u64 *other)
{
	__u64 sender = bpf_get_current_pid_tgid();

	if (other[slot] == sender) {
		other[slot] = 0;
		__sync_fetch_and_add(&stops_shared[slot], 1);
	} else {
		mine[slot] = sender;
	}
}

SEC("tp_btf/signal_generate")
int BPF_PROG(signal_generate, int sig, struct kernel_siginfo *info,
	     struct task_struct *task, int type, int result)
{
	int slot = stop_slot(sig);

	if (slot < 0 || slot > 2 || !command_tgid)
		return 0;
	if (task->tgid == command_tgid)
		match(slot, unmatched_command, unmatched_tracer);
	else if (task->tgid == scope.self_tgid)
		match(slot, unmatched_tracer, unmatched_command);
	return 0;
}
