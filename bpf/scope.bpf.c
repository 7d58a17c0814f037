// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* --cgroup's hook (see scope.bpf.h): loaded only with --cgroup. */
#include "scope.bpf.h"

/* A task moved into the directory (a job step, a container, a systemd
 * scope) is traced from there: its name tells user space of it. */
SEC("tp_btf/cgroup_attach_task")
int BPF_PROG(cgroup_attach_task, struct cgroup *dst_cgrp, const char *path,
	     struct task_struct *task, bool threadgroup)
{
	if (scope.cgroup_level && !tracked(task) && cgroup_in_scope(dst_cgrp) &&
	    !(task->flags & PF_KTHREAD) && task->tgid != scope.self_tgid &&
	    (!scope.owner_only || owned(task)) && track(task))
		emit_comm(task, task->comm);
	return 0;
}
