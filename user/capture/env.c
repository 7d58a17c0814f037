// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <argp.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <linux/bpf.h>
#include "capture/env.h"
#include "capture/features.h"
#include "dftrace.h"
#include "version.h"

#define DEFAULT_GZIP_LEVEL 2
#define DEFAULT_RINGBUF_SIZE (16 << 20)
#define MAX_RINGBUF_SIZE (1ull << 30)

/* The largest record the kernel side puts in the ring is an exec's
 * (bpf/lifecycle.bpf.c); a path record (bpf/syscalls.bpf.c: two paths
 * behind a dft_paths) comes next. In the ring it takes a header too,
 * rounded to 8 bytes. A smaller ring would lose every exec. */
#define LARGEST_RECORD sizeof(struct dft_exec)
_Static_assert(sizeof(struct dft_paths) + 2 * DFT_PATH_MAX <= LARGEST_RECORD &&
	       sizeof(struct dft_async) <= LARGEST_RECORD &&
	       sizeof(struct dft_gpu) <= LARGEST_RECORD &&
	       sizeof(struct dft_kept_batch) <= LARGEST_RECORD,
	       "a record larger than an exec's: LARGEST_RECORD must name it");
#define RECORD_IN_RING ((LARGEST_RECORD + BPF_RINGBUF_HDR_SZ + 7) / 8 * 8)

/* The smallest ring: the smallest power of two that holds that record
 * (libbpf rounds a ring up to whole pages itself). Said in --help and in
 * the man page. */
#define MIN_RINGBUF_KIB 16
#define MIN_RINGBUF_SIZE (MIN_RINGBUF_KIB << 10)
_Static_assert(MIN_RINGBUF_SIZE >= RECORD_IN_RING && MIN_RINGBUF_SIZE / 2 < RECORD_IN_RING,
	       "MIN_RINGBUF_KIB is not the smallest ring that holds an exec's record");
#define STR(x) #x
#define XSTR(x) STR(x)
#define RINGBUF_SIZES "a power of two from " XSTR(MIN_RINGBUF_KIB) "K to 1G"

/* --version: ours, and what this kernel offers the tracer. */
static void print_version(FILE *out, struct argp_state *state)
{
	struct features f;

	fprintf(out, "dftrace-bpf %s\n", DFTRACE_VERSION);
	if (features_probe(&f, NULL))
		fprintf(out, "kernel: no BTF at '/sys/kernel/btf/vmlinux': cannot trace\n");
	else
		features_print(&f, out);
}

void (*argp_program_version_hook)(FILE *, struct argp_state *) = print_version;

static const char doc[] =
"Trace the file I/O and device ioctls of a process tree into a\n"
"DFTracer-compatible Chrome-trace (.pfw / .pfw.gz).\n"
"\n"
"USAGE: dftrace-bpf [OPTION...] -p PID [-p PID...]\n"
"       dftrace-bpf [OPTION...] -- CMD [ARG...]\n"
"       dftrace-bpf [OPTION...] -a | --cgroup DIR | --uid USER | --comm NAME\n"
"\n"
"EXAMPLES:\n"
"    sudo dftrace-bpf -p 1234                  # attach to 1234 and its tree\n"
"    sudo dftrace-bpf -o t.pfw.gz -- python3 train.py\n"
"                                              # run as you, trace from exec\n"
"    sudo dftrace-bpf -p 1234 -d 30 -o t.pfw   # 30 s, plain text\n"
"    sudo dftrace-bpf -D traces/ -- ./app      # one file per process\n"
"    sudo dftrace-bpf -P -o - -- ls | head     # paths inline, to stdout\n"
"    sudo dftrace-bpf --torch -- python3 train.py  # PyTorch phases, no edits\n"
"    sudo dftrace-bpf --steps 1:1:3 -- ./train # steps 2-4 of 0, 1, 2...\n"
"    sudo dftrace-bpf --profile=10 -a -D prof/ # always on: totals every 10 s\n"
"    sudo dftrace-bpf --flight 30 --trigger hang=120 -D t/ -- ./train\n"
"                                              # totals, and the last 30 s of\n"
"                                              # events when a step is slow or\n"
"                                              # hangs (and on SIGUSR1)\n"
"    sudo dftrace-bpf -a -d 60 -D node/        # every process for a minute\n"
"    sudo dftrace-bpf --cgroup /sys/fs/cgroup/system.slice/slurmstepd.scope -D t/\n"
"    sudo dftrace-bpf --comm python3 --uid alice  # by name, or a user's\n"
"\n"
"Tracing stops when the traced processes have exited (with a scope and no\n"
"command: never), on Ctrl-C, SIGTERM or SIGHUP, or after -d; the file is\n"
"complete in every case. With -- CMD\n"
"the exit status is CMD's. Under sudo, CMD runs as the invoking user and\n"
"the trace file belongs to that user.\n";

enum { OPT_CGROUP = 0x100, OPT_UID, OPT_COMM, OPT_PROFILE, OPT_PID_FILE, OPT_NO_GPU,
       OPT_NO_REGION_RINGS, OPT_FLIGHT, OPT_FLIGHT_MEM, OPT_FLIGHT_AFTER, OPT_FLIGHT_MAX,
       OPT_TRIGGER, OPT_FENTRY, OPT_NO_FENTRY, OPT_HELD, OPT_FORMAT };

static const struct argp_option opts[] = {
	{ "pid", 'p', "PID", 0, "Attach to PID, its threads and descendants (repeatable)", 0 },
	{ "output", 'o', "PATH", 0, "Trace file: *.pfw plain, *.pfw.gz gzip, - stdout (default: dftrace.pfw.gz)", 0 },
	{ "output-dir", 'D', "DIR", 0, "One file per process: DIR/<comm>-<pid>.pfw.gz", 0 },
	{ "plain", 'T', NULL, 0, "With -D, write plain .pfw files", 0 },
	{ "compress-level", 'z', "N", 0, "gzip level 1..9, written by ISA-L's igzip: 1-2 its level 1 (default; the fastest here, and the smallest on trace lines), 3-5 its 2, 6-9 its 3", 0 },
	{ "duration", 'd', "SECONDS", 0, "Stop after SECONDS", 0 },
	{ "format", OPT_FORMAT, "v1|v2", 0, "DFTracer's layout: v1 (default) a JSON array with letters for \"ph\", which every DFTracer tool reads; v2 one object a line with integer \"ph\" and \"type\", totals as aggregated records (\"ph\":3, args.dft_cnt), as DFTracer 2.1.1 and later write; summary, report and merge read both", 0 },
	{ "inline-paths", 'P', NULL, 0, "Add args.fname with the path to every file event (readable in Perfetto)", 0 },
	{ "ringbuf-size", 'b', "SIZE", 0, "Kernel ring buffer size, " RINGBUF_SIZES " (smaller holds no exec), K/M/G suffix (default 16M)", 0 },
	{ "quiet", 'q', NULL, 0, "No status line and no summary", 0 },
	{ "verbose", 'v', NULL, 0, "Print libbpf's debug output", 0 },
	{ "pid-file", OPT_PID_FILE, "FILE", 0, "Write the tracer's pid to FILE once tracing has begun (probes live, targets followed): a script that starts the tracer in the background waits for it", 0 },
	{ "torch", 't', NULL, 0, "With -- CMD: label PyTorch's phases (forward, backward, step, fetch, item, save, load, transfers, collectives) in the Python program without changing it", 0 },
	{ "all", 'a', NULL, 0, "Every process on the host but the tracer, those started later too", 0 },
	{ "cgroup", OPT_CGROUP, "DIR", 0, "The processes of a cgroup v2 directory and below it (a Slurm job, a pod, a systemd unit), those moved in later too", 0 },
	{ "uid", OPT_UID, "USER", 0, "A user's processes (real uid; name or number; repeatable), those that become the user's at an exec too", 0 },
	{ "comm", OPT_COMM, "NAME", 0, "Processes whose command name is NAME (repeatable), from an exec or a rename (prctl) that gives it", 0 },
	{ "profile", OPT_PROFILE, "SECONDS", OPTION_ARG_OPTIONAL, "Totals, not events: the kernel adds up each (process, thread, call, file, phase)'s calls, bytes, time and latency histogram, written as one event each every SECONDS (default 1) and at the end", 0 },
	{ "flight", OPT_FLIGHT, "SECONDS", 0, "Always on: write the totals as --profile does, keep the last SECONDS (1 to 3600) of every event in memory, and write them out as DIR/flight-N-REASON.pfw.gz (beside -o's file) when a trigger fires, or on SIGUSR1 and `dftrace-bpf dump PID`", 0 },
	{ "flight-mem", OPT_FLIGHT_MEM, "MB", 0, "--flight's memory for the window (default 256): where it binds first, the window is shorter, and each dump says what it covers", 0 },
	{ "flight-after", OPT_FLIGHT_AFTER, "SECONDS", 0, "A dump runs on this long after its trigger (default 1, 0 to 600)", 0 },
	{ "flight-max", OPT_FLIGHT_MAX, "N", 0, "At most N dumps in all (default 20); at most one of each trigger per window", 0 },
	{ "trigger", OPT_TRIGGER, "SPEC", 0, "When --flight dumps (repeatable; default slow-step and exit): slow-step[=K] a step over K (3) times the median, hang=SECONDS no step ended for so long, slow-io=MS one I/O call so slow, exit a traced process killed or failing, signal (always on)", 0 },
	{ "no-region-rings", OPT_NO_REGION_RINGS, NULL, 0, "Take each region's begin and end from its probe, a trap each, rather than from the thread's ring of them that dftrace/usdt.h writes with no trap", 0 },
	{ "fentry", OPT_FENTRY, NULL, 0, "Trace syscalls through a fentry and fexit on each recorded syscall's function, where the kernel has them, so that other syscalls of every task pass no hook (default with --flight, -a, --cgroup, --uid and --comm: attaching them takes longer than the sys_enter and sys_exit tracepoints)", 0 },
	{ "no-fentry", OPT_NO_FENTRY, NULL, 0, "Trace syscalls through the sys_enter and sys_exit tracepoints, which every syscall of every task passes while they are attached", 0 },
	{ ENV_HELD_OPTION + 2, OPT_HELD, "PID", OPTION_HIDDEN, "", 0 },
	{ "no-gpu", OPT_NO_GPU, NULL, 0, "No probes on the GPU and collective libraries (libcuda, libnccl, libcufile): their calls are not traced", 0 },
	{ "steps", 's', "W:U:A[:R[:S]]", 0, "Record only the active steps of torch.profiler's schedule: skip S steps, then wait W, warm up U, record A, R times (0: forever). Steps are the step annotation's (DFT_USDT_SET_STEP, ai.update(step=), dftrace.profiler's step(), --torch's optimizer steps); the kernel drops the other steps' I/O", 0 },
	{},
};

static uint64_t parse_size(const char *arg, struct argp_state *state)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(arg, &end, 10);
	if (*end == 'K' || *end == 'k')
		v <<= 10, end++;
	else if (*end == 'M' || *end == 'm')
		v <<= 20, end++;
	else if (*end == 'G' || *end == 'g')
		v <<= 30, end++;
	if (errno || *end || !v || v > MAX_RINGBUF_SIZE || (v & (v - 1)))
		argp_error(state, "invalid ring buffer size '%s': need " RINGBUF_SIZES, arg);
	if (v < MIN_RINGBUF_SIZE)
		argp_error(state, "ring buffer size '%s' cannot hold an exec's record (%zu bytes): need " RINGBUF_SIZES,
			   arg, LARGEST_RECORD);
	return v;
}

static long parse_long(const char *arg, long lo, long hi, const char *what,
		       struct argp_state *state)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || *end || end == arg || v < lo || v > hi)
		argp_error(state, "invalid %s '%s'", what, arg);
	return v;
}

static bool ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), m = strlen(tail);

	return n >= m && !strcmp(s + n - m, tail);
}

/* -a is every process: another scope beside it says nothing. */
static void check_scopes(const struct env *env, struct argp_state *state)
{
	const struct dft_scope *k = &env->scope.k;

	if (!k->all)
		return;
	if (k->cgroup_level || k->nuids || k->ncomms || env->npids)
		argp_error(state, "-a traces every process already: drop %s",
			   k->cgroup_level ? "--cgroup" : k->nuids ? "--uid" :
			   k->ncomms ? "--comm" : "-p");
}

/* Options that would silently do nothing are refused. */
static void check_output_options(const struct env *env, struct argp_state *state)
{
	if (env->plain && !env->output_dir)
		argp_error(state, "-T makes -D write plain files: give -D DIR");
	if (env->gzip_level_given && env->plain)
		argp_error(state, "-z sets the gzip level, but -T writes plain files");
	if (env->gzip_level_given && env->output && !ends_with(env->output, ".gz"))
		argp_error(state, "-z sets the gzip level, but '%s' is written plain (name it *.gz)",
			   env->output);
}

static double parse_seconds(const char *arg, double lo, double hi, const char *what,
			    struct argp_state *state)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (errno || *end || end == arg || !(v >= lo && v <= hi))
		argp_error(state, "invalid %s '%s': need %g to %g", what, arg, lo, hi);
	return v;
}

/* slow-step[=K], hang=SECONDS, slow-io=MS, exit, signal */
static void parse_trigger(struct flight_opts *f, const char *arg, struct argp_state *state)
{
	const char *eq = strchr(arg, '=');
	size_t n = eq ? (size_t)(eq - arg) : strlen(arg);

#define IS(name) (n == sizeof(name) - 1 && !strncmp(arg, name, n))
	if (IS("slow-step")) {
		f->on[FLIGHT_slow_step] = true;
		f->step_k = eq ? parse_seconds(eq + 1, 1.01, 1e6, "slow-step factor", state) : 3;
	} else if (IS("hang") && eq) {
		f->on[FLIGHT_hang] = true;
		f->hang_ns = parse_seconds(eq + 1, 0.1, 86400, "hang time", state) * 1e9;
	} else if (IS("slow-io") && eq) {
		f->on[FLIGHT_slow_io] = true;
		f->io_ns = parse_seconds(eq + 1, 0.001, 3600000, "slow-io time (ms)", state) * 1e6;
	} else if ((IS("exit") || IS("signal")) && !eq) {
		f->on[IS("exit") ? FLIGHT_exit : FLIGHT_signal] = true;
	} else {
		argp_error(state, "invalid --trigger '%s': need slow-step[=K], hang=SECONDS, slow-io=MS, exit or signal",
			   arg);
	}
#undef IS
}

/* --flight's options need it, and it needs a whole trace and no -d/-P
 * loss: what would silently do nothing is refused. */
static void check_flight(struct env *env, struct argp_state *state)
{
	if (!env->flight_on) {
		if (env->triggers_given || env->flight_tuned)
			argp_error(state, "--trigger and --flight-* tune --flight: give --flight SECONDS");
		return;
	}
	if (env->steps_on)
		argp_error(state, "--flight keeps every step, --steps only some: give one");
	if (env->output && !strcmp(env->output, "-"))
		argp_error(state, "--flight writes its dumps beside the totals: give -o FILE or -D DIR, not -o -");
	if (!env->triggers_given) {
		env->flight.on[FLIGHT_slow_step] = env->flight.on[FLIGHT_exit] = true;
		env->flight.step_k = 3;
	}
	if (!env->profile_s)
		env->profile_s = 1.0;
}

/* W:U:A[:R[:S]], as torch.profiler.schedule(wait, warmup, active,
 * repeat, skip_first) takes them. */
static void parse_steps(struct env *env, const char *arg, struct argp_state *state)
{
	unsigned long long v[5] = { 0, 0, 0, 0, 0 };
	const char *p = arg;
	char *end;
	int n = 0;

	for (;;) {
		errno = 0;
		if (n == 5 || *p < '0' || *p > '9')
			break;
		v[n++] = strtoull(p, &end, 10);
		if (errno || v[n - 1] > 1000000000ull)
			break;
		p = end;
		if (*p != ':')
			break;
		p++;
	}
	/* a trailing ':' promises a number that is not there */
	if (*p || n < 3 || v[2] == 0 || p[-1] == ':')
		argp_error(state, "invalid --steps '%s': need WAIT:WARMUP:ACTIVE[:REPEAT[:SKIP_FIRST]], "
			   "whole numbers, ACTIVE at least 1", arg);
	env->steps = (struct dft_steps){ v[0], v[1], v[2], v[3], v[4] };
	env->steps_on = true;
}

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	struct env *env = state->input;
	char *end, err[512];

	switch (key) {
	case OPT_HELD:
		if (env->npids)
			argp_error(state, "a held command goes before any -p");
		env->held = true;
		__attribute__((fallthrough)); /* it is traced as -p */
	case 'p':
		if (env->npids == ENV_MAX_PIDS)
			argp_error(state, "too many -p: at most %d", ENV_MAX_PIDS);
		env->pids[env->npids++] = parse_long(arg, 1, 0x7fffffff, "pid", state);
		break;
	case 'o':
		env->output = arg;
		break;
	case 'D':
		env->output_dir = arg;
		break;
	case 'T':
		env->plain = true;
		break;
	case 'z':
		env->gzip_level = parse_long(arg, 1, 9, "compression level", state);
		env->gzip_level_given = true;
		break;
	case 'd':
		errno = 0;
		env->duration = strtod(arg, &end);
		if (errno || *end || end == arg || !(env->duration > 0))
			argp_error(state, "invalid duration '%s': need seconds > 0", arg);
		break;
	case OPT_FORMAT:
		if (!strcmp(arg, "v1"))
			env->format = TRACE_V1;
		else if (!strcmp(arg, "v2"))
			env->format = TRACE_V2;
		else
			argp_error(state, "unknown format '%s': v1 or v2", arg);
		break;
	case 'P':
		env->inline_paths = true;
		break;
	case 'b':
		env->ringbuf_size = parse_size(arg, state);
		break;
	case 'q':
		env->quiet = true;
		break;
	case 'v':
		env->verbose = true;
		break;
	case 't':
		env->torch = true;
		break;
	case 's':
		parse_steps(env, arg, state);
		break;
	case OPT_PROFILE:
		env->profile_s = 1.0;
		if (arg && (env->profile_s = strtod(arg, &end), *end || end == arg ||
			    !(env->profile_s >= 0.01 && env->profile_s <= 86400)))
			argp_error(state, "invalid --profile interval '%s': need seconds from 0.01 to 86400", arg);
		break;
	case 'a':
		scope_add_all(&env->scope);
		break;
	case OPT_NO_GPU:
		env->no_gpu = true;
		break;
	case OPT_FENTRY:
		env->fentry = 1;
		break;
	case OPT_NO_FENTRY:
		env->fentry = -1;
		break;
	case OPT_NO_REGION_RINGS:
		env->no_region_rings = true;
		break;
	case OPT_FLIGHT:
		env->flight_on = true;
		env->flight.keep_ns = parse_seconds(arg, 1, 3600, "--flight window (seconds)", state) * 1e9;
		break;
	case OPT_FLIGHT_MEM:
		env->flight_tuned = true;
		env->flight.mem = (size_t)parse_long(arg, 1, 1 << 20, "--flight-mem (MB)", state) << 20;
		break;
	case OPT_FLIGHT_AFTER:
		env->flight_tuned = true;
		env->flight.after_ns = parse_seconds(arg, 0, 600, "--flight-after (seconds)", state) * 1e9;
		break;
	case OPT_FLIGHT_MAX:
		env->flight_tuned = true;
		env->flight.max_dumps = parse_long(arg, 0, 1000000, "--flight-max", state);
		break;
	case OPT_TRIGGER:
		env->triggers_given = true;
		parse_trigger(&env->flight, arg, state);
		break;
	case OPT_PID_FILE:
		if (!*arg)
			argp_error(state, "invalid --pid-file '': need a path");
		env->pid_file = arg;
		break;
	case OPT_CGROUP:
		if (scope_add_cgroup(&env->scope, arg, err, sizeof(err)))
			argp_error(state, "%s", err);
		break;
	case OPT_UID:
		if (scope_add_uid(&env->scope, arg, err, sizeof(err)))
			argp_error(state, "%s", err);
		break;
	case OPT_COMM:
		if (scope_add_comm(&env->scope, arg, err, sizeof(err)))
			argp_error(state, "%s", err);
		break;
	case ARGP_KEY_ARG:
		env->command = &state->argv[state->next - 1];
		state->next = state->argc;
		break;
	case ARGP_KEY_END:
		if (!env->npids && !env->command && !env->scope.on)
			argp_error(state, "nothing to trace: give -p PID, -- CMD or a scope "
				   "(-a, --cgroup, --uid, --comm)");
		check_scopes(env, state);
		if (env->npids && env->command)
			argp_error(state, "-p and a command do not mix: give one");
		if (env->output && env->output_dir)
			argp_error(state, "-o and -D do not mix: give one");
		if (env->torch && !env->command && !env->held)
			argp_error(state, "--torch labels a launched program: give -- CMD");
		check_output_options(env, state);
		check_flight(env, state);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

void env_parse(struct env *env, int argc, char **argv)
{
	static const struct argp argp = { opts, parse_opt, NULL, doc, NULL, NULL, NULL };

	*env = (struct env){ .gzip_level = DEFAULT_GZIP_LEVEL,
			     .ringbuf_size = DEFAULT_RINGBUF_SIZE,
			     .flight = { .mem = 256u << 20, .after_ns = 1000000000ull,
					 .max_dumps = 20 } };
	/* Messages start "dftrace-bpf: " however the binary was invoked. */
	argv[0] = "dftrace-bpf";
	program_invocation_name = program_invocation_short_name = argv[0];
	argp_parse(&argp, argc, argv, ARGP_IN_ORDER, NULL, env);
	if (!env->output && !env->output_dir)
		env->output = "dftrace.pfw.gz";
}
