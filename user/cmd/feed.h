/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The inputs' events read on every core and handed to one consumer in
 * input order: summary's and report's read step at a job's scale (issue
 * 37). The parse (inflate, JSON, the event made of its record) is most
 * of their time; the profile that takes the events stays on one thread,
 * so that what it says does not depend on the cores.
 *
 * Worker w reads inputs order[w], order[w + J]... With an ev_input of its
 * own it makes each record an event (ev_from_rec), copies the event, or
 * the record that is not one, into a batch, and queues the batch. The
 * consumer gives each record that is not an event to its own ev_input,
 * as the worker did, so that both say the same at each event. The
 * consumer takes the inputs in order; workers read ahead of it, their
 * queues FEED_MEMORY in all: memory does not grow with the events.
 */
#ifndef CMD_FEED_H
#define CMD_FEED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "analyze/events.h"
#include "read/reader.h"

/* Events a batch (some 0.6 MB), and the batches' memory in all: some
 * 400,000 events read ahead. */
#define FEED_BATCH 1024
#define FEED_MEMORY (128u << 20)

enum feed_kind {
	FEED_BEGIN,	/* an input begins: container, whether it is a merged file */
	FEED_EVENT,	/* ev, and pid_num: whether the record's pid was a number */
	FEED_RECORD,	/* rec: a record that is not an event, to learn from */
	FEED_END,	/* the input is done: r (the consumer closes it), or an error */
};

struct feed_item {
	enum feed_kind kind;
	uint32_t input;
	bool pid_num, container;
	struct ev ev;
	const struct rec *rec;
	struct reader *r;
};

struct feed_opts {
	char *const *paths;
	const uint32_t *order;	/* the inputs in the order they are consumed */
	uint32_t n;
	unsigned int reader_flags;
	int jobs;		/* workers: 0, pfor_cores() (lib/pfor.h) */
};

struct feed;

/* Workers started: 0, or -errno. */
int feed_start(struct feed **f, const struct feed_opts *o);
/* The next item, valid until the next call: 1, 0 once every input is
 * done, or -errno with a one-line message naming the file in err. */
int feed_next(struct feed *f, struct feed_item *it, char *err, size_t errlen);
/* The workers stopped and joined, whether or not all was read. */
void feed_free(struct feed *f);

/* A merged file's metadata, ahead of its events (its process names come
 * last): every record of path learned into in (ev_input_learn). Only a
 * regular file can be read twice. */
int feed_learn_first(struct ev_input *in, const char *path, unsigned int reader_flags,
		     char *err, size_t errlen);

#endif
