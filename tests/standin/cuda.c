// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Stand-in libcuda.so.1: the CUDA driver API calls that dftrace-bpf
 * probes, with their real names and signatures, doing host work in place
 * of a GPU, so that the probes are tested on every machine.
 *
 * "Device memory" is malloc'd host memory (a CUdeviceptr is its address),
 * copies are memcpy, a launch checks its handle and counts, and the three
 * host waits (stream, context, event) sleep a fixed 1 ms so that a trace
 * shows them. Modules and libraries keep their image, and a kernel is
 * found only if the image has an ".entry NAME" for it, as PTX would.
 *
 * No exported function calls another (each call is one probe hit), and
 * the build keeps identical bodies apart (-fno-ipa-icf), so that every
 * symbol has an address of its own.
 */
#define GPUAPI __attribute__((visibility("default"), noinline))
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "gpuapi.h"

#define NAME_MAX_BYTES 128
#define IMAGE_MAX_BYTES (1 << 20)
#define PITCH_ALIGN 512
#define WAIT_NS 1000000L

/* What a CUfunction and a CUkernel point to: a CUkernel may be passed
 * where a CUfunction is taken, so both begin with the same thing. */
struct kernel {
	char name[NAME_MAX_BYTES];
	unsigned long launches;
};

struct CUctx_st {
	CUdevice dev;
	unsigned int flags;
};
/* What a CUmodule and a CUlibrary point to: the image they loaded. */
struct image {
	char *text;
};

struct CUmod_st {
	struct image im;
};
struct CUlib_st {
	struct image im;
};
struct CUfunc_st {
	struct kernel k;
};
struct CUkern_st {
	struct kernel k;
};
/* What a CUstream and a CUevent point to. */
struct queue_object {
	unsigned int id, flags;
};

struct CUstream_st {
	struct queue_object q;
};
struct CUevent_st {
	struct queue_object q;
};

static int initialized;
static unsigned int next_stream_id = 1, next_event_id = 1;
static unsigned long graph_launches;

static void wait_for_device(void)
{
	struct timespec ts = { 0, WAIT_NS };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* An image holding a copy of CODE, NUL-terminated (PTX text), bounded;
 * for a handle at OUT (only checked here). */
static CUresult new_image(struct image **im, const void *out, const void *code)
{
	size_t n;

	if (!initialized)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!out || !code)
		return CUDA_ERROR_INVALID_VALUE;
	n = strnlen(code, IMAGE_MAX_BYTES);
	*im = calloc(1, sizeof(**im));
	if (*im && ((*im)->text = malloc(n + 1))) {
		memcpy((*im)->text, code, n);
		(*im)->text[n] = 0;
		return CUDA_SUCCESS;
	}
	free(*im);
	return CUDA_ERROR_OUT_OF_MEMORY;
}

/* Whether IMAGE declares the entry NAME (".entry NAME(" or ".entry NAME "). */
static int has_entry(const char *image, const char *name)
{
	size_t len = strlen(name);
	const char *p = image;

	while ((p = strstr(p, ".entry"))) {
		p += 6;
		while (*p == ' ' || *p == '\t')
			p++;
		if (strncmp(p, name, len) == 0 &&
		    (p[len] == '(' || p[len] == ' ' || p[len] == '\t' || p[len] == '\n'))
			return 1;
	}
	return 0;
}

/* A kernel NAME of IMAGE, for a handle at OUT (only checked here). */
static CUresult new_kernel(struct kernel **k, const void *out, const char *image,
			   const char *name)
{
	if (!initialized)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!out || !image || !name || strlen(name) >= NAME_MAX_BYTES)
		return CUDA_ERROR_INVALID_VALUE;
	if (!has_entry(image, name))
		return CUDA_ERROR_NOT_FOUND;
	*k = calloc(1, sizeof(**k));
	if (!*k)
		return CUDA_ERROR_OUT_OF_MEMORY;
	strcpy((*k)->name, name);
	return CUDA_SUCCESS;
}

/* A stream or an event numbered from *NEXT_ID, for a handle at OUT. */
static CUresult new_queue_object(struct queue_object **q, const void *out,
				 unsigned int *next_id, unsigned int flags)
{
	if (!initialized)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!out)
		return CUDA_ERROR_INVALID_VALUE;
	*q = calloc(1, sizeof(**q));
	if (!*q)
		return CUDA_ERROR_OUT_OF_MEMORY;
	(*q)->id = (*next_id)++;
	(*q)->flags = flags;
	return CUDA_SUCCESS;
}

static CUresult launch(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
		       unsigned int bx, unsigned int by, unsigned int bz)
{
	if (!initialized)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!f)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!gx || !gy || !gz || !bx || !by || !bz)
		return CUDA_ERROR_INVALID_VALUE;
	((struct kernel *)f)->launches++;
	return CUDA_SUCCESS;
}

static CUresult copy(void *dst, const void *src, size_t n)
{
	if (!initialized)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (n && (!dst || !src))
		return CUDA_ERROR_INVALID_VALUE;
	memmove(dst, src, n);
	return CUDA_SUCCESS;
}

static CUresult alloc(void **out, size_t n)
{
	if (!initialized)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!out || !n)
		return CUDA_ERROR_INVALID_VALUE;
	*out = malloc(n);
	return *out ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

static CUresult alloc_dev(CUdeviceptr *dptr, size_t n)
{
	void *p = NULL;
	CUresult r;

	if (!dptr)
		return CUDA_ERROR_INVALID_VALUE;
	r = alloc(&p, n);
	if (r == CUDA_SUCCESS)
		*dptr = (CUdeviceptr)(uintptr_t)p;
	return r;
}

static CUresult release(void *p)
{
	if (!initialized)
		return CUDA_ERROR_NOT_INITIALIZED;
	free(p);
	return CUDA_SUCCESS;
}

#define DEV(p) ((void *)(uintptr_t)(p))

GPUAPI CUresult cuInit(unsigned int flags)
{
	if (flags)
		return CUDA_ERROR_INVALID_VALUE;
	initialized = 1;
	return CUDA_SUCCESS;
}

GPUAPI CUresult cuDeviceGet(CUdevice *device, int ordinal)
{
	if (!initialized)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!device || ordinal != 0)
		return CUDA_ERROR_INVALID_VALUE;
	*device = ordinal;
	return CUDA_SUCCESS;
}

GPUAPI CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
	struct CUctx_st *c;

	if (!initialized)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!pctx || dev != 0)
		return CUDA_ERROR_INVALID_VALUE;
	c = calloc(1, sizeof(*c));
	if (!c)
		return CUDA_ERROR_OUT_OF_MEMORY;
	c->dev = dev;
	c->flags = flags;
	*pctx = c;
	return CUDA_SUCCESS;
}

GPUAPI CUresult cuModuleLoadData(CUmodule *module, const void *image)
{
	struct image *im;
	CUresult r = new_image(&im, module, image);

	if (r == CUDA_SUCCESS)
		*module = (CUmodule)im;
	return r;
}

GPUAPI CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name)
{
	struct kernel *k;
	CUresult r;

	if (!hmod)
		return CUDA_ERROR_INVALID_HANDLE;
	r = new_kernel(&k, hfunc, hmod->im.text, name);
	if (r == CUDA_SUCCESS)
		*hfunc = (CUfunction)k;
	return r;
}

GPUAPI CUresult cuLibraryLoadData(CUlibrary *library, const void *code,
				  CUjit_option *jitOptions, void **jitOptionsValues,
				  unsigned int numJitOptions, CUlibraryOption *libraryOptions,
				  void **libraryOptionValues, unsigned int numLibraryOptions)
{
	struct image *im;
	CUresult r;

	if ((numJitOptions && !jitOptions) || (numLibraryOptions && !libraryOptions))
		return CUDA_ERROR_INVALID_VALUE;
	r = new_image(&im, library, code);
	if (r == CUDA_SUCCESS)
		*library = (CUlibrary)im;
	return r;
}

GPUAPI CUresult cuLibraryGetKernel(CUkernel *pKernel, CUlibrary library, const char *name)
{
	struct kernel *k;
	CUresult r;

	if (!library)
		return CUDA_ERROR_INVALID_HANDLE;
	r = new_kernel(&k, pKernel, library->im.text, name);
	if (r == CUDA_SUCCESS)
		*pKernel = (CUkernel)k;
	return r;
}

GPUAPI CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
			       unsigned int gridDimZ, unsigned int blockDimX,
			       unsigned int blockDimY, unsigned int blockDimZ,
			       unsigned int sharedMemBytes, CUstream hStream,
			       void **kernelParams, void **extra)
{
	if (kernelParams && extra)
		return CUDA_ERROR_INVALID_VALUE;
	return launch(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ);
}

GPUAPI CUresult cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f,
				 void **kernelParams, void **extra)
{
	if (!config || (config->numAttrs && !config->attrs) || (kernelParams && extra))
		return CUDA_ERROR_INVALID_VALUE;
	return launch(f, config->gridDimX, config->gridDimY, config->gridDimZ,
		      config->blockDimX, config->blockDimY, config->blockDimZ);
}

GPUAPI CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned int gridDimX,
					  unsigned int gridDimY, unsigned int gridDimZ,
					  unsigned int blockDimX, unsigned int blockDimY,
					  unsigned int blockDimZ, unsigned int sharedMemBytes,
					  CUstream hStream, void **kernelParams)
{
	return launch(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ);
}

/* The stand-in has no graphs to instantiate: any non-NULL handle will do,
 * and nothing behind it is read. */
GPUAPI CUresult cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream)
{
	if (!initialized)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!hGraphExec)
		return CUDA_ERROR_INVALID_HANDLE;
	graph_launches++;
	return CUDA_SUCCESS;
}

GPUAPI CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount)
{
	return copy(DEV(dst), DEV(src), ByteCount);
}

GPUAPI CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount,
			      CUstream hStream)
{
	return copy(DEV(dst), DEV(src), ByteCount);
}

GPUAPI CUresult cuMemcpyHtoD_v2(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount)
{
	return copy(DEV(dstDevice), srcHost, ByteCount);
}

GPUAPI CUresult cuMemcpyDtoH_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount)
{
	return copy(dstHost, DEV(srcDevice), ByteCount);
}

GPUAPI CUresult cuMemcpyDtoD_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount)
{
	return copy(DEV(dstDevice), DEV(srcDevice), ByteCount);
}

GPUAPI CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dstDevice, const void *srcHost,
				     size_t ByteCount, CUstream hStream)
{
	return copy(DEV(dstDevice), srcHost, ByteCount);
}

GPUAPI CUresult cuMemcpyDtoHAsync_v2(void *dstHost, CUdeviceptr srcDevice,
				     size_t ByteCount, CUstream hStream)
{
	return copy(dstHost, DEV(srcDevice), ByteCount);
}

GPUAPI CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice,
				     size_t ByteCount, CUstream hStream)
{
	return copy(DEV(dstDevice), DEV(srcDevice), ByteCount);
}

GPUAPI CUresult cuMemcpyPeer(CUdeviceptr dstDevice, CUcontext dstContext,
			     CUdeviceptr srcDevice, CUcontext srcContext, size_t ByteCount)
{
	if (!dstContext || !srcContext)
		return CUDA_ERROR_INVALID_HANDLE;
	return copy(DEV(dstDevice), DEV(srcDevice), ByteCount);
}

GPUAPI CUresult cuMemcpyPeerAsync(CUdeviceptr dstDevice, CUcontext dstContext,
				  CUdeviceptr srcDevice, CUcontext srcContext,
				  size_t ByteCount, CUstream hStream)
{
	if (!dstContext || !srcContext)
		return CUDA_ERROR_INVALID_HANDLE;
	return copy(DEV(dstDevice), DEV(srcDevice), ByteCount);
}

GPUAPI CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
	return alloc_dev(dptr, bytesize);
}

GPUAPI CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
	return alloc_dev(dptr, bytesize);
}

GPUAPI CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags)
{
	return alloc_dev(dptr, bytesize);
}

GPUAPI CUresult cuMemAllocHost_v2(void **pp, size_t bytesize)
{
	return alloc(pp, bytesize);
}

GPUAPI CUresult cuMemHostAlloc(void **pp, size_t bytesize, unsigned int Flags)
{
	return alloc(pp, bytesize);
}

/* Rows of WidthInBytes rounded up to PITCH_ALIGN bytes. */
GPUAPI CUresult cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pPitch, size_t WidthInBytes,
				   size_t Height, unsigned int ElementSizeBytes)
{
	size_t pitch = (WidthInBytes + PITCH_ALIGN - 1) / PITCH_ALIGN * PITCH_ALIGN;
	CUresult r;

	if (!pPitch || !Height ||
	    (ElementSizeBytes != 4 && ElementSizeBytes != 8 && ElementSizeBytes != 16))
		return CUDA_ERROR_INVALID_VALUE;
	r = alloc_dev(dptr, pitch * Height);
	if (r == CUDA_SUCCESS)
		*pPitch = pitch;
	return r;
}

GPUAPI CUresult cuMemFree_v2(CUdeviceptr dptr)
{
	return release(DEV(dptr));
}

GPUAPI CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream)
{
	return release(DEV(dptr));
}

GPUAPI CUresult cuMemFreeHost(void *p)
{
	return release(p);
}

GPUAPI CUresult cuStreamCreate(CUstream *phStream, unsigned int Flags)
{
	struct queue_object *q;
	CUresult r = new_queue_object(&q, phStream, &next_stream_id, Flags);

	if (r == CUDA_SUCCESS)
		*phStream = (CUstream)q;
	return r;
}

GPUAPI CUresult cuStreamSynchronize(CUstream hStream)
{
	if (!initialized)
		return CUDA_ERROR_NOT_INITIALIZED;
	wait_for_device();
	return CUDA_SUCCESS;
}

GPUAPI CUresult cuCtxSynchronize(void)
{
	if (!initialized)
		return CUDA_ERROR_NOT_INITIALIZED;
	wait_for_device();
	return CUDA_SUCCESS;
}

GPUAPI CUresult cuEventCreate(CUevent *phEvent, unsigned int Flags)
{
	struct queue_object *q;
	CUresult r = new_queue_object(&q, phEvent, &next_event_id, Flags);

	if (r == CUDA_SUCCESS)
		*phEvent = (CUevent)q;
	return r;
}

GPUAPI CUresult cuEventSynchronize(CUevent hEvent)
{
	if (!initialized)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!hEvent)
		return CUDA_ERROR_INVALID_HANDLE;
	wait_for_device();
	return CUDA_SUCCESS;
}

/* The device waits, not the host: enqueued, it returns at once, as the
 * real call does. */
GPUAPI CUresult cuStreamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int Flags)
{
	if (!initialized)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!hEvent)
		return CUDA_ERROR_INVALID_HANDLE;
	return CUDA_SUCCESS;
}
