// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "cmd/convert.h"
#include "cmd/spool.h"
#include "lib/heap.h"
#include "lib/pfor.h"
#include "render/chrome.h"

/* Events held back to put the output in time order; a region written
 * when it ends, longer ago than this many events, comes out late. */
#define WINDOW 8192
/* Rounds a worker may have done ahead of the commits: each holds a
 * spool's descriptor and its inputs' names until it is committed. */
#define AHEAD_PER_WORKER 2

struct pending {
	size_t len;
	char text[];
};

/* Where a window's events go: a round's spool, or the output. */
struct sink {
	struct heap window;	/* rendered events, by time */
	FILE *spool;
	bool spool_failed;	/* the error was the spool's */
	struct convert *cv;
};

static int emit(struct sink *k, struct heap_item *it)
{
	struct pending *p = it->val;
	int rc;

	if (k->spool) {
		rc = spool_put(k->spool, it->key, p->text, p->len);
		k->spool_failed = rc != 0;
	} else {
		rc = k->cv->out(k->cv->ctx, p->text, p->len);
	}
	free(p);
	return rc;
}

static int emit_oldest(struct sink *k)
{
	struct heap_item it;

	return heap_pop(&k->window, &it) ? emit(k, &it) : 0;
}

/* Into the window; once it is full, the oldest event goes out. */
static int hold(void *ctx, int64_t ts, const char *text, size_t len)
{
	struct pending *p = malloc(sizeof(*p) + len);
	struct sink *k = ctx;
	struct heap_item it;

	if (!p)
		return -ENOMEM;
	p->len = len;
	memcpy(p->text, text, len);
	if (k->window.n < WINDOW) {
		if (heap_push(&k->window, ts, p)) {
			free(p);
			return -ENOMEM;
		}
		return 0;
	}
	heap_pushpop(&k->window, ts, p, &it);
	return emit(k, &it);
}

static void sink_free(struct sink *k)
{
	struct heap_item it;

	while (heap_pop(&k->window, &it))
		free(it.val);
	heap_free(&k->window);
	if (k->spool)
		fclose(k->spool);
	k->spool = NULL;
}

/* One input being converted, and the time it has reached. */
struct stream {
	struct reader *r;
	struct chrome_conv conv;
	bool conv_on;
	int64_t at;
};

enum round_state { ROUND_WAITING, ROUND_TAKEN, ROUND_DONE };

struct round {
	uint32_t from, n;
	bool plain;		/* traces alone: any thread may convert it */
	enum round_state state;
	struct sink sink;
	struct stream st[CONVERT_OPEN];
	int rc;
	char err[512];
};

struct rounds {
	struct convert *cv;
	struct round *r;
	uint32_t n;
	bool spooled;		/* more than one: each into a spool */
	uint32_t committed, ahead;
	bool stop;
	pthread_mutex_t lock;
	pthread_cond_t cond;	/* a round done, committed, or the end */
	struct spools spools;
};

static int open_streams(struct convert *cv, struct round *rd, struct heap *order)
{
	int rc = 0;

	for (uint32_t i = 0; i < rd->n && !rc; i++) {
		struct source *s = &cv->set->src[rd->from + i];
		struct stream *st = &rd->st[i];

		chrome_conv_init(&st->conv, cv->set, s, &cv->named);
		st->conv_on = true;
		rc = reader_open(&st->r, s->path, source_reader_flags(s), rd->err,
				 sizeof(rd->err));
		if (!rc)
			rc = heap_push(order, source_time(s, s->min_ts), st);
	}
	return rc;
}

/* The first read skimmed: it must have seen every event this one did. */
static int same_events(struct round *rd, const struct stream *s)
{
	uint64_t n = reader_events(s->r);

	if (n == s->conv.src->records)
		return 0;
	snprintf(rd->err, sizeof(rd->err), "'%s': %llu events, but %llu on a first "
		 "look: more than one event on a line?", s->conv.src->path,
		 (unsigned long long)n, (unsigned long long)s->conv.src->records);
	return -EINVAL;
}

/* The input that is furthest behind goes next, so the window sees all
 * inputs advance together. show: this thread draws the progress. */
static int convert_all(struct convert *cv, struct round *rd, bool show)
{
	struct heap order = { 0 };
	struct heap_item it;
	struct jbuf line;
	int rc = jb_init(&line, 4096);

	if (!rc)
		rc = open_streams(cv, rd, &order);
	while (!rc && heap_pop(&order, &it)) {
		struct stream *s = it.val;
		struct rec e;
		int64_t ts;
		int got = reader_next(s->r, &e, rd->err, sizeof(rd->err));
		uint64_t read;

		if (got == 0)
			rc = same_events(rd, s);
		if (got <= 0) { /* done with it, or failed */
			rc = rc ? rc : got;
			continue;
		}
		read = __atomic_add_fetch(&cv->read, 1, __ATOMIC_RELAXED);
		if (show)
			progress_show(cv->progress, read, cv->total);
		jb_reset(&line);
		if (chrome_event(&s->conv, &e, &line, &ts)) {
			s->at = ts;
			rc = line.err ? line.err : hold(&rd->sink, ts, line.p, line.len);
		}
		rc = rc ? rc : heap_push(&order, s->at, s);
	}
	heap_free(&order);
	jb_free(&line);
	return rc;
}

static void close_readers(struct round *rd)
{
	for (uint32_t i = 0; i < rd->n; i++) {
		reader_close(rd->st[i].r);
		rd->st[i].r = NULL;
	}
}

static void round_free(struct round *rd)
{
	close_readers(rd);
	for (uint32_t i = 0; i < rd->n; i++)
		if (rd->st[i].conv_on)
			chrome_conv_free(&rd->st[i].conv);
	memset(rd->st, 0, sizeof(rd->st));
	sink_free(&rd->sink);
}

/* A round's inputs converted: into a spool of its own (whole), or, the
 * only round, through its window to the output. */
static int convert_round(struct rounds *rs, struct round *rd, bool show)
{
	int rc = rs->spooled ? spool_new(&rd->sink.spool, rd->err, sizeof(rd->err)) : 0;

	rd->sink.cv = rs->cv;
	if (!rc)
		rc = convert_all(rs->cv, rd, show);
	while (!rc && rs->spooled && rd->sink.window.n)
		rc = emit_oldest(&rd->sink);
	if (!rc && rs->spooled && fflush(rd->sink.spool)) {
		rc = -errno;
		rd->sink.spool_failed = true;
	}
	if (rc && rd->sink.spool_failed && !rd->err[0])
		spool_say(rd->err, sizeof(rd->err), rc);
	close_readers(rd);
	return rc;
}

/* In order: the round's names taken, its spool added to the others. */
static int commit(struct rounds *rs, struct round *rd)
{
	struct convert *cv = rs->cv;
	int rc = 0;

	for (uint32_t i = 0; i < rd->n; i++)
		chrome_names_take(&rd->st[i].conv, &cv->named, &cv->names);
	if (rs->spooled) {
		rc = spools_add(&rs->spools, rd->sink.spool, cv->err, sizeof(cv->err));
		rd->sink.spool = NULL;
	} else {
		while (!rc && rd->sink.window.n)
			rc = emit_oldest(&rd->sink);
	}
	round_free(rd);
	return rc ? rc : cv->names.err;
}

/* The next round a worker may take: plain, waiting, and not too far
 * ahead of the commits; -1 if none now. */
static int64_t next_for_worker(const struct rounds *rs)
{
	for (uint32_t k = rs->committed; k < rs->n && k < rs->committed + rs->ahead; k++)
		if (rs->r[k].plain && rs->r[k].state == ROUND_WAITING)
			return k;
	return -1;
}

static void *worker(void *arg)
{
	struct rounds *rs = arg;

	pthread_mutex_lock(&rs->lock);
	while (!rs->stop && rs->committed < rs->n) {
		int64_t k = next_for_worker(rs);
		struct round *rd;
		int rc;

		if (k < 0) {
			pthread_cond_wait(&rs->cond, &rs->lock);
			continue;
		}
		rd = &rs->r[k];
		rd->state = ROUND_TAKEN;
		pthread_mutex_unlock(&rs->lock);
		rc = convert_round(rs, rd, false);
		pthread_mutex_lock(&rs->lock);
		rd->rc = rc;
		rd->state = ROUND_DONE;
		pthread_cond_broadcast(&rs->cond);
	}
	pthread_mutex_unlock(&rs->lock);
	return NULL;
}

/* Round k converted, by this thread if no worker took it. */
static int round_done(struct rounds *rs, struct round *rd)
{
	bool mine;
	int rc;

	pthread_mutex_lock(&rs->lock);
	mine = rd->state == ROUND_WAITING;
	if (mine)
		rd->state = ROUND_TAKEN;
	pthread_mutex_unlock(&rs->lock);
	if (mine)
		return convert_round(rs, rd, true);
	pthread_mutex_lock(&rs->lock);
	while (rd->state != ROUND_DONE) {
		struct timespec t;

		clock_gettime(CLOCK_REALTIME, &t);
		t.tv_nsec += 200000000;
		if (t.tv_nsec >= 1000000000) {
			t.tv_sec++;
			t.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&rs->cond, &rs->lock, &t);
		progress_look(rs->cv->progress, __atomic_load_n(&rs->cv->read, __ATOMIC_RELAXED),
			      rs->cv->total);
	}
	rc = rd->rc;
	pthread_mutex_unlock(&rs->lock);
	return rc;
}

static int rounds_run(struct rounds *rs)
{
	int rc = 0;

	for (uint32_t k = 0; k < rs->n && !rc; k++) {
		struct round *rd = &rs->r[k];

		rc = round_done(rs, rd);
		if (rc)
			snprintf(rs->cv->err, sizeof(rs->cv->err), "%s",
				 rd->err[0] ? rd->err : strerror(-rc));
		else
			rc = commit(rs, rd);
		pthread_mutex_lock(&rs->lock);
		rs->committed = k + 1;
		pthread_cond_broadcast(&rs->cond);
		pthread_mutex_unlock(&rs->lock);
	}
	return rc;
}

static bool plain_round(const struct source_set *set, uint32_t from, uint32_t n)
{
	for (uint32_t i = from; i < from + n; i++)
		if (set->src[i].kind != SRC_DFTRACE)
			return false;
	return true;
}

static int rounds_init(struct rounds *rs, struct convert *cv, uint32_t workers)
{
	uint32_t n = cv->set->n;

	*rs = (struct rounds){ .cv = cv, .n = (n + CONVERT_OPEN - 1) / CONVERT_OPEN,
			       .spooled = n > CONVERT_OPEN,
			       .ahead = workers * AHEAD_PER_WORKER + 1 };
	rs->r = calloc(rs->n ? rs->n : 1, sizeof(*rs->r));
	if (!rs->r)
		return -ENOMEM;
	for (uint32_t k = 0; k < rs->n; k++) {
		struct round *rd = &rs->r[k];

		rd->from = k * CONVERT_OPEN;
		rd->n = n - rd->from < CONVERT_OPEN ? n - rd->from : CONVERT_OPEN;
		rd->plain = plain_round(cv->set, rd->from, rd->n);
	}
	pthread_mutex_init(&rs->lock, NULL);
	pthread_cond_init(&rs->cond, NULL);
	return 0;
}

static void rounds_free(struct rounds *rs)
{
	for (uint32_t k = 0; rs->r && k < rs->n; k++)
		round_free(&rs->r[k]);
	free(rs->r);
	spools_free(&rs->spools);
	pthread_mutex_destroy(&rs->lock);
	pthread_cond_destroy(&rs->cond);
}

/* The spools, merged by time, through one last window to the output. */
static int drain(struct rounds *rs)
{
	struct sink last = { .cv = rs->cv };
	int rc = spools_drain(&rs->spools, hold, &last, rs->cv->err, sizeof(rs->cv->err));

	while (!rc && last.window.n)
		rc = emit_oldest(&last);
	sink_free(&last);
	return rc;
}

int convert_run(struct convert *cv)
{
	uint32_t jobs = cv->jobs > 0 && cv->jobs <= PFOR_MAX_JOBS ? cv->jobs : pfor_cores();
	/* one thread converts and commits; the others convert (a lone core:
	 * none of them) */
	uint32_t workers = jobs > 1 ? jobs : 0;
	pthread_t threads[PFOR_MAX_JOBS];
	uint32_t started = 0;
	struct rounds rs;
	int rc = jb_init(&cv->names, 4096);

	for (uint32_t i = 0; i < cv->set->n; i++)
		cv->total += cv->set->src[i].records;
	if (!rc)
		rc = rounds_init(&rs, cv, workers);
	if (rc)
		return rc;
	for (uint32_t t = 0; t < workers && rs.spooled; t++)
		if (!pthread_create(&threads[started], NULL, worker, &rs))
			started++;
	/* the spools' merges beside the rounds, not between commits (where
	 * every worker soon waits for the next commit); if no thread can be
	 * made, in this one */
	if (started)
		spools_start(&rs.spools);
	rc = rounds_run(&rs);
	pthread_mutex_lock(&rs.lock);
	rs.stop = true;
	pthread_cond_broadcast(&rs.cond);
	pthread_mutex_unlock(&rs.lock);
	for (uint32_t t = 0; t < started; t++)
		pthread_join(threads[t], NULL);
	if (!rc && rs.spooled)
		rc = drain(&rs);
	rounds_free(&rs);
	return rc;
}

void convert_free(struct convert *cv)
{
	hmap_free(&cv->named);
	jb_free(&cv->names);
}
