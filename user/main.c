// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * dftrace-bpf: open -> configure -> load -> attach the kernel programs,
 * mark the traced tree, then drain the ring buffer into the trace until
 * the tree exits, a signal arrives or the duration ends.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "attach.h"
#include "dftrace.skel.h"
#include "env.h"
#include "invoker.h"
#include "launch.h"
#include "outdir.h"
#include "procs.h"
#include "report.h"
#include "syscalls.h"
#include "trace.h"
#include "usdt.h"

#define DRAIN_INTERVAL_MS 10
#define FLUSH_INTERVAL_NS 1000000000ull
/* Records handled between two looks at signals, the deadline and the
 * clock: libbpf's consume does not return while producers keep pace, so
 * the callback ends each batch. About 10 ms of work at full speed. */
#define BATCH_RECORDS 16384
#define BATCH_FULL (-EAGAIN)

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

static void fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "dftrace-bpf: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
}

static int print_libbpf(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	if (level == LIBBPF_DEBUG && !env.verbose)
		return 0;
	/* This kernel charges BPF memory to memcg: RLIMIT_MEMLOCK hints
	 * from libbpf would send users after the wrong limit. */
	if (!env.verbose && strstr(fmt, "ulimit"))
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

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
	/* CAP_BPF (39) and CAP_PERFMON (38), or CAP_SYS_ADMIN (21). */
	return ((eff >> 39) & 1 && (eff >> 38) & 1) || ((eff >> 21) & 1);
}

static int check_system(void)
{
	if (!has_bpf_caps()) {
		fail("permission denied: tracing needs root or CAP_BPF and CAP_PERFMON; run with sudo");
		return -EPERM;
	}
	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		fail("no kernel BTF at '/sys/kernel/btf/vmlinux': this kernel needs CONFIG_DEBUG_INFO_BTF=y");
		return -ENOENT;
	}
	return 0;
}

/* -p: each target a live user-space process, named by its process id. */
static int check_targets(void)
{
	char err[256];
	pid_t tgid;
	int ret;

	for (int i = 0; i < env.npids; i++) {
		ret = attach_check_target(env.pids[i], &tgid, err, sizeof(err));
		if (ret) {
			fail("%s", err);
			return ret;
		}
		env.pids[i] = tgid;
	}
	return 0;
}

static char *join_command(char **argv)
{
	size_t n = 1;
	char *s;

	for (char **a = argv; *a; a++)
		n += strlen(*a) + 1;
	s = calloc(1, n);
	for (char **a = argv; s && *a; a++) {
		if (a != argv)
			strcat(s, " ");
		strcat(s, *a);
	}
	return s;
}

static char *describe_target(void)
{
	char buf[32 * ENV_MAX_PIDS] = "", *p = buf;

	if (env.command)
		return join_command(env.command);
	for (int i = 0; i < env.npids; i++)
		p += sprintf(p, "%s-p %d", i ? " " : "", env.pids[i]);
	return strdup(buf);
}

static int gzip_level_for(const char *path)
{
	size_t n = strlen(path);

	return n > 3 && !strcmp(path + n - 3, ".gz") ? env.gzip_level : -1;
}

/* The soft limit of descriptors as we found it: -D holds one per file,
 * so we raise ours, and the command gets this one back. */
static struct rlimit nofile_at_start;

static void raise_fd_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &nofile_at_start))
		return;
	rl = nofile_at_start;
	rl.rlim_cur = rl.rlim_max;
	setrlimit(RLIMIT_NOFILE, &rl);
}

static int configure(struct dftrace_bpf *skel, bool hide_privileged)
{
	sc_fill_tables((unsigned char *)skel->rodata->interest,
		       (unsigned char *)skel->rodata->path_args,
		       (unsigned char *)skel->rodata->fd_pair_args,
		       (unsigned char *)skel->rodata->new_fd_ino);
	skel->rodata->wakeup_bytes = env.ringbuf_size / 4;
	skel->rodata->lost_by_proc_on = env.output_dir != NULL;
	skel->rodata->hide_privileged = hide_privileged;
	return bpf_map__set_max_entries(skel->maps.events, env.ringbuf_size);
}

static int load_and_attach(struct dftrace_bpf **out, bool hide_privileged)
{
	struct dftrace_bpf *skel;
	int err;

	skel = dftrace_bpf__open();
	if (!skel) {
		fail("cannot open the BPF programs: %s", strerror(errno));
		return -errno;
	}
	err = configure(skel, hide_privileged);
	if (!err)
		err = dftrace_bpf__load(skel);
	if (err) {
		fail("cannot load the BPF programs: %s (run with -v for the verifier log)",
		     strerror(-err));
		goto cleanup;
	}
	err = dftrace_bpf__attach(skel);
	if (err) {
		fail("cannot attach the BPF programs: %s", strerror(-err));
		goto cleanup;
	}
	*out = skel;
	usdt_init(skel, env.verbose);
	return 0;
cleanup:
	dftrace_bpf__destroy(skel);
	return err;
}

/* Where the dftrace Python package is: $DFTRACE_PYTHON_DIR, the source
 * build next to this binary (build/python), or the copy `make install`
 * put beside it (PREFIX/bin and PREFIX/lib/dftrace-bpf/python), found
 * from the binary's own path so that any PREFIX or DESTDIR works. */
static int python_dir(char *out, size_t len)
{
	const char *envdir = getenv("DFTRACE_PYTHON_DIR");
	char exe[2048];
	ssize_t n;

	if (envdir && *envdir) {
		snprintf(out, len, "%s", envdir);
		return access(out, R_OK) ? -ENOENT : 0;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0) {
		snprintf(out, len, "(no path for the tracer's own binary)");
		return -ENOENT;
	}
	exe[n] = 0;
	*strrchr(exe, '/') = 0;
	snprintf(out, len, "%s/build/python", exe);
	if (!access(out, R_OK))
		return 0;
	snprintf(out, len, "%s/../lib/dftrace-bpf/python", exe);
	return access(out, R_OK) ? -ENOENT : 0;
}

/* --torch: the launched interpreter runs dftrace_boot/sitecustomize.py,
 * which patches torch when it is imported. */
static int torch_environment(void)
{
	char dir[4096], *path;
	const char *old = getenv("PYTHONPATH");

	if (python_dir(dir, sizeof(dir))) {
		fail("--torch needs the dftrace Python package: not found at '%s' (set DFTRACE_PYTHON_DIR)", dir);
		return -ENOENT;
	}
	if (asprintf(&path, "%s/dftrace_boot:%s%s%s", dir, dir, old && *old ? ":" : "",
		     old && *old ? old : "") < 0)
		return -ENOMEM;
	setenv("PYTHONPATH", path, 1);
	free(path);
	return 0;
}

/* The file execvp() will run: its annotations go live before exec, and
 * the trace's start event names it. */
static char command_exe[4096];

static bool executable_file(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISREG(st.st_mode) && !access(path, X_OK);
}

/* The file execvp() will run: it searches PATH (an empty entry is the
 * current directory) unless the name has a slash. */
static bool find_command(const char *cmd, char *buf, size_t len)
{
	const char *p = getenv("PATH");

	if (strchr(cmd, '/')) {
		snprintf(buf, len, "%s", cmd);
		return executable_file(buf);
	}
	for (p = p ? p : "/usr/bin:/bin";; p++) {
		size_t n = strcspn(p, ":");

		snprintf(buf, len, "%.*s/%s", (int)(n ? n : 1), n ? p : ".", cmd);
		if (executable_file(buf))
			return true;
		p += n;
		if (!*p)
			return false;
	}
}

static bool resolve_command(const char *cmd)
{
	char buf[4096];

	/* realpath() may leave a partial path behind when it fails */
	if (!find_command(cmd, buf, sizeof(buf)) || !realpath(buf, command_exe)) {
		command_exe[0] = 0;
		return false;
	}
	return true;
}

static void read_lost(struct dftrace_bpf *skel, uint64_t *lost)
{
	int ncpu = libbpf_num_possible_cpus(), fd = bpf_map__fd(skel->maps.lost);
	uint64_t *vals = calloc(ncpu > 0 ? ncpu : 1, sizeof(*vals));

	for (uint32_t k = 0; vals && k < DFT_LOST_SLOTS; k++) {
		lost[k] = 0;
		if (bpf_map_lookup_elem(fd, &k, vals))
			continue;
		for (int c = 0; c < ncpu; c++)
			lost[k] += vals[c];
	}
	free(vals);
}

static int lost_by_proc_fd = -1;

/* The losses of one process, for its own file (-D). With consume, its
 * keys are deleted once read, so that a later process with the same pid
 * starts at zero. */
static void read_proc_lost(uint32_t pid, uint64_t *lost, size_t nslots,
			   bool consume)
{
	struct dft_lost_key key, next, mine[DFT_LOST_SLOTS];
	size_t nmine = 0;
	uint64_t n;
	bool first = true;

	memset(lost, 0, nslots * sizeof(*lost));
	while (!bpf_map_get_next_key(lost_by_proc_fd, first ? NULL : &key, &next)) {
		first = false;
		key = next;
		if (key.tgid != pid || key.slot >= nslots || nmine == DFT_LOST_SLOTS)
			continue;
		if (!bpf_map_lookup_elem(lost_by_proc_fd, &key, &n))
			lost[key.slot] += n;
		mine[nmine++] = key;
	}
	for (size_t i = 0; consume && i < nmine; i++)
		bpf_map_delete_elem(lost_by_proc_fd, &mine[i]);
}

struct session {
	struct dftrace_bpf *skel;
	struct ring_buffer *rb;
	struct sink *sink;	/* -o */
	struct outdir *outdir;	/* -D */
	struct invoker who;
	struct launch launch;
	uint64_t deadline;	/* -d, counted from start-up; 0: none */
	uint32_t batch;		/* records in the current batch */
	int child_status;
	bool child_reaped;
};

static int on_record(void *ctx, void *data, size_t size)
{
	struct session *s = ctx;

	trace_handle_record(NULL, data, size);
	return ++s->batch < BATCH_RECORDS ? 0 : BATCH_FULL;
}

/* One bounded batch of records, waiting up to timeout_ms for the first.
 * 1 if more are waiting, 0 if the ring is empty, or -errno. */
static int drain_batch(struct session *s, int timeout_ms)
{
	int n;

	s->batch = 0;
	n = ring_buffer__poll(s->rb, timeout_ms);
	/* Wakeups are batched in the kernel: look whether or not we were woken. */
	if (n >= 0)
		n = ring_buffer__consume(s->rb);
	if (n == BATCH_FULL)
		return 1;
	return n < 0 && n != -EINTR ? n : 0;
}

static bool time_up(const struct session *s)
{
	return s->deadline && now_ns() >= s->deadline;
}

/* Processes whose exit record was lost, or that were already zombies
 * when found, would keep us waiting forever. */
static void forget_dead(struct proc *p, void *ctx)
{
	if (process_exited(p->pid))
		*(uint32_t *)ctx += 1;
}

static bool tree_alive(struct session *s)
{
	uint32_t dead = 0;

	if (env.command && !s->child_reaped &&
	    waitpid(s->launch.pid, &s->child_status, WNOHANG) == s->launch.pid)
		s->child_reaped = true;
	if (trace_stats()->live == 0)
		return false;
	procs_each(forget_dead, &dead);
	return dead < procs_count();
}

/* Once a second: the flush that keeps a killed tracer's file readable,
 * the status line, and the end of the tree. */
static bool tick(struct session *s)
{
	uint64_t lost[DFT_LOST_SLOTS];

	if (trace_flush())
		return false;
	read_lost(s->skel, lost);
	report_status(trace_stats(), lost, DFT_LOST_SLOTS);
	return tree_alive(s);
}

/* Until the tree exits, a signal, the deadline or a write error; between
 * any two batches each of those is looked at. */
static int run_loop(struct session *s)
{
	uint64_t next_tick = now_ns() + FLUSH_INTERVAL_NS;
	int more = 0;

	while (!stop_signal && !time_up(s)) {
		more = drain_batch(s, more ? 0 : DRAIN_INTERVAL_MS);
		if (more < 0) {
			fail("cannot read the ring buffer: %s", strerror(-more));
			return more;
		}
		usdt_attach_pending();
		if (trace_stats()->write_error)
			break;
		if (now_ns() >= next_tick) {
			next_tick = now_ns() + FLUSH_INTERVAL_NS;
			if (!tick(s))
				break;
		} else if (trace_stats()->live == 0 && !tree_alive(s)) {
			break;
		}
	}
	return 0;
}

static void install_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

static void adopt(pid_t pid, void *ctx)
{
	trace_adopt(pid);
	usdt_offer_maps(pid);
}

/* Between attach steps: keep the ring drained, and stop when asked. */
static bool attach_tick(void *ctx)
{
	struct session *s = ctx;

	if (drain_batch(s, 0) < 0)
		return false;
	usdt_attach_pending();
	return !stop_signal && !time_up(s) && !trace_stats()->write_error;
}

static int attach_targets(struct session *s)
{
	struct attach_opts o = { .tasks_fd = bpf_map__fd(s->skel->maps.tasks),
				 .self = getpid(), .adopt = adopt,
				 .keep_going = attach_tick, .ctx = s };
	char err[512];
	int ret = attach_tree(&o, env.pids, env.npids, err, sizeof(err));

	if (ret == -EINTR)
		return 0; /* what is marked is traced until we stop */
	if (ret)
		fail("%s", err);
	usdt_attach_pending();
	return ret;
}

static int start_target(struct session *s)
{
	char err[512];
	int ret;

	if (!env.command)
		return attach_targets(s);
	ret = attach_task(bpf_map__fd(s->skel->maps.tasks), s->launch.pid);
	if (ret < 0) {
		fail("cannot trace the command: %s", strerror(-ret));
		return ret;
	}
	trace_adopt(s->launch.pid);
	if (command_exe[0])
		usdt_offer(command_exe);
	usdt_attach_pending();
	ret = launch_start(&s->launch, err, sizeof(err));
	if (ret)
		fail("cannot execute '%s': %s", env.command[0], err);
	return ret;
}

/* Our name says whether we still attach probes: the dftrace Python
 * package waits at import only while it reads TRACER_COMM. */
#define TRACER_COMM "dftrace-bpf"
#define TRACER_COMM_DONE "dftrace-bpf-end"

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
static int prepare_command(struct session *s, char *err, size_t errlen)
{
	char pid[16];

	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	setenv("DFTRACE_BPF_TRACER", pid, 1);
	s->launch.as = &s->who;
	s->launch.nofile = &nofile_at_start;
	s->launch.stdout_to_stderr = env.output && !strcmp(env.output, "-");
	return launch_prepare(env.command, &s->launch, err, errlen);
}

static int exit_status(struct session *s)
{
	if (!s->child_reaped && waitpid(s->launch.pid, &s->child_status, 0) < 0)
		return 0;
	if (WIFSIGNALED(s->child_status))
		return 128 + WTERMSIG(s->child_status);
	return WEXITSTATUS(s->child_status);
}

/* Nothing more is recorded: probes and hooks go, so that what the ring
 * holds now is all there is, and the command may outlive the trace. */
static void stop_tracing(struct session *s)
{
	usdt_free();
	dftrace_bpf__detach(s->skel);
	set_tracer_comm(TRACER_COMM_DONE);
}

/* Drains the ring, ends every file, and says how it went. */
static int finish(struct session *s)
{
	uint64_t lost[DFT_LOST_SLOTS];
	char err[512] = "";
	int ret = 0;

	while (drain_batch(s, 0) > 0)
		;
	read_lost(s->skel, lost);
	trace_finish(lost, DFT_LOST_SLOTS);
	if (s->sink)
		ret = sink_close(s->sink, err, sizeof(err));
	s->sink = NULL;
	if (trace_stats()->write_error || ret) {
		fail("%s; tracing stopped there%s", err[0] ? err :
		     trace_stats()->write_error_msg,
		     env.command && !s->child_reaped ? ", the command runs on" : "");
		ret = -EIO;
	}
	if (!env.quiet)
		report_summary(trace_stats(), lost, DFT_LOST_SLOTS,
			       env.output ? env.output : env.output_dir);
	return ret;
}

static int open_outputs(struct session *s)
{
	struct output_opts o = { .path = env.output, .as = &s->who,
				 .gzip_level = env.output ?
						       gzip_level_for(env.output) : -1 };
	char err[512];
	int ret;

	if (env.output_dir)
		ret = outdir_open(&s->outdir, env.output_dir, &s->who,
				  env.plain ? -1 : env.gzip_level, err, sizeof(err));
	else
		ret = sink_open(&o, &s->sink, err, sizeof(err));
	if (ret)
		fail("%s", err);
	return ret;
}

static int start_trace(struct session *s, const char *target)
{
	struct trace_config cfg = {
		.inline_paths = env.inline_paths, .outdir = s->outdir,
		.cmdline = target,
		.root_pid = env.command ? s->launch.pid : env.pids[0],
		.proc_lost = env.output_dir ? read_proc_lost : NULL,
		.root_launched = env.command != NULL,
		.root_exe = env.command && resolve_command(env.command[0]) ?
				    command_exe : NULL,
	};

	s->rb = ring_buffer__new(bpf_map__fd(s->skel->maps.events), on_record,
				 s, NULL);
	if (!s->rb) {
		fail("cannot open the ring buffer: %s", strerror(errno));
		return -errno;
	}
	lost_by_proc_fd = bpf_map__fd(s->skel->maps.lost_by_proc);
	return trace_init(&cfg, s->sink);
}

/* Everything up to the first traced syscall. */
static int set_up(struct session *s, const char *target)
{
	char err[512];
	int ret;

	ret = open_outputs(s);
	if (!ret && env.torch)
		ret = torch_environment();
	if (!ret && env.command && (ret = prepare_command(s, err, sizeof(err))))
		fail("%s", err);
	if (!ret)
		ret = load_and_attach(&s->skel, s->who.other);
	if (!ret)
		ret = start_trace(s, target);
	if (!ret && stop_signal) {
		fail("interrupted before tracing started; nothing written");
		ret = -EINTR;
	}
	if (!ret)
		ret = start_target(s);
	/* The file appears with its header already in it. */
	if (!ret)
		trace_flush();
	if (!ret && s->sink && (ret = output_commit(s->sink->out, err, sizeof(err))))
		fail("%s", err);
	return ret;
}

int main(int argc, char **argv)
{
	struct session s = { .launch = { .pid = -1, .go_fd = -1, .err_fd = -1 } };
	uint64_t started = now_ns();
	char *target = NULL;
	int ret = 1, status;

	report_init();
	env_parse(argc, argv);
	set_tracer_comm(TRACER_COMM);
	libbpf_set_print(print_libbpf);
	raise_fd_limit();
	if (check_system() || check_targets() || invoker_init(&s.who))
		goto cleanup;
	if (env.duration > 0)
		s.deadline = started + env.duration * 1e9;
	/* From here a signal must not kill us: a file would be left half
	 * made. */
	install_signals();
	target = describe_target();
	if (!target || set_up(&s, target))
		goto cleanup;
	report_begin();
	status = run_loop(&s);
	stop_tracing(&s);
	if (finish(&s) || status)
		ret = 1;
	else
		ret = 0;
	if (env.command) {
		if (stop_signal == SIGTERM && !s.child_reaped)
			kill(s.launch.pid, SIGTERM); /* a terminal's SIGINT reached it already */
		ret = exit_status(&s);
	}
	s.launch.pid = -1; /* started: not ours to kill */
cleanup:
	launch_abort(&s.launch);
	sink_abort(s.sink);
	outdir_free(s.outdir);
	usdt_free();
	ring_buffer__free(s.rb);
	dftrace_bpf__destroy(s.skel);
	invoker_free(&s.who);
	free(target);
	return ret;
}
