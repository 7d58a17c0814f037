// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * GPU and collective calls (bpf/gpu.h, DFT_EV_GPU): each call an event
 * on its thread, inside whatever regions enclose it. What a call made (a
 * kernel's handle, an allocation, a communicator, a cuFile handle) is
 * kept per process, so that later calls are written with names, sizes,
 * ranks and paths.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "correlate/state.h"
#include "lib/hash.h"
#include "lib/procfs.h"
#include "model/gpucalls.h"

/* CUfileDescr_t's type of a plain fd (CU_FILE_HANDLE_TYPE_OPAQUE_FD) */
#define CUFILE_FD_TYPE 1
/* CUfileOpcode_t */
#define CUFILE_READ 0

static struct gpu_state *state_of(struct proc *p)
{
	if (!p->gpu)
		p->gpu = calloc(1, sizeof(*p->gpu));
	return p->gpu;
}

static void keep(struct hmap *m, uint64_t key, uint64_t val)
{
	if (m->n < GPU_STATE_MAX || hmap_get(m, key, &(uint64_t){ 0 }))
		(void)hmap_put(m, key, val);
}

static const struct istr *named(const struct hmap *m, uint64_t key)
{
	return key ? hmap_get_ptr(m, key) : NULL;
}

/* The argument numbered n (1-based; 0: none). */
static uint64_t arg(const struct dft_gpu *e, unsigned int n)
{
	return n >= 1 && n <= DFT_GPU_ARGS ? e->arg[n - 1] : 0;
}

/* ---- what the calls made ---- */

/* A kernel's name: read by the kernel side, or, where its page was not
 * in yet, from the process now (the string is the module's). */
static void learn_name(const struct proc *p, struct gpu_state *g, const struct gpu_desc *d,
		       const struct dft_gpu *e, size_t size)
{
	size_t room = size - offsetof(struct dft_gpu, str);
	size_t n = e->str_len < room ? e->str_len : room;
	char str[DFT_GPU_STR];
	struct istr *name;

	if (!e->out)
		return;
	if (n) {
		name = istr_intern(e->str, strnlen(e->str, n), n >= DFT_GPU_STR);
	} else {
		procfs_read_str(p->pid, arg(e, d->str), str, sizeof(str));
		/* only the memory of the process that made the call */
		name = str[0] && proc_proven(p) ? istr_intern(str, strlen(str), false) : NULL;
	}
	if (name)
		keep(&g->kernels, e->out, (uintptr_t)name);
}

static uint64_t rank_pair(int64_t rank, int64_t nranks)
{
	return (uint32_t)rank | (uint64_t)(uint32_t)nranks << 32;
}

/* The ncclUniqueId's first bytes the kernel side read at entry, past
 * the register arguments (bpf/gpu.bpf.c). */
#define COMM_ID_WORDS (DFT_GPU_ARGS - 6)

static void keep_comm_id(struct gpu_state *g, uint64_t comm, uint64_t id)
{
	char hex[17];

	snprintf(hex, sizeof(hex), "%016llx", (unsigned long long)id);
	keep(&g->comm_ids, comm, (uintptr_t)istr_intern(hex, 16, false));
}

/* A communicator's id, where the call that made it said enough: the
 * unique id every rank was given, or the parent's id and the color that
 * ncclCommSplit groups ranks by (-1, NCCL_SPLIT_NOCOLOR, makes none). */
static void learn_comm_id(struct gpu_state *g, const struct gpu_desc *d, const struct dft_gpu *e)
{
	const unsigned long long *id = &e->arg[6];
	const struct istr *parent;

	if (d->cls == GC_COMM_INIT) {
		/* all zero: the kernel side could not read it */
		for (int i = 0; i < COMM_ID_WORDS; i++) {
			if (id[i]) {
				keep_comm_id(g, e->out, dft_hash64(id, sizeof(*id) * COMM_ID_WORDS));
				break;
			}
		}
	} else if (d->cls == GC_COMM_SPLIT && (int)arg(e, 2) != -1 &&
		   (parent = named(&g->comm_ids, arg(e, d->comm)))) {
		uint64_t pair[2] = { dft_hash64(parent->str, parent->len), (uint32_t)arg(e, 2) };

		keep_comm_id(g, e->out, dft_hash64(pair, sizeof(pair)));
	}
}

static void learn_comm(struct gpu_state *g, const struct gpu_desc *d, const struct dft_gpu *e,
		       uint64_t *undone)
{
	uint64_t comm = arg(e, d->comm), v = rank_pair(-1, -1);

	learn_comm_id(g, d, e);
	switch (d->cls) {
	case GC_COMM_INIT:
		keep(&g->comms, e->out, rank_pair((int)arg(e, d->y), (int)arg(e, d->bytes)));
		break;
	case GC_COMM_ALL:
		for (uint64_t i = 0; i < DFT_GPU_AUX && i < arg(e, d->bytes); i++)
			keep(&g->comms, e->aux[i], rank_pair(i, arg(e, d->bytes)));
		break;
	case GC_COMM_RANK:
		hmap_get(&g->comms, comm, &v);
		keep(&g->comms, comm, rank_pair((int)e->out, (int)(v >> 32)));
		break;
	case GC_COMM_COUNT:
		hmap_get(&g->comms, comm, &v);
		keep(&g->comms, comm, rank_pair((int)v, (int)e->out));
		break;
	case GC_COMM_SPLIT:
		keep(&g->comms, e->out, v);
		break;
	case GC_COMM_FREE:
		hmap_del(&g->comms, comm, undone); /* its id: see on_gpu() */
		break;
	default:
		break;
	}
}

/* An allocation's bytes: a pitched one's pitch times its height. */
static uint64_t alloc_bytes(const struct gpu_desc *d, const struct dft_gpu *e)
{
	return d->cls == GC_ALLOC_PITCH ? e->out2 * arg(e, d->x) : arg(e, d->bytes);
}

/* What the call made or undid, for the calls after it; *undone: what
 * it undid (the bytes a free gave back, the file a handle named). */
static void learn(struct proc *p, const struct gpu_desc *d, const struct dft_gpu *e,
		  size_t size, uint64_t *undone)
{
	struct gpu_state *g = state_of(p);
	const struct istr *s;

	/* CUresult, ncclResult_t, CUfileError_t.err; Deregister returns none */
	if (!g || (d->cls != GC_FILE_DEREG && (int)e->ret != 0))
		return;
	switch (d->cls) {
	case GC_NAME:
		learn_name(p, g, d, e, size);
		break;
	case GC_KFUNC:
		if ((s = named(&g->kernels, arg(e, 2))))
			keep(&g->kernels, e->out, (uintptr_t)s);
		break;
	case GC_ALLOC:
	case GC_ALLOC_PITCH:
		keep(&g->allocs, e->out, alloc_bytes(d, e));
		break;
	case GC_FREE:
		hmap_del(&g->allocs, arg(e, 1), undone);
		break;
	case GC_FILE_REG:
		if ((uint32_t)e->aux[0] == CUFILE_FD_TYPE && (s = fd_path(p, (int)e->aux[1])))
			keep(&g->files, e->out, (uintptr_t)s);
		break;
	case GC_FILE_DEREG:
		hmap_del(&g->files, arg(e, 1), undone);
		break;
	default:
		learn_comm(g, d, e, undone);
		break;
	}
}

/* ---- the event ---- */

#define ADD(ev, ...) ((ev)->nargs < GPU_ARGS_MAX ? \
	(void)((ev)->args[(ev)->nargs++] = (struct event_arg)__VA_ARGS__) : (void)0)

static void add_kernel(struct gpu_event *ev, const struct gpu_state *g, uint64_t handle)
{
	const struct istr *name = g ? named(&g->kernels, handle) : NULL;

	if (name)
		ADD(ev, GPU_ARG_STR(kernel, name));
}

/* grid, block and shared bytes as 32-bit values: from the registers and
 * stack (cuLaunchKernel), or from the CUlaunchConfig read (Ex) */
static void add_launch(struct gpu_event *ev, const uint32_t *v)
{
	ADD(ev, GPU_ARG(grid_x, v[0]));
	ADD(ev, GPU_ARG(grid_y, v[1]));
	ADD(ev, GPU_ARG(grid_z, v[2]));
	ADD(ev, GPU_ARG(block_x, v[3]));
	ADD(ev, GPU_ARG(block_y, v[4]));
	ADD(ev, GPU_ARG(block_z, v[5]));
	ADD(ev, GPU_ARG(shared_bytes, v[6]));
}

/* A communicator's rank and size as the process said them (-1 each when
 * it did not). */
static uint64_t ranks_of(const struct gpu_state *g, uint64_t comm)
{
	uint64_t ranks = rank_pair(-1, -1);

	if (g)
		hmap_get(&g->comms, comm, &ranks);
	return ranks;
}

/* A communicator's id (learn_comm_id()), where known. */
static void add_comm_id(struct gpu_event *ev, const struct gpu_state *g, uint64_t comm)
{
	const struct istr *id = g ? named(&g->comm_ids, comm) : NULL;

	if (id)
		ADD(ev, GPU_ARG_STR(comm_id, id));
}

/* A communicator's rank and size, where the process said them. */
static void add_ranks(struct gpu_event *ev, uint64_t ranks)
{
	if ((int)ranks >= 0)
		ADD(ev, GPU_ARG(comm_rank, (int)ranks));
	if ((int)(ranks >> 32) >= 0)
		ADD(ev, GPU_ARG(comm_size, (int)(ranks >> 32)));
}

/* The communicator a call made, asked about or ended. */
static void add_comm(struct gpu_event *ev, const struct gpu_desc *d, const struct gpu_state *g,
		     const struct dft_gpu *e, uint64_t undone)
{
	uint64_t comm = d->cls == GC_COMM_INIT || d->cls == GC_COMM_SPLIT ? e->out :
										arg(e, d->comm);

	if (d->cls == GC_COMM_FREE) /* gone from comms: what it held */
		add_ranks(ev, undone ? undone : rank_pair(-1, -1));
	else
		add_ranks(ev, ranks_of(g, comm));
	add_comm_id(ev, g, comm);
}

/* args.bytes: what the call moved, returned for its total. */
static int64_t add_bytes(struct gpu_event *ev, int64_t bytes)
{
	ADD(ev, GPU_ARG(bytes, bytes));
	return bytes;
}

static int64_t add_collective(struct gpu_event *ev, const struct gpu_desc *d,
			      const struct gpu_state *g, const struct dft_gpu *e)
{
	unsigned int size;
	const char *type = gpu_nccl_type(arg(e, d->x), &size);
	uint64_t count = arg(e, d->bytes);
	int64_t bytes = add_bytes(ev, (int64_t)(count * size));

	ADD(ev, GPU_ARG(count, (int64_t)count));
	ADD(ev, GPU_ARG_STR(datatype, istr_cstr(type)));
	if (d->kind == GK_PEER)
		ADD(ev, GPU_ARG(peer, (int)arg(e, d->y)));
	else if (d->kind == GK_ROOT)
		ADD(ev, GPU_ARG(root, (int)arg(e, d->y)));
	add_ranks(ev, ranks_of(g, arg(e, d->comm)));
	add_comm_id(ev, g, arg(e, d->comm));
	return bytes;
}

/* cuFile's reads and writes are file I/O: POSIX events named for
 * DFAnalyzer, bytes in ret. In its compatibility mode cuFile reads and
 * writes with syscalls, already in the trace: the call is then CUFILE,
 * so that no byte is counted twice. Returns the bytes. */
static int64_t file_io(struct gpu_event *ev, const struct gpu_desc *d, const struct thread *th,
		    const struct gpu_state *g, const struct dft_gpu *e)
{
	bool read = d->kind == GK_READ;
	uint64_t fh = arg(e, 1), offset = arg(e, d->x);

	ev->cat = "POSIX";
	ev->ret = e->ret;
	if (d->cls == GC_FILE_ASYNC) { /* as issued: the size asked */
		ev->ret = e->ret ? e->ret : (int64_t)e->aux[0];
		offset = e->aux[1];
	} else if (d->cls == GC_FILE_BATCH) {
		fh = e->aux[0];
		read = e->aux[1] == CUFILE_READ;
		ev->ret = e->ret ? e->ret : (int64_t)e->aux[2];
		offset = e->aux[3];
	}
	ev->name = read ? "pread" : "pwrite";
	ev->file = g ? named(&g->files, fh) : NULL;
	ADD(ev, GPU_ARG_STR(api, istr_cstr(d->name)));
	ADD(ev, GPU_ARG(offset, (int64_t)offset));
	if (th && th->data_ts >= e->h.ts && th->data_ts <= e->h.ts + e->dur) {
		ev->cat = "CUFILE";
		ADD(ev, GPU_ARG_STR(via, istr_cstr("posix")));
	}
	return ev->ret > 0 ? ev->ret : 0;
}

/* The call's args; returns what it moved (-1: nothing it moves). */
static int64_t describe(struct gpu_event *ev, const struct gpu_desc *d, const struct thread *th,
			const struct gpu_state *g, const struct dft_gpu *e, uint64_t undone)
{
	const uint32_t *cfg = (const uint32_t *)e->aux;
	int64_t bytes = -1;
	uint32_t v[7];

	switch (d->cls) {
	case GC_COPY:
		bytes = add_bytes(ev, (int64_t)arg(e, d->bytes));
		ADD(ev, GPU_ARG_STR(copy_kind, istr_cstr(gpu_copy_kind(d->kind))));
		break;
	case GC_LAUNCH:
		add_kernel(ev, g, arg(e, 1));
		for (int i = 0; i < 7; i++)
			v[i] = (uint32_t)arg(e, 2 + i);
		add_launch(ev, v);
		break;
	case GC_LAUNCH_EX:
		add_kernel(ev, g, arg(e, 2));
		add_launch(ev, cfg);
		ADD(ev, GPU_ARG(stream_id, (int64_t)e->aux[4]));
		break;
	case GC_NAME:
	case GC_KFUNC:
		add_kernel(ev, g, e->out);
		break;
	case GC_ALLOC:
	case GC_ALLOC_PITCH:
		bytes = add_bytes(ev, (int64_t)alloc_bytes(d, e));
		break;
	case GC_FREE:
		bytes = undone ? add_bytes(ev, (int64_t)undone) : 0;
		break;
	case GC_FILE_REG:
		ev->file = g ? named(&g->files, e->out) : NULL;
		break;
	case GC_FILE_DEREG:
		ev->file = (const struct istr *)(uintptr_t)undone;
		break;
	case GC_COLL:
		bytes = add_collective(ev, d, g, e);
		break;
	case GC_COMM_INIT:
	case GC_COMM_RANK:
	case GC_COMM_COUNT:
	case GC_COMM_SPLIT:
	case GC_COMM_FREE:
		add_comm(ev, d, g, e, undone);
		break;
	case GC_FILE_IO:
	case GC_FILE_ASYNC:
	case GC_FILE_BATCH:
		bytes = file_io(ev, d, th, g, e);
		break;
	default:
		break;
	}
	if (d->stream)
		ADD(ev, GPU_ARG(stream_id, (int64_t)arg(e, d->stream)));
	return bytes;
}

/* ---- --profile: totals ---- */

/* Under --profile a call is added to its thread's total of the same
 * call, region, epoch and step (and kernel, for launches), written as
 * the kernel side's totals of syscalls are. Folded here, not in the
 * kernel: the uprobe pair costs ten times the record. */
static void fold(struct trace *t, struct proc *p, const struct thread *th,
		 const struct gpu_desc *d, const struct dft_gpu *e, const struct gpu_event *ev,
		 int64_t bytes)
{
	struct dft_fold_key k = { .tgid = e->h.tgid, .tid = e->h.tid,
				  .nr = DFT_GPU_NR_BASE + e->h.nr };
	struct dft_fold f = { .calls = 1, .dur_ns = e->dur, .first_ns = e->h.ts,
			      .last_ns = e->h.ts + e->dur, .fd = -1 };

	if (d->cls == GC_LAUNCH || d->cls == GC_LAUNCH_EX)
		k.ino = arg(e, d->cls == GC_LAUNCH ? 1 : 2);
	fold_key_where(t, p, th, &k);
	f.bytes = bytes > 0 ? bytes : 0;
	f.errors = ev->ret < 0 || (d->family != DFT_GPU_CUFILE && ev->ret != 0);
	f.hist[dft_fold_bucket(e->dur)] = 1;
	trace_fold(t, &k, &f);
}

void gpu_fold_event(const struct proc *p, unsigned int id, const struct dft_fold_key *k,
		    struct fold_event *ev)
{
	const struct gpu_desc *d = gpu_call(id);

	ev->name_cat = gpu_name_cat(id, &ev->name_cat_len);
	ev->call = NULL;
	ev->gpu_bytes = gpu_moves_bytes(d->cls);
	ev->kernel = k->ino && p->gpu ? named(&p->gpu->kernels, k->ino) : NULL;
}

void on_gpu(struct trace *t, const struct dft_gpu *e, size_t size)
{
	const struct gpu_desc *d = gpu_call(e->h.nr);
	struct gpu_event ev = { .tid = e->h.tid, .ts_ns = e->h.ts, .dur_ns = e->dur,
				.ret = (int)e->ret };
	uint64_t undone = 0;
	int64_t bytes;
	struct thread *th;
	struct proc *p;
	struct sink *s;
	struct nesting n;

	if (!d || !(p = trace_proc(t, e->h.tgid)))
		return;
	th = trace_thread(t, p, e->h.tid);
	learn(p, d, e, size, &undone);
	ev.name = d->name;
	if (d->cls == GC_FILE_DEREG) /* void: rax is whatever was left */
		ev.ret = 0;
	ev.cat = d->cls >= GC_FILE_REG ? "CUFILE" : gpu_family_cat(d->family);
	bytes = describe(&ev, d, th, p->gpu, e, undone);
	/* a communicator's id goes once the call that ended it has it */
	if (d->cls == GC_COMM_FREE && !(int)e->ret && p->gpu)
		hmap_del(&p->gpu->comm_ids, arg(e, d->comm), NULL);
	if (t->cfg.profile) {
		fold(t, p, th, d, e, &ev, bytes);
		if (!t->files.flight)
			return;
	}
	s = files_event_sink(&t->files, p);
	if (!s)
		return;
	n = nest_in(p, th);
	writer_gpu(&t->writer, s, p, th, &n, &ev);
	end_event(t, s);
	if (d->family == DFT_GPU_CUFILE)
		flight_io(t, p, e->h.tid, e->h.ts, e->dur, ev.file);
}
