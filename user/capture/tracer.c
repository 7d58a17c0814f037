// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The tracer: open -> configure -> load -> attach the kernel programs,
 * mark the traced tree, then drain the ring buffer into the record path
 * (correlate/) until the tree exits, a signal arrives or the duration
 * ends.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "capture/attach.h"
#include "capture/env.h"
#include "capture/features.h"
#include "capture/launch.h"
#include "capture/loader.h"
#include "capture/folds.h"
#include "capture/liverings.h"
#include "capture/lost.h"
#include "capture/report.h"
#include "capture/ring.h"
#include "capture/torchenv.h"
#include "capture/tracer.h"
#include "capture/probed.h"
#include "capture/usdt.h"
#include "correlate/trace.h"
#include "dftrace.h"
#include "dftrace.skel.h" /* after dftrace.h: its types */
#include "lib/clock.h"
#include "lib/fdlimit.h"
#include "lib/invoker.h"

#define DRAIN_INTERVAL_MS 10
#define NS_PER_S 1000000000ull
#define FLUSH_INTERVAL_NS NS_PER_S
/* Records handled between two looks at signals, the deadline and the
 * clock: libbpf's consume does not return while producers keep pace, so
 * the callback ends each batch. About 10 ms of work at full speed. */
#define BATCH_RECORDS 16384
#define BATCH_FULL (-EAGAIN)

/* Our name says whether we still attach probes: the dftrace Python
 * package waits at import only while it reads TRACER_COMM. */
#define TRACER_COMM "dftrace-bpf"
#define TRACER_COMM_DONE "dftrace-bpf-end"

/* The signals that stop us, in bpf/signals.bpf.c's order. */
static const int stop_signals[] = { SIGINT, SIGTERM, SIGHUP };
#define STOP_SIGNALS (sizeof(stop_signals) / sizeof(stop_signals[0]))

struct tracer {
	struct env env;
	struct dftrace_bpf *skel;
	struct ring ring;
	struct trace *trace;
	struct sink *sink;	/* -o */
	struct outdir *outdir;	/* -D */
	struct output *pid_file;	/* --pid-file until it is in place */
	struct invoker who;
	struct launch launch;
	struct probed_files probed;	/* files with probes: annotations, GPU calls */
	struct lost lost;
	struct folds folds;	/* the kernel's totals of folded calls */
	struct liverings rings;	/* live threads' rings, at the end */
	FILE *recording;	/* $DFTRACE_BPF_RECORD: raw records, for make bench */
	struct report report;
	struct features features;	/* this kernel's */
	/* task iterators: -p's threads before 6.9, live threads' kept calls */
	struct bpf_link *adopt_iter, *kept_iter;
	/* -- CMD: counts the command's stop signals (bpf/signals.bpf.c) */
	struct bpf_link *signals_link;
	uint64_t stops_forwarded[STOP_SIGNALS];
	char features_list[256];	/* as the trace's start says them */
	struct rlimit nofile_at_start;	/* the command gets it back */
	char program[PATH_MAX];	/* -- CMD: the file it execs, or "" */
	char *target;		/* what start and end say was traced */
	uint64_t deadline;	/* -d, counted from when tracing began; 0: none */
	uint32_t batch;		/* records in the current batch */
	uint64_t sweep_mark;	/* the ring's end at the last sweep */
	int child_status;
	bool child_reaped;
	bool cgroup_gone;	/* --cgroup's directory is gone, and we said so */
};

/* Set from a signal handler, so globals; read by the loops below. */
static volatile sig_atomic_t stop_signal;
static volatile sig_atomic_t stops_got[STOP_SIGNALS];
/* libbpf's print callback has no context argument. */
static bool libbpf_verbose;

static void on_signal(int sig)
{
	stop_signal = sig;
	for (size_t i = 0; i < STOP_SIGNALS; i++)
		if (stop_signals[i] == sig)
			stops_got[i]++;
}

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

static int load_and_attach(struct tracer *tr)
{
	struct loader_opts o = { .ringbuf_size = tr->env.ringbuf_size,
				 .lost_by_proc = tr->env.output_dir != NULL,
				 .hide_privileged = tr->who.other,
				 .steps = tr->env.steps_on ? &tr->env.steps : NULL,
				 .scope = tr->env.scope.on ? &tr->env.scope.k : NULL,
				 .profile = tr->env.profile_s > 0,
				 .features = &tr->features };
	int err = loader_open(&tr->skel, &o);

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
	probed_init(&tr->probed, &(struct probed_opts){
				 .skel = tr->skel, .annotations = tr->features.on[FEATURE_annotations],
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

/* ---- the run loop ---- */

static int on_record(void *ctx, void *data, size_t size)
{
	struct tracer *tr = ctx;
	uint32_t n = size;

	/* make bench's replay: the records as they came (4-byte size, data) */
	if (tr->recording && (fwrite(&n, sizeof(n), 1, tr->recording) != 1 ||
			      fwrite(data, size, 1, tr->recording) != 1)) {
		fclose(tr->recording);
		tr->recording = NULL;
	}
	trace_handle_record(tr->trace, data, size);
	return ++tr->batch < BATCH_RECORDS ? 0 : BATCH_FULL;
}

/* One bounded batch of records, waiting up to timeout_ms for the first.
 * 1 if more are waiting, 0 if the ring is empty, or -errno. */
static int drain_batch(struct tracer *tr, int timeout_ms)
{
	int n;

	tr->batch = 0;
	n = timeout_ms ? ring_wait(&tr->ring, timeout_ms) : 0;
	/* Wakeups are batched in the kernel: look whether or not we were woken. */
	if (n >= 0)
		n = ring_consume(&tr->ring, on_record, tr);
	/* behind by an eighth of the ring or more: on at once, not at the
	 * next wakeup (a full ring folds or loses what cannot be folded) */
	if (n == BATCH_FULL || (n >= 0 && ring_pending(&tr->ring) >= tr->env.ringbuf_size / 8))
		return 1;
	return n < 0 && n != -EINTR ? n : 0;
}

static bool time_up(const struct tracer *tr)
{
	return tr->deadline && clock_mono_ns() >= tr->deadline;
}

/* Processes whose exit record was lost, or that were already zombies
 * when found, would keep us waiting forever. */
static void count_dead(struct proc *p, void *ctx)
{
	if (process_exited(p->pid))
		*(uint32_t *)ctx += 1;
}

static bool tree_alive(struct tracer *tr)
{
	const struct model *m = trace_model(tr->trace);
	uint32_t dead = 0;

	if (tr->env.command && !tr->child_reaped &&
	    waitpid(tr->launch.pid, &tr->child_status, WNOHANG) == tr->launch.pid)
		tr->child_reaped = true;
	/* a scope without a command is an agent: until a signal or -d */
	if (tr->env.scope.on && !tr->env.command)
		return true;
	if (trace_stats(tr->trace)->live == 0)
		return false;
	procs_each(m, count_dead, &dead);
	return dead < procs_count(m);
}

static int attach_scope(struct tracer *tr);

/* --cgroup's directory, removed and made anew under the same name (a
 * job's cgroup for the next job): said when it goes, followed when it
 * comes back, with the processes already in it. */
static void follow_cgroup(struct tracer *tr)
{
	const char *path = tr->env.scope.cgroup_path;
	unsigned long long id;

	if (!tr->env.scope.k.cgroup_level)
		return;
	if (scope_cgroup_now(&tr->env.scope, &id)) {
		if (!tr->cgroup_gone)
			report_error("the cgroup '%s' is gone; traced again if made anew",
				     path);
		tr->cgroup_gone = true;
		return;
	}
	if (id == tr->skel->bss->scope_cgroup_id)
		return;
	tr->skel->bss->scope_cgroup_id = id;
	tr->cgroup_gone = false;
	report_error("the cgroup '%s' was made anew: traced from now", path);
	attach_scope(tr);
}

/* Once a second: the flush that keeps a killed tracer's file readable,
 * the status line, the end of the tree, and --cgroup's directory. */
static bool tick(struct tracer *tr)
{
	uint64_t lost[DFT_LOST_SLOTS];

	if (trace_flush(tr->trace))
		return false;
	trace_sweep(tr->trace, process_gone, ring_reached(&tr->ring, tr->sweep_mark));
	tr->sweep_mark = ring_mark(&tr->ring);
	follow_cgroup(tr);
	lost_read(&tr->lost, lost);
	report_status(&tr->report, trace_stats(tr->trace), lost, DFT_LOST_SLOTS);
	return tree_alive(tr);
}

/* Until the tree exits, a signal, the deadline or a write error; between
 * any two batches each of those is looked at. */
static int run_loop(struct tracer *tr)
{
	uint64_t next_tick = clock_mono_ns() + FLUSH_INTERVAL_NS;
	int more = 0;

	while (!stop_signal && !time_up(tr)) {
		more = drain_batch(tr, more ? 0 : DRAIN_INTERVAL_MS);
		if (more < 0) {
			report_error("cannot read the ring buffer: %s", strerror(-more));
			return more;
		}
		probed_attach_pending(&tr->probed);
		if (trace_stats(tr->trace)->write_error)
			break;
		folds_tick(&tr->folds, tr->trace, clock_mono_ns());
		if (clock_mono_ns() >= next_tick) {
			next_tick = clock_mono_ns() + FLUSH_INTERVAL_NS;
			if (!tick(tr))
				break;
		} else if (trace_stats(tr->trace)->live == 0 && !tree_alive(tr)) {
			break;
		}
	}
	return 0;
}

static bool ignored(int sig)
{
	struct sigaction old;

	return !sigaction(sig, NULL, &old) && old.sa_handler == SIG_IGN;
}

/* INT and TERM stop us even where they were ignored (a script's
 * background job ignores INT, and scripts stop tracers with kill -INT);
 * a HUP ignored (nohup) stays ignored. The command gets back what was
 * ignored when we started, as it would have untraced. */
static void install_signals(struct launch *l)
{
	static const int caught[] = { SIGINT, SIGTERM, SIGHUP, SIGPIPE };
	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&l->ignored);
	for (size_t i = 0; i < sizeof(caught) / sizeof(caught[0]); i++) {
		if (ignored(caught[i]))
			sigaddset(&l->ignored, caught[i]);
	}
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (!sigismember(&l->ignored, SIGHUP))
		sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

/* ---- the target ---- */

static void adopt(pid_t pid, uint64_t at, void *ctx)
{
	struct tracer *tr = ctx;

	trace_adopt(tr->trace, pid, at); /* its mappings: found_process */
}

/* Between attach steps: keep the ring drained, and stop when asked. */
static bool attach_tick(void *ctx)
{
	struct tracer *tr = ctx;

	if (drain_batch(tr, 0) < 0)
		return false;
	probed_attach_pending(&tr->probed);
	return !stop_signal && !time_up(tr) && !trace_stats(tr->trace)->write_error;
}

/* How running tasks are marked (attach.c); skip_gone: a scope's. */
static struct attach_opts attach_options(struct tracer *tr, bool skip_gone)
{
	return (struct attach_opts){ .tasks_fd = bpf_map__fd(tr->skel->maps.tasks),
				     .adopt_fd = bpf_map__fd(tr->skel->maps.adopt),
				     .adopt_iter_fd = bpf_link__fd(tr->adopt_iter),
				     .self = getpid(), .skip_gone = skip_gone,
				     .adopt = adopt, .keep_going = attach_tick, .ctx = tr };
}

static int attach_targets(struct tracer *tr)
{
	struct attach_opts o = attach_options(tr, false);
	char err[512];
	int ret = attach_tree(&o, tr->env.pids, tr->env.npids, err, sizeof(err));

	if (ret == -EINTR)
		return 0; /* what is marked is traced until we stop */
	if (ret)
		report_error("%s", err);
	probed_attach_pending(&tr->probed);
	return ret;
}

/* The processes already in a scope, with what runs below them. */
static int attach_scope(struct tracer *tr)
{
	struct attach_opts o = attach_options(tr, true);
	char err[512];
	int n, ret;
	pid_t *pids = scope_processes(&tr->env.scope, getpid(), &n);

	ret = attach_tree(&o, pids, n, err, sizeof(err));
	free(pids);
	if (ret && ret != -EINTR)
		report_error("%s", err);
	probed_attach_pending(&tr->probed);
	return ret == -EINTR ? 0 : ret;
}

/* Before the command runs: which of our stop signals it gets too. A
 * kernel without the hook forwards as before: TERM and HUP, not INT
 * (a terminal's reached it already). */
static void count_command_signals(struct tracer *tr)
{
	tr->skel->bss->command_tgid = tr->launch.pid;
	tr->signals_link = bpf_program__attach(tr->skel->progs.signal_generate);
	if (!tr->signals_link && tr->env.verbose)
		fprintf(stderr, "dftrace-bpf: stop signals are forwarded without counting: %s\n",
			strerror(errno));
}

/* The command gets each stop signal we got once: those its sender sent
 * it too are not sent again. */
static void forward_stop_signals(struct tracer *tr)
{
	if (!tr->env.command || tr->child_reaped || tr->launch.pid <= 0)
		return;
	for (size_t i = 0; i < STOP_SIGNALS; i++) {
		uint64_t got = (uint64_t)stops_got[i];
		uint64_t shared = tr->signals_link ? tr->skel->bss->stops_shared[i] :
				  stop_signals[i] == SIGINT ? got : 0;

		while (shared + tr->stops_forwarded[i] < got) {
			kill(tr->launch.pid, stop_signals[i]);
			tr->stops_forwarded[i]++;
		}
	}
}

static int start_target(struct tracer *tr)
{
	char err[512];
	uint64_t at;
	int ret;

	if (tr->env.scope.on) {
		ret = attach_scope(tr);
		if (ret || (!tr->env.command && !tr->env.npids))
			return ret;
	}
	if (!tr->env.command)
		return attach_targets(tr);
	at = clock_mono_ns();
	ret = attach_task(bpf_map__fd(tr->skel->maps.tasks), tr->launch.pid, at);
	if (ret < 0) {
		report_error("cannot trace the command: %s", strerror(-ret));
		return ret;
	}
	trace_adopt(tr->trace, tr->launch.pid, at);
	count_command_signals(tr);
	if (tr->program[0])
		probed_offer(&tr->probed, tr->launch.pid, tr->program, 0, 0);
	probed_attach_pending(&tr->probed);
	ret = launch_start(&tr->launch, err, sizeof(err));
	if (ret)
		report_error("cannot execute '%s': %s", tr->env.command[0], err);
	return ret;
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

/* Until the command exits or a stop signal comes: the signals are
 * blocked but while we sleep, so that none comes between the look at
 * them and the sleep. */
static void await_command(struct tracer *tr, int pidfd)
{
	sigset_t stops, outside;
	struct pollfd p = { .fd = pidfd, .events = POLLIN };

	sigemptyset(&stops);
	for (size_t i = 0; i < STOP_SIGNALS; i++)
		sigaddset(&stops, stop_signals[i]);
	sigprocmask(SIG_BLOCK, &stops, &outside);
	forward_stop_signals(tr);
	ppoll(&p, 1, NULL, &outside);
	sigprocmask(SIG_SETMASK, &outside, NULL);
}

/* The command's status, however many stop signals come meanwhile:
 * each is passed on, and we wait on. */
static int exit_status(struct tracer *tr)
{
	int pidfd = (int)syscall(SYS_pidfd_open, tr->launch.pid, 0);

	while (!tr->child_reaped) {
		if (pidfd >= 0)
			await_command(tr, pidfd);
		else
			forward_stop_signals(tr);
		if (waitpid(tr->launch.pid, &tr->child_status, pidfd >= 0 ? WNOHANG : 0) ==
		    tr->launch.pid)
			tr->child_reaped = true;
		else if (errno != EINTR && pidfd < 0)
			return 1; /* not ours to wait for: cannot happen */
	}
	if (pidfd >= 0)
		close(pidfd);
	if (WIFSIGNALED(tr->child_status))
		return 128 + WTERMSIG(tr->child_status);
	return WEXITSTATUS(tr->child_status);
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

static int start_trace(struct tracer *tr)
{
	struct trace_config cfg = {
		.inline_paths = tr->env.inline_paths, .cmdline = tr->target,
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
		.steps = tr->env.steps_on ? &tr->env.steps : NULL,
		.profile = tr->env.profile_s > 0,
		.features = tr->features_list,
		.proven = proven, .proven_ctx = tr,
	};
	int err;

	err = trace_new(&tr->trace, &cfg);
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
	if (!ret && stop_signal) {
		report_error("interrupted before tracing started; nothing written");
		ret = -EINTR;
	}
	if (!ret)
		ret = start_target(tr);
	/* The file appears with its header already in it. */
	if (!ret)
		trace_flush(tr->trace);
	if (!ret && tr->sink && (ret = output_commit(tr->sink->out, err, sizeof(err))))
		report_error("%s", err);
	if (!ret && tr->pid_file)
		ret = place_pid_file(tr);
	return ret;
}

/* $DFTRACE_BPF_PROG_STATS, for make bench: each program's runs and
 * run time in the kernel (counted while kernel.bpf_stats_enabled is 1). */
static void print_prog_stats(const struct tracer *tr)
{
	struct bpf_prog_info info;
	struct bpf_program *prog;
	__u32 len;

	if (!getenv("DFTRACE_BPF_PROG_STATS"))
		return;

	bpf_object__for_each_program(prog, tr->skel->obj) {
		memset(&info, 0, sizeof(info));
		len = sizeof(info);
		if (bpf_program__fd(prog) >= 0 &&
		    !bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len) && info.run_cnt)
			fprintf(stderr, "bpf_prog %s %llu runs %llu ns\n", bpf_program__name(prog),
				(unsigned long long)info.run_cnt,
				(unsigned long long)info.run_time_ns);
	}
}

/* Nothing more is recorded: the hooks go, so that what the ring holds
 * now is all there is, and the command may outlive the trace. The
 * uprobes go after the file is complete (detach_probes): each link
 * waits for the kernel (capture/uprobes.h). What they add meanwhile is
 * after the end, not read. */
static void stop_tracing(struct tracer *tr)
{
	dftrace_bpf__detach(tr->skel);
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
	while (!ring_reached(&tr->ring, end) && drain_batch(tr, 0) > 0)
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
	ret = exit_status(tr);
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

int tracer_main(int argc, char **argv)
{
	struct tracer tr = { .launch = { .pid = -1, .go_fd = -1, .err_fd = -1 } };
	int ret = 1;

	report_init(&tr.report);
	env_parse(&tr.env, argc, argv);
	libbpf_verbose = tr.env.verbose;
	set_tracer_comm(TRACER_COMM);
	libbpf_set_print(print_libbpf);
	raise_fd_limit(&tr);
	if (loader_check_system(&tr.features) || check_targets(&tr.env) || invoker_init(&tr.who))
		goto cleanup;
	if (!tr.env.quiet)
		features_warn(&tr.features);
	if (tr.env.no_gpu) /* asked for: not said at start-up, but in the trace */
		features_turn_off(&tr.features, FEATURE_gpu, "turned off by --no-gpu");
	if (tr.env.no_region_rings)
		features_turn_off(&tr.features, FEATURE_region_rings,
				  "turned off by --no-region-rings");
	features_list(&tr.features, tr.features_list, sizeof(tr.features_list));
	/* From here a signal must not kill us: a file would be left half
	 * made. */
	install_signals(&tr.launch);
	if (check_outputs_differ(&tr.env))
		goto cleanup;
	tr.recording = open_recording(&tr.who);
	tr.target = describe_target(&tr.env);
	if (!tr.target || set_up(&tr))
		goto cleanup;
	/* -d counts tracing, not the start-up before it */
	if (tr.env.duration > 0)
		tr.deadline = clock_mono_ns() + tr.env.duration * NS_PER_S;
	report_begin(&tr.report, tr.env.quiet);
	ret = trace_and_wait(&tr);
cleanup:
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
	dftrace_bpf__destroy(tr.skel);
	invoker_free(&tr.who);
	free(tr.target);
	return ret;
}
