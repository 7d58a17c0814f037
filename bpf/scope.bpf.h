/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Scopes beyond a process tree (-a, --cgroup, --uid, --comm): where a
 * task enters one (exec, rename, a move between cgroups) it is tracked
 * from then on; the tracer's start-up marks those already in. The test
 * is inline here, for the lifecycle hooks; the cgroup hook is in
 * scope.bpf.c.
 */
#ifndef SCOPE_BPF_H
#define SCOPE_BPF_H

#include "core.bpf.h"

/* Before 6.0 a cgroup kept its ancestors' ids, not the ancestors. */
struct cgroup___5_x {
	__u64 ancestor_ids[DFT_CGROUP_LEVEL_MAX + 1];
} __attribute__((preserve_access_index));

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
	if (!kshape.cgroup_ancestors)
		return BPF_CORE_READ((struct cgroup___5_x *)cg, ancestor_ids[level]) ==
		       scope_cgroup_id;
	if (bpf_core_read(&anc, sizeof(anc), &cg->ancestors[level]))
		return false;
	return anc && BPF_CORE_READ(anc, kn, id) == scope_cgroup_id;
}

/* Every uid of t's is the service's client's (a process root moved into
 * its cgroup, or a setuid one of its user's, is not). */
static __always_inline bool owned(struct task_struct *t)
{
	const struct cred *c = t->real_cred;
	__u32 u = scope.owner_uid;

	return c->uid.val == u && c->euid.val == u && c->suid.val == u && c->fsuid.val == u;
}

static __always_inline bool in_scope(struct task_struct *t, const char *comm)
{
	if (!scope_on || t->flags & PF_KTHREAD || t->tgid == scope.self_tgid)
		return false;
	if (scope.owner_only && !owned(t))
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
	return in_scope(t, comm) ? track(t) : NULL;
}

#endif
