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
#include "capture/kernelbtf.h"
#include "capture/loader.h"
#include "capture/premade.h"
#include "capture/report.h"
#include "dftrace.h"
#include "dftrace.skel.h" /* after dftrace.h: its types */
#include "lib/clock.h"
#include "lib/fdlimit.h"
#include "lib/pfor.h"
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

/* The largest record of calls: a thread's batch, in the ring's framing
 * (a path record, one call's, is rarely longer). */
#define CALLS_RECORD_MAX (sizeof(struct dft_kept_batch) + BPF_RINGBUF_HDR_SZ)

/* Calls leave the end of the ring to the records that can't be folded
 * (bpf/core.bpf.h, ring_for_calls()). That part holds two things:
 * - the calls that get in before a CPU next asks how full the ring is
 *   (each asks every calls_check records, of up to CALLS_RECORD_MAX);
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
	check = room / CALLS_RECORD_MAX / ncpus;
	check = check < 1 ? 1 : check > 64 ? 64 : check;
	/* a small ring on many CPUs: calls fold as soon as any is unread */
	room += check * CALLS_RECORD_MAX * ncpus;
	skel->rodata->calls_max = ringbuf_size > room ? ringbuf_size - room : 0;
	skel->rodata->calls_check = check;
}

/*
 * Where a program is loaded: PLACE_MAIN, a half, or a lazy group's own
 * instance. The halves share the verifier's time at start about evenly
 * (DFTRACE_BPF_VERIFIER_STATS=1): the syscall hooks with the
 * annotations', the process, fault and page cache hooks with the GPU
 * calls' (the user fault hook moved there: the first half took 76 ms
 * to the second's 55, now 58 and 68).
 */
enum { PLACE_MAIN, PLACE_HALF0, PLACE_LAZY0 = PLACE_HALF0 + LOADER_HALVES, PLACE__COUNT = PLACE_LAZY0 + LAZY__COUNT };

static const char *const half_progs[LOADER_HALVES][9] = {
	{ "sys_enter", "sys_exit", "io_uring_create", "io_uring_submit_req",
	  "io_uring_submit_sqe", "io_uring_complete" },
	{ "sched_process_fork", "sched_process_exec", "sched_process_exit", "task_rename",
	  "page_fault_user", "mm_filemap_fault", "mm_filemap_map_pages",
	  "writeback_dirty_folio", "mm_filemap_add_to_page_cache" },
};
static const char *const place_names[PLACE__COUNT] = {
	[PLACE_MAIN] = "main", [PLACE_HALF0] = "first half's", [PLACE_HALF0 + 1] = "second half's",
	[PLACE_LAZY0 + LAZY_ANNOT] = "annotation", [PLACE_LAZY0 + LAZY_GPU] = "GPU call",
};

static const unsigned int group_half[LAZY__COUNT] = { [LAZY_ANNOT] = 0, [LAZY_GPU] = 1 };

/* Where a preloaded group's programs load: its half, or the main
 * instance without halves. */
static int group_place(const struct loader_opts *o, int g)
{
	return o->split ? PLACE_HALF0 + (int)group_half[g] : PLACE_MAIN;
}

static bool is_half(int place)
{
	return place >= PLACE_HALF0 && place < PLACE_HALF0 + LOADER_HALVES;
}

/* Which lazy group a program is of, or -1. */
static int lazy_group_of(const struct dftrace_bpf *skel, const struct bpf_program *p)
{
	const struct bpf_program *annot[] = { skel->progs.annotation, skel->progs.pinned_begin,
					       skel->progs.pinned_end, skel->progs.ring_regions,
					       skel->progs.ring_at_signal };

	for (size_t i = 0; i < sizeof(annot) / sizeof(annot[0]); i++)
		if (p == annot[i])
			return LAZY_ANNOT;
	if (p == skel->progs.gpu_enter || p == skel->progs.gpu_exit)
		return LAZY_GPU;
	return -1;
}

static int half_of(const char *name)
{
	for (int h = 0; h < LOADER_HALVES; h++)
		for (size_t i = 0; i < sizeof(half_progs[h]) / sizeof(half_progs[h][0]); i++)
			if (half_progs[h][i] && !strcmp(name, half_progs[h][i]))
				return h;
	return -1;
}

static int place_of(const struct dftrace_bpf *skel, const struct bpf_program *p,
		    const struct loader_opts *o)
{
	int g = lazy_group_of(skel, p), h;

	if (g >= 0)
		return o->preload & (1u << g) ? group_place(o, g) : PLACE_LAZY0 + g;
	h = o->split ? half_of(bpf_program__name(p)) : -1;
	return h >= 0 ? PLACE_HALF0 + h : PLACE_MAIN;
}

/* For the tests: $DFTRACE_BPF_TEST_REFUSE names a lazy group whose
 * programs the kernel then refuses (of no type), as a kernel without
 * what they need would. */
static void test_refusal(struct dftrace_bpf *skel, struct bpf_program *p)
{
	const char *group = getenv("DFTRACE_BPF_TEST_REFUSE");
	int g = lazy_group_of(skel, p);

	if (group && g >= 0 && !strcmp(group, place_names[PLACE_LAZY0 + g]))
		bpf_program__set_type(p, BPF_PROG_TYPE_UNSPEC);
}

/* Of what the features would load, only place's programs. */
static void load_only(struct dftrace_bpf *skel, int place, const struct loader_opts *o)
{
	struct bpf_program *prog;

	bpf_object__for_each_program(prog, skel->obj) {
		if (bpf_program__autoload(prog) && place_of(skel, prog, o) != place)
			bpf_program__set_autoload(prog, false);
		if (bpf_program__autoload(prog))
			test_refusal(skel, prog);
	}
}

static int configure(struct dftrace_bpf *skel, const struct loader_opts *o, int place)
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
	load_only(skel, place, o);
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

static void say_stats(struct dftrace_bpf *skel, const char *place, char *logs)
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
		fprintf(stderr, "dftrace-bpf: verifier: %-28s %8ld us %8ld insns (%s)\n",
			bpf_program__name(prog), t ? strtol(t + 18, NULL, 10) : -1L,
			n ? strtol(n + 10, NULL, 10) : -1L, place);
	}
	free(logs);
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

/* The lazy groups preloaded with place's programs, said: ", with the
 * annotation and GPU call programs"; "" if none. */
static void groups_with(const struct loader *l, int place, char *buf, size_t size)
{
	size_t n = 0;
	int k = 0;

	buf[0] = 0;
	for (int g = 0; g < LAZY__COUNT; g++) {
		if (!(l->o.preload & (1u << g)) || place != group_place(&l->o, g))
			continue;
		n += snprintf(buf + n, n < size ? size - n : 0, "%s%s", k++ ? " and " : ", with the ",
			      place_names[PLACE_LAZY0 + g]);
	}
	if (k)
		snprintf(buf + n, n < size ? size - n : 0, " programs");
}

/* Said under -v: what an instance loaded and how long it took. Beside
 * another instance's load (the halves) it counts no descriptors, which
 * would count the other's; the main instance's count has its premade
 * maps'. */
static void say_loaded(const struct loader *l, int place, const char *when, uint64_t t0,
		       int fds, const struct premade *pre)
{
	char with[96];

	groups_with(l, place, with, sizeof(with));
	fprintf(stderr, "dftrace-bpf: %s programs loaded %sin %.1f ms", place_names[place], when,
		(clock_mono_ns() - t0) / 1e6);
	if (fds >= 0)
		fprintf(stderr, " (%d descriptors)",
			(int)(fd_count_open() - fds) + (int)(pre ? pre->maps : 0));
	fprintf(stderr, "%s\n", with);
	if (pre && pre->maps)
		fprintf(stderr, "dftrace-bpf: its %u large maps made beforehand, beside the start's "
			"checks, in %.1f ms\n", pre->maps, pre->ns / 1e6);
}

/* The instance of place, opened: for the main instance, with its large
 * maps premade where they were (*pre set). */
static struct dftrace_bpf *open_inst(struct loader *l, int place, const struct premade **pre)
{
	struct dftrace_bpf *skel = NULL;

	*pre = NULL;
	if (place == PLACE_MAIN && l->o.premade && (skel = premade_take(l->o.premade)))
		*pre = l->o.premade;
	return skel ? skel : loader_open();
}

/* An instance of place's programs, loaded; *out is set even on
 * failure, for the caller to destroy. */
static int load_inst(struct loader *l, int place, const char *when, struct dftrace_bpf **out)
{
	uint64_t t0 = clock_mono_ns();
	const struct premade *pre;
	struct dftrace_bpf *skel = open_inst(l, place, &pre);
	/* after the premade maps: say_loaded adds them */
	int fds = l->verbose && !is_half(place) ? (int)fd_count_open() : -1;
	char *logs = NULL;
	int err;

	*out = skel;
	if (!skel)
		return -errno;
	err = configure(skel, &l->o, place);
	if (!err && place != PLACE_MAIN)
		err = share_maps(skel, l->main);
	if (!err)
		logs = stats_logs(skel);
	if (!err)
		err = dftrace_bpf__load(skel);
	if (logs)
		say_stats(skel, place_names[place], logs);
	if (!err && l->verbose)
		say_loaded(l, place, when, t0, fds, pre);
	return err;
}

/* Group g's own instance, loaded at its first use. */
static int load_own(struct loader *l, enum lazy_group g, const char *when)
{
	int err = load_inst(l, PLACE_LAZY0 + g, when, &l->own[g]);
	struct dftrace_bpf *skel = l->own[g];

	if (!err && g == LAZY_ANNOT)
		err = link_annot_full(skel);
	/* not attached with the others, as a preloaded group is */
	if (!err && g == LAZY_ANNOT && bpf_program__fd(skel->progs.ring_at_signal) >= 0 &&
	    !(l->at_signal = bpf_program__attach(skel->progs.ring_at_signal)))
		err = -errno;
	if (!err)
		l->inst[g] = skel;
	return err;
}

static struct dftrace_bpf *lazy_get(struct loader *l, enum lazy_group g, const char *when)
{
	if (l->inst[g])
		return l->inst[g];
	if (l->err[g] || l->stopped)
		return NULL;
	l->err[g] = load_own(l, g, when);
	if (!l->err[g])
		return l->inst[g];
	report_error("cannot load the %s programs: %s; their probes are left out (-v: the "
		     "verifier log)", place_names[PLACE_LAZY0 + g], strerror(-l->err[g]));
	return NULL;
}

struct dftrace_bpf *loader_lazy(struct loader *l, enum lazy_group g)
{
	return lazy_get(l, g, "");
}

/* The one place the object's bytes are linked in from. It relocates
 * against the kernel's types for CO-RE (capture/kernelbtf.h); the test
 * hook DFTRACE_BPF_TEST_FULL_BTF, against the kernel's whole BTF. */
struct dftrace_bpf *loader_open(void)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .btf_custom_path = KERNEL_BTF_CORE);
	struct dftrace_bpf *skel;

	if (getenv("DFTRACE_BPF_TEST_FULL_BTF"))
		opts.btf_custom_path = NULL;
	skel = dftrace_bpf__open_opts(&opts);
	if (skel)
		kernel_btf_core_names(bpf_object__btf(skel->obj));
	return skel;
}

bool loader_parallel(void)
{
	return pfor_cores() >= 2;
}

struct halves {
	struct loader *l;
	int err[LOADER_HALVES];
};

/* Half h; a failure does not stop the other half. */
static int load_half(void *ctx, uint32_t h)
{
	struct halves *hs = ctx;

	hs->err[h] = load_inst(hs->l, PLACE_HALF0 + h, "at start ", &hs->l->half[h]);
	return 0;
}

/* The preloaded groups whose programs are in place, which failed:
 * loaded apart from now, so that their failure leaves only their
 * probes out. False if none was. */
static bool unload_groups(struct loader *l, int place)
{
	unsigned int had = l->o.preload;

	for (int g = 0; g < LAZY__COUNT; g++)
		if (place == group_place(&l->o, g))
			l->o.preload &= ~(1u << g);
	return had != l->o.preload;
}

static int load_halves(struct loader *l)
{
	struct halves hs = { .l = l };

	(void)pfor(LOADER_HALVES, LOADER_HALVES, load_half, &hs, NULL);
	for (int h = 0; h < LOADER_HALVES; h++) {
		if (hs.err[h] && unload_groups(l, PLACE_HALF0 + h)) {
			dftrace_bpf__destroy(l->half[h]);
			hs.err[h] = load_inst(l, PLACE_HALF0 + h, "at start ", &l->half[h]);
		}
		if (hs.err[h])
			return hs.err[h];
	}
	return 0;
}

/* The instance of the main place or a half. */
static struct dftrace_bpf *inst_at(const struct loader *l, int place)
{
	return is_half(place) ? l->half[place - PLACE_HALF0] : l->main;
}

int loader_load(struct loader *l, const struct loader_opts *o, bool verbose)
{
	unsigned int wanted = o->preload;
	int err;

	*l = (struct loader){ .o = *o, .verbose = verbose };
	err = load_inst(l, PLACE_MAIN, "", &l->main);
	if (err && !o->split && unload_groups(l, PLACE_MAIN)) {
		dftrace_bpf__destroy(l->main);
		err = load_inst(l, PLACE_MAIN, "", &l->main);
	}
	if (!err && o->split)
		err = load_halves(l);
	for (int g = 0; !err && g < LAZY__COUNT; g++)
		if (l->o.preload & (1u << g))
			l->inst[g] = inst_at(l, group_place(&l->o, g));
	if (!err && l->inst[LAZY_ANNOT])
		err = link_annot_full(l->inst[LAZY_ANNOT]);
	if (err) {
		report_error("cannot load the BPF programs: %s (run with -v for the verifier log)",
			     strerror(-err));
		return err;
	}
	for (int g = 0; g < LAZY__COUNT; g++)
		if (wanted & ~l->o.preload & (1u << g))
			(void)lazy_get(l, g, "at start ");
	return 0;
}

static int attach_inst(struct dftrace_bpf *skel)
{
	int err = skel ? dftrace_bpf__attach(skel) : 0;

	if (err)
		report_error("cannot attach the BPF programs: %s", strerror(-err));
	return err;
}

/* The process hooks before the main instance's, the syscall hooks after,
 * as the object orders them */
int loader_attach(struct loader *l)
{
	int err = attach_inst(l->half[1]);

	if (!err)
		err = attach_inst(l->main);
	if (!err)
		err = attach_inst(l->half[0]);
	return err;
}

void loader_each(const struct loader *l, void (*fn)(struct dftrace_bpf *, void *), void *ctx)
{
	struct dftrace_bpf *all[1 + LOADER_HALVES + LAZY__COUNT] = { l->main };

	memcpy(all + 1, l->half, sizeof(l->half));
	memcpy(all + 1 + LOADER_HALVES, l->own, sizeof(l->own));
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (all[i])
			fn(all[i], ctx);
}

static void detach_inst(struct dftrace_bpf *skel, void *ctx)
{
	(void)ctx;
	dftrace_bpf__detach(skel);
}

void loader_detach(struct loader *l)
{
	l->stopped = true;
	bpf_link__destroy(l->at_signal);
	l->at_signal = NULL;
	loader_each(l, detach_inst, NULL);
}

static void destroy_inst(struct dftrace_bpf *skel, void *ctx)
{
	(void)ctx;
	dftrace_bpf__destroy(skel);
}

void loader_unload(struct loader *l)
{
	loader_detach(l);
	loader_each(l, destroy_inst, NULL);
	*l = (struct loader){ 0 };
}

struct bpf_link *loader_iter(struct bpf_program *prog)
{
	struct bpf_link *l = bpf_program__attach_iter(prog, NULL);

	if (!l)
		report_error("cannot attach the task iterator '%s': %s",
			     bpf_program__name(prog), strerror(errno));
	return l;
}
