// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The kernel's features, probed from its BTF before load, as libbpf-tools
 * do: a tracepoint is there if its btf_trace_<name> typedef is, and its
 * form is that typedef's prototype; a field is there if its struct has
 * it. A program is tied to its feature by the tracepoint in its section
 * name ("tp_btf/<tracepoint>"), or by its kind ("usdt"): nothing here
 * repeats the programs' names.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "capture/features.h"
#include "capture/report.h"
#include "capture/schooks.h"
#include "capture/uprobes.h"
#include "lib/clock.h"
#include "dftrace.skel.h" /* after dftrace.h: its types */
#include "model/syscalls.h"

/* Where a uprobe can be made: the perf PMU libbpf attaches USDT through. */
#define UPROBE_PMU "/sys/bus/event_source/devices/uprobe/type"
#define TP_BTF_PREFIX "tp_btf/"

/* The tracepoints of the core: no trace without them. */
static const char *const core_tracepoints[] = {
	"sys_enter", "sys_exit", "sched_process_fork", "sched_process_exec",
	"sched_process_exit", "task_rename",
};

/* Each optional feature's tracepoints: all of them load, or none. */
static const struct {
	enum feature feature;
	const char *tracepoint;
} feature_tracepoints[] = {
	{ FEATURE_mmap_read, "mm_filemap_fault" },
	{ FEATURE_mmap_read, "mm_filemap_map_pages" },
	{ FEATURE_fault_kinds, "page_fault_user" },
	{ FEATURE_page_misses, "mm_filemap_add_to_page_cache" },
	{ FEATURE_mmap_write, "writeback_dirty_folio" },
	{ FEATURE_io_uring, "io_uring_create" },
	{ FEATURE_io_uring, "io_uring_submit_req" },
	{ FEATURE_io_uring, "io_uring_submit_sqe" },
	{ FEATURE_io_uring, "io_uring_complete" },
	{ FEATURE_cgroup_scope, "cgroup_attach_task" },
	{ FEATURE_region_rings, "signal_deliver" },
};

static const char *const feature_names[] = {
#define FEATURE_NAME(name, what) #name,
	DFT_FEATURES(FEATURE_NAME)
#undef FEATURE_NAME
};

static const char *const feature_whats[] = {
#define FEATURE_WHAT(name, what) what,
	DFT_FEATURES(FEATURE_WHAT)
#undef FEATURE_WHAT
};

/* ---- BTF ---- */

static const struct btf_type *skip_mods(const struct btf *btf, __u32 *id)
{
	const struct btf_type *t = btf__type_by_id(btf, *id);

	while (t && (btf_is_mod(t) || btf_is_typedef(t))) {
		*id = t->type;
		t = btf__type_by_id(btf, *id);
	}
	return t;
}

/* The prototype of a tracepoint's BTF hook: its parameters (the first
 * is the tracepoint's own data pointer), or NULL without it. */
static const struct btf_param *tp_params(const struct btf *btf, const char *tp, int *n)
{
	char name[128];
	const struct btf_type *t;
	__u32 id;
	int tid;

	snprintf(name, sizeof(name), "btf_trace_%s", tp);
	tid = btf__find_by_name_kind(btf, name, BTF_KIND_TYPEDEF);
	if (tid < 0)
		return NULL;
	id = btf__type_by_id(btf, tid)->type;
	t = skip_mods(btf, &id);
	if (!t || !btf_is_ptr(t))
		return NULL;
	id = t->type;
	t = skip_mods(btf, &id);
	if (!t || !btf_is_func_proto(t))
		return NULL;
	*n = btf_vlen(t);
	return btf_params(t);
}

/* Whether type id is a pointer to struct name. */
static bool ptr_to(const struct btf *btf, __u32 id, const char *name)
{
	const struct btf_type *t = skip_mods(btf, &id);

	if (!t || !btf_is_ptr(t))
		return false;
	id = t->type;
	t = skip_mods(btf, &id);
	return t && btf_is_struct(t) && !strcmp(btf__name_by_offset(btf, t->name_off), name);
}

/* Whether struct or union t has the member, or one of its anonymous
 * members does (io_kiocb's cmd is in an unnamed union). */
static bool type_has_member(const struct btf *btf, const struct btf_type *t, const char *member)
{
	const struct btf_member *m;

	if (!t || !btf_is_composite(t))
		return false;
	m = btf_members(t);
	for (int i = 0; i < btf_vlen(t); i++) {
		const char *name = btf__name_by_offset(btf, m[i].name_off);
		__u32 id = m[i].type;

		if (!strcmp(name, member))
			return true;
		if (!name[0] && type_has_member(btf, skip_mods(btf, &id), member))
			return true;
	}
	return false;
}

static bool has_member(const struct btf *btf, const char *type, const char *member)
{
	int id = btf__find_by_name_kind(btf, type, BTF_KIND_STRUCT);

	return id >= 0 && type_has_member(btf, btf__type_by_id(btf, id), member);
}

static bool has_enum_value(const struct btf *btf, const char *type, const char *value)
{
	int id = btf__find_by_name_kind(btf, type, BTF_KIND_ENUM);
	const struct btf_type *t = id < 0 ? NULL : btf__type_by_id(btf, id);
	const struct btf_enum *v = t ? btf_enum(t) : NULL;

	for (int i = 0; t && i < btf_vlen(t); i++)
		if (!strcmp(btf__name_by_offset(btf, v[i].name_off), value))
			return true;
	return false;
}

static bool has_tp(const struct btf *btf, const char *tp)
{
	int n;

	return tp_params(btf, tp, &n) != NULL;
}

/* ---- probes ---- */

static void __attribute__((format(printf, 3, 4)))
off(struct features *f, enum feature ft, const char *fmt, ...)
{
	va_list ap;

	f->on[ft] = false;
	va_start(ap, fmt);
	vsnprintf(f->why_off[ft], sizeof(f->why_off[ft]), fmt, ap);
	va_end(ap);
}

/* Each tracepoint of the feature's that this kernel lacks turns it off;
 * io_uring's submission hook goes by either of its names. */
static void probe_tracepoints(struct features *f, const struct btf *btf)
{
	for (size_t i = 0; i < sizeof(feature_tracepoints) / sizeof(feature_tracepoints[0]); i++) {
		const char *tp = feature_tracepoints[i].tracepoint;

		if (!strncmp(tp, "io_uring_submit_", 16))
			continue;
		if (f->on[feature_tracepoints[i].feature] && !has_tp(btf, tp))
			off(f, feature_tracepoints[i].feature,
			    "this kernel has no tracepoint '%s'", tp);
	}
}

/* The forms the programs know (asyncio.bpf.c). */
static void probe_io_uring(struct features *f, const struct btf *btf)
{
	const struct btf_param *p;
	int n;

	if (!f->on[FEATURE_io_uring])
		return;
	f->uring_submit_sqe = !has_tp(btf, "io_uring_submit_req");
	p = tp_params(btf, "io_uring_submit_sqe", &n);
	if (f->uring_submit_sqe && (!p || n < 2 || !ptr_to(btf, p[1].type, "io_kiocb"))) {
		off(f, FEATURE_io_uring, "this kernel's tracepoint '%s' has another form",
		    "io_uring_submit_sqe");
		return;
	}
	if (!has_member(btf, "io_kiocb", "cmd")) {
		off(f, FEATURE_io_uring, "this kernel's io_uring requests have another form");
		return;
	}
	p = tp_params(btf, "io_uring_complete", &n);
	if (n == 4 && ptr_to(btf, p[3].type, "io_uring_cqe"))
		f->shape.uring_complete = DFT_URING_COMPLETE_CQE;
	else if (n >= 5)
		f->shape.uring_complete = DFT_URING_COMPLETE_RES;
	else
		off(f, FEATURE_io_uring, "this kernel's tracepoint '%s' has another form",
		    "io_uring_complete");
}

/* Readers of a folio's fields know the folio forms of 5.16 on. */
static void probe_mmap(struct features *f, const struct btf *btf)
{
	static const enum feature folio_users[] = { FEATURE_page_misses, FEATURE_mmap_write };
	static const char *const folio_tps[] = { "mm_filemap_add_to_page_cache",
						 "writeback_dirty_folio" };
	const struct btf_param *p;
	int n;

	for (int i = 0; i < 2; i++) {
		p = tp_params(btf, folio_tps[i], &n);
		if (f->on[folio_users[i]] && (n < 2 || !ptr_to(btf, p[1].type, "folio")))
			off(f, folio_users[i], "this kernel's tracepoint '%s' has another form",
			    folio_tps[i]);
	}
	if (f->on[FEATURE_fault_kinds] && !f->on[FEATURE_mmap_read])
		off(f, FEATURE_fault_kinds, "it serves mmap reads, which are off");
	if (f->on[FEATURE_page_misses] && !f->on[FEATURE_mmap_read] && !f->on[FEATURE_mmap_write])
		off(f, FEATURE_page_misses, "it serves mmap reads and writes, which are off");
}

/* A map type the kernel does not know; without the privilege to ask
 * (--version as a user), taken as known. */
static bool lacks_map(enum bpf_map_type type)
{
	return geteuid() == 0 && libbpf_probe_bpf_map_type(type, NULL) == 0;
}

/* Whether this kernel takes a program that calls a function of its own
 * and tail-calls: x86-64's JIT from 5.10, other JITs later, and no
 * interpreter. Asked even without root (CAP_BPF will do); without the
 * privilege to ask, no: the annotation program serves every probe. */
static bool mixes_tail_calls(void)
{
	struct bpf_insn insns[] = {
		{ BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_6, BPF_REG_1, 0, 0 },
		/* call the function at 9 */
		{ BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_CALL, 0, 7 },
		{ BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_1, BPF_REG_6, 0, 0 },
		/* the map's fd, below */
		{ BPF_LD | BPF_DW | BPF_IMM, BPF_REG_2, BPF_PSEUDO_MAP_FD, 0, 0 },
		{ 0, 0, 0, 0, 0 },
		{ BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_3, 0, 0, 0 },
		{ BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_tail_call },
		{ BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0 },
		{ BPF_JMP | BPF_EXIT, 0, 0, 0, 0 },
		{ BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0 },
		{ BPF_JMP | BPF_EXIT, 0, 0, 0, 0 },
	};
	int map, prog;

	map = bpf_map_create(BPF_MAP_TYPE_PROG_ARRAY, NULL, 4, 4, 1, NULL);
	if (map < 0)
		return false;
	insns[3].imm = map;
	prog = bpf_prog_load(BPF_PROG_TYPE_KPROBE, NULL, "GPL", insns,
			     sizeof(insns) / sizeof(insns[0]), NULL);
	close(map);
	if (prog < 0)
		return false;
	close(prog);
	return true;
}

/*
 * Whether this kernel links a program to many uprobes of a file at once
 * (BPF_TRACE_UPROBE_MULTI, Linux 6.6). Earlier kernels refuse the attach
 * type (EINVAL); this one, given a directory, says it is no regular file
 * (EBADF) once it knows the type.
 */
static bool links_uprobe_multi(void)
{
	struct bpf_insn insns[] = {
		{ BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0 },
		{ BPF_JMP | BPF_EXIT, 0, 0, 0, 0 },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, o, .expected_attach_type = UPROBES_MULTI_ATTACH);
	unsigned long offset = 0;
	int prog, link;

	prog = bpf_prog_load(BPF_PROG_TYPE_KPROBE, NULL, "GPL", insns,
			     sizeof(insns) / sizeof(insns[0]), &o);
	if (prog < 0)
		return false;
	link = uprobes_multi_link(prog, "/", false, &offset, NULL, NULL, 1);
	if (link >= 0)
		close(link);
	close(prog);
	return link < 0 && errno == EBADF;
}

/* A stub for function fn that tail-calls a program loaded for function
 * other, attached and let go: 0, or -errno. */
static int hooks_syscall(uint32_t fn, uint32_t other)
{
	struct bpf_insn ret0[] = {
		{ BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0 },
		{ BPF_JMP | BPF_EXIT, 0, 0, 0, 0 },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, o, .expected_attach_type = BPF_TRACE_FENTRY,
		    .attach_btf_id = other);
	int progs, stub = -1, target = -1, link = -1, zero = 0, err = 0;

	progs = bpf_map_create(BPF_MAP_TYPE_PROG_ARRAY, NULL, 4, 4, 1, NULL);
	if (progs < 0)
		return -errno;
	stub = sc_hook_stub(progs, fn, BPF_TRACE_FENTRY, "dft_probe");
	if (stub < 0)
		err = stub;
	if (!err)
		target = bpf_prog_load(BPF_PROG_TYPE_TRACING, "dft_probe", "Dual BSD/GPL", ret0,
				       sizeof(ret0) / sizeof(ret0[0]), &o);
	if (!err && (target < 0 || bpf_map_update_elem(progs, &zero, &target, BPF_ANY)))
		err = -errno;
	if (!err && (link = bpf_link_create(stub, 0, BPF_TRACE_FENTRY, NULL)) < 0)
		err = -errno;
	for (int *fd = (int[]){ link, target, stub, progs }, i = 0; i < 4; i++)
		if (fd[i] >= 0)
			close(fd[i]);
	return err;
}

/* A call whose function may lack BTF (capture/schooks.h): its event is
 * not I/O, and the fd tables learn of its child at sched_process_fork. */
static bool may_go_unhooked(unsigned int nr)
{
	const struct sc_desc *d = sc_lookup(nr);

	return d && d->cat == CAT_PROC && d->effect == FX_NONE;
}

/* The group of proto, a FUNC_PROTO's id, in f: a new one if there is
 * room; -1 if not. */
static int proto_group(struct features *f, uint32_t *protos, uint32_t proto, const char *fn)
{
	for (unsigned int g = 0; g < f->sc_groups; g++)
		if (protos[g] == proto)
			return g;
	if (f->sc_groups == SC_HOOK_GROUPS)
		return -1;
	protos[f->sc_groups] = proto;
	snprintf(f->sc_target[f->sc_groups], sizeof(f->sc_target[0]), "%s", fn);
	return f->sc_groups++;
}

/* Each recorded syscall's function in BTF, grouped by prototype, and
 * the hooks taken: a stub tried on the last call's function, which few
 * programs make, tail-calling a program loaded for another of its
 * prototype. */
static void probe_fentry_syscalls(struct features *f, const struct btf *btf)
{
	struct dft_sc_cfg cfg[DFT_NR_MAX];
	uint32_t protos[SC_HOOK_GROUPS], first[SC_HOOK_GROUPS], last = 0;
	char fn[64];
	int id, g, last_group = 0, err;

	sc_fill_config(cfg);
	for (unsigned int nr = 0; nr < DFT_NR_MAX; nr++) {
		if (!cfg[nr].interest || !sc_hook_function(nr, fn, sizeof(fn)))
			continue;
		id = btf__find_by_name_kind(btf, fn, BTF_KIND_FUNC);
		if (id <= 0 && may_go_unhooked(nr)) {
			size_t len = strlen(f->sc_unhooked);

			snprintf(f->sc_unhooked + len, sizeof(f->sc_unhooked) - len, "%s%s",
				 len ? ", " : "", sc_lookup(nr)->syscall);
			continue;
		}
		if (id <= 0) {
			off(f, FEATURE_fentry_syscalls, "this kernel has no function '%s' in its BTF", fn);
			return;
		}
		g = proto_group(f, protos, btf__type_by_id(btf, id)->type, fn);
		if (g < 0) {
			off(f, FEATURE_fentry_syscalls, "'%s' has a third prototype", fn);
			return;
		}
		if (!strcmp(f->sc_target[g], fn))
			first[g] = id;
		f->sc_fn[nr] = id;
		f->sc_group[nr] = g;
		f->sc_entry_only[nr] = cfg[nr].interest == DFT_INTEREST_RING;
		last = id;
		last_group = g;
	}
	if (!last)
		return;
	if ((err = hooks_syscall(last, first[last_group])))
		off(f, FEATURE_fentry_syscalls, "this kernel refuses a syscall's fentry: %s",
		    strerror(-err));
}

static const char *probe_core(const struct btf *btf)
{
	static char why[160];

	if (lacks_map(BPF_MAP_TYPE_RINGBUF))
		return "BPF ring buffer (Linux 5.8)";
	if (lacks_map(BPF_MAP_TYPE_TASK_STORAGE))
		return "BPF task storage (Linux 5.11)";
	/* a callback's address in a program, which the verifier of 5.11
	 * and 5.12 refuses even where it is never taken (bpf_find_vma's) */
	if (!has_enum_value(btf, "bpf_func_id", "BPF_FUNC_for_each_map_elem"))
		return "BPF callbacks (Linux 5.13)";
	for (size_t i = 0; i < sizeof(core_tracepoints) / sizeof(core_tracepoints[0]); i++) {
		if (!has_tp(btf, core_tracepoints[i])) {
			snprintf(why, sizeof(why), "tracepoint '%s'", core_tracepoints[i]);
			return why;
		}
	}
	return NULL;
}

/* The types bpf_rdonly_cast casts to (bpf/kread.bpf.c), by the
 * kernel's own numbering. io_kiocb's stays 0 where the kernel has none:
 * then io_uring's programs are off. */
static void set_cast_ids(struct features *f, const struct btf *btf)
{
	int task, file, req;

	if (!f->on[FEATURE_fast_reads])
		return;
	task = btf__find_by_name_kind(btf, "task_struct", BTF_KIND_STRUCT);
	file = btf__find_by_name_kind(btf, "file", BTF_KIND_STRUCT);
	req = btf__find_by_name_kind(btf, "io_kiocb", BTF_KIND_STRUCT);
	if (task <= 0 || file <= 0) {
		off(f, FEATURE_fast_reads, "this kernel's BTF has no 'struct %s'",
		    task <= 0 ? "task_struct" : "file");
		return;
	}
	f->shape.task_btf_id = task;
	f->shape.file_btf_id = file;
	f->shape.io_kiocb_btf_id = req > 0 ? req : 0;
}

int features_probe(struct features *f, const char *no_hooks)
{
	struct utsname u;
	struct btf *btf;
	int n;

	memset(f, 0, sizeof(*f));
	for (int i = 0; i < FEATURE__COUNT; i++)
		f->on[i] = true;
	if (!uname(&u))
		snprintf(f->release, sizeof(f->release), "%s", u.release);
	btf = btf__load_vmlinux_btf();
	if (!btf)
		return -errno;
	f->core_missing = probe_core(btf);
	if (btf__find_by_name_kind(btf, "bpf_rdonly_cast", BTF_KIND_FUNC) < 0)
		off(f, FEATURE_fast_reads, "this kernel has no kfunc '%s'", "bpf_rdonly_cast");
	/* bpf_task_pt_regs came before it (5.15) */
	if (!has_enum_value(btf, "bpf_func_id", "BPF_FUNC_find_vma"))
		off(f, FEATURE_overlay_names, "this kernel has no helper '%s'", "bpf_find_vma");
	if (access(UPROBE_PMU, R_OK)) {
		off(f, FEATURE_annotations, "this kernel has no uprobes ('%s')", UPROBE_PMU);
		off(f, FEATURE_gpu, "this kernel has no uprobes ('%s')", UPROBE_PMU);
	} else if (!has_enum_value(btf, "bpf_func_id", "BPF_FUNC_get_attach_cookie")) {
		/* one program for every call: the cookie says which; and an
		 * annotation's argument spec (capture/usdtspec.h) (5.15) */
		off(f, FEATURE_annotations, "this kernel has no helper '%s'",
		    "bpf_get_attach_cookie");
		off(f, FEATURE_gpu, "this kernel has no helper '%s'", "bpf_get_attach_cookie");
	}
	if (!f->on[FEATURE_annotations])
		off(f, FEATURE_region_rings, "it serves annotations, which are off");
	f->pinned_regions = f->on[FEATURE_annotations] && mixes_tail_calls();
	f->uprobe_multi = (f->on[FEATURE_annotations] || f->on[FEATURE_gpu]) &&
			  links_uprobe_multi();
	probe_tracepoints(f, btf);
	probe_io_uring(f, btf);
	probe_mmap(f, btf);
	if (no_hooks)
		off(f, FEATURE_fentry_syscalls, "%s", no_hooks);
	else
		probe_fentry_syscalls(f, btf);
	set_cast_ids(f, btf);
	f->shape.fast_reads = f->on[FEATURE_fast_reads];
	f->shape.find_vma = f->on[FEATURE_overlay_names];
	tp_params(btf, "sched_process_exit", &n);
	f->shape.exit_group_dead = n >= 3;
	f->shape.cgroup_ancestors = has_member(btf, "cgroup", "ancestors");
	btf__free(btf);
	return 0;
}

void features_turn_off(struct features *f, enum feature ft, const char *why)
{
	if (f->on[ft])
		off(f, ft, "%s", why);
}

/* ---- the programs ---- */

/* The feature a program serves; FEATURE__COUNT: the core. */
static enum feature feature_of(const struct bpf_program *prog)
{
	const char *sec = bpf_program__section_name(prog), *tp;

	if (!strcmp(sec, "usdt"))
		return FEATURE_annotations;
	if (!strcmp(sec, "uprobe") || !strcmp(sec, "uretprobe"))
		return FEATURE_gpu;
	if (strncmp(sec, TP_BTF_PREFIX, strlen(TP_BTF_PREFIX)))
		return FEATURE__COUNT;
	tp = sec + strlen(TP_BTF_PREFIX);
	for (size_t i = 0; i < sizeof(feature_tracepoints) / sizeof(feature_tracepoints[0]); i++)
		if (!strcmp(feature_tracepoints[i].tracepoint, tp))
			return feature_tracepoints[i].feature;
	return FEATURE__COUNT;
}

void features_configure(const struct features *f, struct dftrace_bpf *skel, bool cgroup)
{
	struct bpf_program *prog;

	skel->rodata->kshape = f->shape;
	skel->rodata->rings_on = f->on[FEATURE_region_rings];
	/* a ring's records older than now are another tracer's, which a
	 * thread kept writing as this one attached */
	skel->rodata->rings_since = clock_mono_ns();
	bpf_object__for_each_program(prog, skel->obj) {
		enum feature ft = feature_of(prog);
		bool load = ft == FEATURE__COUNT || f->on[ft];

		/* one of io_uring's two submission hooks, as this kernel names it */
		if (ft == FEATURE_io_uring) {
			const char *tp = bpf_program__section_name(prog) + strlen(TP_BTF_PREFIX);

			if (!strncmp(tp, "io_uring_submit_", 16))
				load = load && !strcmp(tp, f->uring_submit_sqe ?
							   "io_uring_submit_sqe" :
							   "io_uring_submit_req");
		}
		if (ft == FEATURE_cgroup_scope)
			load = load && cgroup;
		if (prog == skel->progs.pinned_begin || prog == skel->progs.pinned_end)
			load = load && f->pinned_regions;
		if (prog == skel->progs.ring_regions)
			load = load && f->on[FEATURE_region_rings];
		/* the syscall tracepoints, or the hooks' two programs */
		if (prog == skel->progs.sys_enter || prog == skel->progs.sys_exit)
			load = load && !f->on[FEATURE_fentry_syscalls];
		for (unsigned int g = 0; g < SC_HOOK_GROUPS; g++) {
			if (prog != sc_hook_program(skel, g, true) && prog != sc_hook_program(skel, g, false))
				continue;
			load = load && f->on[FEATURE_fentry_syscalls] && g < f->sc_groups;
			bpf_program__set_autoattach(prog, false); /* through the stubs */
			if (load)
				bpf_program__set_attach_target(prog, 0, f->sc_target[g]);
		}
		bpf_program__set_autoload(prog, load);
		/* their uprobes are one link a file (capture/uprobes.h) */
		if (f->uprobe_multi && (ft == FEATURE_annotations || ft == FEATURE_gpu))
			bpf_program__set_expected_attach_type(prog, UPROBES_MULTI_ATTACH);
		/* task iterators are read by user space when it needs them,
		 * also after the hooks are detached (loader_iter()) */
		if (!strncmp(bpf_program__section_name(prog), "iter/", 5))
			bpf_program__set_autoattach(prog, false);
		/* the command's signals are counted while we wait for it,
		 * after the hooks are gone (tracer.c attaches it) */
		if (!strcmp(bpf_program__name(prog), "signal_generate"))
			bpf_program__set_autoattach(prog, false);
	}
}

/* ---- what is said ---- */

void features_list(const struct features *f, char *buf, size_t size)
{
	size_t n = 0;

	buf[0] = 0;
	for (int i = 0; i < FEATURE__COUNT && n < size; i++)
		n += snprintf(buf + n, size - n, "%s%s%s", i ? "," : "", f->on[i] ? "" : "-",
			      feature_names[i]);
}

void features_warn(const struct features *f, bool verbose)
{
	for (int i = 0; i < FEATURE__COUNT; i++) {
		/* no loss without it: the syscall tracepoints trace as much */
		if (!f->on[i] && (i != FEATURE_fentry_syscalls || verbose))
			report_error("%s off: %s", feature_whats[i], f->why_off[i]);
	}
	if (f->on[FEATURE_fentry_syscalls] && f->sc_unhooked[0] && verbose)
		report_error("not hooked, their functions lacking BTF (no I/O): %s", f->sc_unhooked);
}

void features_print(const struct features *f, FILE *out)
{
	fprintf(out, "kernel %s: %s\n", f->release,
		f->core_missing ? "cannot trace" : "traces");
	if (f->core_missing)
		fprintf(out, "  core          off: this kernel has no %s\n", f->core_missing);
	for (int i = 0; i < FEATURE__COUNT; i++)
		fprintf(out, "  %-13s %s%s%s\n", feature_names[i], f->on[i] ? "on" : "off",
			f->on[i] ? "" : ": ", f->on[i] ? "" : f->why_off[i]);
}
