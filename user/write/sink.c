// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "write/sink.h"

/* Room for two batches: one being drained, one being built. */
#define SINK_BUF_BYTES (2 * SINK_DRAIN_BYTES)

/* Threads whose lines a batch groups; the others' keep their order,
 * after them. */
#define GROUP_THREADS 32

static struct sink *sink_new(void)
{
	struct sink *s = calloc(1, sizeof(*s));

	if (s && jb_init(&s->buf, SINK_BUF_BYTES)) {
		free(s);
		return NULL;
	}
	return s;
}

static void sink_free(struct sink *s)
{
	jb_free(&s->buf);
	jb_free(&s->recs);
	free(s->runs);
	hmap_free(&s->seen);
	hmap_free(&s->named);
	free(s);
}

int sink_open(const struct output_opts *o, struct sink **out, char *err,
	      size_t errlen)
{
	struct sink *s = sink_new();
	int ret;

	if (!s)
		return -ENOMEM;
	ret = output_open(o, &s->out, err, errlen);
	if (ret) {
		sink_free(s);
		return ret;
	}
	*out = s;
	return 0;
}

struct sink *sink_memory(void)
{
	return sink_new();
}

void sink_forget_seen(struct sink *s)
{
	hmap_free(&s->seen);
	hmap_free(&s->named);
	memset(&s->last_named, 0, sizeof(s->last_named));
}

bool sink_first_sight(struct sink *s, uint64_t hash)
{
	/* Out of memory: say yes, a repeated line is harmless. */
	return hmap_add(&s->seen, hash, 0) != 0;
}

void sink_new_run(struct sink *s, uint32_t tid)
{
	struct sink_run *r;

	if (s->nruns == s->capruns && !s->runs_failed) {
		uint32_t cap = s->capruns ? 2 * s->capruns : 256;

		r = realloc(s->runs, cap * sizeof(*r));
		if (!r) {
			s->runs_failed = true;
			return;
		}
		s->runs = r;
		s->capruns = cap;
	}
	if (!s->runs_failed)
		s->runs[s->nruns++] = (struct sink_run){ tid, (uint32_t)s->buf.len };
}

void sink_tee_line(struct sink *s, uint32_t tid)
{
	struct sink *t = s->tee;
	uint32_t from = s->nruns ? s->runs[s->nruns - 1].end : 0;
	uint32_t marked = t->nruns ? t->runs[t->nruns - 1].end : 0;

	if (s->tee_off || tid == SINK_LAST || s->runs_failed || s->buf.len <= from)
		return;
	if (t->buf.len > marked)
		sink_line_end(t, SINK_META); /* the flight sink's own, unmarked */
	jb_mem(&t->buf, s->buf.p + from, s->buf.len - from);
	if (tid != SINK_META)
		sink_event_end(t, s->last_end_ns);
	sink_line_end(t, tid);
}

void sink_set_tee(struct sink *s, struct sink *tee)
{
	uint32_t marked = s->nruns ? s->runs[s->nruns - 1].end : 0;

	s->tee = NULL;
	if (s->buf.len > marked)
		sink_line_end(s, SINK_META);
	s->tee = tee;
}

/* The group of a run of tid's lines: 0 for metadata, then the threads
 * in the order their first run came (up to GROUP_THREADS), then the
 * others, then SINK_LAST's lines. */
static uint32_t group_of(uint32_t tid, uint32_t *tids, uint32_t *ntids)
{
	if (tid == SINK_META)
		return 0;
	if (tid == SINK_LAST)
		return GROUP_THREADS + 2;
	for (uint32_t i = 0; i < *ntids; i++) {
		if (tids[i] == tid)
			return i + 1;
	}
	if (*ntids == GROUP_THREADS)
		return GROUP_THREADS + 1;
	tids[(*ntids)++] = tid;
	return *ntids;
}

/* Writes buf's runs of group g in the order written, coalescing runs
 * that lie end to end. */
static int write_group(struct sink *s, const uint8_t *group, uint8_t g)
{
	uint32_t from = 0, start = 0, end = 0;
	int ret = 0;

	for (uint32_t i = 0; i < s->nruns && !ret; from = s->runs[i++].end) {
		if (group[i] != g)
			continue;
		if (from != end && end > start)
			ret = output_write(s->out, s->buf.p + start, end - start);
		if (from != end)
			start = from;
		end = s->runs[i].end;
	}
	if (!ret && end > start)
		ret = output_write(s->out, s->buf.p + start, end - start);
	return ret;
}

/* The lines of a batch go out one thread's after another's, each in the
 * order written: a thread's events are alike from one to the next, and
 * gzip finds them a line back rather than among other threads' (two
 * threads of lseeks, 10.35 -> 9.68 bytes an event). The lines written
 * between events go first, so an FH line still comes before any use of
 * its hash; "end" goes last. Readers order by time anyway: regions are written at their
 * end. */
int sink_write_lines(struct sink *s)
{
	uint32_t tids[GROUP_THREADS], ntids = 0, tail;
	uint8_t *group = NULL;
	int ret = 0;

	tail = s->nruns ? s->runs[s->nruns - 1].end : 0;
	if (s->nruns > 1 && !s->runs_failed)
		group = malloc(s->nruns);
	if (group) {
		for (uint32_t i = 0; i < s->nruns; i++)
			group[i] = (uint8_t)group_of(s->runs[i].tid, tids, &ntids);
		for (uint32_t g = 0; g <= GROUP_THREADS + 2 && !ret; g++) {
			if (g <= GROUP_THREADS && g > ntids)
				continue;
			ret = write_group(s, group, (uint8_t)g);
		}
		free(group);
	} else {
		tail = 0;
	}
	if (!ret && s->buf.len > tail)
		ret = output_write(s->out, s->buf.p + tail, s->buf.len - tail);
	jb_reset(&s->buf);
	s->nruns = 0;
	s->runs_failed = false;
	return ret;
}

int sink_flush(struct sink *s)
{
	int ret = 0;

	if (!s->out)
		return 0;
	if (s->buf.len)
		ret = sink_write_lines(s);
	return ret ? ret : output_flush(s->out);
}

int sink_suspend(struct sink *s)
{
	int ret = sink_flush(s);

	if (!ret)
		ret = output_suspend(s->out);
	if (!ret)
		s->suspended = true;
	return ret;
}

int sink_resume(struct sink *s, char *err, size_t errlen)
{
	int ret = output_resume(s->out, err, errlen);

	if (!ret)
		s->suspended = false;
	return ret;
}

int sink_close(struct sink *s, char *err, size_t errlen)
{
	int ret = 0;

	if (!s)
		return 0;
	if (s->out && s->buf.len)
		sink_write_lines(s);
	if (s->out)
		ret = output_close(s->out, err, errlen);
	sink_free(s);
	return ret;
}

void sink_abort(struct sink *s)
{
	if (!s)
		return;
	output_abort(s->out);
	sink_free(s);
}
