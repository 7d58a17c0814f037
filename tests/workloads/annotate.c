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
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
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

int main(int argc, char **argv)
{
	char path[4096];
	pthread_t th;
	pid_t pid;
	int fd;

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
