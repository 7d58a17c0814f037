// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The kernel side: checked, opened, configured, loaded and attached, in
 * libbpf's order. */
#include <errno.h>
#include <linux/capability.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "capture/features.h"
#include "capture/loader.h"
#include "capture/report.h"
#include "dftrace.h"
#include "dftrace.skel.h" /* after dftrace.h: its types */
#include "model/gpucalls.h"
#include "model/syscalls.h"

#define CAP(c) (1ull << (c))

static bool has_bpf_caps(void)
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

int loader_check_system(struct features *f)
{
	if (!has_bpf_caps()) {
		report_error("permission denied: tracing needs root or CAP_BPF and CAP_PERFMON; run with sudo");
		return -EPERM;
	}
	if (access("/sys/kernel/btf/vmlinux", R_OK) || features_probe(f)) {
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

static int configure(struct dftrace_bpf *skel, const struct loader_opts *o)
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

int loader_open(struct dftrace_bpf **out, const struct loader_opts *o)
{
	struct dftrace_bpf *skel = dftrace_bpf__open();
	int err;

	*out = skel;
	if (!skel) {
		report_error("cannot open the BPF programs: %s", strerror(errno));
		return -errno;
	}
	err = configure(skel, o);
	if (!err)
		err = dftrace_bpf__load(skel);
	if (!err)
		err = link_annot_full(skel);
	if (err) {
		report_error("cannot load the BPF programs: %s (run with -v for the verifier log)",
		     strerror(-err));
		return err;
	}
	err = dftrace_bpf__attach(skel);
	if (err)
		report_error("cannot attach the BPF programs: %s", strerror(-err));
	return err;
}

struct bpf_link *loader_iter(struct bpf_program *prog)
{
	struct bpf_link *l = bpf_program__attach_iter(prog, NULL);

	if (!l)
		report_error("cannot attach the task iterator '%s': %s",
			     bpf_program__name(prog), strerror(errno));
	return l;
}
