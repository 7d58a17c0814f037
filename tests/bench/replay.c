// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * replay [--format v1|v2] RECORDING OUT.pfw.gz: the consumer alone, on one core: the
 * records a tracer run saved ($DFTRACE_BPF_RECORD) go through the record
 * path (dispatch, correlation, the writer, gzip) into OUT, with no kernel
 * in the loop. The recorded processes are gone, so every record is made
 * this process's own (its /proc stands in for theirs). Prints
 * "replay N records in S s: R records/s, B gzipped bytes a record",
 * counting each call of a batch as a record. With $DFT_REPLAY_CLOCK_OFFSET
 * (ns, CLOCK_REALTIME - CLOCK_MONOTONIC) it writes the times the same on
 * every replay: tests write one recording in both formats and compare.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "capture/recording.h"
#include "correlate/trace.h"
#include "write/output.h"
#include "write/sink.h"

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* The whole recording in memory: reading it is not the consumer's cost. */
static char *load(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	struct stat st;
	char *buf;

	if (!f || fstat(fileno(f), &st) || !(buf = malloc(st.st_size + 1)) ||
	    fread(buf, 1, st.st_size, f) != (size_t)st.st_size) {
		fprintf(stderr, "replay: cannot read '%s'\n", path);
		exit(1);
	}
	fclose(f);
	*len = st.st_size;
	return buf;
}

/* What the tracer drained from the kernel's maps, made this process's
 * own, to the trace; false: rec is a ring record. */
static bool replay_drained(struct trace *t, char *rec, uint32_t size, uint32_t me)
{
	struct rec_fold *f = (struct rec_fold *)rec;
	struct rec_name *n = (struct rec_name *)rec;

	switch ((uint8_t)rec[0]) {
	case REC_FOLD:
		if (size == sizeof(*f)) {
			f->key.tgid = f->key.tid = me;
			trace_fold(t, &f->key, &f->val);
		}
		return true;
	case REC_NAME:
		if (size == sizeof(*n))
			trace_name_file(t, me, n->dev, n->ino, n->path, sizeof(n->path));
		return true;
	case REC_WRITE_FOLDS:
		trace_write_folds(t);
		return true;
	}
	return false;
}

/* A record made this process's own; the calls it holds (a thread's
 * batch, struct dft_kept_batch, up to DFT_IO_BATCH under one header). */
static size_t make_own(char *rec, uint32_t size, uint32_t me)
{
	struct dft_header *h = (struct dft_header *)rec;

	if (size < sizeof(*h))
		return 1;
	h->tgid = h->tid = me;
	if (h->kind == DFT_EV_KEPT)
		return (size - sizeof(*h)) / sizeof(struct dft_kept);
	return 1;
}

int main(int argc, char **argv)
{
	struct output_opts o = { .gzip_level = 2 };
	struct trace_config cfg = { .cmdline = "replay" };
	size_t len, off = 0, n = 0;
	uint32_t me = getpid();
	struct trace *t;
	struct sink *s;
	char err[512], *buf;
	struct stat st;
	double t0, t1;

	if (argc == 5 && !strcmp(argv[1], "--format") &&
	    (!strcmp(argv[2], "v1") || !strcmp(argv[2], "v2"))) {
		cfg.format = argv[2][1] == '2' ? TRACE_V2 : TRACE_V1;
		argv += 2;
		argc -= 2;
	}
	if (argc != 3) {
		fprintf(stderr, "usage: replay [--format v1|v2] RECORDING OUT.pfw.gz\n");
		return 2;
	}
	if (getenv("DFT_REPLAY_CLOCK_OFFSET"))
		cfg.clock_offset_ns = strtoll(getenv("DFT_REPLAY_CLOCK_OFFSET"), NULL, 10);
	buf = load(argv[1], &len);
	o.path = argv[2];
	if (sink_open(&o, &s, err, sizeof(err)) || (cfg.single = s, cfg.root_pid = me,
						     trace_new(&t, &cfg))) {
		fprintf(stderr, "replay: %s\n", err);
		return 1;
	}
	t0 = now_s();
	while (off + 4 <= len) {
		uint32_t size;

		memcpy(&size, buf + off, 4);
		off += 4;
		if (size > len - off)
			break;
		if (size && replay_drained(t, buf + off, size, me)) {
			off += size;
			continue;
		}
		n += make_own(buf + off, size, me);
		trace_handle_record(t, buf + off, size);
		off += size;
	}
	trace_finish(t, NULL, 0);
	if (output_commit(s->out, err, sizeof(err)) || sink_close(s, err, sizeof(err)))
		fprintf(stderr, "replay: %s\n", err);
	t1 = now_s();
	stat(argv[2], &st);
	printf("replay %zu records in %.3f s: %.2fM records/s, %.2f gzipped bytes a record\n",
	       n, t1 - t0, n / (t1 - t0) / 1e6, (double)st.st_size / n);
	trace_free(t);
	free(buf);
	return 0;
}
