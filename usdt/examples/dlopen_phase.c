// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * dlopen()s libphase.so, says "ready" and waits for a line on stdin
 * (the tracer has then seen the library mapped), then reads FILE inside
 * the library's data.preprocess region and prints its ground truth.
 * Usage: dlopen_phase [LIBPHASE.so] FILE
 * Without LIBPHASE.so, the libphase.so next to this program is loaded.
 */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long (*preprocess)(const char *);
	char line[16], libpath[PATH_MAX];
	const char *file = argv[argc - 1];
	ssize_t len;
	void *lib;
	long n;

	if (argc != 2 && argc != 3) {
		fprintf(stderr, "usage: dlopen_phase [LIBPHASE.so] FILE\n");
		return 2;
	}
	if (argc == 3) {
		snprintf(libpath, sizeof(libpath), "%s", argv[1]);
	} else {
		len = readlink("/proc/self/exe", libpath, sizeof(libpath) - sizeof("libphase.so"));
		if (len <= 0)
			return 1;
		libpath[len] = '\0';
		strcpy(strrchr(libpath, '/') + 1, "libphase.so");
	}
	lib = dlopen(libpath, RTLD_NOW);
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
	n = preprocess(file);
	printf("{\"kind\":\"region\",\"pid\":%d,\"cat\":\"data\",\"name\":\"preprocess\"}\n",
	       getpid());
	printf("{\"kind\":\"io\",\"pid\":%d,\"op\":\"read\",\"path\":\"%s\",\"bytes\":%ld,"
	       "\"cat\":\"data\",\"name\":\"preprocess\",\"epoch\":-1,\"step\":-1}\n",
	       getpid(), file, n);
	return n < 0;
}
