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
 *   clean      64 reads of 1 MiB in order of DIR/clean.dat, O_DIRECT
 *   reread     DIR/reread.dat (8 MiB) read whole 32 times, in 1 MiB reads
 *   serial     32 times: 3 ms of compute (a region cat "compute"), then a
 *              1 MiB read of DIR/serial.dat, O_DIRECT (WHERE: the comm)
 *   overlapped the same reads, each inside a compute region
 * Prints, per plant, "planted\tRULE\tWHERE\tNS\tCALLS" (WHERE the file or
 * the phase, NS the time of the calls the rule should count), at the end
 * of each: no record of each call, whose writes would be I/O too.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include "dftrace/usdt.h"
#include "workload.h"

#define BLOCK (1 << 20)
#define R(x) ({ long r_ = (long)(x); r_ < 0 ? -(long)errno : r_; })

static const char *dir;
static char *abuf;	/* BLOCK bytes, aligned for O_DIRECT */

static long long now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

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

/* n preads of size bytes at offsets off[i], timed one by one: their
 * time. */
static long long timed_preads(const char *p, int fd, int n, size_t size, const long long *off)
{
	long long t = 0;

	for (int i = 0; i < n; i++) {
		long long t0 = now_ns();
		long r = R(pread(fd, abuf, size, off[i]));

		t += now_ns() - t0;
		if (r != (long)size)
			wl_die("pread %s: %ld", p, r);
	}
	return t;
}

/* n reads of size bytes of a new file, in order or shuffled, in phase
 * plant/phase (the file made before it). */
static void reads(const char *phase, const char *rule, const char *name, int n, size_t size,
		  bool shuffle)
{
	long long *off = calloc(n, sizeof(*off)), t;
	char *p = wl_path(dir, name);
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
	t = timed_preads(p, fd, n, size, off);
	close(fd);
	DFT_USDT_REGION_END("plant", phase);
	wl_emit("planted\t%s\t%s\t%lld\t%d\n", rule, p, t, n);
	free(off);
	free(p);
}

/* A metadata call, timed: its time added to *t. */
#define TIMED(t, call)                                                        \
	({                                                                    \
		long long t0_ = now_ns();                                     \
		long r_ = R(call);                                            \
		*(t) += now_ns() - t0_;                                       \
		r_;                                                           \
	})

static void meta(void)
{
	char *d = wl_path(dir, "meta"), sub[4096], p[4200];
	long long t = 0;
	int n = 1000;

	wl_ok(mkdir(d, 0755), d);
	DFT_USDT_REGION_BEGIN("plant", "meta");
	for (int i = 0; i < n; i++) {
		struct stat st;
		long fd;

		snprintf(sub, sizeof(sub), "%s/d%d", d, i);
		snprintf(p, sizeof(p), "%s/f", sub);
		TIMED(&t, mkdir(sub, 0755));
		fd = TIMED(&t, open(p, O_CREAT | O_WRONLY | O_TRUNC, 0644));
		if (fd < 0 || write(fd, "x", 1) != 1)
			wl_die("write %s", p);
		TIMED(&t, close(fd));
		TIMED(&t, stat(p, &st));
		TIMED(&t, unlink(p));
		TIMED(&t, rmdir(sub));
	}
	DFT_USDT_REGION_END("plant", "meta");
	wl_emit("planted\tmetadata_heavy\tplant/meta\t%lld\t%d\n", t, 6 * n);
	free(d);
}

/* A stretch of compute: the CPU busy for ms. */
static void compute(int ms)
{
	long long end = now_ns() + ms * 1000000LL;
	volatile unsigned long x = 0;

	DFT_USDT_REGION_BEGIN("compute", "forward");
	while (now_ns() < end)
		x++;
	DFT_USDT_REGION_END("compute", "forward");
}

/* 32 reads of 1 MiB of DIR/serial.dat, each after compute (serial) or
 * inside it (overlapped); the reads' time, with the open and close. */
static void steps(bool inside)
{
	char *p = wl_path(dir, "serial.dat");
	long long t = 0, off;
	long fd = TIMED(&t, open(p, O_RDONLY | O_DIRECT));

	wl_ok(fd, p);
	for (int i = 0; i < 32; i++) {
		off = (long long)i * BLOCK;
		if (inside)
			DFT_USDT_REGION_BEGIN("compute", "forward");
		else
			compute(3);
		if (TIMED(&t, pread(fd, abuf, BLOCK, off)) != BLOCK)
			wl_die("pread %s", p);
		if (inside)
			DFT_USDT_REGION_END("compute", "forward");
	}
	TIMED(&t, close(fd));
	wl_emit("planted\t%s\tfindings [%d]\t%lld\t34\n", inside ? "none" : "unoverlapped_io",
		wl_pid(), t);
	free(p);
}

/* DIR/reread.dat, 8 MiB, read whole 32 times in 1 MiB reads; the time of
 * the reads after the first pass. */
static void reread(void)
{
	char *p = wl_path(dir, "reread.dat");
	long long t = 0;

	DFT_USDT_REGION_BEGIN("plant", "reread");
	for (int pass = 0; pass < 32; pass++) {
		long long none = 0;
		int fd = wl_ok(open(p, O_RDONLY), p);

		for (int i = 0; i < 8; i++)
			if (TIMED(pass ? &t : &none, read(fd, abuf, BLOCK)) != BLOCK)
				wl_die("read %s", p);
		close(fd);
	}
	DFT_USDT_REGION_END("plant", "reread");
	wl_emit("planted\trepeated_reads\t%s\t%lld\t248\n", p, t);
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
}

/* A checkpoint: 64 MiB written and synced, in phase plant/ckpt. */
static void ckpt(void)
{
	char *p = wl_path(dir, "ckpt.dat");
	long long t = 0;
	long fd;

	DFT_USDT_REGION_BEGIN("plant", "ckpt");
	fd = wl_ok(open(p, O_CREAT | O_WRONLY | O_TRUNC, 0644), p);
	for (int i = 0; i < 64; i++)
		if (TIMED(&t, write(fd, abuf, BLOCK)) != BLOCK)
			wl_die("write %s", p);
	wl_ok(TIMED(&t, fsync(fd)), "fsync");
	close(fd);
	DFT_USDT_REGION_END("plant", "ckpt");
	wl_emit("planted\tcheckpoint_blocking\tplant/ckpt\t%lld\t65\n", t);
	free(p);
}

int main(int argc, char **argv)
{
	if (argc < 3)
		wl_die("usage: findings DIR prepare|small|midsize|random|meta|ckpt|reread|"
		       "serial|overlapped|clean...");
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
		else if (!strcmp(w, "reread"))
			reread();
		else if (!strcmp(w, "serial"))
			steps(false);
		else if (!strcmp(w, "overlapped"))
			steps(true);
		else if (!strcmp(w, "clean"))
			reads("clean", "none", "clean.dat", 64, BLOCK, false);
		else
			wl_die("findings: no plant '%s'", w);
	}
	return 0;
}
