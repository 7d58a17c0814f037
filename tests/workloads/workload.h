/* Helpers shared by the test workloads.
 *
 * A workload does real syscalls and reports what it did ("ground truth") as
 * TSV records on stdout, one write(2) per record so that records from
 * several processes and threads never interleave.  tests/lib/trace.py
 * documents the record kinds and compares them with a trace.
 *
 * Control files (ready, done) go in the directory named by $WL_CTL, never in
 * the data directory whose files the tests account for exactly.
 */
#ifndef WORKLOAD_H
#define WORKLOAD_H

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#define WL_UNUSED __attribute__((unused))

static WL_UNUSED pid_t wl_pid(void) { return (pid_t)syscall(SYS_getpid); }
static WL_UNUSED pid_t wl_tid(void) { return (pid_t)syscall(SYS_gettid); }

/* Print a message on stderr and exit 99 (an error of the workload itself,
 * distinct from any status a test asks for). */
static WL_UNUSED __attribute__((noreturn, format(printf, 1, 2))) void
wl_die(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf) - 2, fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	if (n > (int)sizeof(buf) - 3)
		n = sizeof(buf) - 3;
	n += snprintf(buf + n, sizeof(buf) - n, ": %s\n", strerror(errno));
	if (write(2, buf, n) < 0) {
	}
	_exit(99);
}

/* One ground-truth record: a single write(2) to stdout. */
static WL_UNUSED __attribute__((format(printf, 1, 2))) void
wl_emit(const char *fmt, ...)
{
	static __thread char buf[24576];
	va_list ap;
	int n, saved = errno;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0 || n >= (int)sizeof(buf)) {
		errno = E2BIG;
		wl_die("wl_emit: record too long");
	}
	if (write(1, buf, n) != n)
		wl_die("wl_emit: write");
	errno = saved;
}

/* "io" record: one syscall on a file.  path2 may be NULL. */
static WL_UNUSED void wl_io2(const char *path, const char *path2,
			     const char *name, const char *sc, long ret)
{
	wl_emit("io\t%s\t%d\t%d\t%s\t%s\t%ld\t%s\n", path ? path : "-",
		wl_pid(), wl_tid(), name, sc, ret, path2 ? path2 : "-");
}

static WL_UNUSED void wl_io(const char *path, const char *name,
			    const char *sc, long ret)
{
	wl_io2(path, NULL, name, sc, ret);
}

/* Same, and die if the call failed (ret < 0 with errno set). */
static WL_UNUSED long wl_ok(long ret, const char *what)
{
	if (ret < 0)
		wl_die("%s", what);
	return ret;
}

static WL_UNUSED char *wl_path(const char *dir, const char *name)
{
	char *p;

	if (asprintf(&p, "%s/%s", dir, name) < 0)
		wl_die("asprintf");
	return p;
}

/* What /proc/self/fd shows for fd: the name the trace must give it. */
static WL_UNUSED char *wl_fdpath(int fd)
{
	char l[64], *t = malloc(PATH_MAX);
	ssize_t n;

	snprintf(l, sizeof(l), "/proc/self/fd/%d", fd);
	if (!t || (n = readlink(l, t, PATH_MAX - 1)) < 0)
		wl_die("readlink %s", l);
	t[n] = 0;
	return t;
}

static WL_UNUSED long long wl_now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* CLOCK_REALTIME: what the ranks of tests/merge.bats report their
 * collectives in (a host's clock, as the traces' timestamps are) */
static WL_UNUSED unsigned long long wl_wall_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return t.tv_sec * 1000000000ull + t.tv_nsec;
}

/* An fd of path, or exit 99. */
static WL_UNUSED int wl_open(const char *path, int flags)
{
	int fd = open(path, flags);

	if (fd < 0)
		wl_die("open %s", path);
	return fd;
}

/* Two ranks' FIFOs, to the other and from it: both open them in the
 * same order (rank 0 its "to" first, the other its "from"), so that the
 * other end's open unblocks each. */
static WL_UNUSED void wl_open_pair(int rank, const char *to_path, const char *from_path,
				   int *to, int *from)
{
	if (rank == 0) {
		*to = wl_open(to_path, O_WRONLY);
		*from = wl_open(from_path, O_RDONLY);
	} else {
		*from = wl_open(from_path, O_RDONLY);
		*to = wl_open(to_path, O_WRONLY);
	}
}

/* The time of a planted problem's calls (tests/findings.bats), and of
 * those during which the scheduler preempted the thread (ns counts them
 * too): a wait for the CPU on the way back from a call is no part of the
 * call the trace times. */
struct wl_acc {
	long long ns, preempted_ns;
};

static WL_UNUSED long wl_involuntary_switches(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_THREAD, &ru) ? 0 : ru.ru_nivcsw;
}

static WL_UNUSED long long wl_acc_start(long *sw)
{
	*sw = wl_involuntary_switches();
	return wl_now_ns();
}

static WL_UNUSED void wl_acc_stop(struct wl_acc *a, long long t0, long sw)
{
	long long dt = wl_now_ns() - t0;

	a->ns += dt;
	if (wl_involuntary_switches() != sw)
		a->preempted_ns += dt;
}

/* "planted\tRULE\tWHERE\tNS\tCALLS\tPREEMPTED" ("none": nothing to find) */
static WL_UNUSED void wl_planted(const char *rule, const char *where, const struct wl_acc *a,
				 int calls)
{
	wl_emit("planted\t%s\t%s\t%lld\t%d\t%lld\n", rule, where, a->ns, calls,
		a->preempted_ns);
}

static WL_UNUSED void wl_msleep(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static WL_UNUSED const char *wl_ctl(void)
{
	const char *c = getenv("WL_CTL");

	if (!c || !*c) {
		errno = EINVAL;
		wl_die("WL_CTL is not set");
	}
	return c;
}

/* Atomically create $WL_CTL/NAME holding TEXT (write a temp file, then
 * rename), so that a poller never sees it half written. */
static WL_UNUSED void wl_ctl_file(const char *name, const char *text)
{
	char tmp[PATH_MAX], dst[PATH_MAX];
	int fd;

	snprintf(tmp, sizeof(tmp), "%s/.%s.%d", wl_ctl(), name, wl_pid());
	snprintf(dst, sizeof(dst), "%s/%s", wl_ctl(), name);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		wl_die("open %s", tmp);
	if (write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		wl_die("write %s", tmp);
	close(fd);
	if (rename(tmp, dst) < 0)
		wl_die("rename %s", dst);
}

/* Tell the test that we are ready ($WL_CTL/ready holds our pid), then keep
 * making syscalls (a heartbeat: open/pwrite/close of $WL_CTL/heartbeat every
 * 20 ms) so that the test can see in the trace when the tracer has attached,
 * until SIGUSR1 arrives.  Returns 0 on SIGUSR1; exits 98 after timeout_s.
 * The heartbeat file is outside the data directory. */
/* Blocks the go signal. A program that starts threads before
 * wl_wait_go() calls this first: threads inherit the mask, and one that
 * did not block SIGUSR1 could take it, and its default action ends the
 * process. */
static WL_UNUSED void wl_block_go(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, set, NULL);
}

static WL_UNUSED int wl_wait_go(int timeout_s)
{
	char hb[PATH_MAX], txt[32];
	struct timespec ts = { 0, 20 * 1000000L };
	sigset_t set;
	long i;

	wl_block_go(&set);
	snprintf(hb, sizeof(hb), "%s/heartbeat", wl_ctl());
	snprintf(txt, sizeof(txt), "%d\n", wl_pid());
	wl_ctl_file("ready", txt);
	for (i = 0; i < timeout_s * 50L; i++) {
		int fd = open(hb, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);

		if (fd >= 0) {
			if (pwrite(fd, "h", 1, 0) < 0) {
			}
			close(fd);
		}
		if (sigtimedwait(&set, NULL, &ts) == SIGUSR1)
			return 0;
	}
	errno = ETIMEDOUT;
	wl_die("no SIGUSR1 within %d s", timeout_s);
}

/* Our pid into PATH (whole: written aside, then renamed), then no return
 * before SIGUSR1 (exits 99 after timeout_s): a program held, its
 * libraries loaded, until a tracer has probed them (it says so, -v). */
static WL_UNUSED void wl_hold(const char *path, int timeout_s)
{
	struct timespec ts = { 0, 20 * 1000000L };
	char tmp[PATH_MAX + 16], txt[32];
	sigset_t set;
	int fd, n;

	wl_block_go(&set);
	n = snprintf(txt, sizeof(txt), "%d\n", wl_pid());
	if (snprintf(tmp, sizeof(tmp), "%s.%d", path, wl_pid()) >= (int)sizeof(tmp))
		wl_die("path too long '%s'", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, txt, n) != n || close(fd) || rename(tmp, path))
		wl_die("cannot write '%s'", path);
	for (long i = 0; i < timeout_s * 50L; i++)
		if (sigtimedwait(&set, NULL, &ts) == SIGUSR1)
			return;
	errno = ETIMEDOUT;
	wl_die("no SIGUSR1 within %d s of '%s'", timeout_s, path);
}

/* "gpu" record: one call of the CUDA driver, NCCL or cuFile, as the tracer
 * must write it (notes/26-spec.md):
 *   gpu PID TID CAT NAME BYTES DETAIL RCAT RNAME STEP FUNC ARGS
 * CAT, NAME  the event's cat and name
 * BYTES      of the copy, allocation (a free: of what it frees), collective
 *            (count x the type's size) or file I/O (its return); "-": none
 * DETAIL     the kernel, the copy kind (HtoD DtoH DtoD PtoP default),
 *            "rank=R,nranks=N" of the communicator, or the file's path
 * RCAT RNAME the innermost annotated region around the call ("-": none)
 * STEP       the step context at the call ("-": none)
 * FUNC       the C function called
 * ARGS       k=v,... of what the call said (grid_x.., stream, count,
 *            datatype, root, peer, offset, ret, ...)
 * bytes < 0, step < 0 and NULL strings are "-". */
static WL_UNUSED void wl_gpu(const char *cat, const char *name, long long bytes,
			     const char *detail, const char *rcat,
			     const char *rname, int step, const char *func,
			     const char *args)
{
	char b[32] = "-", s[16] = "-";

	if (bytes >= 0)
		snprintf(b, sizeof(b), "%lld", bytes);
	if (step >= 0)
		snprintf(s, sizeof(s), "%d", step);
	wl_emit("gpu\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", wl_pid(),
		wl_tid(), cat, name, b, detail ? detail : "-", rcat ? rcat : "-",
		rname ? rname : "-", s, func, args ? args : "-");
}

/* A buffer of N bytes of a recognisable pattern. */
static WL_UNUSED char *wl_buf(size_t n)
{
	char *b = malloc(n ? n : 1);

	if (!b)
		wl_die("malloc");
	for (size_t i = 0; i < n; i++)
		b[i] = 'a' + i % 26;
	return b;
}

#endif
