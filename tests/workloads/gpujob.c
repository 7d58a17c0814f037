// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A GPU training job on the stand-in libraries (tests/standin): known CUDA
 * driver calls, NCCL collectives and cuFile I/O, inside annotated phases
 * and steps, each reported as a "gpu" record (workload.h) as it returns.
 *
 *   gpujob MODE DIR NCOPIES NLAUNCH      links libcuda.so.1, libnccl.so.2
 *                                        and libcufile.so.0 by soname
 *   gpujob-dl MODE DIR NCOPIES NLAUNCH   the same program (this source with
 *                                        GPUJOB_DLOPEN), which maps none of
 *                                        them until it dlopens them by
 *                                        soname, once its MODE lets it start
 * MODE:
 *   run    the job, as rank 1 of 4
 *   wait   $WL_CTL/ready, a heartbeat until SIGUSR1 (wl_wait_go), then the
 *          job: no library call before it (for -p)
 *   fork   a child, rank 2 of 4, runs the same job at the same time on its
 *          own file; "spawn" and "exit" records for it
 *   input  DIR/input.dat, NLAUNCH MiB, written, synced and dropped from
 *          the cache (untraced: for starve and fed)
 *   starve NLAUNCH times: a launch of vecadd, a stream sync, then a 1 MiB
 *          read of DIR/input.dat with O_DIRECT; a last launch and sync:
 *          the GPU has nothing queued while the host reads. Prints
 *          "planted\tgpu_waits_on_io\tgpujob [PID]\tNS\tCALLS\tPREEMPTED"
 *          (the reads' time, and that of those the thread was preempted
 *          in: workload.h's wl_planted)
 *   fed    the same, each read before the sync (the GPU busy): "none"
 * With $GPUJOB_HOLD set, it stops once the libraries are mapped (at exec,
 * or after the dlopen) until SIGUSR1: see hold_loaded().
 *
 * The job: set-up outside any phase and step (context, stream, event, the
 * module of "vecadd", the library of "gemm_tile", buffers, communicators,
 * the cuFile driver and DIR/gds.dat, DIR/gds-rank2.dat for the child);
 * then steps 1 and 2 (DFT_USDT_SET_STEP), each with
 *   data/load         cuFile sync, async and batch writes and reads
 *   compute/forward   NCOPIES host-to-device copies, NLAUNCH cuLaunchKernel
 *                     of each kernel, one cuLaunchKernelEx, one cooperative
 *                     launch, one graph launch, a stream sync
 *   compute/backward  device-to-device, default and peer copies, NCOPIES
 *                     device-to-host copies, the event and context waits
 *   comm/comm         every collective, on the job's communicator and on
 *                     two others (rank 3 of 8, rank 1 of 2)
 * and a tear-down outside them again. Every byte count depends on the step
 * (a copy's on its index too): no two copies, collectives or file I/Os of
 * a step are alike.
 *
 * Each call, as it returns, is a "gpu" record (workload.h's wl_gpu): CAT
 * CUDA_DRIVER_API or NCCL and NAME the function, as the tracer writes them
 * (notes/26-spec.md); a cuFile read or write CAT POSIX, NAME pread or
 * pwrite (one record per I/O of a batch, FUNC cuFileBatchIOSubmit); the
 * other cuFile calls, which move no data, CAT CUFILE and NAME the
 * function. Under each cuFile read or write the stand-in makes one
 * pread64 or pwrite64 of the same bytes on the file (compatibility mode),
 * which are not records. No "io" records: the file's syscalls are the
 * stand-in's.
 */
#include <dlfcn.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/wait.h>
#include <dftrace/usdt.h>
#include "workload.h"
#include "../standin/gpuapi.h"

#define NSTEPS 2
#define MAX_COPIES 64
#define MAX_LAUNCHES 1000
#define DEV_BYTES (1 << 20)   /* each of the two device buffers */
#define HOST_BYTES (1 << 20)  /* pinned host buffer */
#define HOST2_BYTES (256 << 10)
#define NRANKS 4
#define PITCHED_BYTES (1024 * 64)
#define CUFILE_CAT "CUFILE"   /* cuFile calls that move no data */

#define D(p) ((void *)(uintptr_t)(p)) /* a device pointer, as the host sees it */

/* The PTX the module and the library load: the stand-in finds a kernel
 * by its ".entry". */
static const char ptx_vecadd[] =
	".version 7.0\n.target sm_52\n.address_size 64\n"
	".visible .entry vecadd(.param .u64 a, .param .u64 b, .param .u32 n)\n"
	"{\n\tret;\n}\n";
static const char ptx_gemm[] =
	".version 7.0\n.target sm_52\n.address_size 64\n"
	".visible .entry gemm_tile(.param .u64 a, .param .u64 b, .param .u64 c)\n"
	"{\n\tret;\n}\n";

/* Every function, called through this table whether linked or loaded. */
static struct api {
#define X(lib, name) __typeof__(&name) name;
	GPUAPI_FUNCS(X)
#undef X
} A;

/* What the job works with. */
struct job {
	int rank;
	char *path; /* the cuFile file, canonical */
	CUcontext ctx, ctx2;
	CUstream stream;
	CUevent event;
	CUfunction vecadd, gemm_tile;
	CUdeviceptr dbuf, dbuf2, pitched;
	void *hbuf, *hbuf2;
	ncclComm_t comm, comm8, pair[2];
	int fd;
	CUfileHandle_t fh;
};

static const char *region_cat, *region_name; /* NULL: outside */
static int step = -1;
static const char *arg_s; /* the ARGS of the next record */
static char arg_buf[512];

/* ---- ground truth ---- */

static __attribute__((format(printf, 1, 2))) void args(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(arg_buf, sizeof(arg_buf), fmt, ap);
	va_end(ap);
	arg_s = arg_buf;
}

static void truth(const char *cat, const char *name, long long bytes,
		  const char *detail, const char *func)
{
	wl_gpu(cat, name, bytes, detail, region_cat, region_name, step, func, arg_s);
	arg_s = NULL;
}

static unsigned long H(const void *handle)
{
	return (unsigned long)(uintptr_t)handle;
}

/* Dies unless a call returned 0. */
static void check(long r, const char *fn)
{
	if (r != 0) {
		errno = EIO;
		wl_die("%s returned %ld", fn, r);
	}
}

/* A driver call that must succeed, then its record. */
#define CU(fn, bytes, detail, ...)                                            \
	do {                                                                   \
		check(A.fn(__VA_ARGS__), #fn);                                 \
		truth("CUDA_DRIVER_API", #fn, (bytes), (detail), #fn);         \
	} while (0)

/* The communicators the job made, with what it asked them to be. */
static struct comm_info {
	ncclComm_t comm;
	char detail[32];
} comms[4];
static int ncomms;

/* Records a communicator the job made; its DETAIL. */
static const char *remember(ncclComm_t c, int rank, int nranks)
{
	if (ncomms == (int)(sizeof(comms) / sizeof(comms[0]))) {
		errno = ENOSPC;
		wl_die("too many communicators");
	}
	comms[ncomms].comm = c;
	snprintf(comms[ncomms].detail, sizeof(comms[0].detail), "rank=%d,nranks=%d",
		 rank, nranks);
	return comms[ncomms++].detail;
}

static const char *rank_of(ncclComm_t c)
{
	for (int i = 0; i < ncomms; i++)
		if (comms[i].comm == c)
			return comms[i].detail;
	return NULL;
}

/* An NCCL call that must succeed, then its record. DETAIL is evaluated
 * after the call, which may have made the communicator it names. */
#define NC(fn, bytes, detail, ...)                                            \
	do {                                                                   \
		check(A.fn(__VA_ARGS__), #fn);                                 \
		truth("NCCL", #fn, (bytes), (detail), #fn);                    \
	} while (0)

/* A cuFile call that moves no data. */
#define CF(fn, path, ...)                                                     \
	do {                                                                   \
		CUfileError_t e_ = A.fn(__VA_ARGS__);                          \
		check(e_.err, #fn);                                            \
		truth(CUFILE_CAT, #fn, -1, (path), #fn);                       \
	} while (0)

/* ---- the libraries ---- */

#ifdef GPUJOB_DLOPEN
/* Loads SONAME and says which file it found (an "info" record). */
static void *open_lib(const char *soname, const char *symbol)
{
	void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
	char *path = NULL;
	Dl_info info;

	if (!h) {
		errno = ENOENT;
		wl_die("dlopen '%s': %s", soname, dlerror());
	}
	if (dladdr(dlsym(h, symbol), &info) && info.dli_fname &&
	    (path = realpath(info.dli_fname, NULL)))
		wl_emit("info\tdlopen\t%s\t%s\n", soname, path);
	free(path);
	return h;
}

static void load_api(void)
{
	void *lib_cuda = open_lib(GPUAPI_SONAME_cuda, "cuInit");
	void *lib_nccl = open_lib(GPUAPI_SONAME_nccl, "ncclGetUniqueId");
	void *lib_cufile = open_lib(GPUAPI_SONAME_cufile, "cuFileRead");

#define X(lib, name)                                                          \
	if (!(*(void **)&A.name = dlsym(lib_##lib, #name))) {                   \
		errno = ENOENT;                                                \
		wl_die("dlsym '%s'", #name);                                   \
	}
	GPUAPI_FUNCS(X)
#undef X
}
#else
static void load_api(void)
{
#define X(lib, name) A.name = name;
	GPUAPI_FUNCS(X)
#undef X
}
#endif

/* With $GPUJOB_HOLD set: once the libraries are mapped, $WL_CTL/loaded
 * (the pid) and no call before SIGUSR1. A tracer probes a library when
 * it reads that it was mapped, some milliseconds later; a test waits for
 * it to say so (-v) before the first call, where a real program's set-up
 * takes longer than that. */
static void hold_loaded(void)
{
	char path[PATH_MAX];

	if (!getenv("GPUJOB_HOLD"))
		return;
	snprintf(path, sizeof(path), "%s/loaded", wl_ctl());
	wl_hold(path, 60);
}

/* ---- phases ---- */

static void region_begin(const char *cat, const char *name)
{
	DFT_USDT_REGION_BEGIN(cat, name);
	region_cat = cat;
	region_name = name;
}

static void region_end(void)
{
	DFT_USDT_REGION_END(region_cat, region_name);
	region_cat = region_name = NULL;
}

/* ---- set-up and tear-down, outside every phase ---- */

static void setup_cuda(struct job *j)
{
	CUdevice dev;
	CUmodule mod;
	CUlibrary lib;
	CUkernel k;
	size_t pitch;

	CU(cuInit, -1, NULL, 0);
	CU(cuDeviceGet, -1, NULL, &dev, 0);
	CU(cuCtxCreate_v2, -1, NULL, &j->ctx, 0, dev);
	CU(cuCtxCreate_v2, -1, NULL, &j->ctx2, 0, dev);
	CU(cuStreamCreate, -1, NULL, &j->stream, 0);
	CU(cuEventCreate, -1, NULL, &j->event, 0);
	CU(cuModuleLoadData, -1, NULL, &mod, ptx_vecadd);
	CU(cuModuleGetFunction, -1, "vecadd", &j->vecadd, mod, "vecadd");
	CU(cuLibraryLoadData, -1, NULL, &lib, ptx_gemm, NULL, NULL, 0, NULL, NULL, 0);
	CU(cuLibraryGetKernel, -1, "gemm_tile", &k, lib, "gemm_tile");
	j->gemm_tile = (CUfunction)k; /* a CUkernel launches as a CUfunction */
	CU(cuMemAlloc_v2, DEV_BYTES, NULL, &j->dbuf, DEV_BYTES);
	CU(cuMemAlloc_v2, DEV_BYTES, NULL, &j->dbuf2, DEV_BYTES);
	CU(cuMemAllocHost_v2, HOST_BYTES, NULL, &j->hbuf, HOST_BYTES);
	CU(cuMemHostAlloc, HOST2_BYTES, NULL, &j->hbuf2, HOST2_BYTES, 0);
	/* rows of 1024 bytes, a whole pitch: pitch x rows is the width x
	 * rows asked for, whichever of the two a tracer counts */
	args("pitch=1024,width=1024,height=64");
	CU(cuMemAllocPitch_v2, PITCHED_BYTES, NULL, &j->pitched, &pitch, 1024, 64, 4);
	if (pitch != 1024) {
		errno = EINVAL;
		wl_die("cuMemAllocPitch_v2: pitch %zu", pitch);
	}
	memset(j->hbuf, 'h', HOST_BYTES);
}

static void setup_nccl(struct job *j)
{
	ncclUniqueId id;
	ncclConfig_t cfg = { sizeof(cfg), 0, 0, 1 };
	int r, n;

	NC(ncclGetUniqueId, -1, NULL, &id);
	NC(ncclCommInitRank, -1, remember(j->comm, j->rank, NRANKS), &j->comm, NRANKS,
	   id, j->rank);
	NC(ncclCommUserRank, -1, rank_of(j->comm), j->comm, &r);
	NC(ncclCommCount, -1, rank_of(j->comm), j->comm, &n);
	if (r != j->rank || n != NRANKS) {
		errno = EINVAL;
		wl_die("communicator of rank %d of %d", r, n);
	}
	NC(ncclCommInitRankConfig, -1, remember(j->comm8, 3, 8), &j->comm8, 8, id, 3,
	   &cfg);
	args("ndev=2");
	NC(ncclCommInitAll, -1, NULL, j->pair, 2, NULL);
	remember(j->pair[0], 0, 2);
	remember(j->pair[1], 1, 2);
}

static void setup_cufile(struct job *j)
{
	CUfileDescr_t d;

	CF(cuFileDriverOpen, NULL);
	j->fd = open(j->path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (j->fd < 0)
		wl_die("open %s", j->path);
	memset(&d, 0, sizeof(d));
	d.type = CU_FILE_HANDLE_TYPE_OPAQUE_FD;
	d.handle.fd = j->fd;
	CF(cuFileHandleRegister, j->path, &j->fh, &d);
	args("length=%d", DEV_BYTES);
	CF(cuFileBufRegister, NULL, D(j->dbuf), DEV_BYTES, 0);
}

static void teardown(struct job *j)
{
	CF(cuFileBufDeregister, NULL, D(j->dbuf));
	A.cuFileHandleDeregister(j->fh);
	truth(CUFILE_CAT, "cuFileHandleDeregister", -1, j->path, "cuFileHandleDeregister");
	close(j->fd);
	CF(cuFileDriverClose, NULL);
	NC(ncclCommDestroy, -1, rank_of(j->comm), j->comm);
	NC(ncclCommDestroy, -1, rank_of(j->comm8), j->comm8);
	NC(ncclCommDestroy, -1, rank_of(j->pair[0]), j->pair[0]);
	NC(ncclCommDestroy, -1, rank_of(j->pair[1]), j->pair[1]);
	CU(cuMemFreeHost, HOST_BYTES, NULL, j->hbuf);
	CU(cuMemFreeHost, HOST2_BYTES, NULL, j->hbuf2);
	CU(cuMemFree_v2, PITCHED_BYTES, NULL, j->pitched);
	CU(cuMemFree_v2, DEV_BYTES, NULL, j->dbuf2);
	CU(cuMemFree_v2, DEV_BYTES, NULL, j->dbuf);
}

/* ---- one step ---- */

/* cuFile: a write, a read of it back, an async write and read, and a
 * batch of a write and a read, at offsets of this step's own. */
static void cufile_io(struct job *j, const char *name, const char *func, long long ret,
		      size_t size, off_t offset)
{
	if (ret != (long long)size) {
		errno = EIO;
		wl_die("%s of %zu bytes returned %lld", func, size, ret);
	}
	args("offset=%lld,ret=%lld", (long long)offset, ret);
	/* the stand-in's compatibility mode reads with syscalls, which carry
	 * the bytes: the tracer writes the call as CUFILE then */
	truth(getenv("STANDIN_CUFILE_GDS") ? "POSIX" : "CUFILE", name, ret, j->path, func);
}

static void batch_io(struct job *j, off_t base)
{
	CUfileBatchHandle_t b;
	CUfileIOParams_t io[2];
	CUfileIOEvents_t ev[2];
	unsigned int nr = 2;
	size_t wsize = 1500 + step, rsize = 2500 + step;

	CF(cuFileBatchIOSetUp, NULL, &b, 2);
	memset(io, 0, sizeof(io));
	io[0].mode = io[1].mode = CUFILE_BATCH;
	io[0].fh = io[1].fh = j->fh;
	io[0].opcode = CUFILE_WRITE;
	io[0].u.batch.devPtr_base = D(j->dbuf);
	io[0].u.batch.file_offset = base + 65536;
	io[0].u.batch.size = wsize;
	io[1].opcode = CUFILE_READ;
	io[1].u.batch.devPtr_base = D(j->dbuf2);
	io[1].u.batch.file_offset = base;
	io[1].u.batch.size = rsize;
	check(A.cuFileBatchIOSubmit(b, 2, io, 0).err, "cuFileBatchIOSubmit");
	cufile_io(j, "pwrite", "cuFileBatchIOSubmit", wsize, wsize, base + 65536);
	cufile_io(j, "pread", "cuFileBatchIOSubmit", rsize, rsize, base);
	CF(cuFileBatchIOGetStatus, NULL, b, 2, &nr, ev, NULL);
	if (nr != 2 || ev[0].status != CUFILE_COMPLETE || ev[0].ret != wsize ||
	    ev[1].status != CUFILE_COMPLETE || ev[1].ret != rsize) {
		errno = EIO;
		wl_die("cuFileBatchIOGetStatus: %u completions", nr);
	}
	A.cuFileBatchIODestroy(b);
	truth(CUFILE_CAT, "cuFileBatchIODestroy", -1, NULL, "cuFileBatchIODestroy");
}

static void step_data(struct job *j)
{
	off_t base = 262144 * (off_t)(step - 1), off, boff = 0;
	size_t n = 8192 * step + 512;
	ssize_t done;

	region_begin("data", "load");
	for (size_t i = 0; i < n; i++)
		((char *)D(j->dbuf))[i] = 'a' + (i * 7 + step) % 26;
	cufile_io(j, "pwrite", "cuFileWrite", A.cuFileWrite(j->fh, D(j->dbuf), n, base, 0),
		  n, base);
	/* back into the other buffer, 4096 bytes in */
	cufile_io(j, "pread", "cuFileRead", A.cuFileRead(j->fh, D(j->dbuf2), n, base, 4096),
		  n, base);
	if (memcmp(D(j->dbuf), (char *)D(j->dbuf2) + 4096, n) != 0) {
		errno = EIO;
		wl_die("cuFileRead: not what cuFileWrite wrote");
	}
	n = 3000 + step;
	off = base + 32768;
	check(A.cuFileWriteAsync(j->fh, D(j->dbuf), &n, &off, &boff, &done, j->stream).err,
	      "cuFileWriteAsync");
	cufile_io(j, "pwrite", "cuFileWriteAsync", done, n, off);
	check(A.cuFileReadAsync(j->fh, D(j->dbuf2), &n, &off, &boff, &done, j->stream).err,
	      "cuFileReadAsync");
	cufile_io(j, "pread", "cuFileReadAsync", done, n, off);
	batch_io(j, base);
	region_end();
}

static void launch_args(unsigned int gx, unsigned int gy, unsigned int bx, unsigned int by,
			unsigned int shared, CUstream s)
{
	args("grid_x=%u,grid_y=%u,grid_z=1,block_x=%u,block_y=%u,block_z=1,"
	     "shared_bytes=%u,stream=0x%lx", gx, gy, bx, by, shared, H(s));
}

static void launches(struct job *j, int nlaunch)
{
	CUdeviceptr a = j->dbuf, b = j->dbuf2;
	unsigned int n = 4096;
	void *params[] = { &a, &b, &n };
	CUlaunchConfig cfg = { 32, 1, 1, 128, 1, 1, 0, j->stream, NULL, 0 };
	static struct { int unused; } graph_object; /* nothing reads it */

	for (int i = 0; i < nlaunch; i++) {
		launch_args(64, 1, 256, 1, 0, j->stream);
		CU(cuLaunchKernel, -1, "vecadd", j->vecadd, 64, 1, 1, 256, 1, 1, 0, j->stream,
		   params, NULL);
	}
	for (int i = 0; i < nlaunch; i++) {
		launch_args(8, 8, 16, 16, 4096, j->stream);
		CU(cuLaunchKernel, -1, "gemm_tile", j->gemm_tile, 8, 8, 1, 16, 16, 1, 4096,
		   j->stream, params, NULL);
	}
	launch_args(32, 1, 128, 1, 0, j->stream);
	CU(cuLaunchKernelEx, -1, "vecadd", &cfg, j->vecadd, params, NULL);
	launch_args(4, 4, 16, 16, 8192, j->stream);
	CU(cuLaunchCooperativeKernel, -1, "gemm_tile", j->gemm_tile, 4, 4, 1, 16, 16, 1,
	   8192, j->stream, params);
	args("stream=0x%lx", H(j->stream));
	CU(cuGraphLaunch, -1, NULL, (CUgraphExec)(void *)&graph_object, j->stream);
}

static void step_forward(struct job *j, int ncopies, int nlaunch)
{
	CUdeviceptr ws;
	size_t wsize = 65536 + step;

	region_begin("compute", "forward");
	args("stream=0x%lx", H(j->stream));
	CU(cuMemAllocAsync, wsize, NULL, &ws, wsize, j->stream);
	for (int i = 0; i < ncopies; i++) {
		size_t n = 4096 * (i + 1) + 64 * step;

		args("stream=0x%lx", i % 2 ? H(j->stream) : 0);
		if (i % 2)
			CU(cuMemcpyHtoDAsync_v2, n, "HtoD", j->dbuf, j->hbuf, n, j->stream);
		else
			CU(cuMemcpyHtoD_v2, n, "HtoD", j->dbuf, j->hbuf, n);
	}
	launches(j, nlaunch);
	args("stream=0x%lx", H(j->stream));
	CU(cuStreamSynchronize, -1, NULL, j->stream);
	args("stream=0x%lx", H(j->stream));
	CU(cuMemFreeAsync, wsize, NULL, ws, j->stream);
	region_end();
}

static void step_backward(struct job *j, int ncopies)
{
	CUdeviceptr m;
	size_t msize = 32768 + step;
	unsigned long st = H(j->stream);

	region_begin("compute", "backward");
	CU(cuMemAllocManaged, msize, NULL, &m, msize, 1);
	args("stream=0x0");
	CU(cuMemcpyDtoD_v2, 1000 + step, "DtoD", j->dbuf2, j->dbuf, 1000 + step);
	args("stream=0x%lx", st);
	CU(cuMemcpyDtoDAsync_v2, 1100 + step, "DtoD", j->dbuf2, j->dbuf, 1100 + step,
	   j->stream);
	args("stream=0x0");
	CU(cuMemcpy, 1200 + step, "default", m, j->dbuf, 1200 + step);
	args("stream=0x%lx", st);
	CU(cuMemcpyAsync, 1300 + step, "default", m, j->dbuf2, 1300 + step, j->stream);
	args("stream=0x0");
	CU(cuMemcpyPeer, 1400 + step, "PtoP", j->dbuf2, j->ctx2, j->dbuf, j->ctx, 1400 + step);
	args("stream=0x%lx", st);
	CU(cuMemcpyPeerAsync, 1500 + step, "PtoP", j->dbuf, j->ctx, j->dbuf2, j->ctx2,
	   1500 + step, j->stream);
	for (int i = 0; i < ncopies; i++) {
		size_t n = 2048 * (i + 1) + 32 * step;

		args("stream=0x%lx", i % 2 ? st : 0);
		if (i % 2)
			CU(cuMemcpyDtoHAsync_v2, n, "DtoH", j->hbuf2, j->dbuf, n, j->stream);
		else
			CU(cuMemcpyDtoH_v2, n, "DtoH", j->hbuf2, j->dbuf, n);
	}
	args("stream=0x%lx", st);
	CU(cuStreamWaitEvent, -1, NULL, j->stream, j->event, 0);
	CU(cuEventSynchronize, -1, NULL, j->event);
	CU(cuCtxSynchronize, -1, NULL);
	CU(cuMemFree_v2, msize, NULL, m);
	region_end();
}

/* args of a collective: its count, type, root or peer, stream */
static void coll_args(size_t count, const char *type, const char *who, int rank,
		      CUstream s)
{
	char w[32] = "";

	if (who)
		snprintf(w, sizeof(w), ",%s=%d", who, rank);
	args("count=%zu,datatype=%s%s,stream=0x%lx", count, type, w, H(s));
}

static void step_comm(struct job *j)
{
	void *send = D(j->dbuf), *recv = D(j->dbuf2);
	size_t c;
	int to = (j->rank + 1) % NRANKS, from = (j->rank + NRANKS - 1) % NRANKS;
	cudaStream_t s = j->stream;
	const char *rk = rank_of(j->comm);

	region_begin("comm", "comm");
	NC(ncclGroupStart, -1, NULL);
	c = 1024 * step;
	coll_args(c, "float32", NULL, 0, s);
	NC(ncclAllReduce, 4 * c, rk, send, recv, c, ncclFloat32, ncclSum, j->comm, s);
	NC(ncclGroupEnd, -1, NULL);
	c = 512 + step;
	coll_args(c, "int32", "root", 0, s);
	NC(ncclBroadcast, 4 * c, rk, send, recv, c, ncclInt32, 0, j->comm, s);
	c = 300 + step;
	coll_args(c, "float16", "root", 0, s);
	NC(ncclReduce, 2 * c, rk, send, recv, c, ncclFloat16, ncclMax, 0, j->comm, s);
	c = 200 + step;
	coll_args(c, "bfloat16", NULL, 0, s);
	NC(ncclAllGather, 2 * c, rk, send, recv, c, ncclBfloat16, j->comm, s);
	c = 100 + step;
	coll_args(c, "float64", NULL, 0, s);
	NC(ncclReduceScatter, 8 * c, rk, send, recv, c, ncclFloat64, ncclSum, j->comm, s);
	c = 64 + step;
	coll_args(c, "uint8", "peer", to, s);
	NC(ncclSend, c, rk, send, c, ncclUint8, to, j->comm, s);
	c = 32 + step;
	coll_args(c, "int64", "peer", from, s);
	NC(ncclRecv, 8 * c, rk, recv, c, ncclInt64, from, j->comm, s);
	c = 256 + step;
	coll_args(c, "int8", NULL, 0, s);
	NC(ncclAllReduce, c, rank_of(j->comm8), send, recv, c, ncclInt8, ncclSum, j->comm8, s);
	c = 128 + step;
	coll_args(c, "uint32", "root", 0, s);
	NC(ncclBroadcast, 4 * c, rank_of(j->pair[1]), send, recv, c, ncclUint32, 0,
	   j->pair[1], s);
	region_end();
}

/* ---- the job ---- */

static void job(int rank, const char *dir, int ncopies, int nlaunch)
{
	struct job j = { .rank = rank };
	char *real = realpath(dir, NULL);

	if (!real)
		wl_die("realpath %s", dir);
	j.path = wl_path(real, rank == 1 ? "gds.dat" : "gds-rank2.dat");
	load_api();
#ifdef GPUJOB_DLOPEN
	hold_loaded();
#endif
	setup_cuda(&j);
	setup_nccl(&j);
	setup_cufile(&j);
	for (step = 1; step <= NSTEPS; step++) {
		DFT_USDT_SET_STEP(step);
		step_data(&j);
		step_forward(&j, ncopies, nlaunch);
		step_backward(&j, ncopies);
		step_comm(&j);
	}
	DFT_USDT_CLEAR("step");
	step = -1;
	teardown(&j);
}

static void *input_buffer(void)
{
	void *buf;

	if (posix_memalign(&buf, 4096, 1 << 20))
		wl_die("posix_memalign");
	memset(buf, 'i', 1 << 20);
	return buf;
}

static void make_input(const char *dir, int n)
{
	char *p = wl_path(dir, "input.dat");
	int fd = wl_ok(open(p, O_CREAT | O_WRONLY | O_TRUNC, 0644), p);
	void *buf = input_buffer();

	for (int i = 0; i < n; i++)
		if (write(fd, buf, 1 << 20) != 1 << 20)
			wl_die("write %s", p);
	if (fsync(fd) || posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED))
		wl_die("fsync %s", p);
	close(fd);
	free(buf);
	free(p);
}

static void launch_vecadd(struct job *j)
{
	CUdeviceptr a = j->dbuf, b = j->dbuf2;
	unsigned int len = 4096;
	void *params[] = { &a, &b, &len };

	launch_args(64, 1, 256, 1, 0, j->stream);
	CU(cuLaunchKernel, -1, "vecadd", j->vecadd, 64, 1, 1, 256, 1, 1, 0, j->stream,
	   params, NULL);
}

static void stream_sync(struct job *j)
{
	args("stream=0x%lx", H(j->stream));
	CU(cuStreamSynchronize, -1, NULL, j->stream);
}

static void input_reads(const char *dir, int n, bool starve)
{
	struct job j = { .rank = 1 };
	char *p = wl_path(dir, "input.dat");
	struct wl_acc a = { 0 };
	char where[64];
	int fd = wl_ok(open(p, O_RDONLY | O_DIRECT), p);
	void *buf = input_buffer();

	load_api();
	setup_cuda(&j);
	for (int i = 0; i < n; i++) {
		long sw, got;
		long long t0;

		launch_vecadd(&j);
		if (starve)
			stream_sync(&j);
		t0 = wl_acc_start(&sw);
		got = pread(fd, buf, 1 << 20, (off_t)i << 20);
		wl_acc_stop(&a, t0, sw);
		if (got != 1 << 20)
			wl_die("pread %s", p);
		if (!starve)
			stream_sync(&j);
	}
	launch_vecadd(&j); /* the next step's: the last gap ends */
	stream_sync(&j);
	close(fd);
	snprintf(where, sizeof(where), "gpujob [%d]", wl_pid());
	wl_planted(starve ? "gpu_waits_on_io" : "none", where, &a, n);
	free(buf);
	free(p);
}

static void run_forked(const char *dir, int ncopies, int nlaunch)
{
	pid_t child = fork();
	int st;

	if (child < 0)
		wl_die("fork");
	if (child == 0) {
		job(2, dir, ncopies, nlaunch);
		_exit(0);
	}
	wl_emit("spawn\t%d\t%d\tfork|clone\t%d\n", wl_pid(), wl_tid(), child);
	job(1, dir, ncopies, nlaunch);
	if (waitpid(child, &st, 0) != child)
		wl_die("waitpid %d", child);
	wl_emit("exit\t%d\t%d\n", child, st);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		errno = ECHILD;
		wl_die("rank 2 (pid %d) failed: status %d", child, st);
	}
}

int main(int argc, char **argv)
{
	int ncopies, nlaunch;

	if (argc != 5 || (ncopies = atoi(argv[3])) < 1 || ncopies > MAX_COPIES ||
	    (nlaunch = atoi(argv[4])) < 1 || nlaunch > MAX_LAUNCHES) {
		fprintf(stderr, "usage: %s run|wait|fork|input|starve|fed DIR NCOPIES(1..%d) NLAUNCH(1..%d)\n",
			argv[0], MAX_COPIES, MAX_LAUNCHES);
		return 2;
	}
#ifndef GPUJOB_DLOPEN
	hold_loaded(); /* mapped at exec */
#endif
	if (strcmp(argv[1], "run") == 0) {
		job(1, argv[2], ncopies, nlaunch);
	} else if (strcmp(argv[1], "wait") == 0) {
		wl_wait_go(60);
		job(1, argv[2], ncopies, nlaunch);
	} else if (strcmp(argv[1], "fork") == 0) {
		run_forked(argv[2], ncopies, nlaunch);
	} else if (strcmp(argv[1], "input") == 0) {
		make_input(argv[2], nlaunch);
	} else if (strcmp(argv[1], "starve") == 0 || strcmp(argv[1], "fed") == 0) {
		input_reads(argv[2], nlaunch, argv[1][0] == 's');
	} else {
		fprintf(stderr, "%s: unknown mode '%s'\n", argv[0], argv[1]);
		return 2;
	}
	return 0;
}
