// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Fresh copies of a probed library, each loaded, called and unloaded:
 * how long the tracer holds a file's probes.
 *
 *   libcopies MODE LIB DIR N
 *
 * LIB is copied to N files, DIR/copy-<i>.so (i from 1), each a file of
 * its own. A copy is called by what LIB defines:
 *   cuLaunchKernel     (build/standin/liblaunch.so, libcuda.so.1) one
 *                      launch with grid_x i
 *   phase_preprocess   (usdt/examples/libphase.so) reads DIR/in-<i>.bin
 *                      (i bytes) in a data/preprocess region
 * MODE:
 *   each     $WL_CTL/ready, SIGUSR1; then for each copy: dlopen, SIGUSR1
 *            (the tracer has probed it), the call, dlclose; then
 *            $WL_CTL/done and SIGUSR1 before it exits
 *   all      every copy dlopen'd, $WL_CTL/loaded, SIGUSR1, each called
 *            once, every copy dlclose'd
 *   fork     one copy dlopen'd, then a child: the parent dlcloses it,
 *            opens DIR/closed (a mark in the trace) and waits for the
 *            child, which writes $WL_CTL/child and calls the copy after
 *            a SIGUSR1
 *   recurse  one copy (liblaunch.so) dlopen'd, $WL_CTL/loaded, SIGUSR1,
 *            then a launch of grid_x N whose callback launches grid_x
 *            N - 1, and so on to 1: N calls in flight at once, each
 *            inside the one before
 * Records: "info<TAB>call<TAB>I" for each call made (recurse: each
 * launch's grid_x); for a copy of libannotated.so, once it is probed,
 * "info<TAB>other<TAB>I<TAB>BYTE": the first byte, in hex, at the site
 * of its probe of another provider (a nop, 90, unless a uprobe is there).
 */
#include <dlfcn.h>
#include <stdbool.h>
#include <sys/wait.h>
#include "workload.h"
#include "../standin/gpuapi.h"

#define GO_TIMEOUT_S 120

typedef CUresult (*launch_fn)(CUfunction, unsigned int, unsigned int, unsigned int,
			      unsigned int, unsigned int, unsigned int, unsigned int,
			      CUstream, void **, void **);
typedef long (*preprocess_fn)(const char *);

static const char *dir;
static launch_fn launch;

/* SIGUSR1, blocked since main() began (a child's too). */
static void wait_go(void)
{
	struct timespec ts = { GO_TIMEOUT_S, 0 };
	sigset_t set;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sig = sigtimedwait(&set, NULL, &ts);
	if (sig != SIGUSR1)
		wl_die("no SIGUSR1 within %d s", GO_TIMEOUT_S);
}

static void copy_file(const char *from, const char *to)
{
	char buf[65536];
	int in = open(from, O_RDONLY | O_CLOEXEC);
	int out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	ssize_t n;

	if (in < 0 || out < 0)
		wl_die("copy '%s' to '%s'", from, to);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, n) != n)
			wl_die("write '%s'", to);
	if (n < 0 || close(out))
		wl_die("copy '%s'", to);
	close(in);
}

static char *copy_path(int i)
{
	char name[32];

	snprintf(name, sizeof(name), "copy-%d.so", i);
	return wl_path(dir, name);
}

static void *load(int i)
{
	char *path = copy_path(i);
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);

	if (!h)
		wl_die("dlopen '%s': %s", path, dlerror());
	free(path);
	return h;
}

/* A launch's callback: the next launch, inside this one. */
static void launch_inside(unsigned int grid_x)
{
	void *params[1];

	if (grid_x <= 1)
		return;
	memcpy(&params[0], &(void (*)(unsigned int)){ launch_inside }, sizeof(params[0]));
	wl_emit("info\tcall\t%u\n", grid_x - 1);
	launch(NULL, grid_x - 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL);
}

static void call(void *h, int i, bool recurse)
{
	const unsigned char *(*other)(void);
	preprocess_fn preprocess;
	char name[32], *in;
	void *params[1];

	*(void **)&launch = dlsym(h, "cuLaunchKernel");
	*(void **)&preprocess = dlsym(h, "phase_preprocess");
	if (launch) {
		memcpy(&params[0], &(void (*)(unsigned int)){ launch_inside }, sizeof(params[0]));
		wl_emit("info\tcall\t%d\n", i);
		launch(NULL, i, 1, 1, 1, 1, 1, 0, NULL, recurse ? params : NULL, NULL);
		return;
	}
	if (!preprocess)
		wl_die("copy %d defines neither cuLaunchKernel nor phase_preprocess", i);
	*(void **)&other = dlsym(h, "annotated_other_site");
	if (other)
		wl_emit("info\tother\t%d\t%02x\n", i, *other());
	snprintf(name, sizeof(name), "in-%d.bin", i);
	in = wl_path(dir, name);
	wl_emit("info\tcall\t%d\n", i);
	if (preprocess(in) != i)
		wl_die("phase_preprocess '%s'", in);
	free(in);
}

/* DIR/in-<i>.bin of i bytes, for phase_preprocess. */
static void make_input(int i)
{
	char name[32], *path;
	int fd;

	snprintf(name, sizeof(name), "in-%d.bin", i);
	path = wl_path(dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || ftruncate(fd, i) || close(fd))
		wl_die("create '%s'", path);
	free(path);
}

/* $WL_CTL/NAME with our pid, then SIGUSR1. */
static void hold(const char *name)
{
	char txt[32];

	snprintf(txt, sizeof(txt), "%d\n", wl_pid());
	wl_ctl_file(name, txt);
	wait_go();
}

static void each(int n)
{
	hold("ready");
	for (int i = 1; i <= n; i++) {
		void *h = load(i);

		wait_go();
		call(h, i, false);
		if (dlclose(h))
			wl_die("dlclose copy %d", i);
	}
	hold("done");
}

static void all(int n)
{
	void **h = calloc(n + 1, sizeof(*h));

	if (!h)
		wl_die("calloc");
	for (int i = 1; i <= n; i++)
		h[i] = load(i);
	hold("loaded");
	for (int i = 1; i <= n; i++)
		call(h[i], i, false);
	for (int i = 1; i <= n; i++)
		if (dlclose(h[i]))
			wl_die("dlclose copy %d", i);
	free(h);
}

static void forked(void)
{
	void *h = load(1);
	char *mark = wl_path(dir, "closed");
	int status, fd;
	pid_t child;

	child = fork();
	if (child < 0)
		wl_die("fork");
	if (child == 0) {
		hold("child");
		call(h, 1, false);
		_exit(0);
	}
	if (dlclose(h))
		wl_die("dlclose copy 1");
	fd = open(mark, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		wl_die("open '%s'", mark);
	close(fd);
	if (waitpid(child, &status, 0) != child || status)
		wl_die("child %d", (int)child);
}

int main(int argc, char **argv)
{
	sigset_t go;
	int n;

	wl_block_go(&go); /* before any test can send it */
	if (argc != 5 || (n = atoi(argv[4])) < 1)
		wl_die("usage: libcopies each|all|fork|recurse LIB DIR N");
	dir = argv[3];
	for (int i = 1; i <= (strcmp(argv[1], "fork") && strcmp(argv[1], "recurse") ? n : 1);
	     i++) {
		char *path = copy_path(i);

		copy_file(argv[2], path);
		free(path);
		make_input(i);
	}
	if (!strcmp(argv[1], "each")) {
		each(n);
	} else if (!strcmp(argv[1], "all")) {
		all(n);
	} else if (!strcmp(argv[1], "fork")) {
		forked();
	} else if (!strcmp(argv[1], "recurse")) {
		void *h = load(1);

		hold("loaded");
		call(h, n, true);
	} else {
		errno = EINVAL;
		wl_die("unknown mode '%s'", argv[1]);
	}
	return 0;
}
