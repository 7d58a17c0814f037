// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * dlopen()s libphase.so, says "ready" and waits for a line on stdin
 * (the tracer has then seen the library mapped), then reads FILE inside
 * the library's data.preprocess region and prints its ground truth.
 * Usage: dlopen_phase LIBPHASE.so FILE
 */
#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long (*preprocess)(const char *);
	char line[16];
	void *lib;
	long n;

	if (argc != 3) {
		fprintf(stderr, "usage: dlopen_phase LIBPHASE.so FILE\n");
		return 2;
	}
	lib = dlopen(argv[1], RTLD_NOW);
	if (!lib) {
		fprintf(stderr, "dlopen_phase: %s\n", dlerror());
		return 1;
	}
	*(void **)&preprocess = dlsym(lib, "phase_preprocess");
	if (!preprocess)
		return 1;
	printf("ready\n");
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	n = preprocess(argv[2]);
	printf("{\"kind\":\"region\",\"pid\":%d,\"cat\":\"data\",\"name\":\"preprocess\"}\n",
	       getpid());
	printf("{\"kind\":\"io\",\"pid\":%d,\"op\":\"read\",\"path\":\"%s\",\"bytes\":%ld,"
	       "\"cat\":\"data\",\"name\":\"preprocess\",\"epoch\":-1,\"step\":-1}\n",
	       getpid(), argv[2], n);
	return n < 0;
}
