// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * --flight's triggers and dumps. The window itself is write/flightbuf.c;
 * here is what decides when it is written, and the writing: a start, the
 * window's lines, the regions still open, the flight record, an end.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include "correlate/state.h"
#include "lib/clock.h"
#include "lib/vec.h"
#include "write/flightbuf.h"
#include "write/flightrec.h"

/* Steps judged against the median of this many before them, at most. */
#define STEP_SAMPLES 1024u
/* slow-step judges from this many steps on. */
#define STEP_MIN_SAMPLES 5u

struct flight_req {
	enum flight_reason why;
	uint64_t at_ns, from_ns, due_ns;	/* CLOCK_MONOTONIC */
	uint32_t pid, tid;
	bool has_step;
	int64_t step;
	uint64_t dur_ns, median_ns;	/* the slow step's or call's, the hang's wait */
	const struct istr *file;
};

/* A process's running step: the step annotation's value and when it was
 * set (the step ends when another value is set). */
struct step_clock {
	uint64_t start_ns;
	int64_t step;
};

struct flight {
	struct flight_opts o;
	struct sink *sink;		/* what the window takes lines from */
	struct flightbuf buf;
	struct flight_req *pending;
	uint32_t npending, cappending;
	uint64_t last_fire[FLIGHT__COUNT];	/* CLOCK_MONOTONIC; 0: never */
	struct flight_counts counts;
	struct hmap steps;		/* pid -> struct step_clock */
	uint64_t durs[STEP_SAMPLES];	/* the last steps' durations, in turn */
	uint64_t nsteps;		/* steps ended, ever */
	uint64_t last_step_ns;		/* the last step's end (any process) */
	bool hang_said;			/* fired since that step */
};

const char *flight_reason_name(enum flight_reason r)
{
	static const char *const names[FLIGHT__COUNT] = {
#define FLIGHT_NAME(id, text) [FLIGHT_##id] = text,
		FLIGHT_REASONS(FLIGHT_NAME)
#undef FLIGHT_NAME
	};

	return r < FLIGHT__COUNT ? names[r] : "?";
}

int trace_flight_start(struct trace *t, const struct flight_opts *o)
{
	struct flight *f = calloc(1, sizeof(*f));

	if (!f)
		return -ENOMEM;
	f->o = *o;
	f->o.on[FLIGHT_signal] = true;
	f->sink = sink_memory();
	if (!f->sink || flightbuf_init(&f->buf, o->keep_ns, o->mem)) {
		if (f->sink)
			sink_close(f->sink, NULL, 0);
		free(f);
		return -ENOMEM;
	}
	/* -P writes each file's name in its events: lines keep them */
	f->sink->records = !t->writer.inline_paths;
	t->flight = f;
	t->writer.flight = &f->counts;
	files_set_flight(&t->files, f->sink);
	return 0;
}

void flight_free(struct trace *t)
{
	struct flight *f = t->flight;

	if (!f)
		return;
	/* the sinks that copied lines to it are closed by now (the tracer
	 * closes its file before it frees the trace): not touched */
	t->files.flight = NULL;
	sink_close(f->sink, NULL, 0);
	flightbuf_free(&f->buf);
	hmap_free_ptrs(&f->steps);
	free(f->pending);
	free(f);
	t->flight = NULL;
}

/* ---- firing ---- */

static void say_skipped(const struct flight_req *r, const char *why)
{
	fprintf(stderr, "dftrace-bpf: flight: %s dump skipped: %s\n",
		flight_reason_name(r->why), why);
}

/* One dump of each kind per window, and --flight-max in all. */
static void fire(struct flight *f, struct flight_req *r)
{
	char why[96];

	if (f->counts.dumps + f->npending >= f->o.max_dumps) {
		snprintf(why, sizeof(why), "--flight-max %u dumps written", f->o.max_dumps);
		say_skipped(r, why);
		f->counts.skipped++;
		return;
	}
	if (f->last_fire[r->why] && r->at_ns < f->last_fire[r->why] + f->o.keep_ns) {
		snprintf(why, sizeof(why), "one a window (%.3g s) of each kind",
			 f->o.keep_ns / 1e9);
		say_skipped(r, why);
		f->counts.skipped++;
		return;
	}
	f->last_fire[r->why] = r->at_ns;
	r->due_ns = r->at_ns + f->o.after_ns;
	if (!r->from_ns || r->from_ns > r->at_ns - f->o.keep_ns)
		r->from_ns = r->at_ns > f->o.keep_ns ? r->at_ns - f->o.keep_ns : 1;
	if (VEC_PUSH(f->pending, f->npending, f->cappending, *r)) {
		say_skipped(r, "out of memory");
		f->counts.skipped++;
	}
}

void flight_io(struct trace *t, const struct proc *p, uint32_t tid, uint64_t ts_ns,
	       uint64_t dur_ns, const struct istr *file)
{
	struct flight *f = t->flight;
	struct flight_req r;

	if (!f || !f->o.on[FLIGHT_slow_io] || dur_ns < f->o.io_ns)
		return;
	r = (struct flight_req){ .why = FLIGHT_slow_io, .at_ns = ts_ns + dur_ns,
				 .pid = p->pid, .tid = tid, .dur_ns = dur_ns, .file = file };
	fire(f, &r);
}

void flight_exit(struct trace *t, const struct proc *p, uint32_t tid, int status,
		 uint64_t ts_ns)
{
	struct flight *f = t->flight;
	struct flight_req r;

	if (!f || !f->o.on[FLIGHT_exit] || (WIFEXITED(status) && !WEXITSTATUS(status)))
		return;
	r = (struct flight_req){ .why = FLIGHT_exit, .at_ns = ts_ns, .pid = p->pid,
				 .tid = tid };
	fire(f, &r);
}

/* ---- steps ---- */

void flight_forget(struct trace *t, uint32_t pid)
{
	if (t->flight)
		free(hmap_del_ptr(&t->flight->steps, pid));
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* How many of the last steps' durations durs holds. */
static uint32_t step_samples(const struct flight *f)
{
	return f->nsteps < STEP_SAMPLES ? (uint32_t)f->nsteps : STEP_SAMPLES;
}

static uint64_t median_step(const struct flight *f)
{
	uint32_t n = step_samples(f);
	uint64_t v[STEP_SAMPLES];

	memcpy(v, f->durs, n * sizeof(v[0]));
	qsort(v, n, sizeof(v[0]), cmp_u64);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* A step has ended after dur_ns: slow if K times the median before it. */
static void judge_step(struct flight *f, uint32_t pid, const struct step_clock *c,
		       uint64_t end_ns)
{
	uint64_t dur = end_ns > c->start_ns ? end_ns - c->start_ns : 0, median;
	struct flight_req r;

	if (f->o.on[FLIGHT_slow_step] && step_samples(f) >= STEP_MIN_SAMPLES) {
		median = median_step(f);
		if ((double)dur > f->o.step_k * (double)median) {
			r = (struct flight_req){ .why = FLIGHT_slow_step, .at_ns = end_ns,
						 .from_ns = c->start_ns, .pid = pid, .tid = pid,
						 .has_step = true, .step = c->step,
						 .dur_ns = dur, .median_ns = median };
			fire(f, &r);
		}
	}
	f->durs[f->nsteps++ % STEP_SAMPLES] = dur;
}

void flight_step(struct trace *t, const struct proc *p, int64_t step, uint64_t ts_ns)
{
	struct flight *f = t->flight;
	struct step_clock *c;

	if (!f)
		return;
	c = hmap_get_ptr(&f->steps, p->pid);
	if (c && c->step == step)
		return; /* the same step said again */
	if (c) {
		judge_step(f, p->pid, c, ts_ns);
		f->last_step_ns = ts_ns;
		f->hang_said = false;
	} else {
		c = malloc(sizeof(*c));
		if (!c || hmap_put_ptr(&f->steps, p->pid, c)) {
			free(c);
			return;
		}
		if (!f->last_step_ns)
			f->last_step_ns = ts_ns;
	}
	c->start_ns = ts_ns;
	c->step = step;
}

/* The oldest running step's process and start (0: none). */
static uint64_t oldest_step(const struct flight *f, uint32_t *pid, int64_t *step)
{
	uint64_t oldest = 0, key, v;
	size_t it = 0;

	while (hmap_next(&f->steps, &it, &key, &v)) {
		const struct step_clock *c = (const struct step_clock *)(uintptr_t)v;

		if (!oldest || c->start_ns < oldest) {
			oldest = c->start_ns;
			*pid = (uint32_t)key;
			*step = c->step;
		}
	}
	return oldest;
}

/* hang: no step has ended for SECONDS while steps run. */
static void look_for_hang(struct flight *f, uint64_t now_ns)
{
	struct flight_req r = { .why = FLIGHT_hang, .at_ns = now_ns, .has_step = true };

	if (!f->o.on[FLIGHT_hang] || f->hang_said || !f->last_step_ns ||
	    now_ns < f->last_step_ns + f->o.hang_ns)
		return;
	if (!oldest_step(f, &r.pid, &r.step))
		return;
	r.tid = r.pid;
	r.dur_ns = now_ns - f->last_step_ns;
	f->hang_said = true;
	fire(f, &r);
}

/* ---- dumps ---- */

struct dump {
	struct trace *t;
	struct sink *s;
	uint64_t now_ns;
	uint64_t regions;
	uint64_t events;	/* the window's, written */
	int err;
};

static int put_lines(void *ctx, const void *bytes, size_t len)
{
	return output_write(ctx, bytes, len);
}

/* A region still open at the dump: written as it is so far. */
static void write_open(struct thread *th, void *ctx)
{
	struct dump *d = ctx;
	struct proc *p = proc_get(&d->t->model, th->pid);

	for (uint32_t i = 0; p && i < th->phases.depth; i++) {
		struct phase_frame *parent = i ? &th->phases.f[i - 1] : NULL;
		uint32_t children = parent ? parent->children : 0;

		writer_region(&d->t->writer, d->s, p, th->tid, &th->phases, (int)i,
			      d->now_ns, "open_at_dump");
		if (parent)
			parent->children = children;
		if (writer_end_event(d->s))
			d->err = -EIO;
		d->regions++;
	}
}

static void dump_path(const struct flight *f, const struct flight_req *r, char *path,
		      size_t size)
{
	snprintf(path, size, "%sflight-%llu-%s.pfw.gz", f->o.prefix,
		 (unsigned long long)f->counts.dumps + 1, flight_reason_name(r->why));
}

static void say_dump(const struct flight_req *r, const char *path,
		     const struct flight_record *rec, uint64_t took_ns)
{
	fprintf(stderr, "dftrace-bpf: flight: dump %llu (%s, pid %u", (unsigned long long)rec->dump,
		rec->reason, r->pid);
	if (r->has_step)
		fprintf(stderr, ", step %lld", (long long)r->step);
	if (r->dur_ns)
		fprintf(stderr, ", %.3f s", r->dur_ns / 1e9);
	if (r->median_ns)
		fprintf(stderr, " against a median of %.3f s", r->median_ns / 1e9);
	fprintf(stderr, ") written to '%s' in %.1f ms: %llu events over %.3f s%s\n", path,
		took_ns / 1e6, (unsigned long long)rec->events, (rec->to_ns - rec->from_ns) / 1e9,
		rec->from_ns > r->from_ns + FLIGHT_CHUNK_NS ?
			" (the window is shorter: --flight-mem or the run's start)" : "");
}

/* The ids of a dump's start, flight record and end: past any a process
 * takes (one an event), so never one of the window's. */
#define DUMP_IDS (1ull << 48)

/* A dump's lines, into d->s: start, the names and the window, the
 * regions open now, the flight record (rec), end. */
static int dump_lines(struct trace *t, struct flight *f, const struct flight_req *r,
		      struct dump *d, struct flight_record *rec)
{
	struct flight_span sp = flightbuf_span(&f->buf, r->from_ns, r->due_ns);
	/* the window as it is: later than asked where the run, or the cap */
	uint64_t from = sp.events && sp.from_ns > r->from_ns ? sp.from_ns : r->from_ns;
	struct lifecycle l = t->files.root;
	int ret;

	l.id = DUMP_IDS;
	l.ts_us = writer_wall_us(&t->writer, from);
	writer_start(&t->writer, d->s, &l, -1);
	ret = sink_write_lines(d->s);
	if (!ret)
		ret = flightbuf_write(&f->buf, r->from_ns, r->due_ns, t->writer.clock_offset_ns,
				      &d->events, flightrec_format, &t->writer, put_lines,
				      d->s->out);
	if (ret)
		return ret;
	threads_each(&t->model, write_open, d);
	*rec = (struct flight_record){
		.id = DUMP_IDS + 1, .reason = flight_reason_name(r->why), .pid = r->pid,
		.tid = r->tid, .at_ns = r->at_ns, .from_ns = from,
		.to_ns = sp.events ? sp.to_ns : r->due_ns, .keep_ns = f->o.keep_ns,
		.has_step = r->has_step, .step = r->step, .dur_ns = r->dur_ns,
		.median_ns = r->median_ns, .file = r->file, .events = d->events,
		.dump = f->counts.dumps + 1, .capped = f->buf.capped > 0,
	};
	writer_flight(&t->writer, d->s, rec);
	d->s->events = d->events + d->regions;
	l.ts_us = writer_wall_us(&t->writer, d->now_ns);
	l.id = DUMP_IDS + 2;
	t->writer.flight = NULL; /* a dump's end: its record says the rest */
	writer_end(&t->writer, d->s, &l, -1);
	t->writer.flight = &f->counts;
	return d->err ? d->err : sink_write_lines(d->s);
}

/* Made as the invoker, put in place whole, or nothing is left. */
static int write_dump(struct trace *t, struct flight *f, const struct flight_req *r,
		      uint64_t now_ns)
{
	struct output_opts oo = { .gzip_level = f->o.gzip_level, .as = f->o.as,
				  .dir_fd = f->o.dir_fd };
	struct dump d = { .t = t, .now_ns = now_ns };
	uint64_t began = clock_mono_ns();
	char path[PATH_MAX], err[TRACE_ERR_LEN] = "", close_err[TRACE_ERR_LEN];
	struct flight_record rec;
	int ret, rc;

	dump_path(f, r, path, sizeof(path));
	oo.path = path;
	ret = sink_open(&oo, &d.s, err, sizeof(err));
	if (!ret)
		ret = dump_lines(t, f, r, &d, &rec);
	if (!ret)
		ret = output_commit(d.s->out, err, sizeof(err));
	if (d.s && (rc = sink_close(d.s, close_err, sizeof(close_err))) && !ret) {
		ret = rc;
		snprintf(err, sizeof(err), "%s", close_err);
	}
	if (ret) {
		fprintf(stderr, "dftrace-bpf: flight: cannot write the %s dump: %s\n",
			flight_reason_name(r->why), err[0] ? err : strerror(-ret));
		f->counts.skipped++;
		return ret;
	}
	f->counts.dumps++;
	say_dump(r, path, &rec, clock_mono_ns() - began);
	return 0;
}

/* The window takes the flight sink's lines; names it let go of are
 * written again at their next use. */
static void take_lines(struct flight *f, uint64_t now_ns)
{
	flightbuf_take(&f->buf, f->sink, now_ns);
	if (f->buf.names_lost) {
		sink_forget_seen(f->sink);
		f->buf.names_lost = false;
	}
}

/* Where the window must not be cut: the oldest running step (slow-step
 * dumps hold the step from its beginning), and the dumps to come. */
static uint64_t hold_from(const struct flight *f)
{
	uint64_t hold = 0, start;
	uint32_t pid;
	int64_t step;

	if (f->o.on[FLIGHT_slow_step] && (start = oldest_step(f, &pid, &step)))
		hold = start;
	for (uint32_t i = 0; i < f->npending; i++)
		if (!hold || f->pending[i].from_ns < hold)
			hold = f->pending[i].from_ns;
	return hold;
}

/* Writes the dumps due by now_ns (all of them: UINT64_MAX). */
static void write_due(struct trace *t, struct flight *f, uint64_t now_ns)
{
	uint32_t kept = 0;
	bool peeked = false;

	for (uint32_t i = 0; i < f->npending; i++) {
		if (f->pending[i].due_ns > now_ns) {
			f->pending[kept++] = f->pending[i];
			continue;
		}
		/* (at the end the kept records were taken for good) */
		if (!peeked && now_ns != UINT64_MAX && t->cfg.peek_kept)
			t->cfg.peek_kept(t->cfg.peek_ctx, t);
		peeked = true;
		take_lines(f, now_ns);
		flightbuf_seal(&f->buf);
		write_dump(t, f, &f->pending[i], now_ns == UINT64_MAX ?
			   f->pending[i].due_ns : now_ns);
	}
	f->npending = kept;
}

void flight_take(struct trace *t)
{
	struct flight *f = t->flight;
	uint64_t hi = f->sink->end_hi;

	/* the record time, not the clock: this is the hot path */
	take_lines(f, hi);
	flightbuf_tick(&f->buf, hi, hold_from(f));
}

void trace_flight_tick(struct trace *t, uint64_t now_ns)
{
	struct flight *f = t->flight;

	if (!f)
		return;
	take_lines(f, now_ns);
	look_for_hang(f, now_ns);
	write_due(t, f, now_ns);
	flightbuf_tick(&f->buf, now_ns, hold_from(f));
}

void trace_flight_signal(struct trace *t, uint64_t now_ns)
{
	struct flight_req r = { .why = FLIGHT_signal, .at_ns = now_ns,
				.pid = t->files.root.pid, .tid = t->files.root.pid };

	if (t->flight)
		fire(t->flight, &r);
}

void flight_finish(struct trace *t)
{
	if (t->flight)
		write_due(t, t->flight, UINT64_MAX);
}
