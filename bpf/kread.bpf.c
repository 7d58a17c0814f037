// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Reads through a kernel pointer held as a number (an fd table's entry,
 * a tracepoint's void *). Where the kernel has the kfunc bpf_rdonly_cast
 * (6.2 on; kshape.fast_reads), the pointer is typed again and its fields
 * are plain loads, where a BPF_CORE_READ is a helper call (~35 ns each
 * here); the cast is a move once verified. Elsewhere BPF_CORE_READ.
 * The one unit that names the kfunc: libbpf 1.1's linker cannot join two
 * objects that both declare it. Global functions, verified once for each
 * program that calls them.
 */
#include "core.bpf.h"

extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym __weak;

__noinline int file_id_of(__u64 file, struct dft_file_id *id)
{
	struct file *f = (void *)file;

	if (!id || !f)
		return 0;
	if (kshape.fast_reads) {
		struct file *k = bpf_rdonly_cast(f, kshape.file_btf_id);

		*id = inode_id(k->f_inode);
		return 0;
	}
	id->dev = BPF_CORE_READ(f, f_inode, i_sb, s_dev);
	id->ino = BPF_CORE_READ(f, f_inode, i_ino);
	return 0;
}

/* bpf_find_vma's callback: the file a mapping maps, as its page faults
 * name it (mapping->host). On a stacking filesystem (overlayfs, the root
 * of every container) vma->vm_file is the layer's file (ovl_mmap swaps
 * it in), whose inode is neither the fd's nor, from 6.8, the one
 * /proc/PID/maps shows (file_user_inode()). */
static long vma_file(struct task_struct *t, struct vm_area_struct *vma, void *ctx)
{
	struct dft_file_id *id = ctx;

	if (vma->vm_file)
		*id = inode_id(vma->vm_file->f_inode);
	return 0;
}

__noinline int mapping_file_id(__u64 addr, struct dft_file_id *id)
{
	struct dft_file_id found = { 0, 0 };	/* the callback's: on the stack */

	if (!id || !kshape.find_vma)
		return 0;
	bpf_find_vma(bpf_get_current_task_btf(), addr, vma_file, &found, 0);
	if (found.ino)
		*id = found;
	return 0;
}

__noinline int mapped_file_id(__u64 file, __u64 addr, struct dft_file_id *id)
{
	struct file *f = (void *)file;
	int depth;

	if (!id || !f)
		return 0;
	file_id_of(file, id);
	/* asked of the mapping only there (~250 ns a lookup) */
	if (kshape.fast_reads) {
		struct file *k = bpf_rdonly_cast(f, kshape.file_btf_id);

		depth = k->f_inode->i_sb->s_stack_depth;
	} else {
		depth = BPF_CORE_READ(f, f_inode, i_sb, s_stack_depth);
	}
	if (depth)
		mapping_file_id(addr, id);
	return 0;
}

/* The current task, for plain loads through its pointers. From 6.5 the
 * verifier looks each pointer loaded through a trusted one (the task
 * the helper gives) up in the kernel's BTF: up to four walks of all its
 * ~130k types (btf_nested_type_is_trusted), ~0.8 ms a load on the VM of
 * doc/bench.md, for each path it checks. Cast, the task is untrusted and
 * so is all loaded through it: no lookups, the same loads. Only for
 * reads: a helper that takes a task wants the trusted one. */
static __always_inline struct task_struct *current_to_read(void)
{
	struct task_struct *t = bpf_get_current_task_btf();

	if (kshape.fast_reads)
		t = bpf_rdonly_cast(t, kshape.task_btf_id);
	return t;
}

/* Global, like the rest here: checked once for each program, not on
 * each of its paths (sys_exit asks from ten). */
__noinline int files_own(void)
{
	return current_to_read()->files->count.counter == 1;
}

/* The current process's program file, into *id. Global: its walk
 * through four kernel structs costs the verifier more than the rest of a
 * fault hook, and so is checked once. */
__noinline int exe_file_id(struct dft_file_id *id)
{
	struct mm_struct *mm = current_to_read()->mm;
	struct file *exe = mm ? mm->exe_file : NULL;

	if (id && exe)
		*id = inode_id(exe->f_inode);
	return 0;
}

/* Loads through the task's BTF pointers are plain loads; a global
 * function, as the verifier's walk through the task's struct costs it
 * more than the rest of most callers. */
__noinline __u64 fd_file_of(long fd)
{
	struct task_struct *t = current_to_read();
	struct fdtable *fdt = t->files->fdt;
	struct file **fds = fdt->fd;
	struct file *f = NULL;

	if (fd < 0 || fd >= fdt->max_fds ||
	    bpf_probe_read_kernel(&f, sizeof(f), &fds[fd]))
		return 0;
	return (__u64)f;
}

/* An io_uring request's opcode, and its file into *file. */
__noinline int uring_req_of(__u64 req, __u64 *file)
{
	struct io_kiocb *r = (void *)req;

	if (!file || !r)
		return 0;
	if (kshape.fast_reads) {
		struct io_kiocb *k = bpf_rdonly_cast(r, kshape.io_kiocb_btf_id);

		*file = (__u64)k->file;
		return k->opcode;
	}
	*file = (__u64)BPF_CORE_READ(r, file);
	return BPF_CORE_READ(r, opcode);
}
