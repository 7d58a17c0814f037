// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The tracer's run: the traced tree marked (-p's processes, a scope's,
 * the command started), the ring buffer drained into the record path
 * (correlate/) until the tree exits, a stop signal comes or the duration
 * ends, and the command waited for, our stop signals passed on to it.
 * Its front end, which sets the run up and ends it, is tracer.c.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "capture/attach.h"
#include "capture/recording.h"
#include "capture/run.h"
#include "correlate/trace.h"
#include "dftrace.h"
#include "dftrace.skel.h" /* after dftrace.h: its types */
#include "lib/clock.h"
#include "lib/procfs.h"

#define DRAIN_INTERVAL_MS 10
#define FLUSH_INTERVAL_NS NS_PER_S
/* Records handled between two looks at signals, the deadline and the
 * clock: libbpf's consume does not return while producers keep pace, so
 * the callback ends each batch. About 10 ms of work at full speed. */
#define BATCH_RECORDS 16384
#define BATCH_FULL (-EAGAIN)

/* The signals that stop us, in bpf/signals.bpf.c's order. */
static const int stop_signals[] = { SIGINT, SIGTERM, SIGHUP };
_Static_assert(sizeof(stop_signals) / sizeof(stop_signals[0]) == STOP_SIGNALS,
	       "a count kept for each stop signal");

/* Set from a signal handler, so globals; read by the loops below. */
static volatile sig_atomic_t stop_signal;
static volatile sig_atomic_t stops_got[STOP_SIGNALS];
static volatile sig_atomic_t dump_asked;	/* --flight: SIGUSR1 */

static void on_signal(int sig)
{
	stop_signal = sig;
	for (size_t i = 0; i < STOP_SIGNALS; i++)
		if (stop_signals[i] == sig)
			stops_got[i]++;
}

bool run_stopped(void)
{
	return stop_signal != 0;
}

/* ---- the run loop ---- */

static int on_record(void *ctx, void *data, size_t size)
{
	struct tracer *tr = ctx;

	recording_put(&tr->recording, data, size);
	trace_handle_record(tr->trace, data, size);
	return ++tr->batch < BATCH_RECORDS ? 0 : BATCH_FULL;
}

/* One bounded batch of records, waiting up to timeout_ms for the first.
 * 1 if more are waiting, 0 if the ring is empty, or -errno. */
int run_drain_batch(struct tracer *tr, int timeout_ms)
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
	if (tr->report.live_line) { /* the losses are the status line's */
		lost_read(&tr->lost, lost);
		report_status(&tr->report, trace_stats(tr->trace), lost, DFT_LOST_SLOTS);
	}
	return tree_alive(tr);
}

/* --flight: a dump asked by SIGUSR1 since last looked (dump_asked). */
static void take_dump_request(struct tracer *tr)
{
	if (dump_asked) {
		dump_asked = 0;
		trace_flight_signal(tr->trace, clock_mono_ns());
	}
}

/* Until the tree exits, a signal, the deadline or a write error; between
 * any two batches each of those is looked at. */
int run_loop(struct tracer *tr)
{
	uint64_t next_tick = clock_mono_ns() + FLUSH_INTERVAL_NS;
	int more = 0;

	while (!stop_signal && !time_up(tr)) {
		more = run_drain_batch(tr, more ? 0 : DRAIN_INTERVAL_MS);
		if (more < 0) {
			report_error("cannot read the ring buffer: %s", strerror(-more));
			return more;
		}
		probed_attach_pending(&tr->probed);
		if (trace_stats(tr->trace)->write_error)
			break;
		folds_tick(&tr->folds, tr->trace, clock_mono_ns());
		take_dump_request(tr);
		trace_flight_tick(tr->trace, clock_mono_ns());
		if (clock_mono_ns() >= next_tick) {
			next_tick = clock_mono_ns() + FLUSH_INTERVAL_NS;
			if (!tick(tr))
				break;
		} else if (trace_stats(tr->trace)->live == 0 && !tree_alive(tr)) {
			break;
		}
	}
	/* one asked as the tree ended: written with the last (flight_finish) */
	take_dump_request(tr);
	return 0;
}

static bool ignored(int sig)
{
	struct sigaction old;

	return !sigaction(sig, NULL, &old) && old.sa_handler == SIG_IGN;
}

/* sig comes from now on, whatever mask the tracer was started with (a
 * launcher's, a service's): its handler is in. */
static void unblock(int sig)
{
	sigset_t one;

	sigemptyset(&one);
	sigaddset(&one, sig);
	sigprocmask(SIG_UNBLOCK, &one, NULL);
}

void run_keep_signal_mask(struct launch *l)
{
	sigprocmask(SIG_SETMASK, NULL, &l->blocked);
}

/* INT and TERM stop us even where they were ignored (a script's
 * background job ignores INT, and scripts stop tracers with kill -INT);
 * a HUP ignored (nohup) stays ignored; each comes even where it was
 * blocked. The command gets back what was ignored when we started, and
 * the mask, as it would have untraced. */
void run_install_signals(struct launch *l)
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
	for (size_t i = 0; i < STOP_SIGNALS; i++)
		unblock(stop_signals[i]);
}

static void on_dump_signal(int sig)
{
	(void)sig;
	dump_asked = 1;
}

void run_install_dump_signal(void)
{
	struct sigaction sa = { .sa_handler = on_dump_signal, .sa_flags = SA_RESTART };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	unblock(SIGUSR1);
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

	if (run_drain_batch(tr, 0) < 0)
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

int run_start_target(struct tracer *tr)
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
int run_exit_status(struct tracer *tr)
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
