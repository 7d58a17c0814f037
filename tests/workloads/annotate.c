// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unbalanced annotations, for the tracer's repair rules. Prints one JSON
 * line per region the trace must show, with the flag it must carry:
 *   end without begin          -> "end_without_begin"
 *   begin A, begin B, end A    -> B "ended_by_outer_end", A plain
 *   a thread exits in a region -> "open_at_exit"
 *   a process exits in one     -> "open_at_exit"
 * Usage: annotate DIR
 *        annotate DIR CAT NAME: one region named so (names from argv,
 *        however hostile), writing 100 bytes to DIR/named.dat in it
 *        annotate DIR threads N: three threads (one fd table) each run N
 *        regions, compute.forward and compute.backward in turn, each
 *        reading 4 KiB of DIR/threads.dat; prints the regions and bytes
 *        as annot.py check takes them ("region" and "io" lines)
 *        annotate DIR no-syscalls N: three threads and then the main thread
 *        each run N compute.forward regions, each holding a
 *        compute.backward, with no syscall in or between them; the
 *        threads then spin, and the process ends with _exit right after
 *        its last region, which kills them. Each region reads the next
 *        page of DIR/compute.dat through a private mapping, a page
 *        fault, in compute.backward. Prints its regions first.
 *        annotate DIR computed N: N regions named in one stack buffer,
 *        "layer0" to "layer2" in turn, written over as soon as each
 *        ends: such names fire their probes, never the ring, which the
 *        tracer reads later. Prints its regions.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <dftrace/usdt.h>

static void expect(const char *cat, const char *name, const char *flag)
{
	printf("{\"kind\":\"unbalanced\",\"pid\":%d,\"tid\":%d,\"cat\":\"%s\",\"name\":\"%s\",\"flag\":%s%s%s}\n",
	       getpid(), gettid(), cat, name, flag ? "\"" : "", flag ? flag : "null",
	       flag ? "\"" : "");
	fflush(stdout);
}

static void *thread_main(void *arg)
{
	(void)arg;
	DFT_USDT_REGION_BEGIN("compute", "backward");
	expect("compute", "backward", "open_at_exit");
	return NULL; /* the thread ends inside compute.backward */
}

static int named_region(const char *dir, const char *cat, const char *name)
{
	char path[4096], buf[100] = { 0 };
	int fd;

	snprintf(path, sizeof(path), "%s/named.dat", dir);
	DFT_USDT_REGION_BEGIN(cat, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, buf, sizeof(buf)) != sizeof(buf))
		return 1;
	close(fd);
	DFT_USDT_REGION_END(cat, name);
	return 0;
}

struct reader {
	pthread_t th;
	int fd;
	long n;
	long bytes[2]; /* read in forward, in backward */
};

/* Built with ANNOTATE_OLD_NOTES (annotate-oldnotes), the threads' regions
 * are written as usdt.h wrote them before it pinned a region's arguments
 * to registers: the file then has notes of both forms, which the tracer
 * must take through its annotation program. */
#ifdef ANNOTATE_OLD_NOTES
#define REGION_BEGIN(c, n)                                                     \
	do {                                                                   \
		if (DFT__ON(region_begin))                                     \
			DFT__S3(region_begin, c, n, 0);                        \
	} while (0)
#define REGION_END(c, n)                                                       \
	do {                                                                   \
		if (DFT__ON(region_end))                                       \
			DFT__S3(region_end, c, n, 0);                          \
	} while (0)
#else
#define REGION_BEGIN DFT_USDT_REGION_BEGIN
#define REGION_END DFT_USDT_REGION_END
#endif

/* Literal names: each region's strings stay at one site, which the
 * tracer learns and then takes without reading them. */
static void *reader_main(void *arg)
{
	struct reader *r = arg;
	char buf[4096];

	for (long i = 0; i < r->n; i++) {
		off_t at = i % 16 * (off_t)sizeof(buf);
		ssize_t got;

		if (i % 2 == 0) {
			REGION_BEGIN("compute", "forward");
			got = pread(r->fd, buf, sizeof(buf), at);
			REGION_END("compute", "forward");
		} else {
			REGION_BEGIN("compute", "backward");
			got = pread(r->fd, buf, sizeof(buf), at);
			REGION_END("compute", "backward");
		}
		if (got > 0)
			r->bytes[i % 2] += got;
	}
	return NULL;
}

static int threaded_regions(const char *dir, long n)
{
	static const char *const names[2] = { "forward", "backward" };
	struct reader r[3];
	char path[4096], block[4096] = { 0 };
	int fd;

	snprintf(path, sizeof(path), "%s/threads.dat", dir);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	for (int i = 0; fd >= 0 && i < 16; i++)
		if (write(fd, block, sizeof(block)) != sizeof(block))
			return 1;
	if (fd >= 0)
		printf("{\"kind\":\"io\",\"pid\":%d,\"op\":\"write\",\"path\":\"%s\",\"bytes\":%zu,"
		       "\"cat\":null,\"name\":null,\"epoch\":-1,\"step\":-1}\n",
		       getpid(), path, 16 * sizeof(block));
	for (int t = 0; fd >= 0 && t < 3; t++) {
		r[t] = (struct reader){ .fd = fd, .n = n };
		if (pthread_create(&r[t].th, NULL, reader_main, &r[t]))
			return 1;
	}
	for (int t = 0; fd >= 0 && t < 3; t++) {
		pthread_join(r[t].th, NULL);
		for (int k = 0; k < 2; k++) {
			for (long i = k; i < n; i += 2)
				printf("{\"kind\":\"region\",\"pid\":%d,\"cat\":\"compute\",\"name\":\"%s\"}\n",
				       getpid(), names[k]);
			printf("{\"kind\":\"io\",\"pid\":%d,\"op\":\"read\",\"path\":\"%s\",\"bytes\":%ld,"
			       "\"cat\":\"compute\",\"name\":\"%s\",\"epoch\":-1,\"step\":-1}\n",
			       getpid(), path, r[t].bytes[k], names[k]);
		}
	}
	return fd < 0;
}

struct computer {
	pthread_t th;
	long n;
	const volatile char *pages; /* n pages, each first read in its region */
	long sum;
};

static int computed; /* threads done with their regions */

/* Regions with no syscall: the tracer sees them only through the ring,
 * at a page fault, the ring's probe, or as the thread dies. */
static void compute(struct computer *c)
{
	for (long i = 0; i < c->n; i++) {
		DFT_USDT_REGION_BEGIN("compute", "forward");
		DFT_USDT_REGION_BEGIN("compute", "backward");
		c->sum += c->pages[i * 4096];
		DFT_USDT_REGION_END("compute", "backward");
		DFT_USDT_REGION_END("compute", "forward");
	}
}

/* Its regions, then a spin with no syscall till the process's exit kills
 * it: its last regions are still in its ring. */
static void *compute_main(void *arg)
{
	compute(arg);
	__atomic_add_fetch(&computed, 1, __ATOMIC_SEQ_CST);
	for (;;)
		__asm__ __volatile__("" ::: "memory");
	return NULL;
}

static int compute_regions(const char *dir, long n)
{
	struct computer c[4];
	char path[4096], block[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/compute.dat", dir);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	memset(block, 1, sizeof(block));
	for (long i = 0; fd >= 0 && i < 4 * n; i++)
		if (write(fd, block, sizeof(block)) != sizeof(block))
			return 1;
	for (int t = 0; fd >= 0 && t < 4; t++) {
		void *m = mmap(NULL, n * 4096, PROT_READ, MAP_PRIVATE, fd, t * n * 4096);

		if (m == MAP_FAILED)
			return 1;
		c[t] = (struct computer){ .n = n, .pages = m };
		madvise(m, n * 4096, MADV_RANDOM); /* a fault a page, no read-around */
	}
	for (long i = 0; fd >= 0 && i < 4 * n; i++) {
		printf("{\"kind\":\"region\",\"pid\":%d,\"cat\":\"compute\",\"name\":\"forward\"}\n",
		       getpid());
		printf("{\"kind\":\"region\",\"pid\":%d,\"cat\":\"compute\",\"name\":\"backward\"}\n",
		       getpid());
	}
	fflush(stdout);
	for (int t = 0; fd >= 0 && t < 3; t++)
		if (pthread_create(&c[t].th, NULL, compute_main, &c[t]))
			return 1;
	if (fd < 0)
		return 1;
	while (__atomic_load_n(&computed, __ATOMIC_SEQ_CST) < 3)
		__asm__ __volatile__("" ::: "memory");
	compute(&c[3]);
	_exit(c[3].sum == n ? 0 : 1);
}

/* Names that are no literals: each is read at its probe, while it holds. */
static int computed_names(long n)
{
	char name[16];

	for (long i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "layer%ld", i % 3);
		DFT_USDT_REGION_BEGIN("compute", name);
		DFT_USDT_REGION_END("compute", name);
		memset(name, 'x', sizeof(name) - 1);
		printf("{\"kind\":\"region\",\"pid\":%d,\"cat\":\"compute\",\"name\":\"layer%ld\"}\n",
		       getpid(), i % 3);
	}
	return 0;
}

int main(int argc, char **argv)
{
	char path[4096];
	pthread_t th;
	pid_t pid;
	int fd;

	if (argc == 4 && !strcmp(argv[2], "threads"))
		return threaded_regions(argv[1], atol(argv[3]));
	if (argc == 4 && !strcmp(argv[2], "no-syscalls"))
		return compute_regions(argv[1], atol(argv[3]));
	if (argc == 4 && !strcmp(argv[2], "computed"))
		return computed_names(atol(argv[3]));
	if (argc == 4)
		return named_region(argv[1], argv[2], argv[3]);
	if (argc != 2) {
		fprintf(stderr, "usage: annotate DIR [CAT NAME]\n");
		return 2;
	}
	DFT_USDT_REGION_END("compute", "forward");
	expect("compute", "forward", "end_without_begin");

	DFT_USDT_REGION_BEGIN("pipeline", "train");
	DFT_USDT_REGION_BEGIN("compute", "step");
	DFT_USDT_REGION_END("pipeline", "train");
	expect("compute", "step", "ended_by_outer_end");
	expect("pipeline", "train", NULL);

	if (pthread_create(&th, NULL, thread_main, NULL) || pthread_join(th, NULL))
		return 1;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		DFT_USDT_CAPTURE_BEGIN();
		expect("checkpoint", "capture", "open_at_exit");
		snprintf(path, sizeof(path), "%s/ckpt", argv[1]);
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0 || write(fd, "abcd", 4) != 4)
			_exit(1);
		_exit(0); /* the process ends inside checkpoint.capture */
	}
	return pid < 0 || waitpid(pid, NULL, 0) != pid;
}
