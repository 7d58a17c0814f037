// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The tracer's front end: options, then open -> configure -> load ->
 * attach the kernel programs, the outputs and the trace; the run
 * (run.c); then the end: the ring drained, every file ended, the
 * summary said, the probes released.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "capture/attach.h"
#include "capture/kernelbtf.h"
#include "capture/loader.h"
#include "capture/run.h"
#include "capture/schooks.h"
#include "capture/torchenv.h"
#include "capture/tracer.h"
#include "capture/usdt.h"
#include "correlate/trace.h"
#include "dftrace.h"
#include "dftrace.skel.h" /* after dftrace.h: its types */
#include "lib/clock.h"
#include "lib/fdlimit.h"
#include "lib/invoker.h"

/* Our name says whether we still attach probes: the dftrace Python
 * package waits at import only while it reads TRACER_COMM. */
#define TRACER_COMM "dftrace-bpf"
#define TRACER_COMM_DONE "dftrace-bpf-end"

/* libbpf's print callback has no context argument. */
static bool libbpf_verbose;

static int print_libbpf(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	if (level == LIBBPF_DEBUG && !libbpf_verbose)
		return 0;
	/* This kernel charges BPF memory to memcg: RLIMIT_MEMLOCK hints
	 * from libbpf would send users after the wrong limit. */
	if (!libbpf_verbose && strstr(fmt, "ulimit"))
		return 0;
	return vfprintf(stderr, fmt, ap);
}

/* -p: each target a live user-space process, named by its process id. */
static int check_targets(struct env *env)
{
	char err[256];
	pid_t tgid;
	int ret;

	for (int i = 0; i < env->npids; i++) {
		ret = attach_check_target(env->pids[i], &tgid, err, sizeof(err));
		if (ret) {
			report_error("%s", err);
			return ret;
		}
		env->pids[i] = tgid;
	}
	return 0;
}

/* The command line, space-separated, or the -p list. */
static char *describe_target(const struct env *env)
{
	size_t n = 1 + 32 * ENV_MAX_PIDS;
	char *s, *p;

	for (char **a = env->command; a && *a; a++)
		n += strlen(*a) + 1;
	p = s = calloc(1, n);
	for (char **a = env->command; s && a && *a; a++)
		p += sprintf(p, "%s%s", a == env->command ? "" : " ", *a);
	for (int i = 0; s && !env->command && i < env->npids; i++)
		p += sprintf(p, "%s-p %d", i ? " " : "", env->pids[i]);
	return s;
}

static int gzip_level_for(const struct env *env, const char *path)
{
	size_t n = strlen(path);

	return n > 3 && !strcmp(path + n - 3, ".gz") ? env->gzip_level : -1;
}

/* -D holds a descriptor per file: ours is raised to the hard limit, and
 * the command gets the one we found back. */
static void raise_fd_limit(struct tracer *tr)
{
	fd_limit_raise(&tr->nofile_at_start);
}

/* The descriptors probes may hold: a quarter of the tracer's (-D holds
 * one a traced process). */
static uint32_t probes_fd_budget(void)
{
	struct rlimit nofile;

	if (getrlimit(RLIMIT_NOFILE, &nofile) || nofile.rlim_cur == RLIM_INFINITY ||
	    nofile.rlim_cur / 4 > UINT32_MAX)
		return UINT32_MAX / 4;
	return nofile.rlim_cur / 4;
}

/* A tracer that stays on (--flight, the host-wide scopes): its start-up
 * counts, and a process that starts as it loads is rare among those it
 * watches for days. */
static bool stays_on(const struct env *env)
{
	return env->flight_on || env->scope.on;
}

/* The first processes of a job are its wrappers' children (a shell,
 * torchrun, mpirun): a program loaded at first use would miss their
 * first 60-80 ms, so a tracer that does not stay on loads them at start
 * (the lazy groups, as a mask of 1 << g). */
static unsigned int preload(const struct tracer *tr)
{
	unsigned int groups = 0;

	if (stays_on(&tr->env))
		return 0;
	if (tr->features.on[FEATURE_gpu])
		groups |= 1u << LAZY_GPU;
	if (tr->features.on[FEATURE_annotations])
		groups |= 1u << LAZY_ANNOT;
	return groups;
}

static int load_and_attach(struct tracer *tr)
{
	struct loader_opts o = { .ringbuf_size = tr->env.ringbuf_size,
				 .lost_by_proc = tr->env.output_dir != NULL,
				 .hide_privileged = tr->who.other,
				 .steps = tr->env.steps_on ? &tr->env.steps : NULL,
				 .scope = tr->env.scope.on ? &tr->env.scope.k : NULL,
				 .profile = tr->env.profile_s > 0,
				 .flight = tr->env.flight_on,
				 .split = loader_parallel(),
				 .preload = preload(tr),
				 .features = &tr->features,
				 .premade = &tr->premade };
	/* every program verified before the first hook goes live */
	int err = loader_load(&tr->loader, &o, tr->env.verbose);

	tr->skel = tr->loader.main;
	if (!err)
		err = loader_attach(&tr->loader);
	if (!err)
		err = sc_hooks_attach(&tr->hooks, tr->skel, &tr->features, tr->env.verbose);
	if (err)
		return err;
	tr->adopt_iter = loader_iter(tr->skel->progs.adopt_threads);
	tr->kept_iter = loader_iter(tr->skel->progs.kept_calls);
	if (!tr->adopt_iter || !tr->kept_iter)
		return -errno;
	report_loaded(&tr->report);
	/* without --profile only overload folds: drained once a second */
	folds_init(&tr->folds, tr->skel, bpf_link__fd(tr->kept_iter), tr->env.profile_s > 0 ?
		   (uint64_t)(tr->env.profile_s * NS_PER_S) : NS_PER_S);
	tr->folds.recording = &tr->recording;
	probed_init(&tr->probed, &(struct probed_opts){
				 .skel = tr->skel, .loader = &tr->loader, .annotations = tr->features.on[FEATURE_annotations],
				 .gpu = tr->features.on[FEATURE_gpu], .verbose = tr->env.verbose,
				 .multi = tr->features.uprobe_multi,
				 .fd_budget = probes_fd_budget() });
	lost_init(&tr->lost, bpf_map__fd(tr->skel->maps.lost),
		  o.lost_by_proc ? bpf_map__fd(tr->skel->maps.lost_by_proc) : -1);
	tr->rings = (struct liverings){ bpf_map__fd(tr->skel->maps.tasks),
					tr->skel->rodata->rings_since, &tr->lost };
	if (tr->skel->rodata->rings_on)
		tr->folds.rings = &tr->rings;
	return 0;
}

static void set_tracer_comm(const char *name)
{
	prctl(PR_SET_NAME, name, 0, 0, 0);
}

/*
 * The command learns the tracer's pid (DFTRACE_BPF_TRACER), so that the
 * dftrace Python package can wait at import until its probes are attached,
 * and only while this tracer lives. With -o -, its stdout goes to stderr:
 * the trace owns stdout.
 */
static int prepare_command(struct tracer *tr, char *err, size_t errlen)
{
	char pid[16];

	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	setenv("DFTRACE_BPF_TRACER", pid, 1);
	tr->launch.as = &tr->who;
	tr->launch.nofile = &tr->nofile_at_start;
	tr->launch.stdout_to_stderr = tr->env.output && !strcmp(tr->env.output, "-");
	launch_program(tr->env.command[0], tr->program, sizeof(tr->program));
	return launch_prepare(tr->env.command, &tr->launch, err, errlen);
}

/* ---- start and end ---- */

static int open_outputs(struct tracer *tr)
{
	const struct env *env = &tr->env;
	struct output_opts o = { .path = env->output, .as = &tr->who,
				 .gzip_level = env->output ?
						       gzip_level_for(env, env->output) : -1 };
	char err[512];
	int ret;

	if (env->output_dir)
		ret = outdir_open(&tr->outdir, env->output_dir, &tr->who,
				  env->plain ? -1 : env->gzip_level, err, sizeof(err));
	else
		ret = sink_open(&o, &tr->sink, err, sizeof(err));
	if (ret)
		report_error("%s", err);
	return ret;
}

static void found_process(void *ctx, uint32_t pid, uint64_t alive_ns)
{
	probed_offer_maps(ctx, pid, alive_ns);
}

static bool proven(void *ctx, uint32_t pid, uint64_t alive_ns)
{
	const struct tracer *tr = ctx;

	return attach_proven(bpf_map__fd(tr->skel->maps.tasks), pid, alive_ns);
}

static void offer_program(void *ctx, uint32_t pid, const char *path, uint64_t addr,
			  uint64_t len)
{
	probed_offer(ctx, pid, path, addr, len);
}

static void unmapped(void *ctx, uint32_t pid, uint32_t tid, uint64_t addr, uint64_t len,
		     uint64_t alive_ns)
{
	probed_unmapped(ctx, pid, tid, addr, len, alive_ns);
}

static void forked(void *ctx, uint32_t parent, uint32_t child)
{
	probed_forked(ctx, parent, child);
}

/* --flight's dumps: DIR/flight-N-REASON.pfw.gz with -D, else beside
 * -o's file, named after it: t.pfw.gz -> t-flight-N-REASON.pfw.gz. */
static int start_flight(struct tracer *tr)
{
	struct flight_opts o = tr->env.flight;
	const char *out = tr->env.output;
	size_t n;

	if (tr->outdir) {
		n = strlen(tr->env.output_dir);
		while (n > 1 && tr->env.output_dir[n - 1] == '/')
			n--;
		snprintf(tr->flight_prefix, sizeof(tr->flight_prefix), "%.*s/", (int)n,
			 tr->env.output_dir);
		o.dir_fd = &tr->outdir->dir_fd;
	} else {
		n = strlen(out);
		if (n > 7 && !strcmp(out + n - 7, ".pfw.gz"))
			n -= 7;
		else if (n > 4 && !strcmp(out + n - 4, ".pfw"))
			n -= 4;
		snprintf(tr->flight_prefix, sizeof(tr->flight_prefix), "%.*s-", (int)n, out);
	}
	o.prefix = tr->flight_prefix;
	o.gzip_level = tr->env.gzip_level;
	o.as = &tr->who;
	return trace_flight_start(tr->trace, &o);
}

/* --format v2's end record says the options in effect (args.cfg), as
 * DFTracer's says its settings: what shapes the trace, and where it went. */
static const char *v2_cfg(struct tracer *tr)
{
	const struct env *e = &tr->env;
	struct jbuf *b = &tr->v2_cfg;
	const char *log = e->output_dir ? e->output_dir : e->output ? e->output : "-";

	if (e->format != TRACE_V2 || jb_init(b, 256))
		return NULL;
	JB_LIT(b, "\"format\":\"v2\",\"profile_ms\":");
	jb_i64(b, (int64_t)(e->profile_s * 1000));
	JB_LIT(b, ",\"flight\":");
	jb_i64(b, e->flight_on);
	JB_LIT(b, ",\"steps\":");
	jb_i64(b, e->steps_on);
	JB_LIT(b, ",\"inline_paths\":");
	jb_i64(b, e->inline_paths);
	JB_LIT(b, ",\"gpu\":");
	jb_i64(b, !e->no_gpu);
	JB_LIT(b, ",\"compression\":");
	jb_i64(b, e->output_dir ? !e->plain : e->output && strlen(e->output) > 3 &&
		  !strcmp(e->output + strlen(e->output) - 3, ".gz"));
	JB_LIT(b, ",\"log_file\":");
	jb_str(b, log, strlen(log));
	jb_char(b, 0);
	return b->err ? NULL : b->p;
}

/* A dump is due: what the threads keep in the kernel (a batch of calls,
 * a ring of regions) is read after every record the kernel has sent,
 * which are older (an open the kept calls name, a region they end), and
 * which the ring may hold more of than one drain takes. */
static void peek_kept(void *ctx, struct trace *t)
{
	struct tracer *tr = ctx;
	uint64_t end = ring_mark(&tr->ring);

	while (!ring_reached(&tr->ring, end) && run_drain_batch(tr, 0) > 0)
		;
	folds_peek_kept(&tr->folds, t);
}

static int start_trace(struct tracer *tr)
{
	struct trace_config cfg = {
		.inline_paths = tr->env.inline_paths, .cmdline = tr->target,
		.format = tr->env.format, .v2_cfg = v2_cfg(tr),
		.single = tr->sink, .outdir = tr->outdir,
		.lost = lost_reader(&tr->lost),
		.root_pid = tr->env.command ? tr->launch.pid : tr->env.pids[0],
		.root_launched = tr->env.command != NULL,
		.root_exe = tr->program[0] ? tr->program : NULL,
		.on_program = offer_program, .on_found = found_process,
		.on_unmapped = unmapped, .on_forked = forked,
		.on_program_ctx = &tr->probed,
		.site_found = usdt_site_found, .site_gone = usdt_site_gone,
		.site_ctx = tr->skel,
		.lost_name = folds_lost_name, .lost_name_ctx = &tr->folds,
		.process_ended = folds_process_ended,
		.peek_kept = peek_kept, .peek_ctx = tr,
		.steps = tr->env.steps_on ? &tr->env.steps : NULL,
		.profile = tr->env.profile_s > 0,
		.features = tr->features_list,
		.proven = proven, .proven_ctx = tr,
	};
	int err;

	err = trace_new(&tr->trace, &cfg);
	if (!err && tr->env.flight_on)
		err = start_flight(tr);
	if (err) {
		report_error("cannot start the trace: %s", strerror(-err));
		return err;
	}
	err = ring_open(&tr->ring, bpf_map__fd(tr->skel->maps.events));
	if (err)
		report_error("cannot open the ring buffer: %s", strerror(-err));
	return err;
}

/* --pid-file: made as the invoker before anything else, so that a bad
 * path stops us before a trace is begun; put in place, whole, once
 * tracing has begun (a script waits for it to appear). */
static int open_pid_file(struct tracer *tr)
{
	struct output_opts o = { .path = tr->env.pid_file, .gzip_level = -1, .as = &tr->who };
	char err[512], pid[24];
	int ret, len = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());

	ret = output_open(&o, &tr->pid_file, err, sizeof(err));
	if (ret) {
		report_error("%s", err);
		return ret;
	}
	ret = output_write(tr->pid_file, pid, (size_t)len);
	if (ret)
		report_error("cannot write '%s': %s", tr->env.pid_file, strerror(-ret));
	return ret;
}

static int place_pid_file(struct tracer *tr)
{
	char err[512] = "";
	int ret = output_commit(tr->pid_file, err, sizeof(err));

	if (!ret)
		ret = output_close(tr->pid_file, err, sizeof(err));
	else
		output_abort(tr->pid_file);
	tr->pid_file = NULL;
	if (ret)
		report_error("%s", err);
	return ret;
}

/* The file a path names, for comparing: a link itself, not its target
 * (we replace a link, never follow it); where there is none yet, its
 * directory's real path and its name. */
static bool file_key(const char *path, struct stat *st, char *name, size_t len)
{
	char dir[PATH_MAX], real[PATH_MAX];
	const char *slash = strrchr(path, '/');

	name[0] = 0;
	if (!lstat(path, st))
		return true;
	snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - path) + 1 : 1,
		 slash ? path : ".");
	if (realpath(dir, real))
		snprintf(name, len, "%s/%s", real, slash ? slash + 1 : path);
	return false;
}

static bool same_file(const char *a, const char *b)
{
	char na[2 * PATH_MAX], nb[2 * PATH_MAX];
	struct stat sa, sb;
	bool ea = file_key(a, &sa, na, sizeof(na)), eb = file_key(b, &sb, nb, sizeof(nb));

	if (ea && eb)
		return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
	return !ea && !eb && na[0] && !strcmp(na, nb);
}

/* Two of our outputs naming one file: the later would replace the
 * earlier (--pid-file x -o x left a pid where the trace was). */
static int check_outputs_differ(const struct env *env)
{
	const char *name[] = { "-o", "--pid-file", "DFTRACE_BPF_RECORD" };
	const char *path[] = { env->output && strcmp(env->output, "-") ? env->output : NULL,
			       env->pid_file, getenv("DFTRACE_BPF_RECORD") };

	for (int i = 0; i < 3; i++)
		for (int j = i + 1; j < 3; j++)
			if (path[i] && path[j] && same_file(path[i], path[j])) {
				report_error("%s and %s name the same file '%s'", name[i],
					     name[j], path[j]);
				return -EINVAL;
			}
	return 0;
}

/* Everything up to the first traced syscall. */
static int set_up(struct tracer *tr)
{
	char err[512];
	int ret;

	if (tr->env.pid_file && (ret = open_pid_file(tr)))
		return ret;
	ret = open_outputs(tr);
	if (!ret && tr->env.torch && (ret = torch_environment(err, sizeof(err))))
		report_error("%s", err);
	if (!ret && tr->env.command && (ret = prepare_command(tr, err, sizeof(err))))
		report_error("%s", err);
	if (!ret)
		ret = load_and_attach(tr);
	if (!ret)
		ret = start_trace(tr);
	if (!ret && run_stopped()) {
		report_error("interrupted before tracing started; nothing written");
		ret = -EINTR;
	}
	if (!ret)
		ret = run_start_target(tr);
	if (!ret && tr->caller)
		ret = tr->caller->attached(tr->caller->ctx);
	/* The file appears with its header already in it. */
	if (!ret)
		trace_flush(tr->trace);
	if (!ret && tr->sink && (ret = output_commit(tr->sink->out, err, sizeof(err))))
		report_error("%s", err);
	if (!ret && tr->pid_file)
		ret = place_pid_file(tr);
	return ret;
}

static void print_prog_stat(struct bpf_program *prog)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	if (bpf_program__fd(prog) >= 0 &&
	    !bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len) && info.run_cnt)
		fprintf(stderr, "bpf_prog %s %llu runs %llu ns\n", bpf_program__name(prog),
			(unsigned long long)info.run_cnt, (unsigned long long)info.run_time_ns);
}

static void print_inst_stats(struct dftrace_bpf *skel, void *ctx)
{
	struct bpf_program *prog;

	(void)ctx;
	bpf_object__for_each_program(prog, skel->obj)
		print_prog_stat(prog);
}

/* $DFTRACE_BPF_PROG_STATS, for make bench: each program's runs and
 * run time in the kernel (counted while kernel.bpf_stats_enabled is 1),
 * those loaded at their first use too. */
static void print_prog_stats(const struct tracer *tr)
{
	if (getenv("DFTRACE_BPF_PROG_STATS"))
		loader_each(&tr->loader, print_inst_stats, NULL);
}

/* Nothing more is recorded: the hooks go, so that what the ring holds
 * now is all there is, and the command may outlive the trace. The
 * uprobes go after the file is complete (detach_probes): each link
 * waits for the kernel (capture/uprobes.h). What they add meanwhile is
 * after the end, not read. */
static void stop_tracing(struct tracer *tr)
{
	sc_hooks_detach(&tr->hooks);
	loader_detach(&tr->loader);
	print_prog_stats(tr);
	set_tracer_comm(TRACER_COMM_DONE);
}

static void detach_probes(struct tracer *tr)
{
	if (tr->env.verbose && tr->probed.attached_any)
		fprintf(stderr, "dftrace-bpf: trace complete; detaching %u uprobes\n",
			probed_sites(&tr->probed));
	probed_free(&tr->probed);
}

/* Drains the ring, ends every file, and says how it went. */
static int finish(struct tracer *tr)
{
	const struct trace_stats *st = trace_stats(tr->trace);
	uint64_t lost[DFT_LOST_SLOTS], end = ring_mark(&tr->ring);
	char err[512] = "";
	int ret = 0;

	/* what the ring held when the hooks went; the uprobes, still there,
	 * are not waited for */
	while (!ring_reached(&tr->ring, end) && run_drain_batch(tr, 0) > 0)
		;
	folds_finish(&tr->folds, tr->trace);
	lost_read(&tr->lost, lost);
	trace_finish(tr->trace, lost, DFT_LOST_SLOTS);
	if (tr->sink)
		ret = sink_close(tr->sink, err, sizeof(err));
	tr->sink = NULL;
	if (st->write_error || ret) {
		report_error("%s; tracing stopped there%s", err[0] ? err : st->write_error_msg,
		     tr->env.command && !tr->child_reaped ? ", the command runs on" : "");
		ret = -EIO;
	}
	if (!tr->env.quiet)
		report_summary(&tr->report, st, lost, DFT_LOST_SLOTS,
			       tr->env.output ? tr->env.output : tr->env.output_dir);
	return ret;
}

/* The status: the command's when there is one, even after a failure to
 * write (the trace is then cut short, and said so). */
static int trace_and_wait(struct tracer *tr)
{
	int loop = run_loop(tr), ret;

	stop_tracing(tr);
	ret = finish(tr) || loop ? 1 : 0;
	detach_probes(tr);
	if (!tr->env.command)
		return ret;
	ret = run_exit_status(tr);
	tr->launch.pid = -1; /* started and reaped: not ours to kill */
	return ret;
}

/* A new file only (never one planted there), private: for make bench's
 * replay of the consumer, not for users. Made as the invoker, as every
 * other output. */
static FILE *open_recording(const struct invoker *who)
{
	const char *path = getenv("DFTRACE_BPF_RECORD");
	struct fs_identity saved;
	int fd = -1, err = path ? invoker_fs_enter(who, &saved) : 0;

	if (path && !err) {
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		err = fd < 0 ? -errno : 0;
		fs_identity_restore(&saved);
	}
	if (path && err)
		report_error("cannot create recording '%s': %s", path, strerror(-err));
	return fd >= 0 ? fdopen(fd, "w") : NULL;
}

/* Why this run takes the syscall tracepoints rather than the hooks
 * (capture/schooks.h), or NULL: they are for a tracer that stays on, as
 * their attach takes long. */
static const char *no_hooks(const struct env *env)
{
	if (env->fentry < 0)
		return "turned off by --no-fentry";
	if (!env->fentry && !stays_on(env))
		return "used with --flight, the host-wide scopes and --fentry";
	return NULL;
}

/* Start-up's programs are loaded: the kernel's BTF goes. */
static void unshare_kernel_btf(bool verbose)
{
	struct kernel_btf_use u = kernel_btf_used();
	char times[32] = "once";

	if (verbose && u.parses) {
		if (u.parses != 1)
			snprintf(times, sizeof(times), "%u times", u.parses);
		fprintf(stderr, "dftrace-bpf: the kernel's BTF read %s for start-up's %u loads, in "
			"%.1f ms\n", times, u.loads, u.parse_ns / 1e6);
	}
	if (verbose && u.core_types)
		fprintf(stderr, "dftrace-bpf: CO-RE relocated against %u of the kernel's %u types, "
			"picked in %.1f ms\n", u.core_types, u.kernel_types, u.core_ns / 1e6);
	kernel_btf_unshare();
}

int tracer_main(int argc, char **argv)
{
	return tracer_run(argc, argv, NULL);
}

int tracer_run(int argc, char **argv, const struct tracer_hooks *hooks)
{
	struct tracer tr = { .launch = { .pid = -1, .go_fd = -1, .err_fd = -1 } };
	int ret = 1;

	report_init(&tr.report);
	tr.caller = hooks;
	env_parse(&tr.env, argc, argv);
	if (tr.caller && tr.caller->check(tr.caller->ctx, &tr.env))
		goto cleanup;
	libbpf_verbose = tr.env.verbose;
	run_keep_signal_mask(&tr.launch);
	/* from the first moment `dftrace-bpf dump` would signal us: a dump
	 * asked before tracing begins is of an empty window, not our end */
	if (tr.env.flight_on)
		run_install_dump_signal();
	set_tracer_comm(TRACER_COMM);
	libbpf_set_print(print_libbpf);
	raise_fd_limit(&tr);
	kernel_btf_share();
	/* its maps while the checks parse the BTF, where two CPUs are free */
	if (loader_parallel())
		premade_start(&tr.premade);
	if (loader_check_system(&tr.features, no_hooks(&tr.env)) || check_targets(&tr.env) ||
	    invoker_init(&tr.who))
		goto cleanup;
	if (!tr.env.quiet)
		features_warn(&tr.features, tr.env.verbose);
	if (tr.env.no_gpu) /* asked for: not said at start-up, but in the trace */
		features_turn_off(&tr.features, FEATURE_gpu, "turned off by --no-gpu");
	if (tr.env.no_region_rings)
		features_turn_off(&tr.features, FEATURE_region_rings,
				  "turned off by --no-region-rings");
	features_list(&tr.features, tr.features_list, sizeof(tr.features_list));
	/* From here a signal must not kill us: a file would be left half
	 * made. */
	run_install_signals(&tr.launch);
	if (check_outputs_differ(&tr.env))
		goto cleanup;
	tr.recording = open_recording(&tr.who);
	tr.target = describe_target(&tr.env);
	if (!tr.target || set_up(&tr))
		goto cleanup;
	unshare_kernel_btf(tr.env.verbose);
	/* -d counts tracing, not the start-up before it */
	if (tr.env.duration > 0)
		tr.deadline = clock_mono_ns() + tr.env.duration * NS_PER_S;
	report_begin(&tr.report, tr.env.quiet);
	if (tr.caller)
		tr.caller->ready(tr.caller->ctx);
	ret = trace_and_wait(&tr);
cleanup:
	premade_free(&tr.premade);
	kernel_btf_unshare();
	if (tr.recording)
		fclose(tr.recording);
	launch_abort(&tr.launch);
	sink_abort(tr.sink);
	output_abort(tr.pid_file);
	probed_free(&tr.probed);
	ring_close(&tr.ring);
	trace_free(tr.trace);
	outdir_free(tr.outdir);
	bpf_link__destroy(tr.adopt_iter);
	bpf_link__destroy(tr.kept_iter);
	bpf_link__destroy(tr.signals_link);
	sc_hooks_detach(&tr.hooks);
	loader_unload(&tr.loader);
	kernel_btf_core_free();
	invoker_free(&tr.who);
	free(tr.target);
	jb_free(&tr.v2_cfg);
	return ret;
}
