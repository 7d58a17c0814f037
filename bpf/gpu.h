/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The GPU and collective calls traced by uprobes on the libraries that
 * implement them (libcuda.so.1, libnccl.so.2, libcufile.so.0), said once
 * for the kernel side (bpf/gpu.bpf.c: what to read) and user space
 * (user/capture/gpuprobes.c: what to attach; user/correlate/gpu.c: what
 * each argument means). No CUPTI: every process in scope, attached or
 * launched, torch.profiler on or off.
 *
 * X(symbol, family, class, kind, nargs, out, out2, str, bytes, stream,
 *   comm, x, y): argument numbers are 1-based, 0 for none; past the
 * sixth they are on the stack (x86-64), read at entry.
 *   out, out2  pointer arguments read through at return (what the call
 *              made: a handle, an address, a rank)
 *   str        a string argument read at return (a kernel's name)
 *   bytes      the size argument (a collective's count, an allocation's
 *              size, a cuFile size)
 *   stream     the CUstream / cudaStream_t argument
 *   comm       the NCCL communicator
 *   x, y       a collective's datatype and root or peer; a cuFile
 *              call's offset; an allocation's height (pitched)
 *   kind       a copy's direction, a cuFile call's read or write
 */
#ifndef DFTRACE_GPU_H
#define DFTRACE_GPU_H

enum dft_gpu_family { DFT_GPU_CUDA = 1, DFT_GPU_NCCL, DFT_GPU_CUFILE };

enum dft_gpu_class {
	GC_COPY = 1, GC_LAUNCH, GC_LAUNCH_EX, GC_GRAPH, GC_NAME, GC_KFUNC,
	GC_ALLOC, GC_ALLOC_PITCH, GC_FREE, GC_SYNC,
	GC_COLL, GC_GROUP, GC_COMM_INIT, GC_COMM_ALL, GC_COMM_RANK,
	GC_COMM_COUNT, GC_COMM_SPLIT, GC_COMM_FREE,
	GC_FILE_REG, GC_FILE_DEREG, GC_FILE_IO, GC_FILE_ASYNC, GC_FILE_BATCH,
};

/* A copy's direction; a cuFile call's; a collective's root or peer. */
enum dft_gpu_kind {
	GK_NONE, GK_DEFAULT, GK_HTOD, GK_DTOH, GK_DTOD, GK_PTOP, GK_READ, GK_WRITE,
	GK_ROOT, GK_PEER,	/* what a collective's y argument is */
};

/* The symbol each family's library is known by: a file that defines
 * it (a library of any name, or a program linking one statically) gets
 * that family's probes. */
#define DFT_GPU_MARKER_CUDA "cuLaunchKernel"
#define DFT_GPU_MARKER_NCCL "ncclAllReduce"
#define DFT_GPU_MARKER_CUFILE "cuFileRead"

#define CUDA_COPY(X, s, k, n, b, st) X(s, CUDA, GC_COPY, k, n, 0, 0, 0, b, st, 0, 0, 0)
#define CUDA_LAUNCH(X, s, n) X(s, CUDA, GC_LAUNCH, GK_NONE, n, 0, 0, 0, 0, 9, 0, 0, 0)
#define CUDA_ALLOC(X, s, n, st) X(s, CUDA, GC_ALLOC, GK_NONE, n, 1, 0, 0, 2, st, 0, 0, 0)
#define CUDA_FREE(X, s, n, st) X(s, CUDA, GC_FREE, GK_NONE, n, 0, 0, 0, 0, st, 0, 0, 0)
#define CUDA_SYNC(X, s, n, st) X(s, CUDA, GC_SYNC, GK_NONE, n, 0, 0, 0, 0, st, 0, 0, 0)
#define NCCL_COLL(X, s, k, n, cnt, dt, peer, comm) \
	X(s, NCCL, GC_COLL, k, n, 0, 0, 0, cnt, n, comm, dt, peer)
#define NCCL_COMM(X, s, c, n, out, comm) X(s, NCCL, c, GK_NONE, n, out, 0, 0, 0, 0, comm, 0, 0)

#define DFT_GPU_CALLS(X)                                                      \
	CUDA_COPY(X, cuMemcpy, GK_DEFAULT, 3, 3, 0)                           \
	CUDA_COPY(X, cuMemcpy_ptds, GK_DEFAULT, 3, 3, 0)                      \
	CUDA_COPY(X, cuMemcpyAsync, GK_DEFAULT, 4, 3, 4)                      \
	CUDA_COPY(X, cuMemcpyAsync_ptsz, GK_DEFAULT, 4, 3, 4)                 \
	CUDA_COPY(X, cuMemcpyHtoD_v2, GK_HTOD, 3, 3, 0)                       \
	CUDA_COPY(X, cuMemcpyHtoD_v2_ptds, GK_HTOD, 3, 3, 0)                  \
	CUDA_COPY(X, cuMemcpyDtoH_v2, GK_DTOH, 3, 3, 0)                       \
	CUDA_COPY(X, cuMemcpyDtoH_v2_ptds, GK_DTOH, 3, 3, 0)                  \
	CUDA_COPY(X, cuMemcpyDtoD_v2, GK_DTOD, 3, 3, 0)                       \
	CUDA_COPY(X, cuMemcpyDtoD_v2_ptds, GK_DTOD, 3, 3, 0)                  \
	CUDA_COPY(X, cuMemcpyHtoDAsync_v2, GK_HTOD, 4, 3, 4)                  \
	CUDA_COPY(X, cuMemcpyHtoDAsync_v2_ptsz, GK_HTOD, 4, 3, 4)             \
	CUDA_COPY(X, cuMemcpyDtoHAsync_v2, GK_DTOH, 4, 3, 4)                  \
	CUDA_COPY(X, cuMemcpyDtoHAsync_v2_ptsz, GK_DTOH, 4, 3, 4)             \
	CUDA_COPY(X, cuMemcpyDtoDAsync_v2, GK_DTOD, 4, 3, 4)                  \
	CUDA_COPY(X, cuMemcpyDtoDAsync_v2_ptsz, GK_DTOD, 4, 3, 4)             \
	CUDA_COPY(X, cuMemcpyPeer, GK_PTOP, 5, 5, 0)                          \
	CUDA_COPY(X, cuMemcpyPeer_ptds, GK_PTOP, 5, 5, 0)                     \
	CUDA_COPY(X, cuMemcpyPeerAsync, GK_PTOP, 6, 5, 6)                     \
	CUDA_COPY(X, cuMemcpyPeerAsync_ptsz, GK_PTOP, 6, 5, 6)                \
	CUDA_LAUNCH(X, cuLaunchKernel, 11)                                    \
	CUDA_LAUNCH(X, cuLaunchKernel_ptsz, 11)                               \
	CUDA_LAUNCH(X, cuLaunchCooperativeKernel, 10)                         \
	CUDA_LAUNCH(X, cuLaunchCooperativeKernel_ptsz, 10)                    \
	X(cuLaunchKernelEx, CUDA, GC_LAUNCH_EX, GK_NONE, 2, 0, 0, 0, 0, 0, 0, 0, 0) \
	X(cuLaunchKernelEx_ptsz, CUDA, GC_LAUNCH_EX, GK_NONE, 2, 0, 0, 0, 0, 0, 0, 0, 0) \
	X(cuGraphLaunch, CUDA, GC_GRAPH, GK_NONE, 2, 0, 0, 0, 0, 2, 0, 0, 0)   \
	X(cuGraphLaunch_ptsz, CUDA, GC_GRAPH, GK_NONE, 2, 0, 0, 0, 0, 2, 0, 0, 0) \
	X(cuModuleGetFunction, CUDA, GC_NAME, GK_NONE, 3, 1, 0, 3, 0, 0, 0, 0, 0) \
	X(cuLibraryGetKernel, CUDA, GC_NAME, GK_NONE, 3, 1, 0, 3, 0, 0, 0, 0, 0) \
	X(cuKernelGetFunction, CUDA, GC_KFUNC, GK_NONE, 2, 1, 0, 0, 0, 0, 0, 0, 0) \
	CUDA_ALLOC(X, cuMemAlloc_v2, 2, 0)                                    \
	CUDA_ALLOC(X, cuMemAllocAsync, 3, 3)                                  \
	CUDA_ALLOC(X, cuMemAllocAsync_ptsz, 3, 3)                             \
	CUDA_ALLOC(X, cuMemAllocManaged, 3, 0)                                \
	CUDA_ALLOC(X, cuMemAllocHost_v2, 2, 0)                                \
	CUDA_ALLOC(X, cuMemHostAlloc, 3, 0)                                   \
	X(cuMemAllocPitch_v2, CUDA, GC_ALLOC_PITCH, GK_NONE, 5, 1, 2, 0, 0, 0, 0, 4, 0) \
	CUDA_FREE(X, cuMemFree_v2, 1, 0)                                      \
	CUDA_FREE(X, cuMemFreeAsync, 2, 2)                                    \
	CUDA_FREE(X, cuMemFreeAsync_ptsz, 2, 2)                               \
	CUDA_FREE(X, cuMemFreeHost, 1, 0)                                     \
	CUDA_SYNC(X, cuStreamSynchronize, 1, 1)                               \
	CUDA_SYNC(X, cuStreamSynchronize_ptsz, 1, 1)                          \
	CUDA_SYNC(X, cuCtxSynchronize, 0, 0)                                  \
	CUDA_SYNC(X, cuEventSynchronize, 1, 0)                                \
	CUDA_SYNC(X, cuStreamWaitEvent, 3, 1)                                 \
	CUDA_SYNC(X, cuStreamWaitEvent_ptsz, 3, 1)                            \
	NCCL_COLL(X, ncclAllReduce, GK_NONE, 7, 3, 4, 0, 6)                   \
	NCCL_COLL(X, ncclBroadcast, GK_ROOT, 7, 3, 4, 5, 6)                   \
	NCCL_COLL(X, ncclReduce, GK_ROOT, 8, 3, 4, 6, 7)                      \
	NCCL_COLL(X, ncclAllGather, GK_NONE, 6, 3, 4, 0, 5)                   \
	NCCL_COLL(X, ncclReduceScatter, GK_NONE, 7, 3, 4, 0, 6)               \
	NCCL_COLL(X, ncclSend, GK_PEER, 6, 2, 3, 4, 5)                        \
	NCCL_COLL(X, ncclRecv, GK_PEER, 6, 2, 3, 4, 5)                        \
	X(ncclGroupStart, NCCL, GC_GROUP, GK_NONE, 0, 0, 0, 0, 0, 0, 0, 0, 0)  \
	X(ncclGroupEnd, NCCL, GC_GROUP, GK_NONE, 0, 0, 0, 0, 0, 0, 0, 0, 0)    \
	/* the unique id goes by value, in memory: nranks, rank in registers */ \
	X(ncclCommInitRank, NCCL, GC_COMM_INIT, GK_NONE, 3, 1, 0, 0, 2, 0, 0, 0, 3) \
	X(ncclCommInitRankConfig, NCCL, GC_COMM_INIT, GK_NONE, 3, 1, 0, 0, 2, 0, 0, 0, 3) \
	X(ncclCommInitAll, NCCL, GC_COMM_ALL, GK_NONE, 2, 0, 0, 0, 2, 0, 0, 0, 0) \
	NCCL_COMM(X, ncclCommUserRank, GC_COMM_RANK, 2, 2, 1)                 \
	NCCL_COMM(X, ncclCommCount, GC_COMM_COUNT, 2, 2, 1)                   \
	NCCL_COMM(X, ncclCommSplit, GC_COMM_SPLIT, 4, 4, 1)                   \
	NCCL_COMM(X, ncclCommDestroy, GC_COMM_FREE, 1, 0, 1)                  \
	NCCL_COMM(X, ncclCommAbort, GC_COMM_FREE, 1, 0, 1)                    \
	X(cuFileHandleRegister, CUFILE, GC_FILE_REG, GK_NONE, 2, 1, 0, 0, 0, 0, 0, 0, 0) \
	X(cuFileHandleDeregister, CUFILE, GC_FILE_DEREG, GK_NONE, 1, 0, 0, 0, 0, 0, 0, 0, 0) \
	X(cuFileRead, CUFILE, GC_FILE_IO, GK_READ, 5, 0, 0, 0, 3, 0, 0, 4, 0)  \
	X(cuFileWrite, CUFILE, GC_FILE_IO, GK_WRITE, 5, 0, 0, 0, 3, 0, 0, 4, 0) \
	X(cuFileReadAsync, CUFILE, GC_FILE_ASYNC, GK_READ, 7, 0, 0, 0, 0, 7, 0, 0, 0) \
	X(cuFileWriteAsync, CUFILE, GC_FILE_ASYNC, GK_WRITE, 7, 0, 0, 0, 0, 7, 0, 0, 0) \
	X(cuFileBatchIOSubmit, CUFILE, GC_FILE_BATCH, GK_NONE, 3, 0, 0, 0, 0, 0, 0, 0, 0)

enum dft_gpu_call {
	DFT_GPU_NONE,
#define GPU_ENUM(s, ...) DFT_GPU_##s,
	DFT_GPU_CALLS(GPU_ENUM)
#undef GPU_ENUM
	DFT_GPU__COUNT
};

#define DFT_GPU_MAX 128		/* a power of two above DFT_GPU__COUNT */
/* A folded total's call number (struct dft_fold_key.nr) for GPU call
 * id: past the syscalls' (--profile folds GPU calls in user space). */
#define DFT_GPU_NR_BASE 1024
#define DFT_GPU_ARGS 11		/* cuLaunchKernel's */
#define DFT_GPU_AUX 6
#define DFT_GPU_STR 128		/* a kernel's name, cut there */
#define DFT_GPU_BATCH 16	/* cuFileBatchIOSubmit's entries read */
/* Calls in flight in one thread (a frame of 112 bytes each, in its task
 * storage): deeper ones, a recursion through a probed call, are not
 * recorded and are counted lost (gpu.bpf.c). A power of two. */
#define DFT_GPU_DEPTH 16

/* What the kernel side needs of a call; user space fills it from the
 * table (rodata). */
struct dft_gpu_cfg {
	unsigned char cls, nargs, out, out2, str;
};

/* DFT_EV_GPU: one call, sent as it returns. h.nr: enum dft_gpu_call;
 * h.ts: its entry. aux: what the class reads through its arguments
 * (cuLaunchKernelEx's config: grid, block, shared bytes as 32-bit
 * words, then the stream; cuFileHandleRegister's descriptor: type, fd;
 * an async cuFile call's size and offset; one cuFileBatchIOSubmit
 * entry: handle, opcode, size, offset; ncclCommInitAll's comms). */
struct dft_gpu {
	struct dft_header h;
	unsigned long long dur;
	long long ret;
	unsigned long long arg[DFT_GPU_ARGS];
	unsigned long long out, out2;
	unsigned long long aux[DFT_GPU_AUX];
	unsigned int str_len;	/* with its NUL; 0: none */
	unsigned int pad;
	char str[DFT_GPU_STR];
};

#endif
