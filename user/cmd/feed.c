// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "cmd/feed.h"
#include "lib/lane.h"
#include "lib/pfor.h"

/* Records that are not events a batch: each holds its args split (some
 * 1.7 KB), and they are few (metadata). */
#define BATCH_RECORDS 64
#define BATCH_TEXT (256u << 10)
#define BATCH_BYTES (FEED_BATCH * sizeof(struct feed_item) + \
		     BATCH_RECORDS * sizeof(struct rec) + BATCH_TEXT)

struct batch {
	struct batch *next;
	struct feed_item *items;	/* FEED_BATCH */
	uint32_t n;
	struct rec *recs;		/* BATCH_RECORDS */
	uint32_t nrecs;
	char *text;			/* the bytes the items' spans point into */
	size_t len, cap;
	bool end;			/* the input's last */
	uint32_t input;
	struct reader *r;
	int err;
	char msg[512];
};

struct worker {
	struct feed *f;
	uint32_t first;
	struct lane lane;		/* its thread; a batch queued, or room made */
	struct batch *head, *tail;	/* queued, oldest first */
	uint32_t queued, limit;
	bool done;			/* it has returned */
	struct batch *spare;		/* consumed, for reuse */
};

struct feed {
	struct feed_opts o;
	struct worker *w;
	uint32_t nw;
	bool stop;			/* __atomic */
	uint32_t k;			/* the consumer's place in order */
	struct batch *cur;
	uint32_t pos;
};

static bool stopped(const struct feed *f)
{
	return __atomic_load_n(&f->stop, __ATOMIC_RELAXED);
}

static void batch_free(struct batch *b)
{
	if (!b)
		return;
	if (b->r)
		reader_close(b->r);
	free(b->items);
	free(b->recs);
	free(b->text);
	free(b);
}

static struct batch *batch_new(void)
{
	struct batch *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL;
	b->items = malloc(FEED_BATCH * sizeof(*b->items));
	b->recs = malloc(BATCH_RECORDS * sizeof(*b->recs));
	b->text = malloc(BATCH_TEXT);
	b->cap = BATCH_TEXT;
	if (!b->items || !b->recs || !b->text) {
		batch_free(b);
		return NULL;
	}
	return b;
}

/* A batch to fill: a consumed one, or a new one. */
static struct batch *take(struct worker *w)
{
	struct batch *b;

	lane_lock(&w->lane);
	b = w->spare;
	if (b)
		w->spare = b->next;
	lane_unlock(&w->lane);
	if (!b)
		return batch_new();
	b->n = b->nrecs = 0;
	b->len = 0;
	b->end = false;
	b->r = NULL;
	b->err = 0;
	b->next = NULL;
	return b;
}

/* Queued once there is room: 0, or -ECANCELED (b freed) if the feed
 * stops meanwhile. */
static int queue(struct worker *w, struct batch *b)
{
	lane_lock(&w->lane);
	while (w->queued >= w->limit && !stopped(w->f))
		lane_wait(&w->lane);
	if (stopped(w->f)) {
		lane_unlock(&w->lane);
		batch_free(b);
		return -ECANCELED;
	}
	if (w->tail)
		w->tail->next = b;
	else
		w->head = b;
	w->tail = b;
	w->queued++;
	lane_wake(&w->lane);
	lane_unlock(&w->lane);
	return 0;
}

static bool inside(struct span s, struct span raw)
{
	return s.p >= raw.p && s.p + s.len <= raw.p + raw.len;
}

/* s, where the batch holds it: inside the record's text, at the same
 * place in its copy there (copy: NULL if none); else copied. */
static struct span place(struct batch *b, struct span s, const struct span raw,
			 const char *copy)
{
	char *d;

	if (!s.len)
		return (struct span){ "", 0 };
	if (copy && inside(s, raw))
		return (struct span){ copy + (s.p - raw.p), s.len };
	d = b->text + b->len;
	memcpy(d, s.p, s.len);
	b->len += s.len;
	return (struct span){ d, s.len };
}

/* The bytes of s that a copy of a record whose text is raw does not hold. */
static size_t outside(struct span s, struct span raw)
{
	return inside(s, raw) ? 0 : s.len;
}

/* The bytes an event, or a record that is not one, takes in a batch: an
 * event's strings alone (a fifth of its line); a record's text, and any
 * of its spans that lie outside it (none do: the reader's spans are its
 * text's). */
static size_t room_for(const struct rec *e, const struct ev *ev)
{
	size_t n = e->raw.len;

	if (ev)
		return ev->name.len + ev->cat.len + ev->hist.len + ev->file.len +
		       ev->phase_cat.len + ev->phase.len + ev->copy_kind.len;
	n += outside(e->name, e->raw) + outside(e->cat, e->raw) + outside(e->args, e->raw) +
	     outside(e->pid_text, e->raw) + outside(e->tid_text, e->raw);
	for (int i = 0; i < e->nargs && i < REC_ARGS; i++)
		n += outside(e->arg_key[i], e->raw) + outside(e->arg_val[i], e->raw);
	return n;
}

static bool fits(const struct batch *b, size_t need, bool record)
{
	return b->n < FEED_BATCH && (!record || b->nrecs < BATCH_RECORDS) &&
	       b->len + need <= b->cap;
}

/* An empty batch's text made big enough for one record of need bytes. */
static int grow(struct batch *b, size_t need)
{
	char *t;

	if (need <= b->cap)
		return 0;
	t = realloc(b->text, need);
	if (!t)
		return -ENOMEM;
	b->text = t;
	b->cap = need;
	return 0;
}

static const char *copy_raw(struct batch *b, struct span raw)
{
	char *d = b->text + b->len;

	memcpy(d, raw.p, raw.len);
	b->len += raw.len;
	return d;
}

static void add_event(struct batch *b, const struct rec *e, const struct ev *ev,
		      uint32_t input)
{
	const char *copy = NULL;
	struct feed_item *it = &b->items[b->n++];

	it->kind = FEED_EVENT;
	it->input = input;
	it->pid_num = e->pid_num;
	it->ev = *ev;
	it->ev.name = place(b, ev->name, e->raw, copy);
	it->ev.cat = place(b, ev->cat, e->raw, copy);
	it->ev.hist = place(b, ev->hist, e->raw, copy);
	it->ev.file = place(b, ev->file, e->raw, copy);
	it->ev.phase_cat = place(b, ev->phase_cat, e->raw, copy);
	it->ev.phase = place(b, ev->phase, e->raw, copy);
	it->ev.copy_kind = place(b, ev->copy_kind, e->raw, copy);
}

static void add_record(struct batch *b, const struct rec *e, uint32_t input)
{
	const char *copy = copy_raw(b, e->raw);
	struct rec *r = &b->recs[b->nrecs++];
	struct feed_item *it = &b->items[b->n++];

	*r = *e;
	r->raw = (struct span){ copy, e->raw.len };
	r->name = place(b, e->name, e->raw, copy);
	r->cat = place(b, e->cat, e->raw, copy);
	r->args = place(b, e->args, e->raw, copy);
	r->pid_text = place(b, e->pid_text, e->raw, copy);
	r->tid_text = place(b, e->tid_text, e->raw, copy);
	for (int i = 0; i < e->nargs && i < REC_ARGS; i++) {
		r->arg_key[i] = place(b, e->arg_key[i], e->raw, copy);
		r->arg_val[i] = place(b, e->arg_val[i], e->raw, copy);
	}
	*it = (struct feed_item){ .kind = FEED_RECORD, .input = input, .rec = r };
}

/* Room in *b for a record of need bytes, queueing *b and taking another
 * if it is full: 0, or -errno. */
static int make_room(struct worker *w, struct batch **b, size_t need, bool record)
{
	int rc;

	if (fits(*b, need, record))
		return 0;
	rc = queue(w, *b);
	*b = rc ? NULL : take(w);
	if (!rc && !*b)
		rc = -ENOMEM;
	return rc ? rc : grow(*b, need);
}

/* Every record of input into batches; the last one says the input is
 * done, and how. */
static int read_input(struct worker *w, uint32_t input)
{
	const char *path = w->f->o.paths[input];
	unsigned int flags = w->f->o.reader_flags;
	struct batch *b = take(w);
	struct reader *r = NULL;
	struct ev_input in;
	struct rec e;
	int rc, got = 0;

	if (!b)
		return -ENOMEM;
	ev_input_init(&in, path);
	rc = reader_open(&r, path, flags, b->msg, sizeof(b->msg));
	if (!rc && reader_meta(r)->container)
		rc = feed_learn_first(&in, path, flags, b->msg, sizeof(b->msg));
	if (!rc)
		b->items[b->n++] = (struct feed_item){ .kind = FEED_BEGIN, .input = input,
						       .container = reader_meta(r)->container };
	while (!rc && (got = reader_next(r, &e, b->msg, sizeof(b->msg))) > 0) {
		struct ev ev;
		bool is_event = ev_from_rec(&in, &e, &ev);

		/* what a record that is not an event may teach (analyze/events.c) */
		if (!is_event && e.ph != 'M' && e.ph != 'X')
			continue;
		rc = make_room(w, &b, room_for(&e, is_event ? &ev : NULL), !is_event);
		if (rc)
			break;
		if (is_event)
			add_event(b, &e, &ev, input);
		else
			add_record(b, &e, input);
	}
	rc = rc ? rc : got;
	ev_input_free(&in);
	if (rc == -ECANCELED || !b) {
		reader_close(r);
		return rc;
	}
	if (rc == -ENOMEM && !b->msg[0])
		snprintf(b->msg, sizeof(b->msg), "'%s': %s", path, strerror(ENOMEM));
	b->end = true;
	b->input = input;
	b->err = rc;
	if (rc)
		reader_close(r);
	else
		b->r = r;
	return queue(w, b) ? -ECANCELED : rc;
}

static void *work(void *arg)
{
	struct worker *w = arg;
	struct feed *f = w->f;

	for (uint32_t k = w->first; k < f->o.n && !stopped(f); k += f->nw)
		if (read_input(w, f->o.order[k]))
			break;
	lane_lock(&w->lane);
	w->done = true;
	lane_wake(&w->lane);
	lane_unlock(&w->lane);
	return NULL;
}

int feed_start(struct feed **out, const struct feed_opts *o)
{
	struct feed *f = calloc(1, sizeof(*f));
	uint32_t jobs = o->jobs < 1 ? pfor_cores() : o->jobs > PFOR_MAX_JOBS ? PFOR_MAX_JOBS : o->jobs;

	*out = f;
	if (!f)
		return -ENOMEM;
	f->o = *o;
	f->nw = o->n < jobs ? (o->n ? o->n : 1) : jobs;
	f->w = calloc(f->nw, sizeof(*f->w));
	if (!f->w)
		return -ENOMEM;
	for (uint32_t i = 0; i < f->nw; i++) {
		struct worker *w = &f->w[i];
		/* each worker's share; two more a worker: filled, consumed */
		uint32_t share = FEED_MEMORY / BATCH_BYTES / f->nw;

		w->f = f;
		w->first = i;
		w->limit = share > 4 ? share - 2 : 2;
	}
	/* a thread reads its own worker and the feed's options, all set */
	for (uint32_t i = 0; i < f->nw; i++) {
		int rc = lane_start(&f->w[i].lane, work, &f->w[i]);

		if (rc)
			return rc;
	}
	return 0;
}

/* The next batch of the worker reading order[k], once it is queued;
 * NULL if it returned without one (out of memory for a batch). */
static struct batch *dequeue(struct worker *w)
{
	struct batch *b;

	lane_lock(&w->lane);
	while (!w->head && !w->done)
		lane_wait(&w->lane);
	b = w->head;
	if (!b) {
		lane_unlock(&w->lane);
		return NULL;
	}
	w->head = b->next;
	if (!w->head)
		w->tail = NULL;
	w->queued--;
	lane_wake(&w->lane);
	lane_unlock(&w->lane);
	return b;
}

static void recycle(struct worker *w, struct batch *b)
{
	lane_lock(&w->lane);
	b->next = w->spare;
	w->spare = b;
	lane_unlock(&w->lane);
}

int feed_next(struct feed *f, struct feed_item *it, char *err, size_t errlen)
{
	for (;;) {
		struct worker *w;
		struct batch *b;
		int rc;

		if (f->k == f->o.n)
			return 0;
		w = &f->w[f->k % f->nw];
		if (!f->cur) {
			f->cur = dequeue(w);
			f->pos = 0;
		}
		if (!f->cur) {
			snprintf(err, errlen, "'%s': %s", f->o.paths[f->o.order[f->k]],
				 strerror(ENOMEM));
			return -ENOMEM;
		}
		b = f->cur;
		if (f->pos < b->n) {
			*it = b->items[f->pos++];
			return 1;
		}
		f->cur = NULL;
		if (!b->end) {
			recycle(w, b);
			continue;
		}
		*it = (struct feed_item){ .kind = FEED_END, .input = b->input, .r = b->r };
		b->r = NULL;
		rc = b->err;
		if (rc)
			snprintf(err, errlen, "%s", b->msg[0] ? b->msg : strerror(-rc));
		recycle(w, b);
		f->k++;
		return rc ? rc : 1;
	}
}

static void drop_all(struct batch *b)
{
	while (b) {
		struct batch *next = b->next;

		batch_free(b);
		b = next;
	}
}

void feed_free(struct feed *f)
{
	if (!f)
		return;
	/* every thread told first: each stops at its next look */
	__atomic_store_n(&f->stop, true, __ATOMIC_RELAXED);
	for (uint32_t i = 0; f->w && i < f->nw; i++) {
		struct worker *w = &f->w[i];

		lane_close(&w->lane);
		drop_all(w->head);
		drop_all(w->spare);
	}
	batch_free(f->cur);
	free(f->w);
	free(f);
}

int feed_learn_first(struct ev_input *in, const char *path, unsigned int reader_flags,
		     char *err, size_t errlen)
{
	struct reader *r;
	struct rec e;
	struct stat st;
	int rc;

	if (stat(path, &st) || !S_ISREG(st.st_mode))
		return 0;
	rc = reader_open(&r, path, reader_flags, err, errlen);
	if (rc)
		return rc;
	while ((rc = reader_next(r, &e, err, errlen)) > 0)
		ev_input_learn(in, &e);
	reader_close(r);
	ev_input_learned(in);
	return rc;
}
