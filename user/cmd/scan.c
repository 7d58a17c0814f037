// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "analyze/sources.h"
#include "cmd/feed.h"
#include "cmd/progress.h"
#include "cmd/scan.h"
#include "read/jscan.h"
#include "read/reader.h"

/* What puts an input on the others' clock: ns to add; the process a
 * torch trace that names none (pid "CPU functions") belongs to; the
 * input whose processes a torch trace's are (-1: its own). warned: the
 * read that aligned it said what it left out. */
struct shift {
	int64_t offset_ns;
	double rate;		/* a host's drift: + rate * (t - rate_t0) */
	int64_t rate_t0;
	uint32_t pid;
	int32_t owner;
	bool warned;
};

/* The records an input's host is looked for in (HH comes first). */
#define HOST_LOOK 16

/* Whether an input times its events from its own start (a torch trace,
 * a merged file), not by the system's clock (a trace): its first record
 * says; and its host, from an HH line among its first records ("" if
 * none). */
static int input_clock(const char *path, bool *relative, char *host, size_t hostlen,
		       char *err, size_t errlen)
{
	struct reader *r;
	struct rec e;
	struct span v, name;
	int rc = reader_open(&r, path, 0, err, errlen);

	host[0] = 0;
	if (rc)
		return rc;
	*relative = reader_meta(r)->container;
	for (int i = 0; i < HOST_LOOK && !host[0] && reader_next(r, &e, err, errlen) > 0; i++) {
		if (!i && !*relative)
			*relative = !e.pid_num && e.pid_text.len;
		if (e.ph == 'M' && SPAN_IS(e.name, "HH") && e.args.len &&
		    js_get(e.args, "name", &v) && js_string(v, &name))
			js_unescape(name, host, hostlen);
	}
	reader_close(r);
	return 0;
}

/* Traces with torch traces, or of several hosts: one timeline, as merge
 * makes it (the torch traces' offsets from the dftrace.profiler anchors,
 * the hosts' from their collectives), or a refusal that says why. Inputs
 * on one kind of clock and of one host are left as they are. */
static int align_inputs(const struct inputs *inputs, struct shift *shifts, char *err,
			size_t errlen)
{
	struct source_set set = { .strict = inputs->strict, .align_hosts = true };
	char why[512] = "", host[256], first[256] = "";
	uint32_t relative = 0;
	bool hosts = false;
	int rc = 0;

	for (uint32_t i = 0; i < inputs->n && !rc; i++) {
		bool rel = false;

		rc = input_clock(inputs->paths[i], &rel, host, sizeof(host), err, errlen);
		relative += rel;
		if (host[0] && !first[0])
			snprintf(first, sizeof(first), "%s", host);
		hosts |= host[0] && strcmp(host, first);
	}
	if (rc || ((!relative || relative == inputs->n) && !hosts))
		return rc;
	rc = sources_scan(&set, inputs->paths, inputs->n, inputs->jobs, err, errlen);
	if (rc) { /* an input that does not read: its own message */
		sources_free(&set);
		return rc;
	}
	rc = sources_decide(&set, why, sizeof(why));
	for (uint32_t i = 0; i < set.n && !rc; i++) {
		const struct source *src = &set.src[i];

		shifts[i].offset_ns = src->offset_ns;
		shifts[i].rate = src->rate;
		shifts[i].rate_t0 = src->rate_t0;
		shifts[i].warned = true;
		if (src->kind == SRC_TORCH && src->paired) {
			shifts[i].pid = src->paired_pid ? src->paired_pid : src->paired->root_pid;
			shifts[i].owner = src->paired - set.src;
		}
	}
	if (rc)
		snprintf(err, errlen, "traces and torch traces on clocks of their own: %s",
			 why);
	sources_free(&set);
	return rc;
}

/* t on the inputs' one timeline. */
static int64_t shifted(const struct shift *s, int64_t t)
{
	return clock_shift(t, s->offset_ns, s->rate, s->rate_t0);
}

/* What every input's events go through, into the profile. */
struct scan {
	struct profile *p;
	const struct inputs *inputs;
	const struct shift *shifts;
	struct ev_input *ins;	/* the consumer's, one an input */
	bool *owns;		/* an input whose metadata a torch trace's needs */
	struct progress *pr;
	uint64_t events;
	scan_visit visit;
	void *ctx;
};

static int take_event(struct scan *s, uint16_t input, struct feed_item *it, char *err,
		      size_t errlen)
{
	const struct shift *shift = &s->shifts[input];
	struct ev *ev = &it->ev;
	int rc;

	ev->start = shifted(shift, ev->start);
	ev->end = shifted(shift, ev->end);
	if (!it->pid_num && shift->pid)
		ev->pid = shift->pid;
	rc = profile_add(s->p, &s->ins[input], input, ev);
	if (!rc && s->visit)
		rc = s->visit(s->ctx, &s->ins[input], input, ev);
	if (rc)
		snprintf(err, errlen, "'%s': %s", s->inputs->paths[input], strerror(-rc));
	progress_show(s->pr, ++s->events, 0);
	return rc;
}

/* An input begins: its metadata, the owner's for a torch trace's. */
static int begin_input(struct scan *s, uint16_t input, bool container, char *err,
		       size_t errlen)
{
	struct ev_input *in = &s->ins[input];
	int32_t owner = s->shifts[input].owner;

	ev_input_init(in, s->inputs->paths[input]);
	if (owner >= 0) {
		in->owner = &s->ins[owner];
		in->owner_input = owner;
	}
	in->by_start = container;
	return container ? feed_learn_first(in, s->inputs->paths[input],
					    s->inputs->strict ? READER_STRICT : 0, err, errlen)
			 : 0;
}

static void end_input(struct scan *s, uint16_t input, struct reader *r)
{
	if (!s->shifts[input].warned)
		reader_warn(r);
	reader_close(r);
	if (!s->owns[input])
		ev_input_free(&s->ins[input]);
}

static int take(struct scan *s, struct feed_item *it, char *err, size_t errlen)
{
	uint16_t input = it->input;
	struct ev unused;

	switch (it->kind) {
	case FEED_BEGIN:
		return begin_input(s, input, it->container, err, errlen);
	case FEED_RECORD: /* what the worker learned from it, learned here */
		(void)ev_from_rec(&s->ins[input], it->rec, &unused);
		return 0;
	case FEED_EVENT:
		return take_event(s, input, it, err, errlen);
	case FEED_END:
		end_input(s, input, it->r);
		s->pr->files_done++;
		return 0;
	}
	return 0;
}

/* Every input, the traces before the torch traces that are their
 * processes': those traces' metadata (their processes' names and ranks)
 * is kept until the end, the others' let go as each is done. Read on
 * jobs cores (cmd/feed.h), taken in that order. */
static int scan_all(struct scan *s, int jobs, char *err, size_t errlen)
{
	uint32_t n = s->inputs->n, k = 0;
	uint32_t *order = calloc(n ? n : 1, sizeof(*order));
	struct feed *f = NULL;
	struct feed_item it;
	int rc;

	s->ins = calloc(n ? n : 1, sizeof(*s->ins));
	s->owns = calloc(n ? n : 1, sizeof(*s->owns));
	rc = s->ins && s->owns && order ? 0 : -ENOMEM;
	for (uint32_t i = 0; i < n && !rc; i++)
		if (s->shifts[i].owner >= 0)
			s->owns[s->shifts[i].owner] = true;
	for (int owned = 0; owned < 2 && !rc; owned++)
		for (uint32_t i = 0; i < n; i++)
			if ((s->shifts[i].owner >= 0) == owned)
				order[k++] = i;
	if (!rc)
		rc = feed_start(&f, &(struct feed_opts){ .paths = s->inputs->paths,
				.order = order, .n = n, .jobs = jobs,
				.reader_flags = s->inputs->strict ? READER_STRICT : 0 });
	while (!rc && (rc = feed_next(f, &it, err, errlen)) > 0)
		rc = take(s, &it, err, errlen);
	if (rc == -ENOMEM && !err[0])
		snprintf(err, errlen, "%s", strerror(ENOMEM));
	feed_free(f);
	/* the owners' kept to the end, and, on a failure, the input it hit
	 * (ev_input_free of one freed or never begun does nothing) */
	for (uint32_t i = 0; s->ins && i < n; i++)
		ev_input_free(&s->ins[i]);
	free(s->owns);
	free(s->ins);
	free(order);
	return rc;
}

int scan_profile(struct profile *p, const struct inputs *inputs, const struct scan_opts *o,
		 char *err, size_t errlen)
{
	struct progress pr = { .on = o->progress, .who = "dftrace-bpf",
			       .files = inputs->n };
	struct scan s = { .p = p, .inputs = inputs, .pr = &pr, .visit = o->visit,
			  .ctx = o->ctx };
	struct shift *shifts;
	int rc = 0;

	if (inputs->n > UINT16_MAX) {
		snprintf(err, errlen, "more than %u inputs", UINT16_MAX);
		return -E2BIG;
	}
	shifts = calloc(inputs->n ? inputs->n : 1, sizeof(*shifts));
	if (!shifts)
		return -ENOMEM;
	for (uint32_t i = 0; i < inputs->n; i++)
		shifts[i].owner = -1;
	rc = align_inputs(inputs, shifts, err, errlen);
	s.shifts = shifts;
	if (!rc)
		rc = scan_all(&s, o->jobs, err, errlen);
	free(shifts);
	progress_done(&pr, s.events, 0);
	return rc ? rc : profile_finish(p);
}
