// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * probecost [N]: ns per lseek with no program, with a classic
 * syscalls:sys_enter_lseek tracepoint program, and with a tp_btf sys_enter
 * program; the difference to "none" is the cost of one hit.
 * probecost floor -- CMD...: runs CMD under the floor of a syscall tracer
 * (tp_btf sys_enter and sys_exit, a pid filter and a clock read each), for
 * make bench to time beside the tracer on the same loop.
 * probecost tree -- CMD...: the same with task storage as the filter, the
 * floor of a tracer that follows a process tree.
 * probecost ring|window -- CMD...: the tree floor, each call then kept: a
 * 56-byte record in a ring buffer drained every 10 ms, or a slot of a
 * per-CPU window the kernel overwrites in turn (nothing reads it).
 * probecost fentry -- CMD...: the floor on pread64 alone, through BPF
 * trampolines (fentry/fexit), not the raw syscall tracepoints: what a
 * per-syscall attachment costs the traced loop and everyone else.
 * probecost annot -- CMD...: runs CMD (a path) with its dftrace
 * region_begin and region_end probes under the floor of an annotation
 * tracer (the task, its storage and the clock at each hit, kept nowhere);
 * count and clock: under a per-CPU counter (bpftrace's count()), or a
 * clock read alone, for bpf_stats to set beside it.
 */
#include <sys/wait.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "probecost.skel.h"

static double ns_per_call(long n)
{
	struct timespec a, b;
	double best = 1e18;

	for (int r = 0; r < 5; r++) {
		clock_gettime(CLOCK_MONOTONIC, &a);
		for (long i = 0; i < n; i++)
			lseek(0, 0, SEEK_CUR);
		clock_gettime(CLOCK_MONOTONIC, &b);
		double ns = ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / n;
		if (ns < best)
			best = ns;
	}
	return best;
}

static int quiet(enum libbpf_print_level l, const char *f, va_list ap)
{
	return l == LIBBPF_WARN ? vfprintf(stderr, f, ap) : 0;
}

/* Only a and b (b may be NULL) are loaded: each measurement its own. */
static void load_only(struct probecost_bpf *skel, struct bpf_program *a, struct bpf_program *b)
{
	struct bpf_program *p;

	bpf_object__for_each_program(p, skel->obj)
		bpf_program__set_autoload(p, p == a || p == b);
}

static double with_program(const char *which, long n)
{
	struct probecost_bpf *skel = probecost_bpf__open();
	struct bpf_program *prog;
	struct bpf_link *link = NULL;
	double ns = -1;

	if (!skel)
		return -1;
	skel->rodata->target_tgid = getpid();
	skel->rodata->lseek_nr = SYS_lseek;
	prog = strcmp(which, "classic") ? skel->progs.raw_enter : skel->progs.classic_lseek;
	load_only(skel, prog, NULL);
	if (probecost_bpf__load(skel))
		goto out;
	link = bpf_program__attach(prog);
	if (!link)
		goto out;
	ns = ns_per_call(n);
out:
	bpf_link__destroy(link);
	probecost_bpf__destroy(skel);
	return ns;
}

/* $DFTRACE_BPF_PROG_STATS, as the tracer prints it: the program's runs
 * and run time (kernel.bpf_stats_enabled). */
static void print_stats(struct bpf_program *prog)
{
	struct bpf_prog_info info = { 0 };
	__u32 len = sizeof(info);

	if (getenv("DFTRACE_BPF_PROG_STATS") &&
	    !bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len) && info.run_cnt)
		fprintf(stderr, "bpf_prog %s %llu runs %llu ns\n", bpf_program__name(prog),
			(unsigned long long)info.run_cnt, (unsigned long long)info.run_time_ns);
}

enum floor { FLOOR_PID, FLOOR_TREE, FLOOR_RING, FLOOR_WINDOW, FLOOR_ANNOT, FLOOR_COUNT,
	     FLOOR_CLOCK, FLOOR_FENTRY, FLOOR__N };

static const char *const floor_names[FLOOR__N] = {
	[FLOOR_PID] = "floor", [FLOOR_TREE] = "tree", [FLOOR_RING] = "ring",
	[FLOOR_WINDOW] = "window", [FLOOR_ANNOT] = "annot", [FLOOR_COUNT] = "count",
	[FLOOR_CLOCK] = "clock", [FLOOR_FENTRY] = "fentry",
};

/* A floor's programs: a and b on the syscall hooks, or a alone (b NULL)
 * on the annotation probes. */
static void floor_programs(struct probecost_bpf *skel, enum floor f, struct bpf_program **a,
			   struct bpf_program **b)
{
	*b = NULL;
	switch (f) {
	case FLOOR_PID:
		*a = skel->progs.floor_enter;
		*b = skel->progs.floor_exit;
		break;
	case FLOOR_TREE:
		*a = skel->progs.tree_enter;
		*b = skel->progs.tree_exit;
		break;
	case FLOOR_RING:
		*a = skel->progs.tree_enter;
		*b = skel->progs.ring_exit;
		break;
	case FLOOR_WINDOW:
		*a = skel->progs.tree_enter;
		*b = skel->progs.window_exit;
		break;
	case FLOOR_ANNOT:
		*a = skel->progs.annot_floor;
		break;
	case FLOOR_COUNT:
		*a = skel->progs.annot_count;
		break;
	case FLOOR_FENTRY:
		*a = skel->progs.fentry_enter;
		*b = skel->progs.fentry_exit;
		break;
	default:
		*a = skel->progs.annot_clock;
	}
}

/* a on path's region probes, for every process. */
static bool attach_annot(struct bpf_program *a, const char *path)
{
	return bpf_program__attach_usdt(a, -1, path, "dftrace", "region_begin", NULL) &&
	       bpf_program__attach_usdt(a, -1, path, "dftrace", "region_end", NULL);
}

static bool attach_floor(struct bpf_program *a, struct bpf_program *b, const char *path)
{
	if (!b)
		return attach_annot(a, path);
	return bpf_program__attach(a) && bpf_program__attach(b);
}

static int count_record(void *ctx, void *data, size_t size)
{
	(void)data;
	(void)size;
	++*(long *)ctx;
	return 0;
}

/* waitpid for pid; with skel, its ring buffer drained meanwhile every 10
 * ms, as the tracer drains its own, and after. */
static int wait_draining(struct probecost_bpf *skel, pid_t pid, int *status)
{
	struct ring_buffer *rb = NULL;
	long records = 0;
	pid_t got;

	if (skel)
		rb = ring_buffer__new(bpf_map__fd(skel->maps.kept_ring), count_record,
				      &records, NULL);
	if (!rb)
		return waitpid(pid, status, 0) < 0 ? -1 : 0;
	/* the records come without a wakeup: read them on a timer */
	while ((got = waitpid(pid, status, WNOHANG)) == 0) {
		nanosleep(&(struct timespec){ 0, 10 * 1000 * 1000 }, NULL);
		ring_buffer__consume(rb);
	}
	ring_buffer__consume(rb);
	ring_buffer__free(rb);
	fprintf(stderr, "ring records %ld\n", records);
	return got < 0 ? -1 : 0;
}

/* CMD, started held so that the filter knows its pid, under a floor. */
static int run_floor(char **cmd, enum floor f)
{
	struct probecost_bpf *skel = NULL;
	struct bpf_program *a = NULL, *b = NULL;
	int go[2], status = 1;
	pid_t pid;

	if (pipe(go))
		return 1;
	pid = fork();
	if (pid == 0) {
		char c;

		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(127);
		execvp(cmd[0], cmd);
		_exit(127);
	}
	close(go[0]);
	skel = probecost_bpf__open();
	if (pid > 0 && skel) {
		floor_programs(skel, f, &a, &b);
		skel->rodata->target_tgid = pid;
		/* the window: its slots on every CPU */
		bpf_map__set_max_entries(skel->maps.kept_window,
					 bpf_map__max_entries(skel->maps.kept_window) *
					 libbpf_num_possible_cpus());
		load_only(skel, a, b);
		if (!probecost_bpf__load(skel) && attach_floor(a, b, cmd[0]) &&
		    write(go[1], "g", 1) == 1)
			status = 0;
	}
	close(go[1]);
	if (pid > 0 && wait_draining(f == FLOOR_RING && !status ? skel : NULL, pid, &status))
		status = 1;
	if (a && !status) {
		print_stats(a);
		if (b)
			print_stats(b);
	}
	probecost_bpf__destroy(skel);
	return status ? 1 : 0;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 500000;

	for (int f = 0; argc > 3 && !strcmp(argv[2], "--") && f < FLOOR__N; f++)
		if (!strcmp(argv[1], floor_names[f]))
			return run_floor(argv + 3, f);
	struct stat st;
	double none, classic, raw;

	libbpf_set_print(quiet);
	/* Classic tracepoints attach through tracefs, which may be unmounted. */
	if (stat("/sys/kernel/tracing/events", &st))
		mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL);
	none = ns_per_call(n);
	classic = with_program("classic", n);
	raw = with_program("raw", n);
	printf("lseek untraced        %7.1f ns/call\n", none);
	if (classic > 0)
		printf("classic tracepoint    %7.1f ns/call (+%.1f ns per hit)\n", classic, classic - none);
	else
		printf("classic tracepoint    failed to attach\n");
	if (raw > 0)
		printf("tp_btf sys_enter      %7.1f ns/call (+%.1f ns per hit)\n", raw, raw - none);
	else
		printf("tp_btf sys_enter      failed to attach\n");
	return 0;
}
