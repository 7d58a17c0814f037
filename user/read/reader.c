// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "read/input.h"
#include "lib/traceformat.h"
#include "read/reader.h"

/* The buffer's first size (the fuzzer builds with a few bytes). */
#ifndef READ_BUF_START
#define READ_BUF_START (4u << 20)
#endif
/* One event larger than this is refused rather than buffered. */
#define MAX_EVENT (64u << 20)

enum stage {
	OUTSIDE,	/* before the first event or the container's '{' */
	IN_SEQUENCE,	/* events one after another, maybe in '[' ... ']' */
	IN_CONTAINER,	/* among a container's keys, before traceEvents */
	IN_EVENTS,	/* inside traceEvents */
	DONE,
};

struct reader {
	struct input *in;
	char *path;
	char *buf;
	size_t cap, pos, len;	/* unread bytes: buf[pos, len) */
	bool eof;
	/* Lines are counted only when a message needs one, or when bytes
	 * are dropped from the buffer: line is that of buf[counted]. */
	uint64_t line;
	size_t counted;
	enum stage stage;
	bool seen_bracket;
	bool skim;		/* READER_SKIM, and the file is a sequence */
	bool strict;		/* READER_STRICT */
	bool cut;		/* a gzip stream cut short, read up to cut_line */
	uint64_t cut_line;
	uint64_t skipped;	/* events left out: a time out of range */
	uint64_t skipped_line;	/* the first one's */
	uint64_t events;
	struct reader_meta meta;
};

/* The line of p, in the buffer at or after buf[counted]. */
static uint64_t line_at(struct reader *r, const char *p)
{
	const char *s = r->buf + r->counted;

	while ((s = memchr(s, '\n', p - s))) {
		r->line++;
		s++;
	}
	r->counted = p - r->buf;
	return r->line;
}

static int fail_at(struct reader *r, const char *p, char *err, size_t errlen,
		   const char *why)
{
	snprintf(err, errlen, "'%s':%llu: %s", r->path,
		 (unsigned long long)line_at(r, p), why);
	return -EINVAL;
}

/* p is never past the bytes read: a parse that went there read what is
 * not the file, and more() would move (size_t)-n bytes. */
static void advance(struct reader *r, const char *p)
{
	if (p > r->buf + r->len)
		abort();
	r->pos = p - r->buf;
}

/* A gzip stream cut short: its end is the last whole line before the
 * cut, and what comes after that is dropped. */
static int cut_short(struct reader *r)
{
	const char *s = r->buf + r->pos, *nl = memrchr(s, '\n', r->len - r->pos);

	r->len = nl ? (size_t)(nl + 1 - r->buf) : r->pos;
	r->cut = true;
	r->cut_line = line_at(r, r->buf + r->len) - 1;
	r->eof = true;
	return 0;
}

/* More bytes after the unread ones: 1, 0 at the end, or -errno. */
static int more(struct reader *r, char *err, size_t errlen)
{
	ssize_t n;

	if (r->eof)
		return 0;
	if (r->pos) {
		line_at(r, r->buf + r->pos);
		r->counted = 0;
		memmove(r->buf, r->buf + r->pos, r->len - r->pos);
		r->len -= r->pos;
		r->pos = 0;
	}
	if (r->len == r->cap) {
		size_t cap = r->cap * 2;
		char *b;

		if (cap > MAX_EVENT) {
			snprintf(err, errlen, "'%s':%llu: an event over %u MiB",
				 r->path, (unsigned long long)line_at(r, r->buf + r->pos),
				 MAX_EVENT >> 20);
			return -E2BIG;
		}
		b = realloc(r->buf, cap);
		if (!b) {
			snprintf(err, errlen, "'%s': out of memory", r->path);
			return -ENOMEM;
		}
		r->buf = b;
		r->cap = cap;
	}
	n = input_read(r->in, r->buf + r->len, r->cap - r->len, err, errlen);
	if (n == -ENODATA && !r->strict)
		return cut_short(r);
	if (n == -EBADMSG || n == -ENODATA) { /* after the text read so far */
		char why[128];

		snprintf(why, sizeof(why), "%s", err);
		fail_at(r, r->buf + r->len, err, errlen, why);
		return n;
	}
	if (n < 0)
		return n;
	r->eof = n == 0;
	r->len += n;
	return n > 0;
}

/* Whether a value not taken as a time is one that is out of range (or
 * has an exponent): it is a number. */
static bool numeric(struct span v)
{
	return v.len && (v.p[0] == '-' || (v.p[0] >= '0' && v.p[0] <= '9'));
}

static bool time_in_range(int64_t ns)
{
	return ns >= 0 && ns <= REC_TIME_MAX;
}

/* A ts or dur: false when it is a number, but not of µs in range. */
static bool time_field(struct span v, int64_t *ns, bool *has)
{
	*has = js_us_to_ns(v, ns);
	return *has ? time_in_range(*ns) : !numeric(v);
}

/* One of the fields every event has; a switch, since it runs per key. */
static void event_field(struct rec *e, struct span k, struct span v)
{
	switch (k.p[0]) {
	case 'n':
		if (SPAN_IS(k, "name"))
			js_string(v, &e->name);
		break;
	case 'c':
		if (SPAN_IS(k, "cat"))
			js_string(v, &e->cat);
		break;
	case 'p':
		if (SPAN_IS(k, "ph")) {
			int64_t n;

			if (v.len >= 3) {
				e->ph = v.p[1];
			} else if (js_int(v, &n)) { /* v2's; one it does not define: unknown */
				e->ph = v2_ph_letter(n);
				if (!e->ph)
					e->ph = '?';
				e->aggregated = n == V2_PH_AGGREGATED;
			}
		} else if (SPAN_IS(k, "pid")) {
			e->pid_text = v;
			e->pid_num = js_int(v, &e->pid);
		}
		break;
	case 't':
		if (SPAN_IS(k, "ts")) {
			if (!time_field(v, &e->ts_ns, &e->has_ts))
				e->bad = "\"ts\" out of range (a time is 0 to 2^62 ns)";
		} else if (SPAN_IS(k, "tid")) {
			e->tid_text = v;
			e->tid_num = js_int(v, &e->tid);
		}
		break;
	case 'd':
		if (SPAN_IS(k, "dur") && !time_field(v, &e->dur_ns, &e->has_dur))
			e->bad = "\"dur\" out of range (a time is 0 to 2^62 ns)";
		break;
	case 'i':
		if (SPAN_IS(k, "id"))
			e->has_id = js_int(v, &e->id);
		break;
	case 'a':
		if (SPAN_IS(k, "args"))
			e->args = v;
		break;
	}
}

/* A v2 aggregated record's time, the sum of its calls': args.dur_sum,
 * or args.dur each (DFTracer writes a number that never varied plain).
 * It is the event's dur, as in dftrace-bpf's v1 totals. */
static void aggregated_dur(struct rec *e)
{
	int64_t calls = 1, ns;
	struct span v;

	if (e->has_dur || !e->args.len)
		return;
	if (js_get(e->args, "dft_cnt", &v) && (!js_int(v, &calls) || calls < 1))
		calls = 1;
	if (js_get(e->args, "dur_sum", &v) && js_us_to_ns(v, &ns))
		calls = 1;
	else if (!js_get(e->args, "dur", &v) || !js_us_to_ns(v, &ns))
		return;
	e->has_dur = true;
	if (ns < 0 || ns > REC_TIME_MAX / calls)
		e->bad = "\"dur\" of an aggregated record out of range (a time is 0 to 2^62 ns)";
	else
		e->dur_ns = ns * calls;
}

/* READER_SKIM: args at s (the value of the last key) runs to the end of
 * the line, where the event ends: "...}}" and maybe a comma. Returns the
 * line's end, or NULL when the line is not like that. */
static const char *skim_args(const char *s, const char *end)
{
	const char *nl = memchr(s, '\n', end - s), *t;

	if (!nl || *js_ws(s, nl) != '{')
		return NULL;
	t = nl;
	while (t > s && (t[-1] == ' ' || t[-1] == '\r' || t[-1] == '\t'))
		t--;
	if (t > s && t[-1] == ',')
		t--;
	return t - s >= 3 && t[-1] == '}' && t[-2] == '}' ? nl : NULL;
}

/* The args object at *s, member by member into e (one pass over it
 * serves both the reader and its caller). */
static int split_args(const char **s, const char *end, struct rec *e)
{
	const char *p = *s + 1, *start = *s;
	struct span k, v;
	int rc, n = 0;

	while ((rc = js_member(&p, end, &k, &v)) == JS_OK) {
		if (n < REC_ARGS) {
			e->arg_key[n] = k;
			e->arg_val[n] = v;
		}
		n++;
	}
	if (rc != JS_END)
		return rc;
	e->nargs = n <= REC_ARGS ? n : -1;
	e->args = (struct span){ start, p - start };
	*s = p;
	return JS_OK;
}

/* The fields of one event object at p; JS_MORE if it is not all here. */
static int parse_event(const char *p, const char *end, struct rec *e,
		       const char **after, bool skim)
{
	const char *s = p + 1, *nl;
	struct span k, v;
	int rc;

	memset(e, 0, offsetof(struct rec, arg_key));
	e->nargs = -1;
	for (;;) {
		if (skim) { /* the value of "args": to the end of the line */
			const char *q = js_ws(s, end);

			if (q < end && *q == ',')
				q = js_ws(q + 1, end);
			if (end - q > 7 && !memcmp(q, "\"args\"", 6) &&
			    (q = js_ws(q + 6, end)) < end && *q == ':' &&
			    (nl = skim_args(q + 1, end))) {
				e->args = (struct span){ js_ws(q + 1, end), nl - js_ws(q + 1, end) };
				e->raw = (struct span){ p, nl - p };
				*after = nl;
				return e->ph ? JS_OK : parse_event(p, end, e, after, false);
			}
		}
		if ((rc = js_key(&s, end, &k)) != JS_OK)
			break;
		/* the value may not be here yet: s can be end */
		if (!skim && SPAN_IS(k, "args") && s < end && *s == '{') {
			if ((rc = split_args(&s, end, e)) != JS_OK)
				break;
			continue;
		}
		v.p = s;
		if ((rc = js_skip(&s, end)) != JS_OK)
			break;
		v.len = s - v.p;
		if (k.len >= 2 && k.len <= 4)
			event_field(e, k, v);
	}
	if (rc != JS_END)
		return rc;
	e->raw = (struct span){ p, s - p };
	*after = s;
	return JS_OK;
}

/* What the object a file starts with is. */
enum shape { SHAPE_EVENT, SHAPE_CONTAINER, SHAPE_MORE, SHAPE_BAD };

/* A container once a "traceEvents" key is read (its value may be huge:
 * it need not be all here), an event once the object ends without one;
 * SHAPE_MORE while neither is known (JS_MORE is 1, a container's old
 * answer: a first event longer than a read was taken for one). */
static enum shape is_container(const char *p, const char *end)
{
	const char *s = p + 1;
	struct span k, v;
	int rc;

	for (;;) {
		k.len = 0;
		rc = js_member(&s, end, &k, &v);
		if (SPAN_IS(k, "traceEvents"))
			return SHAPE_CONTAINER;
		if (rc == JS_END)
			return SHAPE_EVENT;
		if (rc != JS_OK)
			return rc == JS_MORE ? SHAPE_MORE : SHAPE_BAD;
	}
}

/* Takes the container's key k: v if it matters; false if its value is
 * out of range. */
static bool keep_meta(struct reader *r, struct span k, struct span v)
{
	if (SPAN_IS(k, "baseTimeNanoseconds")) {
		r->meta.has_base = js_int(v, &r->meta.base_ns);
		return r->meta.has_base ? time_in_range(r->meta.base_ns) : !numeric(v);
	} else if (SPAN_IS(k, "distributedInfo") && !r->meta.distributed_info) {
		r->meta.distributed_info = strndup(v.p, v.len);
	} else if (SPAN_IS(k, "otherData")) {
		struct span who;

		r->meta.merged = js_get(v, "producer", &who) && js_string(who, &who) &&
				 SPAN_IS(who, MERGE_PRODUCER);
	}
	return true;
}

/* A container key's value out of range (with *p at the key). */
#define JS_RANGE 3

/* Among the container's keys: keeps those that matter, stops at
 * traceEvents' '['. Returns JS_OK there, JS_END after the last key. */
static int container_keys(struct reader *r, const char **p, const char *end)
{
	for (;;) {
		const char *s = js_ws(*p, end);
		struct span k, v;
		int rc;

		if (s < end && *s == ',')
			s = js_ws(s + 1, end);
		if (s < end && *s == '}') {
			*p = s + 1;
			return JS_END;
		}
		/* traceEvents is entered, not skipped whole */
		if (s + 14 <= end && !memcmp(s, "\"traceEvents\"", 13)) {
			s = js_ws(s + 13, end);
			if (s < end && *s == ':')
				s = js_ws(s + 1, end);
			if (s == end)
				return JS_MORE;
			if (*s != '[')
				return JS_BAD;
			*p = s + 1;
			return JS_OK;
		}
		rc = js_member(&s, end, &k, &v);
		if (rc)
			return rc == JS_END ? JS_BAD : rc;
		if (!keep_meta(r, k, v))
			return JS_RANGE;
		*p = s;
	}
}

/* Decides the file's shape from its first bytes. */
static int start(struct reader *r, char *err, size_t errlen)
{
	for (;;) {
		const char *p = js_ws(r->buf + r->pos, r->buf + r->len);
		int rc;

		if (p < r->buf + r->len && *p == '[') {
			advance(r, p + 1);
			r->stage = IN_SEQUENCE;
			return 0;
		}
		if (p < r->buf + r->len && *p == '{') {
			enum shape shape = is_container(p, r->buf + r->len);

			if (shape == SHAPE_EVENT || shape == SHAPE_CONTAINER) {
				r->meta.container = shape == SHAPE_CONTAINER;
				advance(r, r->meta.container ? p + 1 : p);
				r->stage = r->meta.container ? IN_CONTAINER : IN_SEQUENCE;
				return 0;
			}
			if (shape == SHAPE_BAD)
				return fail_at(r, p, err, errlen, "not JSON");
		} else if (p < r->buf + r->len) {
			return fail_at(r, p, err, errlen,
				       "neither a .pfw trace nor a Chrome trace");
		}
		rc = more(r, err, errlen);
		if (rc < 0)
			return rc;
		/* at the end of the bytes: more() may have moved the buffer
		 * (p is stale) or, at a cut, dropped bytes up to p */
		if (!rc)
			return fail_at(r, r->buf + r->len, err, errlen, r->cut ? "cut short "
				       "before its first whole line" : "empty: no trace in it");
	}
}

/* What a step found, besides -errno. */
enum { STEP_EVENT = 1, STEP_AGAIN, STEP_MORE };

/* An event whose values are JSON but out of range (a time years ahead,
 * which any process traced under -a can write into its ring) is left
 * out and counted, for reader_warn; READER_STRICT refuses it instead. */
static int skip_event(struct reader *r, const char *p)
{
	if (!r->skipped++)
		r->skipped_line = line_at(r, p);
	return STEP_AGAIN;
}

/* One step over the unread bytes. */
static int step(struct reader *r, struct rec *e, char *err, size_t errlen)
{
	const char *p = r->buf + r->pos, *end = r->buf + r->len, *after = NULL;
	int rc;

	p = js_ws(p, end);
	while (p < end && *p == ',')
		p = js_ws(p + 1, end);
	if (p == end)
		return STEP_MORE;
	if (r->stage == IN_CONTAINER) {
		rc = container_keys(r, &p, end);
		if (rc == JS_BAD)
			return fail_at(r, p, err, errlen, "not JSON");
		if (rc == JS_RANGE)
			return fail_at(r, js_ws(p, end), err, errlen, "\"baseTimeNanoseconds\" "
				       "out of range (a time is 0 to 2^62 ns)");
		if (rc == JS_END)
			r->stage = DONE;
		else if (rc == JS_OK)
			r->stage = IN_EVENTS;
		if (rc == JS_MORE)
			return STEP_MORE;
		advance(r, p);
		return STEP_AGAIN;
	}
	if (*p == ']') {
		advance(r, p + 1);
		r->stage = r->stage == IN_EVENTS ? IN_CONTAINER : DONE;
		return STEP_AGAIN;
	}
	if (*p != '{')
		return fail_at(r, p, err, errlen, "expected an event object");
	rc = parse_event(p, end, e, &after, r->skim);
	if (rc == JS_BAD)
		return fail_at(r, p, err, errlen, "an event that does not parse as JSON");
	if (rc == JS_MORE)
		return STEP_MORE;
	if (!e->ph)
		return fail_at(r, p, err, errlen, "not a trace event: it has no \"ph\"");
	if (e->aggregated)
		aggregated_dur(e);
	if (!e->bad && e->has_ts && e->has_dur && e->ts_ns > REC_TIME_MAX - e->dur_ns)
		e->bad = "\"ts\" + \"dur\" out of range (a time is 0 to 2^62 ns)";
	if (e->bad && r->strict)
		return fail_at(r, p, err, errlen, e->bad);
	advance(r, after);
	if (e->bad) /* one traced process's times: not the whole trace's */
		return skip_event(r, p);
	r->events++;
	return STEP_EVENT;
}

int reader_next(struct reader *r, struct rec *e, char *err, size_t errlen)
{
	for (;;) {
		int rc;

		if (r->stage == DONE)
			return 0;
		rc = step(r, e, err, errlen);
		if (rc == STEP_EVENT || rc < 0)
			return rc;
		if (rc == STEP_AGAIN)
			continue;
		rc = more(r, err, errlen);
		if (rc < 0)
			return rc;
		if (rc)
			continue;
		/* The end of the file: fine between events (no closing ']'
		 * after a trace cut short, or .pfw without it), not within;
		 * where a gzip stream was cut, wherever its last line ends. */
		if ((js_ws(r->buf + r->pos, r->buf + r->len) == r->buf + r->len &&
		     r->stage == IN_SEQUENCE) || r->cut)
			return 0;
		return fail_at(r, r->buf + r->pos, err, errlen,
			       "the file ends inside an event (truncated?)");
	}
}

/* A container's keys after traceEvents (Kineto once wrote its base time
 * at the end): one pass over the whole file, before the events. */
static int read_container_meta(struct reader *r, char *err, size_t errlen)
{
	struct rec e;
	int rc;

	while ((rc = reader_next(r, &e, err, errlen)) > 0)
		;
	if (rc < 0)
		return rc;
	rc = input_rewind(r->in, err, errlen);
	r->pos = r->len = r->counted = 0;
	r->skipped = 0; /* counted again on the read that follows */
	r->eof = false;
	r->line = 1;
	r->stage = OUTSIDE;
	return rc ? rc : start(r, err, errlen);
}

int reader_open(struct reader **out, const char *path, unsigned int flags,
		char *err, size_t errlen)
{
	struct reader *r = calloc(1, sizeof(*r));
	int rc = -ENOMEM;

	*out = NULL;
	if (!r || !(r->path = strdup(path)) || !(r->buf = malloc(READ_BUF_START))) {
		snprintf(err, errlen, "'%s': out of memory", path);
		reader_close(r);
		return rc;
	}
	r->cap = READ_BUF_START;
	r->line = 1;
	r->strict = flags & READER_STRICT;
	rc = input_open(&r->in, path, flags & READER_REGULAR, err, errlen);
	if (!rc)
		rc = start(r, err, errlen);
	if (!rc && r->meta.container)
		rc = read_container_meta(r, err, errlen);
	r->skim = (flags & READER_SKIM) && !r->meta.container;
	if (rc) {
		reader_close(r);
		return rc;
	}
	*out = r;
	return 0;
}

const struct reader_meta *reader_meta(const struct reader *r)
{
	return &r->meta;
}

uint64_t reader_events(const struct reader *r)
{
	return r->events;
}

bool reader_cut(const struct reader *r, uint64_t *line)
{
	*line = r->cut_line;
	return r->cut;
}

uint64_t reader_skipped(const struct reader *r, uint64_t *first_line)
{
	*first_line = r->skipped_line;
	return r->skipped;
}

void reader_warn(const struct reader *r)
{
	if (r->skipped)
		fprintf(stderr, "warning: '%s': skipped %llu event%s whose times are out of "
			"range (first at line %llu)\n", r->path, (unsigned long long)r->skipped,
			r->skipped == 1 ? "" : "s", (unsigned long long)r->skipped_line);
	if (r->cut)
		fprintf(stderr, "warning: '%s' is cut short after line %llu; read up to it\n",
			r->path, (unsigned long long)r->cut_line);
}

const char *reader_path(const struct reader *r)
{
	return r->path;
}

void reader_close(struct reader *r)
{
	if (!r)
		return;
	input_close(r->in);
	free(r->meta.distributed_info);
	free(r->buf);
	free(r->path);
	free(r);
}
