// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The lifecycle of tracked tasks: a fork tracks the child from its first
 * syscall, an exec says what the process now runs (and may bring a task
 * into a scope, or take it out), an exit ends a thread or its process,
 * a rename names it. The core of every trace with the syscall hooks.
 */
#include "core.bpf.h"
#include "fold.bpf.h"
#include "iobatch.bpf.h"
#include "mmapio.bpf.h"
#include "scope.bpf.h"

/* A new process starts at its parent's epoch and step, as user space's
 * context of it does (a copy of the same memory). */
static __always_inline void inherit_pos(struct task_struct *parent, struct task_struct *child)
{
	__u32 from = parent->tgid, to = child->tgid;
	struct dft_pos *p;

	if (from == to || !(p = bpf_map_lookup_elem(&positions, &from)))
		return;
	bpf_map_update_elem(&positions, &to, p, BPF_ANY);
	__sync_fetch_and_add(&pos_seq, 1);
}

/* An exec ends the old program's context; an exit, the process's. */
static __always_inline void forget_pos(__u32 tgid)
{
	if (!bpf_map_delete_elem(&positions, &tgid))
		__sync_fetch_and_add(&pos_seq, 1);
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(sched_process_fork, struct task_struct *parent,
	     struct task_struct *child)
{
	struct dft_task *st = tracked(parent), *cst;
	unsigned char fds_lost_child = 0;
	struct dft_fork *e;

	if (!st)
		return 0;
	/* a thread shares the parent's fd table from here */
	fds_may_change(st);
	/* the child's fd table is a copy of what user space can't name */
	if (st->fds_lost && child->tgid != parent->tgid)
		fds_lost_child = 1;
	cst = track(child);
	if (cst) {
		cst->fds_lost = fds_lost_child;
		/* a process's copy of the forking thread's memory has its
		 * ring, read as far: all of it, at the clone's sys_enter. A
		 * thread has its own, and so has a process that shares the
		 * parent's memory (CLONE_VM: vfork, posix_spawn): the ring
		 * there is the parent's, which the parent goes on writing. */
		if (child->tgid != parent->tgid && task_mm(child) != task_mm(parent)) {
			cst->ring = st->ring;
			cst->ring_tail = st->ring_tail;
			cst->ring_last = st->ring_last;
		}
	}
	st = cst;
	inherit_pos(parent, child);
	e = reserve(sizeof(*e), DFT_NR_MAX + DFT_EV_FORK);
	if (!e)
		return 0;
	fill_header(&e->h, DFT_EV_FORK, parent);
	e->child_tgid = child->tgid;
	e->child_tid = child->pid;
	if (child->tgid == parent->tgid)
		e->h.flags |= DFT_FORK_THREAD;
	/* A child we failed to track would silently vanish: say so. */
	if (!st)
		e->h.flags |= DFT_FORK_UNTRACKED;
	bpf_probe_read_kernel_str(e->comm, sizeof(e->comm), child->comm);
	bpf_ringbuf_submit(e, wakeup_flag());
	return 0;
}

static __always_inline bool is_tracer(const char *comm)
{
	static const char me[] = DFT_TRACER_COMM;

	for (int i = 0; i < (int)sizeof(me); i++)
		if (comm[i] != me[i])
			return false;
	return true;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(sched_process_exec, struct task_struct *p, pid_t old_pid,
	     struct linux_binprm *bprm)
{
	struct dft_file_id prog = { 0, 0 }, entry = { 0, 0 };
	struct dft_task *st = tracked(p);
	struct mm_struct *mm;
	struct dft_exec *e;
	__u64 start, len;
	bool privileged, left;

	/* execve is no call of the table: what the thread kept goes ahead
	 * of the exec, which closes fds (and may untrack it) */
	if (st) {
		fds_may_change(st);
		/* the new program's strings are elsewhere, and its ring */
		__builtin_memset(st->sites, 0, sizeof(st->sites));
		st->ring = st->ring_tail = 0;
		new_image(st, p);
	} else if (!enter_scope(p, p->comm)) {
		return 0;
	}
	forget_pos(p->tgid);
	/* another tracer's process is its own, not ours */
	left = is_tracer(p->comm);
	if (left)
		bpf_task_storage_delete(&tasks, p);
	/* secureexec: what glibc sees as AT_SECURE, set for every exec that
	 * raises privileges. Untracked at once, even if no record fits. */
	privileged = hide_privileged && BPF_CORE_READ_BITFIELD(bprm, secureexec);
	if (privileged)
		bpf_task_storage_delete(&tasks, p);
	/* the program and its interpreter as their pages' faults will
	 * name them: the files mapped at start_code and at the entry */
	mm = (struct mm_struct *)task_mm(p);
	if (kshape.find_vma) {
		mapping_file_id(BPF_CORE_READ(mm, start_code), &prog);
		mapping_file_id(PT_REGS_IP_CORE((struct pt_regs *)bpf_task_pt_regs(p)), &entry);
	}
	e = reserve(sizeof(*e), DFT_NR_MAX + DFT_EV_EXEC);
	if (!e)
		return 0;
	fill_header(&e->h, DFT_EV_EXEC, p);
	if (privileged)
		e->h.flags |= DFT_EXEC_PRIVILEGED;
	if (left)
		e->h.flags |= DFT_EXEC_LEFT;
	e->old_tid = old_pid;
	e->prog = prog;
	e->entry = entry;
	bpf_probe_read_kernel_str(e->comm, sizeof(e->comm), p->comm);
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

/* Whether p is its process's last thread. From 6.16 the tracepoint says;
 * before, every thread has counted itself out of signal->live by then,
 * so the last finds none left (two threads exiting at once may both see
 * it, and the records of one may follow the other's exit: the exit says
 * it guessed, and user space ends the process with the last thread it
 * knows). Raw arguments: the second is read
 * only where this kernel passes it. */
static __always_inline bool group_dead(__u64 *ctx, struct task_struct *p)
{
	if (kshape.exit_group_dead)
		return ctx[1];
	return p->signal->live.counter == 0;
}

SEC("tp_btf/sched_process_exit")
int sched_process_exit(__u64 *ctx)
{
	struct task_struct *p = (void *)ctx[0];
	struct dft_task *st = tracked(p);
	struct dft_exit *e;
	bool last;

	if (!st)
		return 0;
	last = group_dead(ctx, p);
	if (last)
		forget_pos(p->tgid);
	flush_batch(st);
	flush_run(st);
	/* its running total goes out ahead of its exit record; what is in
	 * the fold maps, user space drains when the process ends */
	if (!flush_acc(st))
		count_lost(st->acc.key.nr & NR_MASK);
	e = reserve(sizeof(*e), DFT_NR_MAX + DFT_EV_EXIT);
	if (!e)
		return 0;
	fill_header(&e->h, DFT_EV_EXIT, p);
	if (last)
		e->h.flags |= DFT_EXIT_GROUP_DEAD |
			      (kshape.exit_group_dead ? 0 : DFT_EXIT_GROUP_GUESSED);
	/* once a process: read as task_mm() is */
	e->exit_code = last ? BPF_CORE_READ(p, signal, group_exit_code) | p->exit_code :
			      p->exit_code;
	/* Exits must reach the consumer promptly: they end the trace. */
	bpf_ringbuf_submit(e, last ? BPF_RB_FORCE_WAKEUP : wakeup_flag());
	return 0;
}

SEC("tp_btf/task_rename")
int BPF_PROG(task_rename, struct task_struct *task, const char *comm)
{
	struct dft_task *st = tracked(task);
	char name[DFT_COMM_LEN];

	/* An exec renames the task after its new memory is in, and before
	 * /proc/PID/mem can be opened again (the exec holds
	 * exec_update_lock): from here user space reads no memory of the
	 * process for an older record. sched_process_exec comes later. */
	if (st && task_mm(task) != st->mm)
		new_image(st, task);
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
