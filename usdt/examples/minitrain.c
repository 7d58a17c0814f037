// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A miniature training job annotated with dftrace/usdt.h: a dataset of
 * sample files read through a data loader, a compute phase, and a
 * checkpoint written every epoch. A forked worker reads a file, and a
 * forked-and-exec'd one (this program again, "--item FILE") another.
 *
 * It prints what it did as JSON lines (its ground truth for the tests):
 *   {"kind":"io","pid":..,"op":"read","path":..,"bytes":..,"cat":..,"name":..,"epoch":..,"step":..}
 *   {"kind":"region","pid":..,"cat":..,"name":..}      one per region ended
 *
 * Usage: minitrain DIR [EPOCHS] [STEPS]
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <dftrace/usdt.h>

#define SAMPLE_BYTES(i) (4096 * (1 + (i) % 4))
#define CHECKPOINT_BYTES (64 << 10)

static char dir[PATH_MAX - 64]; /* room for the file names */
static long epoch = -1, step = -1;

static void die(const char *what)
{
	fprintf(stderr, "minitrain: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void truth_io(const char *op, const char *path, long bytes,
		     const char *cat, const char *name)
{
	printf("{\"kind\":\"io\",\"pid\":%d,\"op\":\"%s\",\"path\":\"%s\",\"bytes\":%ld,"
	       "\"cat\":\"%s\",\"name\":\"%s\",\"epoch\":%ld,\"step\":%ld}\n",
	       getpid(), op, path, bytes, cat, name, epoch, step);
}

static void truth_region(const char *cat, const char *name)
{
	printf("{\"kind\":\"region\",\"pid\":%d,\"cat\":\"%s\",\"name\":\"%s\"}\n",
	       getpid(), cat, name);
}

/* A region that must carry these args of its own (and only it). */
static void truth_region_args(const char *cat, const char *name, long batch,
			      const char *kind)
{
	printf("{\"kind\":\"region\",\"pid\":%d,\"cat\":\"%s\",\"name\":\"%s\","
	       "\"args\":{\"batch\":%ld,\"kind\":\"%s\"}}\n", getpid(), cat, name, batch, kind);
}

static void sample_path(char *out, int i)
{
	snprintf(out, PATH_MAX, "%s/sample_%03d.bin", dir, i);
}

static long read_file(const char *path, const char *cat, const char *name)
{
	char buf[4096];
	long total = 0;
	ssize_t n;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		die(path);
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		total += n;
	close(fd);
	truth_io("read", path, total, cat, name);
	return total;
}

static void write_file(const char *path, long bytes, const char *cat,
		       const char *name)
{
	static char buf[CHECKPOINT_BYTES];
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd < 0 || write(fd, buf, bytes) != bytes || fsync(fd))
		die(path);
	close(fd);
	truth_io("write", path, bytes, cat, name);
}

static void make_dataset(int n)
{
	char path[PATH_MAX];

	DFT_USDT_PREPROCESS();
	for (int i = 0; i < n; i++) {
		sample_path(path, i);
		write_file(path, SAMPLE_BYTES(i), "data", "preprocess");
	}
	truth_region("data", "preprocess");
}

/* A data-loader item: one sample file, read inside data.item. */
static long load_item(int i)
{
	char path[PATH_MAX];
	long n;

	DFT_USDT_ITEM();
	sample_path(path, i);
	n = read_file(path, "data", "item");
	truth_region("data", "item");
	return n;
}

static long collate(long a, long b)
{
	DFT_USDT_DERIVE("data", "preprocess", "collate");
	truth_region("data", "preprocess.collate");
	return a + b;
}

static volatile long sink;

static void compute(long batch)
{
	{
		DFT_USDT_FORWARD();
		DFT_USDT_ARG_INT("batch", batch);
		DFT_USDT_ARG_STR("kind", "dense");
		for (long k = 0; k < 20000; k++)
			sink += batch ^ k;
		truth_region_args("compute", "forward", batch, "dense");
	}
	{
		DFT_USDT_BACKWARD();
		for (long k = 0; k < 20000; k++)
			sink -= batch & k;
		truth_region("compute", "backward");
	}
	DFT_USDT_STEP_BEGIN();
	sink++;
	DFT_USDT_STEP_END();
	truth_region("compute", "step");
}

/* A DataLoader-like worker process: its own probes, its own I/O. With
 * exec_it, a new program image: no inherited epoch, step or regions. */
static void run_worker(int sample, int exec_it)
{
	char path[PATH_MAX];
	pid_t pid;
	int status;

	fflush(stdout);
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0 && exec_it) {
		sample_path(path, sample);
		execl("/proc/self/exe", "minitrain", "--item", path, (char *)NULL);
		die("exec");
	}
	if (pid == 0) {
		load_item(sample);
		fflush(stdout);
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		die("worker");
}

static void checkpoint(int e)
{
	char path[PATH_MAX];

	DFT_USDT_CAPTURE();
	snprintf(path, sizeof(path), "%s/checkpoint_%02d.ckpt", dir, e);
	write_file(path, CHECKPOINT_BYTES, "checkpoint", "capture");
	truth_region("checkpoint", "capture");
}

static void run_epoch(int e, int steps)
{
	struct dft_usdt_iter it = DFT_USDT_FETCH_ITER();
	long a, b;

	DFT_USDT_EPOCH();
	DFT_USDT_EPOCH_START_META();
	for (int s = 0;; s++) {
		dft_usdt_iter_wait(&it);
		if (s == steps)
			break;
		step = s;
		DFT_USDT_SET_STEP(s);
		a = load_item(s);
		b = load_item((s + 1) % steps);
		truth_region("dataloader", "fetch.iter");
		dft_usdt_iter_body(&it);
		compute(collate(a, b));
		truth_region("dataloader", "fetch.block");
	}
	dft_usdt_iter_done(&it); /* drops the last wait: it found nothing */
	checkpoint(e);
	DFT_USDT_EPOCH_STOP_META();
	truth_region("pipeline", "epoch");
}

int main(int argc, char **argv)
{
	int epochs = argc > 2 ? atoi(argv[2]) : 2, steps = argc > 3 ? atoi(argv[3]) : 4;

	if (argc == 3 && !strcmp(argv[1], "--item")) {
		DFT_USDT_ITEM();
		read_file(argv[2], "data", "item");
		truth_region("data", "item");
		return 0;
	}
	if (argc < 2 || epochs < 1 || steps < 1) {
		fprintf(stderr, "usage: minitrain DIR [EPOCHS] [STEPS]\n");
		return 2;
	}
	snprintf(dir, sizeof(dir), "%s", argv[1]);
	if (mkdir(dir, 0755) && errno != EEXIST)
		die(dir);
	{
		DFT_USDT_CHECKPOINT_INIT();
		truth_region("checkpoint", "checkpoint.init");
	}
	make_dataset(steps);
	{
		DFT_USDT_TRAIN();
		for (int e = 0; e < epochs; e++) {
			epoch = e;
			DFT_USDT_SET_EPOCH(e);
			run_epoch(e, steps);
		}
		step = -1;
		DFT_USDT_CLEAR("step");
		run_worker(0, 0);
		run_worker(steps - 1, 1);
		truth_region("pipeline", "train");
	}
	return 0;
}
