// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * gpucalls [N]: ns per call of one call of each GPU family on the
 * stand-in libraries (tests/standin), N times each (default 20000):
 *   copy        cuMemcpyHtoD_v2 of 64 bytes
 *   launch      cuLaunchKernel of a kernel named by cuModuleGetFunction
 *   collective  ncclAllReduce of 16 float32
 *   file        cuFileRead of 4 KiB (a pread64 of a cached file under it)
 * Run it plain for the untraced cost and under dftrace-bpf for the traced
 * one: the difference is what the probes cost a call. Each family is timed
 * RUNS times after a warm-up; the fastest run is printed, one line each:
 *   gpucalls FAMILY FUNCTION NS ns/call (N calls)
 * With $GPUCALLS_HOLD naming a file, it writes its pid there once the
 * libraries are mapped and waits for SIGUSR1 before the first call: a
 * bench traces it once the tracer has probed them (it says so, -v).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "../workloads/workload.h"
#include "../standin/gpuapi.h"

#define RUNS 3
#define COPY_BYTES 64
#define FILE_BYTES 4096
#define COLL_COUNT 16

static const char ptx[] = ".version 7.0\n.target sm_52\n.address_size 64\n"
			  ".visible .entry bench(.param .u64 p)\n{\n\tret;\n}\n";

struct ctx {
	CUdeviceptr dev;
	char host[FILE_BYTES];
	CUfunction fn;
	CUstream stream;
	ncclComm_t comm;
	CUfileHandle_t fh;
	void *params[1];
};

static void die(const char *what, long r)
{
	fprintf(stderr, "gpucalls: %s returned %ld\n", what, r);
	exit(1);
}

static void die_errno(const char *what)
{
	fprintf(stderr, "gpucalls: %s: %s\n", what, strerror(errno));
	exit(1);
}

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* One call of each family; non-zero is a failure. */
static long copy_call(struct ctx *c)
{
	return cuMemcpyHtoD_v2(c->dev, c->host, COPY_BYTES);
}

static long launch_call(struct ctx *c)
{
	return cuLaunchKernel(c->fn, 1, 1, 1, 32, 1, 1, 0, c->stream, c->params, NULL);
}

static long collective_call(struct ctx *c)
{
	void *d = (void *)(uintptr_t)c->dev;

	return ncclAllReduce(d, (char *)d + 4096, COLL_COUNT, ncclFloat32, ncclSum, c->comm,
			     c->stream);
}

static long file_call(struct ctx *c)
{
	return cuFileRead(c->fh, (void *)(uintptr_t)c->dev, FILE_BYTES, 0, 0) != FILE_BYTES;
}

static const struct family {
	const char *name, *function;
	long (*call)(struct ctx *);
} families[] = {
	{ "copy", "cuMemcpyHtoD_v2", copy_call },
	{ "launch", "cuLaunchKernel", launch_call },
	{ "collective", "ncclAllReduce", collective_call },
	{ "file", "cuFileRead", file_call },
};

/* A cached 4 KiB file, unlinked: only its fd is left. */
static int scratch_file(void)
{
	const char *dir = getenv("TMPDIR");
	char path[4096], buf[FILE_BYTES];
	int fd;

	snprintf(path, sizeof(path), "%s/gpucalls.XXXXXX", dir && *dir ? dir : "/tmp");
	fd = mkstemp(path);
	if (fd < 0)
		die_errno(path);
	unlink(path);
	memset(buf, 'g', sizeof(buf));
	if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
		die_errno(path);
	return fd;
}

static void setup(struct ctx *c)
{
	CUdevice dev;
	CUcontext ctx;
	CUmodule mod;
	ncclUniqueId id;
	CUfileDescr_t d = { .type = CU_FILE_HANDLE_TYPE_OPAQUE_FD };
	long r;

	if ((r = cuInit(0)) || (r = cuDeviceGet(&dev, 0)) || (r = cuCtxCreate_v2(&ctx, 0, dev)) ||
	    (r = cuStreamCreate(&c->stream, 0)) || (r = cuModuleLoadData(&mod, ptx)) ||
	    (r = cuModuleGetFunction(&c->fn, mod, "bench")) ||
	    (r = cuMemAlloc_v2(&c->dev, 1 << 16)))
		die("CUDA set-up", r);
	if ((r = ncclGetUniqueId(&id)) || (r = ncclCommInitRank(&c->comm, 4, id, 1)))
		die("NCCL set-up", r);
	d.handle.fd = scratch_file();
	if ((r = cuFileDriverOpen().err) || (r = cuFileHandleRegister(&c->fh, &d).err))
		die("cuFile set-up", r);
	memset(c->host, 'h', sizeof(c->host));
	c->params[0] = &c->dev;
}

/* The fastest of RUNS timings of N calls, in ns per call. */
static double time_family(const struct family *f, struct ctx *c, long n)
{
	double best = -1;
	long r;

	for (long i = 0; i < n / 10 + 1; i++) /* warm-up */
		if ((r = f->call(c)))
			die(f->function, r);
	for (int run = 0; run < RUNS; run++) {
		long long t0 = now_ns();

		for (long i = 0; i < n; i++)
			if ((r = f->call(c)))
				die(f->function, r);
		double ns = (double)(now_ns() - t0) / n;

		if (best < 0 || ns < best)
			best = ns;
	}
	return best;
}

static void hold(void)
{
	const char *path = getenv("GPUCALLS_HOLD");

	if (path)
		wl_hold(path, 60);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 20000;
	struct ctx c;

	if (argc > 2 || n < 1) {
		fprintf(stderr, "usage: gpucalls [N]\n");
		return 2;
	}
	memset(&c, 0, sizeof(c));
	hold();
	setup(&c);
	for (size_t i = 0; i < sizeof(families) / sizeof(families[0]); i++)
		printf("gpucalls %-10s %-16s %8.1f ns/call (%ld calls)\n", families[i].name,
		       families[i].function, time_family(&families[i], &c, n), n);
	return 0;
}
