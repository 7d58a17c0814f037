// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* fd tables, path resolution and the pid map behind them. */
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include "check.h"
#include "lib/hmap.h"
#include "model/paths.h"
#include "model/procs.h"

static const char *resolved(const char *base, const char *rel)
{
	struct istr *b = base ? istr_intern(base, strlen(base), false) : NULL;

	return path_resolve(b, rel, strlen(rel), false)->str;
}

static void test_resolve(void)
{
	CHECK_STREQ(resolved("/home/u", "data/x.bin"), "/home/u/data/x.bin", "relative joins cwd");
	CHECK_STREQ(resolved("/home/u", "/etc/passwd"), "/etc/passwd", "absolute ignores cwd");
	CHECK_STREQ(resolved("/a/b", "x/../y"), "/a/b/y", "dot-dot inside the relative part");
	CHECK_STREQ(resolved("/a/b", "../../../../z"), "/z", "dot-dot stops at the root");
	CHECK_STREQ(resolved("/a/b", "./c//d/./"), "/a/b/c/d", "dots and doubled slashes");
	CHECK_STREQ(resolved("/a/b", ""), "/a/b", "empty path (AT_EMPTY_PATH) is the base");
	CHECK_STREQ(resolved(NULL, "x"), "/x", "no base resolves from the root");
	CHECK_STREQ(resolved("/", "."), "/", "root stays root");
	CHECK(istr_intern("a", 1, false) == istr_intern("a", 1, false), "interning returns one object per path");
	CHECK(istr_intern("a", 1, false) != istr_intern("a", 1, true), "a truncated path is a different path");
	CHECK(istr_intern("a\0b", 3, false)->len == 3, "embedded NUL bytes are kept");
	CHECK_STREQ(cmdline_intern("python3\0train.py\0--x\0", 21, false)->str,
		    "python3 train.py --x", "argv becomes a space-separated command line");
}

/* The gate of these tests: a process is proven ours if it is us. */
static bool is_self(void *ctx, uint32_t pid, uint64_t alive_ns)
{
	(void)ctx;
	return pid == (uint32_t)getpid() && alive_ns;
}

static bool never(void *ctx, uint32_t pid, uint64_t alive_ns)
{
	(void)ctx;
	(void)pid;
	(void)alive_ns;
	return false;
}

/* What /proc shows of a process is kept only where the gate proves it
 * the traced one, after the reads. */
static void test_gate(void)
{
	struct model m = { .gate = { never, NULL } };
	struct proc *p = proc_from_procfs(&m, getpid(), 1);

	CHECK(p != NULL, "a process refused by the gate is still known");
	CHECK(!p->exe && !p->cwd && !p->cmdline && !p->comm[0] && !p->nfds,
	      "nothing read from /proc is kept for it");
	CHECK(fd_path(p, 0) == NULL && proc_link(p, "exe") == NULL,
	      "nor read later");
	model_free(&m);
	m = (struct model){ .gate = { is_self, NULL } };
	p = proc_from_procfs(&m, getpid(), 0);
	CHECK(p && !p->exe && fd_path(p, 0) == NULL,
	      "a process no record showed alive is not read either");
	proc_alive(p, 1);
	CHECK(fd_path(p, 0) != NULL && proc_link(p, "exe") != NULL,
	      "once a record showed it alive, it is");
	model_free(&m);
}

static void test_fds(void)
{
	struct model m = { .gate = { is_self, NULL } };
	struct proc *p = proc_from_procfs(&m, getpid(), 1), *c;
	struct istr *a = istr_intern("/data/a", 7, false), *b = istr_intern("/data/b", 7, false);

	CHECK(p != NULL, "our own process is read from /proc");
	CHECK(fd_path(p, 0) != NULL, "fds open before attach are named from /proc");
	fd_assign(p, 100, a, false);
	fd_assign(p, 101, b, true);
	CHECK(fd_path(p, 100) == a, "an assigned fd names its file");
	fd_assign(p, 5000, a, false);
	CHECK(fd_path(p, 5000) == a, "the table grows for large fds");
	fd_assign(p, FD_LIMIT + 1, a, false);
	CHECK(p->nfds <= FD_LIMIT, "an fd beyond the limit does not grow the table");

	c = proc_fork(&m, p, 999999);
	CHECK(c && fd_path(c, 100) == a && fd_path(c, 101) == b, "a forked child inherits the table");
	fd_close(c, 100);
	CHECK(fd_path(p, 100) == a, "closing in the child leaves the parent alone");
	fd_exec(c);
	CHECK(c->fds[101].path == NULL, "exec drops close-on-exec fds");
	CHECK(fd_path(c, 5000) == a, "exec keeps the others");
	fd_close_range(c, 4000, ~0u, false);
	CHECK(c->fds[5000].path == NULL, "close_range closes the range");
	fd_assign(c, 7, b, false);
	fd_close_range(c, 0, 10, true);
	CHECK(c->fds[7].path == b && c->fds[7].cloexec, "CLOSE_RANGE_CLOEXEC only marks");
	proc_free(&m, c);
	CHECK(proc_get(&m, 999999) == NULL, "a freed process is gone");

	map_add(p, 0x1000, 0x2000, a);
	CHECK(map_find(p, 0x2fff) && map_find(p, 0x2fff)->path == a, "an address inside a file mapping finds it");
	CHECK(map_find(p, 0x3000) == NULL, "the end is exclusive");
	map_remove(p, 0x1000, 0x2000);
	CHECK(map_find(p, 0x1000) == NULL, "munmap of the whole mapping forgets it");
	model_free(&m);
}

/* A close in one thread and an open in another that took its fd: the
 * open's record came first (records go at their calls' exits). Times
 * are the calls' entries and ends, as the records give them. */
static void test_close_overtaken(void)
{
	struct model m = { .gate = { never, NULL } };
	struct proc *p = proc_from_procfs(&m, 4242, 1);
	struct istr *t0 = istr_cstr("/d/t0"), *t1 = istr_cstr("/d/t1"), *t2 = istr_cstr("/d/t2");

	fd_take(p, 5, t0, false, 110);		/* thread 0: open [100, 110] */
	CHECK(fd_path_at(p, 5, 112) == t0, "its write names its file");
	fd_take(p, 5, t2, false, 130);		/* thread 2: open [120, 130] */
	CHECK(fd_path_at(p, 5, 111) == t0,
	      "a call on the fd that began before the open ended is of the file before");
	CHECK(fd_path_at(p, 5, 131) == t2, "one that began after is of the new file");
	CHECK(fd_path(p, 5) == t2, "without a time, the fd is the new file");
	fd_close_at(p, 5, 140);			/* thread 2 closes its own, */
	fd_take(p, 5, t2, false, 150);		/* and opens it again */
	CHECK(fd_path_at(p, 5, 111) == t0 && fd_path_at(p, 5, 151) == t2,
	      "the file before is kept while the fd is closed and taken again");
	fd_close_at(p, 5, 115);			/* thread 0: close [115, 160] */
	CHECK(fd_path_at(p, 5, 161) == t2, "the late close closed the file before");
	CHECK(fd_path_at(p, 5, 111) == t2 && !p->fds[5].closing && !p->nclosing,
	      "which is forgotten");
	fd_close_at(p, 5, 170);
	CHECK(fd_path_at(p, 5, 171) == NULL, "the new file's own close closes it");

	fd_take(p, 6, t0, false, 210);
	fd_close_at(p, 6, 220);			/* in order: nothing closing */
	fd_take(p, 6, t2, false, 240);
	CHECK(!p->fds[6].closing && fd_path_at(p, 6, 200) == t2,
	      "an fd taken after its close came has no file before");

	fd_take(p, 7, t0, false, 300);		/* two closes late at once */
	fd_take(p, 7, t1, false, 320);
	fd_take(p, 7, t2, false, 340);
	CHECK(fd_path_at(p, 7, 310) == t0 && fd_path_at(p, 7, 330) == t1 &&
	      fd_path_at(p, 7, 350) == t2, "two late closes: each file by its time");
	fd_close_at(p, 7, 325);
	CHECK(fd_path_at(p, 7, 310) == t0 && fd_path_at(p, 7, 330) == t2,
	      "the second late close first: the first's file stays");
	fd_close_at(p, 7, 305);
	CHECK(fd_path_at(p, 7, 301) == t2 && !p->fds[7].closing, "then the first's");

	fd_take(p, 8, t0, false, 400);
	fd_take(p, 8, t2, false, 420);
	fd_assign(p, 8, t1, false);		/* dup2 onto it */
	CHECK(fd_path_at(p, 8, 410) == t0 && fd_path_at(p, 8, 430) == t1,
	      "dup2 replaces the fd's file, not a close still to come");
	fd_close_range(p, 8, 8, false);
	CHECK(!p->fds[8].closing && fd_path_at(p, 8, 410) == NULL,
	      "close_range forgets both");
	fd_take(p, 9, t0, false, 500);
	fd_take(p, 9, t2, false, 520);
	fd_exec(p);
	CHECK(!p->fds[9].closing && !p->nclosing, "exec ends the other threads' closes");
	for (int i = 0; i < 2 * FD_CLOSING_MAX; i++)
		fd_take(p, 10, i % 2 ? t1 : t2, false, 600 + i);
	CHECK(p->nclosing == FD_CLOSING_MAX, "closes still to come are bounded");
	model_free(&m);
}

/* Loose strings: a holder's own copy, the same string as its interned
 * twin; phase totals by name up to their bound, the rest as one. */
static void test_loose_names(void)
{
	struct istr *in = istr_intern("forward", 7, false), *loose = istr_loose("forward", 7, false);
	struct istr *other = istr_loose("backward", 8, false), *cat = istr_cstr("compute");
	struct phase_stack s = { 0 };
	struct phase_totals pt = { 0 };
	char name[32];
	int ok = 1;

	CHECK(loose && loose != in && loose->loose && !in->loose, "a loose copy is not the interned one");
	CHECK(istr_same(loose, in) && istr_same(in, loose) && !istr_same(other, in),
	      "it is the same string as its twin, and no other");
	CHECK(istr_find("forward", 7, false) == in && !istr_find("nowhere", 7, false),
	      "find looks up without interning");
	phase_push(&s)->name = loose;
	s.f[0].cat = cat;
	CHECK(phase_find(&s, cat, in) == 0, "a frame with a loose name is found by its interned twin");
	phase_pop(&s); /* frees the loose copy: ASan and valgrind would say otherwise */
	phase_stack_free(&s);
	istr_release(other);
	istr_release(in); /* interned: stays */
	CHECK(istr_find("forward", 7, false) == in, "an interned string is never released");
	for (int i = 0; i < PHASE_TOTALS_MAX + 5; i++) {
		snprintf(name, sizeof(name), "n%d", i);
		phase_add_time(&pt, cat, istr_cstr(name), 1);
	}
	phase_add_time(&pt, cat, in, 1);
	phase_add_bytes(&pt, cat, istr_cstr("n0"), 10);
	for (uint32_t i = 0; i < pt.n; i++)
		ok &= pt.t[i].count == 1;
	CHECK(pt.n == PHASE_TOTALS_MAX && ok && pt.t[0].bytes == 10,
	      "names up to the bound each have a total, found again by name");
	CHECK(pt.other.count == 6 && pt.other.ns == 6, "the rest are one total");
	phase_totals_free(&pt);
}

/* The pid map behind the tables. */
static void test_pid_map(void)
{
	struct hmap m = { 0 };
	int ok = 1;

	for (uintptr_t k = 1; k <= 5000; k++)
		hmap_put_ptr(&m, k * 7, (void *)k);
	for (uintptr_t k = 1; k <= 5000; k += 2)
		ok &= hmap_del_ptr(&m, k * 7) == (void *)k;
	CHECK(ok, "deleting returns the stored values");
	ok = 1;
	for (uintptr_t k = 1; k <= 5000; k++)
		ok &= hmap_get_ptr(&m, k * 7) == (k % 2 ? NULL : (void *)k);
	CHECK(ok, "after deleting half, the other half is still found");
	CHECK(m.n == 2500, "the count follows puts and deletes");
	hmap_free(&m);
}

int main(void)
{
	test_resolve();
	test_gate();
	test_fds();
	test_close_overtaken();
	test_loose_names();
	test_pid_map();
	return check_done();
}
