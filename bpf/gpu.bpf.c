// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * GPU and collective calls: uprobes on the functions of bpf/gpu.h, in
 * libcuda, libnccl and libcufile, attached by user space
 * (user/capture/gpuprobes.c) to each file that has them. One program
 * takes every entry, one every return; the attachment's cookie says
 * which call it is. The entry keeps the arguments (those on the stack
 * can only be read then); the return reads what the call made through
 * its pointer arguments, and sends the call as one record.
 */
#include "core.bpf.h"
#include "iobatch.bpf.h"

const volatile struct dft_gpu_cfg gpu_cfg[DFT_GPU_MAX];

struct gpu_frame {
	__u64 ts;
	__u64 sp;	/* the stack pointer at entry: the call's identity */
	__u64 arg[DFT_GPU_ARGS];
	__u32 id, pad;
};

/* A thread's calls in flight, outermost first: a call may call another
 * of the table. A frame is known by its stack pointer, so that a
 * return never seen (longjmp, an exception, a probe attached between
 * the call and its return) leaves nothing behind: a frame at or below
 * the stack pointer of a later entry has returned. */
struct gpu_frames {
	__u32 depth, pad;
	struct gpu_frame f[DFT_GPU_DEPTH];
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct gpu_frames);
} gpu_inflight SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct dft_gpu);
} gpu_scratch SEC(".maps");

#define STACK_ARGS (DFT_GPU_ARGS - 6)

SEC("uprobe")
int gpu_enter(struct pt_regs *ctx)
{
	struct task_struct *t = bpf_get_current_task_btf();
	__u32 id = bpf_get_attach_cookie(ctx) & (DFT_GPU_MAX - 1);
	__u64 sp = PT_REGS_SP(ctx);
	struct gpu_frames *fr;
	struct gpu_frame *f;
	__u32 d;

	if (!tracked(t))
		return 0;
	fr = bpf_task_storage_get(&gpu_inflight, t, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!fr)
		return 0;
	d = fr->depth;
	for (int i = DFT_GPU_DEPTH - 1; i >= 0; i--)
		if (i < d && fr->f[i].sp <= sp)
			d = i;
	fr->depth = d;
	if (d >= DFT_GPU_DEPTH) {
		/* deeper: not recorded, and the trace says so; its return
		 * finds no frame (pop()) */
		count_lost(DFT_NR_MAX + DFT_EV_GPU);
		return 0;
	}
	/* the mask stays (barrier_var): 6.1's verifier follows the branch
	 * above where its bounds of d rule it out, and finds d alone out
	 * of range there */
	barrier_var(d);
	f = &fr->f[d & (DFT_GPU_DEPTH - 1)];
	f->id = id;
	f->sp = sp;
	f->arg[0] = PT_REGS_PARM1(ctx);
	f->arg[1] = PT_REGS_PARM2(ctx);
	f->arg[2] = PT_REGS_PARM3(ctx);
	f->arg[3] = PT_REGS_PARM4(ctx);
	f->arg[4] = PT_REGS_PARM5(ctx);
	f->arg[5] = FN_ARG5(ctx);
	/* past the return address: the seventh argument on; or the
	 * ncclUniqueId that ncclCommInitRank takes by value, there too:
	 * its first 40 bytes (NCCL's bootstrap handle: a random magic and
	 * the root's address) name the communicator alike in every rank */
	if ((gpu_cfg[id].nargs > 6 || gpu_cfg[id].cls == GC_COMM_INIT) &&
	    bpf_probe_read_user(&f->arg[6], STACK_ARGS * 8, (void *)(sp + 8)))
		__builtin_memset(&f->arg[6], 0, STACK_ARGS * 8);
	fr->depth = d + 1;
	f->ts = bpf_ktime_get_ns();
	return 0;
}

/* The frame of the call returning (its return popped the return
 * address: the stack pointer is 8 above the entry's), and those inside
 * it that never returned, gone; NULL if its entry was not recorded. */
static __always_inline struct gpu_frame *pop(struct gpu_frames *fr, __u32 id, __u64 sp)
{
	__u32 d = fr->depth;

	for (int i = DFT_GPU_DEPTH - 1; i >= 0; i--) {
		if (i >= d || fr->f[i].sp < sp - 8)
			continue;
		if (fr->f[i].sp == sp - 8 && fr->f[i].id == id) {
			fr->depth = i;
			return &fr->f[i];
		}
		fr->depth = i + 1; /* a call outside it */
		return NULL;
	}
	fr->depth = 0;
	return NULL;
}

/* A word through a pointer argument (1-based n; 0: none). */
static __always_inline __u64 read_out(const struct dft_gpu *e, __u32 n, bool word)
{
	__u64 v = 0;

	if (n < 1 || n > DFT_GPU_ARGS)
		return 0;
	bpf_probe_read_user(&v, word ? 8 : 4, (void *)e->arg[(n - 1) & 15]);
	return v;
}

/* One entry of a cuFileBatchIOSubmit (CUfileIOParams_t, 64 bytes: the
 * size at 32, the file offset at 16, the handle at 40, the opcode at
 * 48), sent as a record of its own. */
static __always_inline void send_batch(struct dft_gpu *e, __u64 size)
{
	__u64 n = e->arg[1] < DFT_GPU_BATCH ? e->arg[1] : DFT_GPU_BATCH;
	__u64 p[8];

	for (int i = 0; i < DFT_GPU_BATCH; i++) {
		if (i >= n)
			break;
		if (bpf_probe_read_user(p, sizeof(p), (void *)(e->arg[2] + 64 * i)))
			break;
		e->aux[0] = p[5];
		e->aux[1] = (__u32)p[6];
		e->aux[2] = p[4];
		e->aux[3] = p[2];
		e->h.flags = i;
		send(e, size, DFT_NR_MAX + DFT_EV_GPU);
	}
}

/* What a class reads through its arguments, into aux. */
static __always_inline void read_aux(struct dft_gpu *e, __u32 cls)
{
	switch (cls) {
	case GC_LAUNCH_EX: /* CUlaunchConfig: 7 unsigned, then the stream */
		bpf_probe_read_user(e->aux, 40, (void *)e->arg[0]);
		break;
	case GC_FILE_REG: /* CUfileDescr_t: the type, then the fd at 8 */
		bpf_probe_read_user(e->aux, 16, (void *)e->arg[1]);
		break;
	case GC_FILE_ASYNC: /* size and offset go by pointer */
		bpf_probe_read_user(&e->aux[0], 8, (void *)e->arg[2]);
		bpf_probe_read_user(&e->aux[1], 8, (void *)e->arg[3]);
		break;
	case GC_COMM_ALL: /* the communicators made, one per device */
		for (int i = 0; i < DFT_GPU_AUX; i++)
			if (i >= e->arg[1] ||
			    bpf_probe_read_user(&e->aux[i], 8, (void *)(e->arg[0] + 8 * i)))
				break;
		break;
	}
}

SEC("uretprobe")
int gpu_exit(struct pt_regs *ctx)
{
	struct task_struct *t = bpf_get_current_task_btf();
	__u32 id = bpf_get_attach_cookie(ctx) & (DFT_GPU_MAX - 1), zero = 0, cls;
	const volatile struct dft_gpu_cfg *c = &gpu_cfg[id];
	struct gpu_frames *fr = bpf_task_storage_get(&gpu_inflight, t, 0, 0);
	struct dft_task *st = tracked(t);
	struct gpu_frame *f;
	struct dft_gpu *e;
	__u64 size;
	long n;

	if (!fr || !st || !(f = pop(fr, id, PT_REGS_SP(ctx))))
		return 0;
	e = bpf_map_lookup_elem(&gpu_scratch, &zero);
	if (!e)
		return 0;
	fill_header(&e->h, DFT_EV_GPU, t);
	e->h.nr = id;
	e->dur = e->h.ts - f->ts;
	e->h.ts = f->ts;
	e->ret = PT_REGS_RC(ctx);
	__builtin_memcpy(e->arg, f->arg, sizeof(e->arg));
	cls = c->cls;
	e->out = read_out(e, c->out, cls != GC_COMM_RANK && cls != GC_COMM_COUNT);
	e->out2 = read_out(e, c->out2, true);
	__builtin_memset(e->aux, 0, sizeof(e->aux));
	read_aux(e, cls);
	e->str_len = 0;
	if (c->str >= 1 && c->str <= DFT_GPU_ARGS) {
		n = bpf_probe_read_user_str(e->str, sizeof(e->str),
					    (void *)e->arg[(c->str - 1) & 15]);
		e->str_len = n > 0 ? n : 0;
	}
	/* cuFile's calls after the syscalls made inside them (its
	 * compatibility mode reads with pread(2)): user space tells; and
	 * every call after the regions its thread kept, which hold it */
	if (cls >= GC_FILE_REG || st->kept_annots)
		flush_batch(st);
	size = offsetof(struct dft_gpu, str) + (e->str_len & (DFT_GPU_STR - 1));
	if (e->str_len >= DFT_GPU_STR)
		size = sizeof(*e);
	if (cls == GC_FILE_BATCH)
		send_batch(e, size);
	else
		send(e, size, DFT_NR_MAX + DFT_EV_GPU);
	return 0;
}
