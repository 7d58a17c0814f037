// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ptxjob [NCOPIES [NLAUNCH]]: known CUDA driver calls on a real GPU, for
 * tests/device/run. It needs no CUDA toolkit, only the driver's
 * libcuda.so.1, which it dlopens: a context on device 0, the hand-written
 * PTX kernel "addone" (below) loaded with cuModuleLoadData, then in step 1
 *   compute/forward   NCOPIES host-to-device copies of BYTES, NLAUNCH
 *                     launches of addone, a context sync
 *   compute/backward  NCOPIES device-to-host copies of BYTES
 * and a check that every element came back NLAUNCH more than it went.
 * Each driver call is a "gpu" record (tests/workloads/workload.h's wl_gpu),
 * the driver's version and the device's name "info" records.
 *
 * Exit: 0 done and the data right; 1 the data wrong; 2 usage; 3 no
 * libcuda.so.1 or a function missing from it; 4 a driver call failed.
 * Every failure is one line on stderr.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <dftrace/usdt.h>
#include "../workloads/workload.h"
#include "../standin/gpuapi.h"

#define ELEMS (1 << 20) /* uint32 elements: 4 MiB copied each way */
#define BYTES (ELEMS * 4)
#define BLOCK 256
#define MAX_COPIES 64
#define MAX_LAUNCHES 10000
#define CU_JIT_ERROR_LOG_BUFFER 5
#define CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES 6

/* data[i] += 1 for i < n, one thread per element. PTX ISA 7.0 for sm_52
 * and later: the driver compiles it for whatever GPU it finds. */
static const char ptx_addone[] =
	".version 7.0\n"
	".target sm_52\n"
	".address_size 64\n"
	"\n"
	".visible .entry addone(\n"
	"\t.param .u64 addone_data,\n"
	"\t.param .u32 addone_n\n"
	")\n"
	"{\n"
	"\t.reg .pred %p<2>;\n"
	"\t.reg .b32 %r<8>;\n"
	"\t.reg .b64 %rd<5>;\n"
	"\n"
	"\tld.param.u64 %rd1, [addone_data];\n"
	"\tld.param.u32 %r1, [addone_n];\n"
	"\tmov.u32 %r2, %ctaid.x;\n"
	"\tmov.u32 %r3, %ntid.x;\n"
	"\tmov.u32 %r4, %tid.x;\n"
	"\tmad.lo.s32 %r5, %r2, %r3, %r4;\n"
	"\tsetp.ge.u32 %p1, %r5, %r1;\n"
	"\t@%p1 bra DONE;\n"
	"\tcvta.to.global.u64 %rd2, %rd1;\n"
	"\tmul.wide.u32 %rd3, %r5, 4;\n"
	"\tadd.s64 %rd4, %rd2, %rd3;\n"
	"\tld.global.u32 %r6, [%rd4];\n"
	"\tadd.s32 %r7, %r6, 1;\n"
	"\tst.global.u32 [%rd4], %r7;\n"
	"DONE:\n"
	"\tret;\n"
	"}\n";

/* The driver's functions: those of gpuapi.h, and a few it leaves out,
 * which may be missing (NULL; the stand-in libcuda has none of them). */
static struct driver {
	__typeof__(&cuInit) cuInit;
	__typeof__(&cuDeviceGet) cuDeviceGet;
	__typeof__(&cuCtxCreate_v2) cuCtxCreate_v2;
	__typeof__(&cuModuleLoadData) cuModuleLoadData;
	__typeof__(&cuModuleGetFunction) cuModuleGetFunction;
	__typeof__(&cuMemAlloc_v2) cuMemAlloc_v2;
	__typeof__(&cuMemcpyHtoD_v2) cuMemcpyHtoD_v2;
	__typeof__(&cuMemcpyDtoH_v2) cuMemcpyDtoH_v2;
	__typeof__(&cuLaunchKernel) cuLaunchKernel;
	__typeof__(&cuCtxSynchronize) cuCtxSynchronize;
	__typeof__(&cuMemFree_v2) cuMemFree_v2;
	CUresult (*cuDriverGetVersion)(int *version);
	CUresult (*cuDeviceGetName)(char *name, int len, CUdevice dev);
	CUresult (*cuCtxDestroy_v2)(CUcontext ctx);
	CUresult (*cuModuleLoadDataEx)(CUmodule *module, const void *image,
				       unsigned int numOptions, CUjit_option *options,
				       void **optionValues);
	CUresult (*cuGetErrorName)(CUresult error, const char **name);
} drv;

static const char *region_cat, *region_name;
static int step = -1;

static __attribute__((noreturn)) void fail(int code, const char *fmt, ...)
{
	va_list ap;

	fputs("ptxjob: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(code);
}

static void load_driver(void)
{
	void *h = dlopen(GPUAPI_SONAME_cuda, RTLD_NOW | RTLD_LOCAL);

	if (!h)
		fail(3, "cannot load '%s': %s", GPUAPI_SONAME_cuda, dlerror());
#define NEED(name)                                                            \
	if (!(*(void **)&drv.name = dlsym(h, #name)))                          \
		fail(3, "'%s' has no '%s'", GPUAPI_SONAME_cuda, #name);
#define MAYBE(name) *(void **)&drv.name = dlsym(h, #name);
	NEED(cuInit) NEED(cuDeviceGet) NEED(cuCtxCreate_v2) NEED(cuModuleLoadData)
	NEED(cuModuleGetFunction) NEED(cuMemAlloc_v2) NEED(cuMemcpyHtoD_v2)
	NEED(cuMemcpyDtoH_v2) NEED(cuLaunchKernel) NEED(cuCtxSynchronize)
	NEED(cuMemFree_v2)
	MAYBE(cuDriverGetVersion) MAYBE(cuDeviceGetName) MAYBE(cuCtxDestroy_v2)
	MAYBE(cuModuleLoadDataEx) MAYBE(cuGetErrorName)
#undef NEED
#undef MAYBE
}

/* A call that must succeed, then its record. */
static void done(CUresult r, const char *fn, long long bytes, const char *detail,
		 const char *args)
{
	const char *name = NULL;

	if (r != CUDA_SUCCESS) {
		if (drv.cuGetErrorName)
			drv.cuGetErrorName(r, &name);
		fail(4, "%s failed: %s (%d)", fn, name ? name : "error", r);
	}
	wl_gpu("CUDA_DRIVER_API", fn, bytes, detail, region_cat, region_name, step, fn, args);
}
#define CU(fn, bytes, detail, args, ...) done(drv.fn(__VA_ARGS__), #fn, (bytes), (detail), (args))

static void region(const char *cat, const char *name)
{
	if (region_cat)
		DFT_USDT_REGION_END(region_cat, region_name);
	if (cat)
		DFT_USDT_REGION_BEGIN(cat, name);
	region_cat = cat;
	region_name = name;
}

/* On a failed load, the JIT's own words, then the failure. */
static void load_module(CUmodule *mod)
{
	char log[4096] = "";
	CUjit_option opt[] = { CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES };
	void *val[] = { log, (void *)(uintptr_t)sizeof(log) };
	CUresult r = drv.cuModuleLoadData(mod, ptx_addone);

	if (r != CUDA_SUCCESS && drv.cuModuleLoadDataEx &&
	    drv.cuModuleLoadDataEx(mod, ptx_addone, 2, opt, val) && log[0]) {
		for (char *p = log; *p; p++)
			if (*p == '\n')
				*p = ' ';
		fail(4, "cuModuleLoadData failed (%d): %s", r, log);
	}
	done(r, "cuModuleLoadData", -1, NULL, NULL);
}

static void setup(CUcontext *ctx, CUfunction *fn)
{
	CUdevice dev;
	CUmodule mod;
	int version;
	char name[256] = "";

	CU(cuInit, -1, NULL, NULL, 0);
	if (drv.cuDriverGetVersion) {
		CU(cuDriverGetVersion, -1, NULL, NULL, &version);
		wl_emit("info\tdriver_api_version\t%d\n", version);
	}
	CU(cuDeviceGet, -1, NULL, NULL, &dev, 0);
	if (drv.cuDeviceGetName) {
		CU(cuDeviceGetName, -1, NULL, NULL, name, sizeof(name) - 1, dev);
		wl_emit("info\tdevice\t%s\n", name);
	}
	CU(cuCtxCreate_v2, -1, NULL, NULL, ctx, 0, dev);
	load_module(&mod);
	CU(cuModuleGetFunction, -1, "addone", NULL, fn, mod, "addone");
}

/* The data through the device and back, NLAUNCH increments on the way. */
static int run(CUfunction fn, int ncopies, int nlaunch)
{
	uint32_t *in = malloc(BYTES), *out = malloc(BYTES);
	unsigned int n = ELEMS, grid = (ELEMS + BLOCK - 1) / BLOCK;
	CUdeviceptr d;
	void *params[] = { &d, &n };
	char args[256];
	long bad = 0;

	if (!in || !out)
		fail(4, "out of memory");
	for (uint32_t i = 0; i < ELEMS; i++)
		in[i] = i * 3;
	CU(cuMemAlloc_v2, BYTES, NULL, NULL, &d, BYTES);
	step = 1;
	DFT_USDT_SET_STEP(step);
	region("compute", "forward");
	for (int i = 0; i < ncopies; i++)
		CU(cuMemcpyHtoD_v2, BYTES, "HtoD", "stream=0x0", d, in, BYTES);
	snprintf(args, sizeof(args), "grid_x=%u,grid_y=1,grid_z=1,block_x=%d,block_y=1,"
		 "block_z=1,shared_bytes=0,stream=0x0", grid, BLOCK);
	for (int i = 0; i < nlaunch; i++)
		CU(cuLaunchKernel, -1, "addone", args, fn, grid, 1, 1, BLOCK, 1, 1, 0, NULL,
		   params, NULL);
	CU(cuCtxSynchronize, -1, NULL, NULL);
	region("compute", "backward");
	for (int i = 0; i < ncopies; i++)
		CU(cuMemcpyDtoH_v2, BYTES, "DtoH", "stream=0x0", out, d, BYTES);
	region(NULL, NULL);
	DFT_USDT_CLEAR("step");
	step = -1;
	CU(cuMemFree_v2, BYTES, NULL, NULL, d);
	for (uint32_t i = 0; i < ELEMS; i++)
		bad += out[i] != i * 3 + (uint32_t)nlaunch;
	wl_emit("info\tchecked\t%d\t%ld\n", ELEMS, bad);
	free(in);
	free(out);
	return bad != 0;
}

/* With $PTXJOB_HOLD naming a file: the driver mapped, the pid there
 * and no call before SIGUSR1, so that tests/device/run starts the calls
 * once the tracer has probed the library (it says so, -v). */
static void hold(void)
{
	const char *path = getenv("PTXJOB_HOLD");

	if (path)
		wl_hold(path, 60);
}

int main(int argc, char **argv)
{
	int ncopies = argc > 1 ? atoi(argv[1]) : 4, nlaunch = argc > 2 ? atoi(argv[2]) : 10;
	CUcontext ctx;
	CUfunction fn;
	int bad;

	if (argc > 3 || ncopies < 1 || ncopies > MAX_COPIES || nlaunch < 1 ||
	    nlaunch > MAX_LAUNCHES) {
		fprintf(stderr, "usage: ptxjob [NCOPIES (1..%d) [NLAUNCH (1..%d)]]\n",
			MAX_COPIES, MAX_LAUNCHES);
		return 2;
	}
	load_driver();
	hold();
	setup(&ctx, &fn);
	bad = run(fn, ncopies, nlaunch);
	if (drv.cuCtxDestroy_v2)
		CU(cuCtxDestroy_v2, -1, NULL, NULL, ctx);
	if (bad)
		fail(1, "elements not incremented %d times: see the \"checked\" record", nlaunch);
	return 0;
}
