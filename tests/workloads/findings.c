// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Planted I/O problems for summary --findings (issue 39), each in a
 * phase of its own (cat "plant"), timed by the workload around each call:
 *   findings DIR prepare          (untraced: the files the plants read)
 *   findings DIR PLANT...
 * PLANT is one of
 *   small      4096 preads of 4 KiB, in order, from DIR/small.dat with
 *              O_DIRECT (each from the device, not the page cache)
 *   midsize    the same in 128 KiB reads (above the small_io bound)
 *   random     256 preads of 1 MiB at shuffled offsets of DIR/random.dat,
 *              O_DIRECT
 *   meta       1000 times: mkdir DIR/meta/dN, creat dN/f, write 1 byte,
 *              close, stat, unlink, rmdir (6000 metadata calls)
 *   ckpt       64 writes of 1 MiB to DIR/ckpt.dat and an fsync
 *   blocked    10 steps (DFT_USDT_SET_STEP, no wait regions): 4 reads of
 *              1 MiB of DIR/serial.dat, O_DIRECT, then 1 ms of CPU (no
 *              region); the cost: the reads of the first 9 (the last
 *              step has no next to end it) (WHERE: the comm)
 *   unblocked  the same with 1 read and 8 ms of CPU
 *   ckpt_async the same from a thread of its own (phase plant/ckpt_async)
 *              while the main thread computes (a compute region over it)
 *   clean      64 reads of 1 MiB in order of DIR/clean.dat, O_DIRECT
 *   reread     DIR/reread.dat (8 MiB) read whole 32 times, in 1 MiB reads
 *   starved    10 steps: the data loader's wait (dataloader/fetch, 4 ms
 *              asleep), then 1 ms of compute (WHERE: the comm)
 *   fed        the same with 1 ms waits and 4 ms of compute
 *   serial     32 times: 3 ms of compute (a region cat "compute"), then a
 *              1 MiB read of DIR/serial.dat, O_DIRECT (WHERE: the comm)
 *   overlapped the same reads and compute, all in one compute region
 *   cold       DIR/cold.dat (8 MiB, not cached) mapped with MADV_RANDOM
 *              (no read-ahead) and read a byte a page, in order: each
 *              fault reads its page from storage
 *   warm       the same pass again, every page cached
 * Prints, per plant, "planted\tRULE\tWHERE\tNS\tCALLS\tPREEMPTED" (WHERE
 * the file, phase or process, NS the time of the calls the rule should
 * count, PREEMPTED that of those of them during which the scheduler
 * preempted the thread, which the trace cannot see whole), at the end of
 * each: no record of each call, whose writes would be I/O too.
 */
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include "dftrace/usdt.h"
#include "workload.h"

#define BLOCK (1 << 20)
#define R(x) ({ long r_ = (long)(x); r_ < 0 ? -(long)errno : r_; })

static const char *dir;
static char *abuf;	/* BLOCK bytes, aligned for O_DIRECT */


/* A file of size bytes, written, synced and dropped from the cache. */
static char *make_file(const char *name, long long size)
{
	char *p = wl_path(dir, name);
	int fd = wl_ok(open(p, O_CREAT | O_WRONLY | O_TRUNC, 0644), p);

	for (long long off = 0; off < size; off += BLOCK)
		if (write(fd, abuf, BLOCK) != BLOCK)
			wl_die("write %s", p);
	if (fsync(fd) || posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED))
		wl_die("fsync %s", p);
	close(fd);
	return p;
}

/* A call, timed into acc a. */
#define TIMED(a, call)                                                        \
	({                                                                    \
		long sw_;                                                     \
		long long t0_ = wl_acc_start(&sw_);                           \
		long r_ = R(call);                                            \
		wl_acc_stop((a), t0_, sw_);                                   \
		r_;                                                           \
	})

/* n preads of size bytes at offsets off[i], timed one by one into a. */
static void timed_preads(struct wl_acc *a, const char *p, int fd, int n, size_t size,
			 const long long *off)
{
	for (int i = 0; i < n; i++) {
		long r = TIMED(a, pread(fd, abuf, size, off[i]));

		if (r != (long)size)
			wl_die("pread %s: %ld", p, r);
	}
}

/* n reads of size bytes of a new file, in order or shuffled, in phase
 * plant/phase (the file made before it). */
static void reads(const char *phase, const char *rule, const char *name, int n, size_t size,
		  bool shuffle)
{
	long long *off = calloc(n, sizeof(*off));
	char *p = wl_path(dir, name);
	struct wl_acc a = { 0 };
	int fd;

	if (!off)
		wl_die("calloc");
	for (int i = 0; i < n; i++)
		off[i] = (long long)i * size;
	srand(7);
	for (int i = n - 1; shuffle && i > 0; i--) {
		int j = rand() % (i + 1);
		long long x = off[i];

		off[i] = off[j];
		off[j] = x;
	}
	DFT_USDT_REGION_BEGIN("plant", phase);
	fd = wl_ok(open(p, O_RDONLY | O_DIRECT), p);
	timed_preads(&a, p, fd, n, size, off);
	close(fd);
	DFT_USDT_REGION_END("plant", phase);
	wl_planted(rule, p, &a, n);
	free(off);
	free(p);
}

static void meta(void)
{
	char *d = wl_path(dir, "meta"), sub[4096], p[4200];
	struct wl_acc a = { 0 };
	int n = 1000;

	wl_ok(mkdir(d, 0755), d);
	DFT_USDT_REGION_BEGIN("plant", "meta");
	for (int i = 0; i < n; i++) {
		struct stat st;
		long fd;

		snprintf(sub, sizeof(sub), "%s/d%d", d, i);
		snprintf(p, sizeof(p), "%s/f", sub);
		TIMED(&a, mkdir(sub, 0755));
		fd = TIMED(&a, open(p, O_CREAT | O_WRONLY | O_TRUNC, 0644));
		if (fd < 0 || write(fd, "x", 1) != 1)
			wl_die("write %s", p);
		TIMED(&a, close(fd));
		TIMED(&a, stat(p, &st));
		TIMED(&a, unlink(p));
		TIMED(&a, rmdir(sub));
	}
	DFT_USDT_REGION_END("plant", "meta");
	wl_planted("metadata_heavy", "plant/meta", &a, 6 * n);
	free(d);
}

/* The CPU busy for ms, in no region. */
static void spin(int ms)
{
	long long end = wl_now_ns() + ms * 1000000LL;
	volatile unsigned long x = 0;

	while (wl_now_ns() < end)
		x++;
}

/* A stretch of compute: the CPU busy for ms, in a compute region. */
static void compute(int ms)
{
	DFT_USDT_REGION_BEGIN("compute", "forward");
	spin(ms);
	DFT_USDT_REGION_END("compute", "forward");
}

/* 32 reads of 1 MiB of DIR/serial.dat, each after 3 ms of compute: a
 * region each (serial), or one region over them all and over the open,
 * the close and the record's write (overlapped); the reads' time, with
 * the open and close. Overlapped, the process does no I/O outside
 * compute at all (the binary is static: no loader's calls before main),
 * so that none is found however slow a loaded machine makes a call. */
static void steps(bool inside)
{
	char *p = wl_path(dir, "serial.dat"), where[64];
	struct wl_acc a = { 0 };
	long long off;
	long fd;

	if (inside)
		DFT_USDT_REGION_BEGIN("compute", "forward");
	fd = TIMED(&a, open(p, O_RDONLY | O_DIRECT));
	wl_ok(fd, p);
	for (int i = 0; i < 32; i++) {
		off = (long long)i * BLOCK;
		if (inside)
			spin(3);
		else
			compute(3);
		if (TIMED(&a, pread(fd, abuf, BLOCK, off)) != BLOCK)
			wl_die("pread %s", p);
	}
	TIMED(&a, close(fd));
	snprintf(where, sizeof(where), "findings [%d]", wl_pid());
	wl_planted(inside ? "none" : "unoverlapped_io", where, &a, 34);
	if (inside)
		DFT_USDT_REGION_END("compute", "forward");
	free(p);
}

/* DIR/reread.dat, 8 MiB, read whole 32 times in 1 MiB reads; the time of
 * the reads after the first pass. */
static void reread(void)
{
	char *p = wl_path(dir, "reread.dat");
	struct wl_acc a = { 0 }, first = { 0 };

	DFT_USDT_REGION_BEGIN("plant", "reread");
	for (int pass = 0; pass < 32; pass++) {
		int fd = wl_ok(open(p, O_RDONLY), p);

		for (int i = 0; i < 8; i++)
			if (TIMED(pass ? &a : &first, read(fd, abuf, BLOCK)) != BLOCK)
				wl_die("read %s", p);
		close(fd);
	}
	DFT_USDT_REGION_END("plant", "reread");
	wl_planted("repeated_reads", p, &a, 248);
	free(p);
}

/* 10 steps of a training loop: the data loader's wait (a region
 * dataloader/fetch of wait_ms, asleep) then compute_ms of compute. The
 * time of the waits that have a next (a step runs from one wait's start
 * to the next's). */
static void loader(const char *rule, int wait_ms, int compute_ms)
{
	struct timespec nap = { 0, wait_ms * 1000000L };
	struct wl_acc a = { 0 }, last = { 0 };
	char where[64];

	for (int i = 0; i < 10; i++) {
		long sw;
		long long t0 = wl_acc_start(&sw);

		DFT_USDT_REGION_BEGIN("dataloader", "fetch");
		nanosleep(&nap, NULL);
		DFT_USDT_REGION_END("dataloader", "fetch");
		wl_acc_stop(i < 9 ? &a : &last, t0, sw);
		compute(compute_ms);
	}
	snprintf(where, sizeof(where), "findings [%d]", wl_pid());
	wl_planted(rule, where, &a, 9);
}

/* Steps by DFT_USDT_SET_STEP whose thread reads its input itself. */
static void blocked(const char *rule, int nreads, int spin_ms)
{
	char *p = wl_path(dir, "serial.dat"), where[64];
	struct wl_acc a = { 0 }, last = { 0 };
	int fd = wl_ok(open(p, O_RDONLY | O_DIRECT), p);

	for (int i = 0; i < 10; i++) {
		DFT_USDT_SET_STEP(i + 1);
		for (int r = 0; r < nreads; r++)
			if (TIMED(i < 9 ? &a : &last,
				  pread(fd, abuf, BLOCK, (off_t)((i * nreads + r) % 32) * BLOCK)) !=
			    BLOCK)
				wl_die("pread %s", p);
		spin(spin_ms);
	}
	DFT_USDT_CLEAR("step");
	close(fd);
	snprintf(where, sizeof(where), "findings [%d]", wl_pid());
	wl_planted(rule, where, &a, 9 * nreads);
	free(p);
}

/* A pass over DIR/cold.dat through a mapping, a byte a page, in phase
 * plant/NAME. Timed whole, preemptions too: a run of faults, which the
 * trace times from its first fault to its last, holds the waits for the
 * CPU between them as the loop does, so none is left out of either. */
static void mapped_pass(const char *name, const char *rule)
{
	char *p = wl_path(dir, "cold.dat");
	int fd = wl_ok(open(p, O_RDONLY), p);
	size_t size = 8 << 20;
	volatile unsigned char *m = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
	struct wl_acc a = { 0 };
	unsigned sum = 0;
	long long t0;

	if (m == MAP_FAILED || madvise((void *)m, size, MADV_RANDOM))
		wl_die("mmap %s", p);
	DFT_USDT_REGION_BEGIN("plant", name);
	t0 = wl_now_ns();
	for (size_t off = 0; off < size; off += 4096)
		sum += m[off];
	a.ns = wl_now_ns() - t0;
	DFT_USDT_REGION_END("plant", name);
	munmap((void *)m, size);
	close(fd);
	wl_planted(rule, p, &a, (int)(size / 4096) + (int)(sum & 0));
	free(p);
}

/* The files the plants read, made and synced (untraced: its writes and
 * syncs are no plant's). */
static void prepare(void)
{
	free(make_file("serial.dat", 32LL * BLOCK));
	free(make_file("reread.dat", 8LL * BLOCK));
	free(make_file("small.dat", 4096LL * 4096));
	free(make_file("midsize.dat", 256LL * (128 << 10)));
	free(make_file("random.dat", 256LL * BLOCK));
	free(make_file("clean.dat", 64LL * BLOCK));
	free(make_file("cold.dat", 8LL * BLOCK));
}

/* A checkpoint: 64 MiB written and synced, in phase plant/NAME (a
 * literal: the probe's argument), timed into a. */
#define CHECKPOINT(name, a)                                                   \
	do {                                                                  \
		char *p_ = wl_path(dir, name ".dat");                         \
		long fd_;                                                     \
		DFT_USDT_REGION_BEGIN("plant", name);                         \
		fd_ = wl_ok(open(p_, O_CREAT | O_WRONLY | O_TRUNC, 0644), p_); \
		for (int i_ = 0; i_ < 64; i_++)                               \
			if (TIMED((a), write(fd_, abuf, BLOCK)) != BLOCK)     \
				wl_die("write %s", p_);                       \
		wl_ok(TIMED((a), fsync(fd_)), "fsync");                       \
		close(fd_);                                                   \
		DFT_USDT_REGION_END("plant", name);                           \
		free(p_);                                                     \
	} while (0)

static void ckpt(void)
{
	struct wl_acc a = { 0 };

	CHECKPOINT("ckpt", &a);
	wl_planted("checkpoint_blocking", "plant/ckpt", &a, 65);
}

static void *ckpt_thread(void *a)
{
	CHECKPOINT("ckpt_async", (struct wl_acc *)a);
	return NULL;
}

/* The checkpoint from a thread of its own while the main thread computes
 * (busy until the thread is done): no stall. */
static void ckpt_async(void)
{
	struct wl_acc a = { 0 };
	volatile unsigned long x = 0;
	pthread_t t;

	DFT_USDT_REGION_BEGIN("compute", "forward");
	if (pthread_create(&t, NULL, ckpt_thread, &a))
		wl_die("pthread_create");
	while (pthread_tryjoin_np(t, NULL))
		x++;
	DFT_USDT_REGION_END("compute", "forward");
	wl_planted("none", "plant/ckpt_async", &a, 65);
}

int main(int argc, char **argv)
{
	if (argc < 3)
		wl_die("usage: findings DIR prepare|small|midsize|random|meta|ckpt|reread|"
		       "starved|fed|serial|overlapped|clean|cold|warm|ckpt_async|blocked|unblocked...");
	dir = argv[1];
	if (posix_memalign((void **)&abuf, 4096, BLOCK))
		wl_die("posix_memalign");
	memset(abuf, 'a', BLOCK);
	for (int i = 2; i < argc; i++) {
		const char *w = argv[i];

		if (!strcmp(w, "prepare"))
			prepare();
		else if (!strcmp(w, "small"))
			reads("small", "small_io", "small.dat", 4096, 4096, false);
		else if (!strcmp(w, "midsize"))
			reads("midsize", "none", "midsize.dat", 256, 128 << 10, false);
		else if (!strcmp(w, "random"))
			reads("random", "random_access", "random.dat", 256, BLOCK, true);
		else if (!strcmp(w, "meta"))
			meta();
		else if (!strcmp(w, "ckpt"))
			ckpt();
		else if (!strcmp(w, "ckpt_async"))
			ckpt_async();
		else if (!strcmp(w, "blocked"))
			blocked("input_bound", 4, 1);
		else if (!strcmp(w, "unblocked"))
			blocked("none", 1, 8);
		else if (!strcmp(w, "reread"))
			reread();
		else if (!strcmp(w, "starved"))
			loader("input_bound", 4, 1);
		else if (!strcmp(w, "fed"))
			loader("none", 1, 4);
		else if (!strcmp(w, "serial"))
			steps(false);
		else if (!strcmp(w, "overlapped"))
			steps(true);
		else if (!strcmp(w, "clean"))
			reads("clean", "none", "clean.dat", 64, BLOCK, false);
		else if (!strcmp(w, "cold"))
			mapped_pass("cold", "page_cache_misses");
		else if (!strcmp(w, "warm"))
			mapped_pass("warm", "none");
		else
			wl_die("findings: no plant '%s'", w);
	}
	return 0;
}
