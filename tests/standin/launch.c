// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Stand-in liblaunch.so: a library that defines the CUDA family's marker,
 * cuLaunchKernel, and nothing else, so that it is probed (an entry and a
 * return) wherever it is mapped: tests copy it to many files
 * (tests/workloads/libcopies.c). A launch given a host function in
 * kernelParams[0] calls it with its gridDimX, as a callback on the
 * launching thread: a function that launches again from there recurses
 * through the probed call.
 */
#define GPUAPI __attribute__((visibility("default"), noinline))
#include <string.h>
#include "gpuapi.h"

typedef void (*launch_callback)(unsigned int grid_x);

GPUAPI CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
			       unsigned int gridDimZ, unsigned int blockDimX,
			       unsigned int blockDimY, unsigned int blockDimZ,
			       unsigned int sharedMemBytes, CUstream hStream,
			       void **kernelParams, void **extra)
{
	launch_callback cb;

	if (kernelParams && kernelParams[0]) {
		memcpy(&cb, &kernelParams[0], sizeof(cb));
		cb(gridDimX);
	}
	return CUDA_SUCCESS;
}
