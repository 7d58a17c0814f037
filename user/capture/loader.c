// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The kernel side: checked, opened, configured, loaded and attached, in
 * libbpf's order. */
#include <errno.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "capture/features.h"
#include "capture/loader.h"
#include "capture/report.h"
#include "dftrace.h"
#include "dftrace.skel.h" /* after dftrace.h: its types */
#include "lib/clock.h"
#include "lib/fdlimit.h"
#include "model/gpucalls.h"
#include "model/syscalls.h"

#define CAP(c) (1ull << (c))

bool loader_may_load(void)
{
	char line[256];
	unsigned long long eff = 0;
	FILE *f;

	if (geteuid() == 0)
		return true;
	f = fopen("/proc/self/status", "re");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &eff) == 1)
			break;
	fclose(f);
	return (eff & CAP(CAP_BPF) && eff & CAP(CAP_PERFMON)) ||
	       (eff & CAP(CAP_SYS_ADMIN));
}

int loader_check_system(struct features *f, const char *no_hooks)
{
	if (!loader_may_load()) {
		report_error("permission denied: tracing needs root or CAP_BPF and CAP_PERFMON; run with sudo");
		return -EPERM;
	}
	if (access("/sys/kernel/btf/vmlinux", R_OK) || features_probe(f, no_hooks)) {
		report_error("no kernel BTF at '/sys/kernel/btf/vmlinux': this kernel needs CONFIG_DEBUG_INFO_BTF=y");
		return -ENOENT;
	}
	if (f->core_missing) {
		report_error("this kernel (%s) has no %s: dftrace-bpf needs Linux %s or later",
			     f->release, f->core_missing, LOADER_MIN_LINUX);
		return -ENOSYS;
	}
	return 0;
}

/* Calls leave the end of the ring to the records that can't be folded
 * (bpf/dftrace.bpf.c, ring_for_calls()). That part holds two things:
 * - the calls that get in before a CPU next asks how full the ring is
 *   (each asks every calls_check records; calls of up to 256 bytes);
 * - room for the records themselves: an eighth of the ring, and at
 *   least two exec records (13 KiB each), or a quarter of the ring where
 *   that is less (one exec from 64K up). The room comes on top of the
 *   calls, or a flood of calls can fill it to the byte and an exec
 *   finds none. */
static void set_calls_limit(struct dftrace_bpf *skel, size_t ringbuf_size, size_t ncpus)
{
	size_t room = ringbuf_size / 8;
	size_t execs = 2 * sizeof(struct dft_exec);
	size_t check;

	if (execs > ringbuf_size / 4)
		execs = ringbuf_size / 4;
	if (room < execs)
		room = execs;
	check = room / 256 / ncpus;
	check = check < 1 ? 1 : check > 64 ? 64 : check;
	skel->rodata->calls_max = ringbuf_size - room - check * 256 * ncpus;
	skel->rodata->calls_check = check;
}

/* Which lazy group a program is of (loader.h), or LAZY_NONE. */
static enum lazy_group lazy_group_of(const struct dftrace_bpf *skel,
				     const struct bpf_program *p)
{
	const struct bpf_program *annot[] = { skel->progs.annotation, skel->progs.pinned_begin,
					       skel->progs.pinned_end, skel->progs.ring_regions,
					       skel->progs.ring_at_signal };

	for (size_t i = 0; i < sizeof(annot) / sizeof(annot[0]); i++)
		if (p == annot[i])
			return LAZY_ANNOT;
	if (p == skel->progs.gpu_enter || p == skel->progs.gpu_exit)
		return LAZY_GPU;
	return LAZY_NONE;
}

/* Of what the features would load, only group's programs. */
static void load_only(struct dftrace_bpf *skel, enum lazy_group group)
{
	struct bpf_program *prog;

	bpf_object__for_each_program(prog, skel->obj)
		if (bpf_program__autoload(prog) && lazy_group_of(skel, prog) != group)
			bpf_program__set_autoload(prog, false);
}

static int configure(struct dftrace_bpf *skel, const struct loader_opts *o,
		     enum lazy_group group)
{
	int possible = libbpf_num_possible_cpus();
	size_t ncpus = possible > 0 ? possible : 1;

	sc_fill_config((struct dft_sc_cfg *)skel->rodata->sc_cfg);
	gpu_fill_config((struct dft_gpu_cfg *)skel->rodata->gpu_cfg);
	features_configure(o->features, skel, o->scope && o->scope->cgroup_level);
	/* a quarter of the ring, in records of ~96 bytes, shared by the CPUs */
	skel->rodata->wakeup_records = o->ringbuf_size / 4 / 96 / ncpus ?: 1;
	set_calls_limit(skel, o->ringbuf_size, ncpus);
	skel->rodata->lost_by_proc_on = o->lost_by_proc;
	skel->rodata->hide_privileged = o->hide_privileged;
	skel->rodata->profile_on = o->profile || o->flight;
	skel->rodata->flight_on = o->flight;
	skel->rodata->scope.self_tgid = getpid();
	if (o->scope) {
		skel->rodata->scope_on = true;
		skel->rodata->scope = *o->scope;
		skel->rodata->scope.self_tgid = getpid();
		skel->bss->scope_cgroup_id = o->scope->cgroup_id;
	}
	if (o->steps) {
		skel->rodata->steps_on = true;
		skel->rodata->steps = *o->steps;
		/* before any step annotation it is step 0, as in torch */
		skel->bss->step_active = dft_step_active(o->steps, 0);
	}
	load_only(skel, group);
	return bpf_map__set_max_entries(skel->maps.events, o->ringbuf_size);
}

/* The slot that pinned_begin and pinned_end hand a site they do not know
 * over by (annot.bpf.c): the annotation program. */
static int link_annot_full(struct dftrace_bpf *skel)
{
	int fd = bpf_program__fd(skel->progs.annotation);
	__u32 zero = 0;

	if (fd < 0 || bpf_program__fd(skel->progs.pinned_begin) < 0)
		return 0;
	if (bpf_map_update_elem(bpf_map__fd(skel->maps.annot_full), &zero, &fd, BPF_ANY))
		return -errno;
	return 0;
}

/* DFTRACE_BPF_VERIFIER_STATS=1: what the verifier said of each program
 * (its time and the instructions it went through), for start-up work. */
#define STATS_LOG 4096
#define STATS_PROGS 256	/* the programs it says, at most */

static char *stats_logs(struct dftrace_bpf *skel)
{
	struct bpf_program *prog;
	char *logs;
	int i = 0;

	if (!getenv("DFTRACE_BPF_VERIFIER_STATS"))
		return NULL;
	logs = calloc(STATS_PROGS, STATS_LOG);
	bpf_object__for_each_program(prog, skel->obj) {
		if (!logs || i == STATS_PROGS)
			break;
		bpf_program__set_log_buf(prog, logs + (size_t)STATS_LOG * i++, STATS_LOG);
		bpf_program__set_log_level(prog, 4);
	}
	return logs;
}

static void say_stats(struct dftrace_bpf *skel, char *logs)
{
	struct bpf_program *prog;
	int i = 0;

	bpf_object__for_each_program(prog, skel->obj) {
		const char *log = logs + (size_t)STATS_LOG * i++, *t, *n;

		if (i > STATS_PROGS)
			break;
		if (!bpf_program__autoload(prog))
			continue;
		t = strstr(log, "verification time");
		n = strstr(log, "processed");
		fprintf(stderr, "dftrace-bpf: verifier: %-28s %8ld us %8ld insns\n",
			bpf_program__name(prog), t ? strtol(t + 18, NULL, 10) : -1L,
			n ? strtol(n + 10, NULL, 10) : -1L);
	}
	free(logs);
}

int loader_open(struct dftrace_bpf **out, const struct loader_opts *o)
{
	char *logs;
	struct dftrace_bpf *skel = dftrace_bpf__open();
	int err;

	*out = skel;
	if (!skel) {
		report_error("cannot open the BPF programs: %s", strerror(errno));
		return -errno;
	}
	err = configure(skel, o, LAZY_NONE);
	logs = err ? NULL : stats_logs(skel);
	if (!err)
		err = dftrace_bpf__load(skel);
	if (logs)
		say_stats(skel, logs);
	if (err) {
		report_error("cannot load the BPF programs: %s (run with -v for the verifier log)",
		     strerror(-err));
	}
	return err;
}

int loader_attach(struct dftrace_bpf *skel)
{
	int err = dftrace_bpf__attach(skel);

	if (err)
		report_error("cannot attach the BPF programs: %s", strerror(-err));
	return err;
}

void loader_lazy_init(struct lazy_progs *l, struct dftrace_bpf *main,
		      const struct loader_opts *o, bool verbose)
{
	*l = (struct lazy_progs){ .main = main, .o = *o, .verbose = verbose };
}

/* Every map of inst is main's: the same object, so the same maps in the
 * same order, and its globals the values main loaded with. */
static int share_maps(struct dftrace_bpf *inst, struct dftrace_bpf *main)
{
	struct bpf_map *m = NULL, *mine = NULL;
	int err;

	while ((m = bpf_object__next_map(main->obj, m)) &&
	       (mine = bpf_object__next_map(inst->obj, mine))) {
		if (strcmp(bpf_map__name(m), bpf_map__name(mine)))
			return -EINVAL;
		if (bpf_map__fd(m) >= 0 && (err = bpf_map__reuse_fd(mine, bpf_map__fd(m))))
			return err;
	}
	return 0;
}

static const char *const lazy_names[LAZY__COUNT] = { "annotation", "GPU call" };

static int lazy_load(struct lazy_progs *l, enum lazy_group g, const char *when)
{
	uint64_t t0 = clock_mono_ns();
	unsigned int fds = l->verbose ? fd_count_open() : 0;
	struct dftrace_bpf *skel = dftrace_bpf__open();
	int err;

	if (!skel)
		return -errno;
	l->inst[g] = skel;
	err = configure(skel, &l->o, g);
	if (!err)
		err = share_maps(skel, l->main);
	if (!err)
		err = dftrace_bpf__load(skel);
	if (!err && g == LAZY_ANNOT)
		err = link_annot_full(skel);
	if (!err && g == LAZY_ANNOT && bpf_program__fd(skel->progs.ring_at_signal) >= 0 &&
	    !(l->at_signal = bpf_program__attach(skel->progs.ring_at_signal)))
		err = -errno;
	if (!err && l->verbose)
		fprintf(stderr, "dftrace-bpf: %s programs loaded %sin %.1f ms (%d descriptors)\n",
			lazy_names[g], when, (clock_mono_ns() - t0) / 1e6,
			(int)(fd_count_open() - fds));
	return err;
}

static struct dftrace_bpf *lazy_get(struct lazy_progs *l, enum lazy_group g,
				    const char *when)
{
	if (l->inst[g] && !l->err[g])
		return l->inst[g];
	if (l->err[g] || l->stopped)
		return NULL;
	l->err[g] = lazy_load(l, g, when);
	if (!l->err[g])
		return l->inst[g];
	report_error("cannot load the %s programs: %s; their probes are left out (-v: the "
		     "verifier log)", lazy_names[g], strerror(-l->err[g]));
	return NULL;
}

struct dftrace_bpf *loader_lazy(struct lazy_progs *l, enum lazy_group g)
{
	return lazy_get(l, g, "");
}

void loader_lazy_now(struct lazy_progs *l, enum lazy_group g)
{
	(void)lazy_get(l, g, "at start ");
}

void loader_lazy_detach(struct lazy_progs *l)
{
	l->stopped = true;
	bpf_link__destroy(l->at_signal);
	l->at_signal = NULL;
}

void loader_lazy_free(struct lazy_progs *l)
{
	loader_lazy_detach(l);
	for (int g = 0; g < LAZY__COUNT; g++)
		dftrace_bpf__destroy(l->inst[g]);
	*l = (struct lazy_progs){ 0 };
}

struct bpf_link *loader_iter(struct bpf_program *prog)
{
	struct bpf_link *l = bpf_program__attach_iter(prog, NULL);

	if (!l)
		report_error("cannot attach the task iterator '%s': %s",
			     bpf_program__name(prog), strerror(errno));
	return l;
}
