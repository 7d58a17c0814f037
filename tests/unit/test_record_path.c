/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The record path without BPF: synthetic kernel records go in through
 * trace_handle_record(), and the model (fd tables, regions) and the lines
 * written to a memory sink are checked. Pids are above pid_max, so /proc
 * knows nothing of them. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <linux/io_uring.h>
#include <unistd.h>

#include "check.h"
#include "correlate/flight.h"
#include "correlate/trace.h"
#include "dftrace.h"
#include "model/syscalls.h"
#include "write/sink.h"

#define PID 4194401u	/* pid_max is at most 2^22 */
#define CHILD 4194402u

static struct trace *t;

/* calloc's next failures (no memory): the rest is glibc's own. */
static int calloc_fails;
extern void *__libc_calloc(size_t n, size_t size);

void *calloc(size_t n, size_t size)
{
	if (calloc_fails > 0) {
		calloc_fails--;
		errno = ENOMEM;
		return NULL;
	}
	return __libc_calloc(n, size);
}
static struct sink *out;
static uint64_t clock_ns = 1000000000;

/* A trace of PID, launched (not exec'd yet: its mapped pages are the
 * tracer's own) or found running. */
static void new_trace_with(struct trace_config *cfg)
{
	out = sink_memory();
	cfg->single = out;
	if (trace_new(&t, cfg)) {
		printf("Bail out! trace_new failed\n");
		exit(1);
	}
	trace_adopt(t, PID, clock_ns);
}

static void new_trace_of(bool launched)
{
	struct trace_config cfg = { .cmdline = "unit test", .root_pid = PID,
				    .root_launched = launched };

	new_trace_with(&cfg);
}

static void new_trace(void)
{
	new_trace_of(true);
}

static void free_trace(void)
{
	trace_free(t);
	sink_abort(out);
}

static struct dft_header header(int kind, uint32_t pid, uint32_t tid, int nr)
{
	clock_ns += 1000;
	return (struct dft_header){ .kind = kind, .nr = nr, .tgid = pid,
				    .tid = tid, .ts = clock_ns };
}

static void feed(void *rec, size_t size)
{
	trace_handle_record(t, rec, size);
}

/* Calls (and regions: value, cat_ptr and name_ptr in ret, args[0] and
 * args[1]) of one thread as its batch holds them; the record's size. */
static size_t kept_batch(struct dft_kept_batch *b, const struct dft_io *r, int n)
{
	memset(b, 0, sizeof(*b));
	b->h = (struct dft_header){ .kind = DFT_EV_KEPT, .nr = n, .tgid = r[0].h.tgid,
				    .tid = r[0].h.tid, .ts = r[0].h.ts };
	for (int i = 1; i < n; i++)	/* the earliest: an initializer's order is free */
		if (r[i].h.ts < b->h.ts)
			b->h.ts = r[i].h.ts;
	for (int i = 0; i < n; i++) {
		struct dft_kept *k = &b->e[i];

		*k = (struct dft_kept){ .dts = r[i].h.ts - b->h.ts, .dur = r[i].h.io_dur,
					.nr = r[i].h.nr, .kind = r[i].h.kind,
					.flags = r[i].h.flags };
		if (k->kind == DFT_EV_IO) {
			k->fd = r[i].args[0];
			k->io.ret = r[i].ret;
			k->io.args[0] = r[i].args[1];
			k->io.args[1] = r[i].args[2];
		} else {
			k->annot.value = r[i].ret;
			k->annot.cat_ptr = r[i].args[0];
			k->annot.name_ptr = r[i].args[1];
		}
	}
	return sizeof(b->h) + n * sizeof(b->e[0]);
}

static void feed_kept(const struct dft_io *r, int n)
{
	struct dft_kept_batch b;

	feed(&b, kept_batch(&b, r, n));
}

/* The same, read from the live thread before its batch is sent. */
static void peek_kept(const struct dft_io *r, int n)
{
	struct dft_kept_batch b;

	kept_batch(&b, r, n);
	trace_peek_kept(t, &b, n);
}

/* A syscall without path arguments. */
static void sys(uint32_t pid, int nr, long ret, uint64_t a0, uint64_t a1,
		uint64_t a2)
{
	struct dft_syscall e = { header(DFT_EV_SYSCALL, pid, pid, nr), 1000, ret,
				 { a0, a1, a2 } };

	feed(&e, sizeof(e));
}

/* A syscall whose argument `at` is the path. */
static void sys_path(uint32_t pid, int nr, long ret, const char *path,
		     uint64_t a0, uint64_t a2)
{
	struct {
		struct dft_paths p;
		char data[256];
	} r = { 0 };
	size_t n = strlen(path) + 1;

	r.p.sc = (struct dft_syscall){ header(DFT_EV_PATHS, pid, pid, nr), 1000,
				       ret, { a0, 0, a2 } };
	r.p.len[0] = n;
	memcpy(r.data, path, n);
	feed(&r, sizeof(r.p) + n);
}

/* An annotation's record with its strings, timed now. */
static struct dft_annot annot_rec(uint32_t pid, int op, const char *cat, const char *name,
				  long long value)
{
	struct dft_annot e = { .h = header(DFT_EV_ANNOT, pid, pid, op),
			       .value = value };

	snprintf(e.cat, sizeof(e.cat), "%s", cat ? cat : "");
	snprintf(e.name, sizeof(e.name), "%s", name ? name : "");
	return e;
}

static void annot(uint32_t pid, int op, const char *cat, const char *name,
		  long long value)
{
	struct dft_annot e = annot_rec(pid, op, cat, name, value);

	feed(&e, sizeof(e));
}

/* The lines written so far that contain every one of the fragments. */
static int lines_with(int n, ...)
{
	char *text = strndup(out->buf.p, out->buf.len), *line, *save = NULL;
	int count = 0;

	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		va_list ap;
		bool all = true;

		va_start(ap, n);
		for (int i = 0; i < n; i++)
			all &= strstr(line, va_arg(ap, const char *)) != NULL;
		va_end(ap);
		count += all;
	}
	free(text);
	return count;
}

static const char *fd_name(uint32_t pid, int fd)
{
	const struct proc *p = proc_get(trace_model(t), pid);

	return p && (uint32_t)fd < p->nfds && p->fds[fd].path ?
		       p->fds[fd].path->str : NULL;
}

static void test_correlation(void)
{
	new_trace();
	sys_path(PID, SYS_chdir, 0, "/work", 0, 0);
	sys_path(PID, SYS_openat, 5, "data/../data/x.bin", AT_FDCWD, O_RDONLY);
	CHECK_STREQ(fd_name(PID, 5), "/work/data/x.bin",
		    "openat relative to the cwd a chdir set names fd 5");
	sys(PID, SYS_read, 100, 5, 0, 4096);
	CHECK(lines_with(3, "\"name\":\"read\"", "\"ret\":100", "\"fhash\":") == 1,
	      "the read is written with its bytes and file");
	CHECK(lines_with(2, "\"name\":\"FH\"", "\"name\":\"/work/data/x.bin\"") == 1,
	      "and the file's FH line, once");
	sys(PID, SYS_dup2, 9, 5, 9, 0);
	CHECK_STREQ(fd_name(PID, 9), "/work/data/x.bin", "dup2 makes fd 9 the same file");
	sys_path(PID, SYS_openat, 6, "/etc/c", AT_FDCWD, O_RDONLY | O_CLOEXEC);
	sys(PID, SYS_close, 0, 5, 0, 0);
	CHECK(fd_name(PID, 5) == NULL && fd_name(PID, 9) != NULL,
	      "close forgets fd 5, not its duplicate");
	CHECK(lines_with(2, "\"name\":\"close\"", "\"fd\":5") == 1 &&
	      lines_with(3, "\"name\":\"close\"", "\"fd\":5", "\"fhash\":") == 1,
	      "the close is written naming the file it closed");

	struct dft_fork f = { header(DFT_EV_FORK, PID, PID, 0), CHILD, CHILD, "child" };

	feed(&f, sizeof(f));
	CHECK_STREQ(fd_name(CHILD, 9), "/work/data/x.bin", "a forked child inherits fds");
	sys(CHILD, SYS_close, 0, 9, 0, 0);
	CHECK(fd_name(CHILD, 9) == NULL && fd_name(PID, 9) != NULL,
	      "the child's close leaves the parent's fd");

	struct dft_exec x = { .h = header(DFT_EV_EXEC, CHILD, CHILD, 0),
			      .old_tid = CHILD };

	snprintf(x.comm, sizeof(x.comm), "python3");
	snprintf(x.filename, sizeof(x.filename), "bin/../bin/tool");
	x.filename_len = strlen(x.filename) + 1;
	feed(&x, sizeof(x));
	CHECK(fd_name(CHILD, 6) == NULL, "exec drops close-on-exec fds");
	CHECK_STREQ(proc_get(trace_model(t), CHILD)->exe->str, "/work/bin/tool",
		    "exec names the program execve() was given, seen from the cwd");
	CHECK(lines_with(2, "\"name\":\"exec\"", "\"exec_hash\":") == 1,
	      "the exec event names the program");

	snprintf(x.comm, sizeof(x.comm), "exe");
	snprintf(x.filename, sizeof(x.filename), "/proc/self/exe");
	x.filename_len = strlen(x.filename) + 1;
	x.h = header(DFT_EV_EXEC, CHILD, CHILD, 0);
	feed(&x, sizeof(x));
	CHECK_STREQ(proc_get(trace_model(t), CHILD)->exe->str, "/work/bin/tool",
		    "an exec of /proc/self/exe runs the program it ran");
	CHECK_STREQ(proc_get(trace_model(t), CHILD)->comm, "tool",
		    "and is named after it, not 'exe'");

	struct dft_exit q = { .h = header(DFT_EV_EXIT, CHILD, CHILD, 0),
			      .exit_code = 3 << 8 };

	q.h.flags = DFT_EXIT_GROUP_DEAD;
	feed(&q, sizeof(q));
	CHECK(proc_get(trace_model(t), CHILD) == NULL, "an exited process is gone");
	CHECK(lines_with(3, "\"name\":\"exit\"", "\"exit_code\":3", "\"pid\":4194402") == 1,
	      "its exit event says exit code 3");
	free_trace();
}

static void test_annotations(void)
{
	new_trace();
	annot(PID, DFT_ANNOT_CTX_INT, "epoch", NULL, 2);
	annot(PID, DFT_ANNOT_CTX_INT, "ret", NULL, 7);
	annot(PID, DFT_ANNOT_BEGIN, "pipeline", "train", 0);
	annot(PID, DFT_ANNOT_BEGIN, "dataloader", "fetch.iter", 1);
	sys_path(PID, SYS_openat, 3, "/d/a", AT_FDCWD, O_RDONLY);
	annot(PID, DFT_ANNOT_ARG_INT, "step", NULL, 5);
	annot(PID, DFT_ANNOT_END, "dataloader", "fetch.iter", 1);
	CHECK(lines_with(5, "\"name\":\"open\"", "\"phase\":\"fetch.iter\"",
			 "\"level\":3", "\"epoch\":2", "\"user_ret\":7") == 1,
	      "I/O in a region: its phase, level 3, the context, a clashing key renamed");
	CHECK(lines_with(4, "\"name\":\"fetch.iter\"", "\"level\":2", "\"count\":1",
			 "\"step\":5") == 1,
	      "a region takes the args it has when it ends");

	annot(PID, DFT_ANNOT_BEGIN, "dataloader", "fetch.iter", 2);
	annot(PID, DFT_ANNOT_END, "dataloader", "fetch.iter", -1);
	CHECK(lines_with(2, "\"name\":\"fetch.iter\"", "\"count\":2") == 0,
	      "an end with count -1 drops an empty region");
	annot(PID, DFT_ANNOT_BEGIN, "dataloader", "fetch.iter", 3);
	sys(PID, SYS_read, 10, 3, 0, 10);
	annot(PID, DFT_ANNOT_END, "dataloader", "fetch.iter", -1);
	CHECK(lines_with(2, "\"name\":\"fetch.iter\"", "\"count\":3") == 1,
	      "but keeps one with events inside, so that their p_idx names it");

	annot(PID, DFT_ANNOT_META, "pipeline", "epoch", 0);
	annot(PID, DFT_ANNOT_END, "pipeline", "train", 0);
	annot(PID, DFT_ANNOT_META, "pipeline", "epoch", 1);
	CHECK(lines_with(2, "\"name\":\"CM\"", "\"name\":\"epoch.start\"") == 1 &&
	      lines_with(3, "\"name\":\"CM\"", "\"epoch.start\"", "{\"id\":") == 1,
	      "a CM mark inside a region takes its id");
	CHECK(lines_with(2, "\"name\":\"CM\"", "\"epoch.end\"") == 1 &&
	      lines_with(3, "\"name\":\"CM\"", "\"epoch.end\"", "{\"id\":") == 0,
	      "one outside any region has none");
	annot(PID, DFT_ANNOT_END, "pipeline", "stray", 0);
	CHECK(lines_with(2, "\"name\":\"stray\"", "\"unbalanced\":\"end_without_begin\"") == 1,
	      "an end without a begin stays visible");
	free_trace();
}

/* Every X event of the process has an id of its own, start and end too. */
static void test_ids_and_lines(void)
{
	char *text, *line, *save = NULL, *p;
	uint64_t ids[64];
	int n = 0, dup = 0;
	uint64_t lost[DFT_LOST_SLOTS] = { 0 };

	new_trace();
	for (int i = 0; i < 5; i++)
		sys_path(PID, SYS_openat, 3 + i, "/d/f", AT_FDCWD, O_RDONLY);
	annot(PID, DFT_ANNOT_BEGIN, "compute", "forward", 0);
	annot(PID, DFT_ANNOT_END, "compute", "forward", 0);
	trace_finish(t, lost, DFT_LOST_SLOTS);
	text = strndup(out->buf.p, out->buf.len);
	for (line = strtok_r(text, "\n", &save); line && n < 64;
	     line = strtok_r(NULL, "\n", &save))
		if (strstr(line, "\"ph\":\"X\"") && (p = strstr(line, "{\"id\":")))
			ids[n++] = strtoull(p + 6, NULL, 10);
	for (int i = 0; i < n; i++)
		for (int j = 0; j < i; j++)
			dup += ids[i] == ids[j];
	CHECK(n == 8 && dup == 0, "start, 5 opens, a region and end: 8 ids, all different (%d, %d repeated)",
	      n, dup);
	CHECK(lines_with(2, "\"name\":\"HH\"", "\"args\":{\"hhash\":\"") == 1 &&
	      lines_with(2, "\"name\":\"FH\"", "\"args\":{\"hhash\":\"") == 1 &&
	      lines_with(2, "\"name\":\"SH\"", "\"args\":{\"hhash\":\"") >= 1,
	      "HH, FH and SH lines carry args.hhash, as DFTracer's writer");
	CHECK(strncmp(out->buf.p, "[\n", 2) == 0 &&
	      out->buf.len > 2 && memcmp(out->buf.p + out->buf.len - 2, "]\n", 2) == 0,
	      "the file opens with [ and ends with ]");
	free(text);
	free_trace();
}

/* The line of the last event written, from its "name" on (ids differ). */
static char *last_event(void)
{
	char *text = strndup(out->buf.p, out->buf.len), *line, *save = NULL, *last = NULL;

	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (strstr(line, "\"ph\":\"X\""))
			last = line;
	last = last && strstr(last, "\"name\"") ? strdup(strstr(last, "\"name\"")) : NULL;
	free(text);
	return last;
}

/* The X events written from byte from of the output on, each from its
 * name on (ids differ), one per line; *n: how many. */
static char *events_since(size_t from, int *n)
{
	char *text = strndup(out->buf.p + from, out->buf.len - from), *line, *save = NULL;
	char *all = calloc(1, out->buf.len - from + 1);

	*n = 0;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!strstr(line, "\"ph\":\"X\"") || !strstr(line, "\"name\""))
			continue;
		strcat(strcat(all, strstr(line, "\"name\"")), "\n");
		++*n;
	}
	free(text);
	return all;
}

/* A thread's batch (its calls as struct dft_kept under one header) is
 * written as its calls sent one by one as dft_io; bytes short of a
 * whole entry at its end are dropped. The fd, 32 bits in a batch, is
 * written as a dft_io's, also where it is negative. */
static void check_io_batch(void)
{
	struct dft_io calls[4] = {
		{ header(DFT_EV_IO, PID, PID, SYS_pread64), 4096, { 5, 4096, 0 } },
		{ header(DFT_EV_IO, PID, PID, SYS_lseek), 8192, { 5, 8192, SEEK_SET } },
		{ header(DFT_EV_IO, PID, PID, SYS_read), 100, { 5, 4096 } },
		{ header(DFT_EV_IO, PID, PID, SYS_read), -EBADF, { (uint32_t)-1, 4096, 0 } },
	};
	struct dft_kept_batch b;
	char *one_by_one, *batched, buf[sizeof(b) + 20] = { 0 };
	size_t from = out->buf.len, size;
	int n1, n2;

	for (int i = 0; i < 4; i++)
		feed(&calls[i], sizeof(calls[i]));
	one_by_one = events_since(from, &n1);
	from = out->buf.len;
	size = kept_batch(&b, calls, 4);
	memcpy(buf, &b, size);
	feed(buf, size + 20);
	batched = events_since(from, &n2);
	CHECK(n1 == 4 && n2 == 4 && !strcmp(one_by_one, batched) &&
	      strstr(batched, "\"fd\":-1,"),
	      "a batch of 4 calls (and 20 stray bytes) is written as the 4 sent one by one (%d, %d events)",
	      n1, n2);
	if (strcmp(one_by_one, batched))
		printf("#   one by one:\n%s#   batched:\n%s", one_by_one, batched);
	free(one_by_one);
	free(batched);
}

/* Whether text holds fmt with 0 .. n - 1, each once, in that order. */
static bool in_order(const char *text, const char *fmt, int n)
{
	const char *at = text;
	char want[64];

	for (int i = 0; i < n; i++) {
		snprintf(want, sizeof(want), fmt, i);
		at = strstr(at, want);
		if (!at || strstr(at + 1, want) || strstr(text, want) != at)
			return false;
		at++;
	}
	return true;
}

/* A live thread's kept calls read before their batch is sent (a dump is
 * due, trace_peek_kept()) are written then, once: not again by a later
 * peek, nor when the batch comes; a call taken before is not taken
 * again; what the batch adds is written. */
static void check_peeked(void)
{
	struct dft_io r[5];
	char *once, *peeked;
	size_t from;
	int n1, n2;

	for (int i = 0; i < 5; i++)
		r[i] = (struct dft_io){ header(DFT_EV_IO, PID, PID, SYS_pread64), 100 + i,
					{ 5, 4096, 4096 * i } };
	from = out->buf.len;
	for (int i = 0; i < 5; i++)
		feed(&r[i], sizeof(r[i]));
	once = events_since(from, &n1);
	for (int i = 0; i < 5; i++)
		r[i].h.ts += 100000;	/* the same five calls, later */
	from = out->buf.len;
	feed(&r[0], sizeof(r[0]));	/* sent alone */
	peek_kept(&r[0], 3);		/* the first again: taken already */
	peek_kept(&r[1], 2);		/* the same two, at a second dump */
	feed_kept(&r[1], 3);		/* the batch, with one more */
	feed(&r[4], sizeof(r[4]));
	peeked = events_since(from, &n2);
	CHECK(n1 == 5 && n2 == 5, "5 calls, two of them peeked twice and sent after: 5 events, "
	      "as sent once (%d, %d)", n1, n2);
	CHECK(in_order(peeked, "\"ret\":10%d", 5), "each once, in order");
	if (!in_order(peeked, "\"ret\":10%d", 5))
		printf("#   sent once:\n%s#   peeked:\n%s", once, peeked);
	free(once);
	free(peeked);
}

/* A region's begin or end read from the thread's ring, at place there. */
static struct dft_annot ring_annot(int op, const char *name, uint32_t place)
{
	struct dft_annot e = annot_rec(PID, op, "ring", name, 0);

	e.h.flags = DFT_ANNOT_RING;
	e.h.io_dur = place;
	return e;
}

/* The regions a dump took from a live thread's ring before the kernel
 * side read it (trace_ring_peeked()) are written once: not again when
 * the kernel side sends them, unlike the ring's next ones, or those of a
 * ring begun anew (an exec's), whose places start again. */
static void check_ring_peeked(void)
{
	struct dft_annot peek[3] = { ring_annot(DFT_ANNOT_BEGIN, "r0", 10),
				     ring_annot(DFT_ANNOT_END, "r0", 11),
				     ring_annot(DFT_ANNOT_BEGIN, "r1", 12) };
	struct dft_annot next = ring_annot(DFT_ANNOT_END, "r1", 13), anew[2];
	size_t from = out->buf.len;
	char *got;
	int n;

	for (int i = 0; i < 3; i++)
		feed(&peek[i], sizeof(peek[i]));
	trace_ring_peeked(t, PID, 13, peek[2].h.ts);
	for (int i = 0; i < 3; i++)	/* the kernel side's copies */
		feed(&peek[i], sizeof(peek[i]));
	feed(&next, sizeof(next));
	anew[0] = ring_annot(DFT_ANNOT_BEGIN, "r2", 0);
	anew[1] = ring_annot(DFT_ANNOT_END, "r2", 1);
	feed(&anew[0], sizeof(anew[0]));
	feed(&anew[1], sizeof(anew[1]));
	got = events_since(from, &n);
	CHECK(n == 3 && in_order(got, "\"name\":\"r%d\"", 3),
	      "regions a peek took from a ring, then sent: each once; the ring's next, "
	      "and a new ring's, kept (%d events)", n);
	if (n != 3)
		printf("#   got:\n%s", got);
	free(got);
}

/* A call sent in one cache line (dft_io) is written as the same call
 * sent whole (dft_syscall): the arguments its config keeps, in place. */
static void check_io_as_syscall(int nr, const uint64_t args[DFT_SC_NARGS],
				const uint64_t packed[DFT_IO_NARGS], const char *what)
{
	struct dft_syscall whole = { header(DFT_EV_SYSCALL, PID, PID, nr), 4321, 4096, { 0 } };
	struct dft_io io = { whole.h, 4096, { packed[0], packed[1], packed[2] } };
	char *a, *b;

	memcpy(whole.args, args, sizeof(whole.args));
	io.h.kind = DFT_EV_IO;
	io.h.io_dur = 4321;
	feed(&whole, sizeof(whole));
	a = last_event();
	feed(&io, sizeof(io));
	b = last_event();
	CHECK(a && b && !strcmp(a, b), "%s: the dft_io is written as the dft_syscall", what);
	if (!a || !b || strcmp(a, b))
		printf("#   whole: %s\n#   io:    %s\n", a ? a : "(null)", b ? b : "(null)");
	free(a);
	free(b);
}

static void test_io_records(void)
{
	struct dft_sc_cfg cfg[DFT_NR_MAX];
	struct dft_io cut = { header(DFT_EV_IO, PID, PID, SYS_read), 9, { 5, 9 } };
	size_t before;

	new_trace();
	sc_fill_config(cfg);
	CHECK(cfg[SYS_pread64].io_args == 0xd && cfg[SYS_read].io_args == 0x5 &&
	      cfg[SYS_lseek].io_args == 0x7 && cfg[SYS_ioctl].io_args == 0x7,
	      "pread keeps fd, count, offset; read fd, count; lseek and ioctl all three (%#x %#x %#x %#x)",
	      cfg[SYS_pread64].io_args, cfg[SYS_read].io_args, cfg[SYS_lseek].io_args,
	      cfg[SYS_ioctl].io_args);
	CHECK(cfg[SYS_pread64].io_arg[0] == 0 && cfg[SYS_pread64].io_arg[1] == 2 &&
	      cfg[SYS_pread64].io_arg[2] == 3 && cfg[SYS_read].io_arg[1] == 2 &&
	      cfg[SYS_lseek].io_arg[2] == 2,
	      "each slot of a dft_io names the argument it keeps: pread fd, count, offset");
	CHECK(!cfg[SYS_openat].io_args && !cfg[SYS_close].io_args && !cfg[SYS_stat].io_args &&
	      !cfg[SYS_mmap].io_args && !cfg[SYS_pipe2].io_args && !cfg[SYS_preadv2].io_args,
	      "not for calls that change fd tables, name paths, fill fds or keep four arguments");
	sys_path(PID, SYS_openat, 5, "/d/io.bin", AT_FDCWD, O_RDONLY);
	check_io_as_syscall(SYS_pread64, (uint64_t[DFT_SC_NARGS]){ 5, 0, 4096, 1ull << 40 },
			    (uint64_t[DFT_IO_NARGS]){ 5, 4096, 1ull << 40 }, "pread");
	check_io_as_syscall(SYS_lseek, (uint64_t[DFT_SC_NARGS]){ 5, 8192, SEEK_SET },
			    (uint64_t[DFT_IO_NARGS]){ 5, 8192, SEEK_SET }, "lseek");
	check_io_as_syscall(SYS_ioctl, (uint64_t[DFT_SC_NARGS]){ 5, 0xc0186201, 0x7ffc0000 },
			    (uint64_t[DFT_IO_NARGS]){ 5, 0xc0186201, 0x7ffc0000 }, "ioctl");
	check_io_batch();
	check_peeked();
	check_ring_peeked();
	before = out->buf.len;
	feed(&cut, sizeof(cut) - 1);
	CHECK(out->buf.len == before, "a dft_io cut short is dropped");
	free_trace();
}

/* An io_uring read of fd 5 submitted now, as request req. */
static void uring_submit(uint64_t req)
{
	struct dft_async e = { .h = header(DFT_EV_URING_SUBMIT, PID, PID, 0),
			       .offset = 4096, .len = 4096, .fd = 5,
			       .opcode = IORING_OP_READ, .engine = DFT_ASYNC_URING,
			       .req = req };

	feed(&e, offsetof(struct dft_async, path));
}

/* Its end, ms milliseconds after the last record. */
static void uring_done(uint64_t req, long long res, uint64_t ms)
{
	struct dft_uring_done d = { .h = { .kind = DFT_EV_URING_DONE, .tgid = CHILD,
					   .tid = CHILD },
				    .req = req, .res = res };

	d.h.ts = clock_ns += ms * 1000000;
	feed(&d, sizeof(d));
}

/* A request's submission and end come as two records, paired by its
 * address; its event is written at the end, charged to the submitter. */
static void test_uring_records(void)
{
	new_trace();
	sys_path(PID, SYS_openat, 5, "/d/u.bin", AT_FDCWD, O_RDONLY);
	uring_submit(0xa0);
	uring_submit(0xb0);
	uring_done(0xb0, 4096, 3);
	uring_done(0xa0, 100, 2);
	CHECK(lines_with(4, "\"name\":\"io_uring_read\"", "\"dur\":3000,",
			 "\"ret\":4096", "\"offset\":4096") == 1 &&
	      lines_with(3, "\"name\":\"io_uring_read\"", "\"dur\":5001,", "\"ret\":100") == 1,
	      "two requests ended out of order: each its own result and time");
	CHECK(lines_with(2, "\"name\":\"io_uring_read\"", "\"tid\":4194401,") == 2,
	      "charged to the thread that submitted, not the one that completed");
	uring_done(0xa0, 7, 1);
	uring_done(0xc0, 7, 1);
	CHECK(lines_with(2, "\"name\":\"io_uring_read\"", "\"ret\":7") == 0,
	      "an end whose start was paired already, or never came, writes nothing");
	uring_submit(0xd0);
	uring_submit(0xd0);
	uring_done(0xd0, 11, 4);
	CHECK(lines_with(3, "\"name\":\"io_uring_read\"", "\"ret\":11", "\"dur\":4000,") == 1,
	      "an address submitted again (its end lost): the later request");
	for (uint64_t req = 1; req <= 65536; req++)
		uring_submit(req << 8);
	uring_submit(0xe0);
	uring_done(1 << 8, 21, 1);
	uring_done(65536ull << 8, 22, 1);
	uring_done(0xe0, 23, 1);
	CHECK(lines_with(1, "\"ret\":21") == 0 && lines_with(1, "\"ret\":22") == 1 &&
	      lines_with(1, "\"ret\":23") == 1,
	      "past 65536 requests never ended the older half goes, the newer stay");
	free_trace();
}

/* What the kernel side does beyond each call's record: one byte per
 * syscall number, from the table (no number in bpf/). */
static void test_kernel_kinds(void)
{
	struct dft_sc_cfg cfg[DFT_NR_MAX];

	sc_fill_config(cfg);
	CHECK(cfg[SYS_mmap].kind == DFT_SC_MMAP && cfg[SYS_fcntl].kind == DFT_SC_FCNTL &&
	      cfg[SYS_close].kind == DFT_SC_CLOSE && cfg[SYS_openat2].kind == DFT_SC_OPENAT2,
	      "mmap, fcntl, close and openat2 have their kinds (%d %d %d %d)",
	      cfg[SYS_mmap].kind, cfg[SYS_fcntl].kind, cfg[SYS_close].kind, cfg[SYS_openat2].kind);
	CHECK(cfg[SYS_io_submit].kind == DFT_SC_AIO_SUBMIT &&
	      cfg[SYS_io_getevents].kind == DFT_SC_AIO_EVENTS &&
	      cfg[SYS_io_pgetevents].kind == DFT_SC_AIO_EVENTS &&
	      cfg[SYS_io_uring_register].kind == DFT_SC_URING_REGISTER,
	      "AIO's and io_uring_register's calls are handled whole by the kernel side");
	CHECK(cfg[SYS_read].kind == DFT_SC_PLAIN && cfg[SYS_openat].kind == DFT_SC_PLAIN &&
	      cfg[SYS_close_range].kind == DFT_SC_PLAIN,
	      "the others are plain");
}

/* floor(log2(ns)), capped: what the kernel's branch-free steps must give. */
static unsigned int bucket_by_loop(unsigned long long ns)
{
	unsigned int b = 0;

	while (ns > 1) {
		ns >>= 1;
		b++;
	}
	return b < DFT_FOLD_BUCKETS ? b : DFT_FOLD_BUCKETS - 1;
}

/* The fold histogram's bucket and the region id, shared with bpf/. */
static void test_fold_shared(void)
{
	struct dft_annot a = { 0 }, b = { 0 };
	unsigned long long bad = 0;
	bool same = true;

	for (unsigned long long ns = 0; ns < (1u << 20); ns++)
		if (dft_fold_bucket(ns) != bucket_by_loop(ns) && !bad)
			bad = ns;
	for (int k = 1; k < 64; k++)
		for (int d = -1; d <= 1; d++)
			if (dft_fold_bucket((1ull << k) + d) != bucket_by_loop((1ull << k) + d) && !bad)
				bad = (1ull << k) + d;
	CHECK(!bad && dft_fold_bucket(~0ull) == DFT_FOLD_BUCKETS - 1,
	      "a duration's bucket is floor(log2(ns)), 0 for 0 and 1, the last past 2^31 (first wrong: %llu)",
	      bad);
	strcpy(a.cat, "compute");
	strcpy(a.name, "forward");
	strcpy(b.cat, "compute");
	strcpy(b.name, "forward");
	same = dft_phase_id(&a) == dft_phase_id(&b);
	strcpy(b.name, "backward");
	CHECK(same && dft_phase_id(&a) != dft_phase_id(&b) && dft_phase_id(&a) != 0,
	      "a region's id: the same cat and name, the same id; another name, another");
	memset(&b, 0, sizeof(b));
	strcpy(b.cat, "compute");
	strcpy(b.name + 1, "forward");	/* "" then junk: the kernel zeroes it */
	CHECK(dft_phase_id(&b) != dft_phase_id(&a),
	      "the id covers the whole buffers, so the kernel side zeroes them first");
}

/* --flight: the kernel folds none of the calls it sends, so user space
 * folds each as it comes, once; a call a peek took is folded when its
 * batch comes (not at the peek: a batch the ring has no room for the
 * kernel folds itself), and the totals are keyed as --profile's: by
 * file, region, epoch and step. */
static void test_flight_folds(void)
{
	struct trace_config cfg = { .cmdline = "unit test", .root_pid = PID, .profile = true };
	char dir[] = "/tmp/dft-unit-XXXXXX", prefix[64];
	struct flight_opts o = { .keep_ns = 30000000000ull, .after_ns = 1000000000ull,
				 .mem = 1 << 20, .max_dumps = 1, .prefix = prefix };
	struct dft_io r[7];

	if (!mkdtemp(dir)) {
		printf("Bail out! mkdtemp failed\n");
		exit(1);
	}
	snprintf(prefix, sizeof(prefix), "%s/t-", dir);
	new_trace_with(&cfg);
	CHECK(trace_flight_start(t, &o) == 0, "--flight starts");
	sys_path(PID, SYS_openat, 5, "/d/flight.bin", AT_FDCWD, O_RDONLY);
	for (int i = 0; i < 7; i++)
		r[i] = (struct dft_io){ header(DFT_EV_IO, PID, PID, SYS_pread64), 100 + i,
					{ 5, 4096, 4096 * i } };
	feed(&r[0], sizeof(r[0]));
	peek_kept(&r[1], 2);		/* a dump: two calls still kept */
	feed_kept(&r[1], 3);		/* their batch, with one more */
	annot(PID, DFT_ANNOT_BEGIN, "compute", "step", 0);
	feed_kept(&r[4], 2);		/* two calls inside a region */
	r[6].h = header(DFT_EV_IO, PID, PID, SYS_pread64);
	peek_kept(&r[6], 1);		/* kept, then folded by the kernel */
	annot(PID, DFT_ANNOT_END, "compute", "step", 0);
	trace_write_folds(t);
	CHECK(lines_with(4, "\"name\":\"pread\"", "\"folded\":\"profile\"", "\"calls\":4",
			 "\"ret\":406,") == 1,
	      "the four calls sent outside the region: one total, 100 to 103 bytes, "
	      "the two a peek took counted once");
	CHECK(lines_with(4, "\"name\":\"pread\"", "\"calls\":2", "\"ret\":209,",
			 "\"phase\":\"step\"") == 1,
	      "the two inside compute.step: a total of their own, in its phase");
	CHECK(lines_with(2, "\"name\":\"pread\"", "\"calls\":") == 2,
	      "the call only a peek took is the kernel's to fold: not here");
	CHECK(lines_with(3, "\"name\":\"open\"", "\"folded\":\"profile\"", "\"calls\":1") == 1,
	      "the open, a call the model needs, is in the totals too");
	CHECK(lines_with(2, "\"name\":\"FH\"", "\"name\":\"/d/flight.bin\"") == 1,
	      "the totals name the file the fd named");
	free_trace();
	rmdir(dir);
}

/* A run of mapped pages comes as the thread touched its ranges: they may
 * overlap, and user space merges them. */
static void test_mmap_records(void)
{
	struct dft_mmap m = { .h = header(DFT_EV_MMAP, PID, PID, 0), .file = { 9, 77 },
			      .n = 4, .write = 1, .lo = { 2, 0, 10, 5 }, .hi = { 6, 4, 12, 6 } };
	char want[64];
	long page = sysconf(_SC_PAGESIZE);

	new_trace_of(false);
	m.last_ts = m.h.ts + 500;
	feed(&m, sizeof(m));
	snprintf(want, sizeof(want), "\"ret\":%ld,", 8 * page);
	CHECK(lines_with(3, "\"name\":\"mmap_write\"", want, "\"pages\":8") == 1,
	      "[2,6) [0,4) [10,12) [5,6): 8 pages dirtied, not 11");
	snprintf(want, sizeof(want), "\"span\":%ld", 12 * page);
	CHECK(lines_with(3, "\"name\":\"mmap_write\"", "\"offset\":0,", want) == 1,
	      "from page 0 over 12 pages, in the kernel's page size");
	free_trace();
}

static bool child_exited(pid_t pid)
{
	return (uint32_t)pid == CHILD;
}

static void fork_child(void)
{
	struct dft_fork f = { header(DFT_EV_FORK, PID, PID, 0), CHILD, CHILD, "child" };

	feed(&f, sizeof(f));
}

static void child_exit(void)
{
	struct dft_exit q = { .h = header(DFT_EV_EXIT, CHILD, CHILD, 0) };

	q.h.flags = DFT_EXIT_GROUP_DEAD;
	feed(&q, sizeof(q));
}

/* A child gone without an exit record read: forgotten by the sweep once
 * the ring was read up to where it ended when the child was found gone,
 * not before: its exit record may wait behind a backlog, and read after
 * the child was forgotten it would make the child anew. */
static void test_sweep(void)
{
	new_trace();
	fork_child();
	sys(CHILD, SYS_getpid, CHILD, 0, 0, 0);
	trace_sweep(t, child_exited, true);	/* a record since: not silent */
	trace_sweep(t, child_exited, true);	/* silent, found gone */
	trace_sweep(t, child_exited, false);
	trace_sweep(t, child_exited, false);
	CHECK(proc_get(trace_model(t), CHILD) != NULL,
	      "found gone, the ring not read up to then: the child is kept");
	child_exit();
	CHECK(proc_get(trace_model(t), CHILD) == NULL && trace_stats(t)->swept == 0 &&
	      lines_with(2, "\"name\":\"exit\"", "\"pid\":4194402") == 1,
	      "its exit record read late ends it, once");
	fork_child();
	trace_sweep(t, child_exited, true);
	trace_sweep(t, child_exited, true);
	CHECK(proc_get(trace_model(t), CHILD) != NULL, "found gone: kept until the next sweep");
	trace_sweep(t, child_exited, true);
	CHECK(proc_get(trace_model(t), CHILD) == NULL && trace_stats(t)->swept == 1,
	      "the ring read up to then, and still silent: forgotten");
	CHECK(proc_get(trace_model(t), PID) != NULL, "the parent, not gone, is kept");
	free_trace();
}

/* A GPU call's record, as the kernel side sends it (str: its string,
 * size: the bytes sent, which a hostile or cut record may not match). */
static void gpu_call(unsigned int id, long long ret, const uint64_t *args, int nargs,
		     uint64_t out, const char *str, size_t str_len, size_t size)
{
	struct dft_gpu g = { .h = header(DFT_EV_GPU, PID, PID, id), .dur = 500, .ret = ret,
			     .out = out, .str_len = str_len };

	for (int i = 0; i < nargs; i++)
		g.arg[i] = args[i];
	if (str)
		memcpy(g.str, str, str_len < DFT_GPU_STR ? str_len : DFT_GPU_STR);
	feed(&g, size);
}

/* A kernel's name is the traced process's: any bytes, escaped; a length
 * past the record is cut at the record, and a record too short for its
 * header part is dropped. */
static void test_gpu_records(void)
{
	static const char hostile[] = "k\"e\nr\\n\x01\xff";
	uint64_t name_args[3] = { 0x1000, 0x2000, 0 };
	uint64_t launch[9] = { 0xabc, 2, 1, 1, 128, 1, 1, 0, 0x77 };
	uint64_t copy[4] = { 0x5000, 0x6000, 4096, 0x77 };

	new_trace();
	gpu_call(DFT_GPU_cuModuleGetFunction, 0, name_args, 3, 0xabc, hostile, sizeof(hostile),
		 offsetof(struct dft_gpu, str) + sizeof(hostile));
	gpu_call(DFT_GPU_cuLaunchKernel, 0, launch, 9, 0, NULL, 0, offsetof(struct dft_gpu, str));
	CHECK(lines_with(3, "\"name\":\"cuLaunchKernel\"", "\"cat\":\"CUDA_DRIVER_API\"",
			 "\"kernel\":\"k\\\"e\\nr\\\\n\\u0001\\ufffdff\"") == 1,
	      "a launch names its kernel, the process's bytes escaped");
	CHECK(lines_with(3, "\"grid_x\":2,", "\"block_x\":128,", "\"stream_id\":119") == 1,
	      "with its grid, block and stream");
	gpu_call(DFT_GPU_cuModuleGetFunction, 0, name_args, 3, 0xdef, "abcdef", 1000,
		 offsetof(struct dft_gpu, str) + 3);
	launch[0] = 0xdef;
	gpu_call(DFT_GPU_cuLaunchKernel, 0, launch, 9, 0, NULL, 0, offsetof(struct dft_gpu, str));
	CHECK(lines_with(2, "\"name\":\"cuLaunchKernel\"", "\"kernel\":\"abc\"") == 1,
	      "a string's length past the record is cut at the record's end");
	gpu_call(DFT_GPU_cuMemcpyHtoDAsync_v2, 0, copy, 4, 0, NULL, 0,
		 offsetof(struct dft_gpu, str) - 1);
	gpu_call(DFT_GPU__COUNT + 5, 0, copy, 4, 0, NULL, 0, offsetof(struct dft_gpu, str));
	CHECK(lines_with(1, "cuMemcpyHtoDAsync_v2") == 0,
	      "a record too short, or of a call not in the table, is dropped");
	gpu_call(DFT_GPU_cuMemcpyHtoDAsync_v2, 0, copy, 4, 0, NULL, 0,
		 offsetof(struct dft_gpu, str));
	CHECK(lines_with(3, "\"bytes\":4096,", "\"copy_kind\":\"HtoD\"", "\"stream_id\":119") == 1,
	      "a copy: its bytes, direction and stream");
	free_trace();
}

/* Sites: the capture side's callbacks, recorded. */
static struct dft_annot_site found_site, gone_site;
static uint32_t found_id;
static int sites_found, sites_gone;

static void on_site_found(void *ctx, const struct dft_annot_site *site, uint32_t id,
			  uint64_t alive_ns)
{
	(void)ctx;
	(void)alive_ns;
	found_site = *site;
	found_id = id;
	sites_found++;
}

static void on_site_gone(void *ctx, const struct dft_annot_site *site)
{
	(void)ctx;
	gone_site = *site;
	sites_gone++;
}

/* A region's begin or end as the kernel sends it from a site (its
 * strings at the addresses cat_ptr, name_ptr), whole or, at a known
 * site, without the strings. */
static void site_annot(int op, const char *cat, const char *name, bool cached)
{
	struct dft_annot e = { .h = header(DFT_EV_ANNOT, PID, PID, op), .cat_ptr = 0x1000,
			       .name_ptr = 0x2000 };

	snprintf(e.cat, sizeof(e.cat), "%s", cat);
	snprintf(e.name, sizeof(e.name), "%s", name);
	if (cached)
		e.h.flags = DFT_ANNOT_CACHED;
	feed(&e, cached ? offsetof(struct dft_annot, cat) : sizeof(e));
}

/* A begin or end at the known site (0x1000, 0x2000), as a thread keeps
 * it in its batch among its calls. */
static struct dft_io kept_annot(int op)
{
	struct dft_io k = { header(DFT_EV_ANNOT, PID, PID, op), 0, { 0x1000, 0x2000 } };

	k.h.flags = DFT_ANNOT_CACHED;
	return k;
}

/* The id of the last region written named forward; -1 if none. */
static long last_forward_id(void)
{
	const char *at = NULL, *p = out->buf.p, *end = out->buf.p + out->buf.len;

	while (p < end && (p = memmem(p, end - p, "\"name\":\"forward\"", 16))) {
		const char *line = p;

		while (line > out->buf.p && line[-1] != '\n')
			line--;
		at = line;
		p++;
	}
	return at && !strncmp(at, "{\"id\":", 6) ? atol(at + 6) : -1;
}

/* Regions' begins and ends kept in a thread's batch with its calls
 * (bpf/iobatch.bpf.h): a batch that begins with one, and one that
 * begins with a call, are written as sent one by one; the call between
 * a begin and its end is inside the region. */
static void check_kept_regions(void)
{
	struct dft_io in_region[3] = { kept_annot(DFT_ANNOT_BEGIN),
				       { header(DFT_EV_IO, PID, PID, SYS_pread64), 4096,
					 { 5, 4096, 0 } },
				       kept_annot(DFT_ANNOT_END) };
	struct dft_io call_first[3] = { { header(DFT_EV_IO, PID, PID, SYS_pread64), 8192,
					  { 5, 8192, 0 } },
					kept_annot(DFT_ANNOT_BEGIN), kept_annot(DFT_ANNOT_END) };
	char p_idx[64];
	long id;

	feed_kept(in_region, 3);
	id = last_forward_id();
	snprintf(p_idx, sizeof(p_idx), "\"p_idx\":%ld,", id);
	CHECK(lines_with(2, "\"name\":\"forward\"", "\"cat\":\"compute\"") == 3 && id > 0 &&
	      lines_with(3, "\"name\":\"pread\"", "\"ret\":4096", p_idx) == 1,
	      "a batch beginning with a kept region's begin: the region, the call inside it");
	feed_kept(call_first, 3);
	CHECK(lines_with(2, "\"name\":\"forward\"", "\"cat\":\"compute\"") == 4 &&
	      lines_with(2, "\"name\":\"pread\"", "\"ret\":8192") == 1 &&
	      lines_with(3, "\"name\":\"pread\"", "\"ret\":8192", p_idx) == 0,
	      "a batch beginning with a call, then a kept region: the call outside it");
}

/* A region's strings seen whole at a site are offered to the capture
 * side, with the id the kernel gives them; a record from the site then
 * comes without them and is written with them; an unmapping of their
 * memory, an exec and the end forget the site. */
static void test_annotation_sites(void)
{
	struct dft_annot raw = { 0 };
	struct trace_config cfg = { .cmdline = "unit test", .root_pid = PID,
				    .root_launched = true, .site_found = on_site_found,
				    .site_gone = on_site_gone };

	new_trace_with(&cfg);
	strcpy(raw.cat, "compute");
	strcpy(raw.name, "forward");
	site_annot(DFT_ANNOT_BEGIN, "compute", "forward", false);
	CHECK(sites_found == 1 && found_site.tgid == PID && found_site.cat == 0x1000 &&
	      found_site.name == 0x2000 && found_id == dft_phase_id(&raw),
	      "a region's site is offered with the kernel's id of its strings");
	site_annot(DFT_ANNOT_END, "", "", true);
	site_annot(DFT_ANNOT_BEGIN, "", "", true);
	site_annot(DFT_ANNOT_END, "", "", true);
	CHECK(lines_with(2, "\"name\":\"forward\"", "\"cat\":\"compute\"") == 2 && sites_found == 1,
	      "records without strings from the known site: two regions, named");
	check_kept_regions();
	sys(PID, SYS_munmap, 0, 0x3000, 0x1000, 0);
	CHECK(sites_gone == 0, "an unmapping elsewhere keeps the site");
	sys(PID, SYS_munmap, 0, 0x1000, 0x1000, 0);
	CHECK(sites_gone == 1 && gone_site.cat == 0x1000, "an unmapping of its strings forgets it");
	site_annot(DFT_ANNOT_BEGIN, "compute", "backward", false);
	site_annot(DFT_ANNOT_END, "compute", "backward", false);
	CHECK(sites_found == 2, "the site learned again, with what its memory holds now");
	struct dft_exit q = { .h = header(DFT_EV_EXIT, PID, PID, 0) };

	q.h.flags = DFT_EXIT_GROUP_DEAD;
	feed(&q, sizeof(q));
	CHECK(sites_gone == 2, "the process's end forgets it");
	free_trace();
}

/* The gate of the next test: what it was asked, and its answer. */
static struct {
	bool answer;
	uint32_t pid;
	uint64_t alive_ns;
	int asked;
} gate;

static bool ask_gate(void *ctx, uint32_t pid, uint64_t alive_ns)
{
	(void)ctx;
	gate.pid = pid;
	gate.alive_ns = alive_ns;
	gate.asked++;
	return gate.answer;
}

/* A region whose name the kernel side could not read: read from the
 * process's memory (ours here, under our own pid), and kept only if the
 * gate proves it still the process that sent the record, alive at that
 * record's time. */
static void test_strings_from_memory(void)
{
	static const char secret[] = "from_memory";
	uint32_t self = getpid();
	struct trace_config cfg = { .cmdline = "unit test", .root_pid = self,
				    .root_launched = true, .proven = ask_gate };
	struct dft_annot e;
	uint64_t ts;

	for (int answer = 0; answer < 2; answer++) {
		out = sink_memory();
		cfg.single = out;
		gate = (typeof(gate)){ .answer = answer };
		if (trace_new(&t, &cfg))
			exit(1);
		for (int op = DFT_ANNOT_BEGIN; op <= DFT_ANNOT_END; op++) {
			e = (struct dft_annot){ .h = header(DFT_EV_ANNOT, self, self, op),
						.name_ptr = (uintptr_t)secret };
			e.h.flags = DFT_ANNOT_FAULT_NAME;
			strcpy(e.cat, "compute");
			ts = e.h.ts;
			feed(&e, sizeof(e));
		}
		CHECK(gate.asked && gate.pid == self && gate.alive_ns == ts,
		      "the gate is asked of the record's process, as of the record's time");
		CHECK(lines_with(2, "\"name\":\"from_memory\"", "\"cat\":\"compute\"") == answer,
		      answer ? "a proven process's memory names the region" :
			       "an unproven one's is never written");
		free_trace();
	}
}

/* Every line of pid has an id of its own (DFTracer's event index). */
static bool ids_unique(uint32_t pid)
{
	char *text = strndup(out->buf.p, out->buf.len), *line, *save = NULL, want[32];
	uint64_t seen[256];
	int n = 0;
	bool unique = true;

	snprintf(want, sizeof(want), "\"pid\":%u,", pid);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		const char *id = strstr(line, "\"id\":");

		if (!strstr(line, want) || !id || n == 256)
			continue;
		seen[n] = strtoull(id + 5, NULL, 10);
		for (int i = 0; i < n; i++)
			unique &= seen[i] != seen[n];
		n++;
	}
	free(text);
	return unique && n > 0;
}

/* Before 6.16 two threads exiting at once may both be told they are the
 * last (DFT_EXIT_GROUP_GUESSED), and the records of the second follow
 * the first's exit: they are still the process's, which ends with it. */
static void test_guessed_group_exit(void)
{
	const uint32_t tid2 = PID + 100;
	struct dft_syscall r = { header(DFT_EV_SYSCALL, PID, tid2, SYS_read), 1000, 10,
				 { 0, 0, 10 } };
	struct dft_exit q = { .h = header(DFT_EV_EXIT, PID, PID, 0), .exit_code = 4 << 8 };

	new_trace();
	sys(PID, SYS_read, 10, 0, 0, 10);
	feed(&r, sizeof(r));
	q.h.flags = DFT_EXIT_GROUP_DEAD | DFT_EXIT_GROUP_GUESSED;
	feed(&q, sizeof(q));
	CHECK(proc_get(trace_model(t), PID) != NULL,
	      "a guessed last exit while another thread is known: the process lives on");
	r.h = header(DFT_EV_SYSCALL, PID, tid2, SYS_read);
	feed(&r, sizeof(r));
	q.h = header(DFT_EV_EXIT, PID, tid2, 0);
	q.h.flags = DFT_EXIT_GROUP_DEAD | DFT_EXIT_GROUP_GUESSED;
	q.exit_code = 4 << 8;
	feed(&q, sizeof(q));
	CHECK(proc_get(trace_model(t), PID) == NULL, "and ends with its last thread");
	CHECK(lines_with(2, "\"name\":\"read\"", "\"pid\":4194401") == 3,
	      "the second thread's read after the first's exit is the process's");
	CHECK(lines_with(3, "\"name\":\"exit\"", "\"exit_code\":4", "\"pid\":4194401") == 1,
	      "one exit event, with the group's code");
	CHECK(ids_unique(PID), "no event id of the process repeated");
	free_trace();

	/* where the kernel says (6.16 on), the process ends at once */
	new_trace();
	feed(&r, sizeof(r));
	q.h = header(DFT_EV_EXIT, PID, PID, 0);
	q.h.flags = DFT_EXIT_GROUP_DEAD;
	feed(&q, sizeof(q));
	CHECK(proc_get(trace_model(t), PID) == NULL,
	      "an exit the kernel says is the last ends the process, whatever is known");
	free_trace();
}

/* A call of a thread the model finds no memory for is still written
 * (its process is known), without the thread's regions. */
static void test_thread_no_memory(void)
{
	new_trace();
	sys_path(PID, SYS_openat, 5, "/d/nomem.bin", AT_FDCWD, O_RDONLY);
	calloc_fails = 1;	/* the new thread's */
	{
		struct dft_syscall e = { header(DFT_EV_SYSCALL, PID, CHILD, SYS_read), 1000, 4096,
					 { 5, 0, 4096 } };

		feed(&e, sizeof(e));
	}
	calloc_fails = 1;
	{
		struct dft_gpu g = { .h = header(DFT_EV_GPU, PID, CHILD + 1, DFT_GPU_cuFileRead),
				     .dur = 500, .ret = 4096, .arg = { 0x77, 0x5000, 4096, 0 } };

		feed(&g, offsetof(struct dft_gpu, str));
	}
	calloc_fails = 0;
	CHECK(lines_with(2, "\"name\":\"read\"", "\"ret\":4096") == 1,
	      "a read of a thread with no memory for it: written, no crash");
	CHECK(lines_with(2, "\"name\":\"pread\"", "\"api\":\"cuFileRead\"") == 1,
	      "a cuFile read of another: written too");
	free_trace();
}

int main(void)
{
	test_kernel_kinds();
	test_fold_shared();
	test_flight_folds();
	test_mmap_records();
	test_uring_records();
	test_io_records();
	test_correlation();
	test_annotations();
	test_ids_and_lines();
	test_sweep();
	test_gpu_records();
	test_annotation_sites();
	test_strings_from_memory();
	test_guessed_group_exit();
	test_thread_no_memory();
	return check_done();
}
