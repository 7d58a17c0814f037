// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/hash.h"
#include "lib/vec.h"
#include "render/chrome.h"
#include "render/strict.h"

#define NS_PER_US 1000

/* A torch thread's track in the output, and the ends of the slices open
 * on it (torch writes them by start). */
struct track {
	uint32_t tid;
	int64_t last_start;
	int64_t *ends;
	uint32_t n, cap;
};

void chrome_conv_init(struct chrome_conv *c, struct source_set *set,
		      struct source *src, struct hmap *named)
{
	*c = (struct chrome_conv){ .set = set, .src = src, .named = named };
	jb_init(&c->names, 1024);
	jb_init(&c->args, 1024);
}

void chrome_conv_free(struct chrome_conv *c)
{
	uint64_t k, v;
	size_t it = 0;

	fh_table_free(&c->fh);
	while (hmap_next(&c->tracks, &it, &k, &v)) {
		struct track *t = (void *)(uintptr_t)v;

		free(t->ends);
		free(t);
	}
	hmap_free(&c->tracks);
	free(c->lines);
	jb_free(&c->names);
	jb_free(&c->args);
}


/* ts and dur, in µs with the ns as three decimals. */
static void put_us(struct jbuf *b, int64_t ns)
{
	if (ns < 0)
		ns = 0;
	jb_u64(b, ns / NS_PER_US);
	if (ns % NS_PER_US) {
		char frac[4] = { '.', '0' + ns / 100 % 10, '0' + ns / 10 % 10,
				 '0' + ns % 10 };

		jb_mem(b, frac, 4);
	}
}

static int64_t rel(const struct chrome_conv *c, int64_t raw_ns)
{
	return source_time(c->src, raw_ns) - c->set->base_ns;
}

/* ,"pid":P,"tid":T */
static void put_ids(struct jbuf *b, uint32_t pid, uint32_t tid)
{
	JB_LIT(b, ",\"pid\":");
	jb_u64(b, pid);
	JB_LIT(b, ",\"tid\":");
	jb_u64(b, tid);
}

/* The args object with extra members (already JSON, no braces) first;
 * its own members written strictly (render/strict.h). */
static void put_args(struct jbuf *b, struct span args, const char *extra,
		     size_t extra_len)
{
	const char *p = args.p, *end = args.p + args.len;
	size_t at;

	JB_LIT(b, ",\"args\":{");
	jb_mem(b, extra, extra_len);
	p = js_ws(p, end);
	if (p < end && *p == '{')
		p++;
	if (extra_len)
		jb_char(b, ',');
	at = b->len;
	strict_members(b, (struct span){ p, end - p });
	if (extra_len && b->len == at)
		b->len--;
	jb_char(b, '}');
}


static void put_name_cat(struct jbuf *b, struct span name, struct span cat)
{
	JB_LIT(b, "{\"name\":");
	strict_string(b, name);
	JB_LIT(b, ",\"cat\":");
	strict_string(b, cat);
}

/* What a dftrace event's args become: paths instead of hashes; its ns
 * taken out (ts and dur carry them); the host hash dropped (the process
 * names say the host). One pass, into c->args. */
struct x_args {
	struct rec_fine fine;	/* args.ns10d (or ns10) */
	bool fname[2];		/* args.fname / fname2 written */
};

static void put_member(struct jbuf *b, struct span k, const char *v, size_t vlen,
		       bool quote)
{
	if (b->len > 1)
		jb_char(b, ',');
	strict_string(b, k);
	jb_char(b, ':');
	if (quote)
		strict_string(b, (struct span){ v, vlen });
	else
		strict_value(b, (struct span){ v, vlen });
}

static void x_member(struct chrome_conv *c, struct x_args *x, struct span k,
		     struct span v)
{
	static const struct span names[2] = { SPAN_LIT("fname"), SPAN_LIT("fname2") };
	int which = SPAN_IS(k, "fhash") ? 0 : SPAN_IS(k, "fhash2") ? 1 :
		    SPAN_IS(k, "fname") ? 2 : SPAN_IS(k, "fname2") ? 3 : -1;
	const struct fh_path *path;

	if (rec_fine_member(k, v, &x->fine)) {
		return;
	} else if (SPAN_IS(k, "hhash")) {
		return;
	} else if (which >= 2) { /* -P: the path is there already */
		if (!x->fname[which - 2])
			put_member(&c->args, k, v.p, v.len, false);
		x->fname[which - 2] = true;
	} else if (which >= 0 && (x->fname[which] || (path = fh_table_get(&c->fh, v)))) {
		if (!x->fname[which])
			put_member(&c->args, names[which], path->text, path->len, true);
		x->fname[which] = true;
	} else {
		put_member(&c->args, k, v.p, v.len, false);
	}
}

/* A dftrace X event: its ns from args.ns10d, its files named, its
 * DFTracer id kept in args (an "id" means something else to viewers). */
static void dftrace_x(struct chrome_conv *c, const struct rec *e,
		      struct jbuf *b, int64_t *ts)
{
	struct x_args x = { .fine = REC_FINE_NONE };
	const char *p = e->args.p, *end = e->args.p + e->args.len;
	int64_t start, stop;
	struct span k, v;

	jb_reset(&c->args);
	jb_char(&c->args, '{');
	if (e->has_id) {
		JB_LIT(&c->args, "\"event_id\":");
		jb_i64(&c->args, e->id);
	}
	for (int i = 0; i < e->nargs; i++)
		x_member(c, &x, e->arg_key[i], e->arg_val[i]);
	p = js_ws(p, end);
	if (e->nargs < 0 && p < end && *p == '{')
		p++;
	while (e->nargs < 0 && js_member(&p, end, &k, &v) == JS_OK)
		x_member(c, &x, k, v);
	jb_char(&c->args, '}');
	rec_span_ns(e, x.fine, &start, &stop);
	*ts = rel(c, start);
	put_name_cat(b, e->name, e->cat);
	JB_LIT(b, ",\"ph\":\"X\"");
	put_ids(b, sources_id(c->set, c->src, e->pid), sources_id(c->set, c->src, e->tid));
	JB_LIT(b, ",\"ts\":");
	put_us(b, *ts);
	JB_LIT(b, ",\"dur\":");
	put_us(b, stop - start);
	JB_LIT(b, ",\"args\":");
	jb_mem(b, c->args.p, c->args.len);
	jb_char(b, '}');
}

/* start and end, CM marks and losses: instant events. */
static void instant(struct chrome_conv *c, const struct rec *e, struct jbuf *b,
		    struct span name, int64_t ts, char scope)
{
	put_name_cat(b, name, SPAN_LIT("dftracer"));
	JB_LIT(b, ",\"ph\":\"i\",\"s\":\"");
	jb_char(b, scope);
	jb_char(b, '"');
	put_ids(b, sources_id(c->set, c->src, e->pid),
		sources_id(c->set, c->src, e->tid_num ? e->tid : e->pid));
	JB_LIT(b, ",\"ts\":");
	put_us(b, ts);
	put_args(b, e->args, NULL, 0);
	jb_char(b, '}');
}

/* A process or thread named once, whatever repeats the name (the
 * writer names a thread in each file it writes to; merged inputs). */
static bool first_name(struct chrome_conv *c, uint32_t pid, uint32_t tid)
{
	uint64_t key = (uint64_t)pid << 32 | tid;

	return !c->named || hmap_add(c->named, key, 0) == 1;
}

/* A thread_name line for names: its text goes after it. */
static void name_begin(struct chrome_conv *c, uint32_t pid, uint32_t tid)
{
	struct chrome_name n = { (uint64_t)pid << 32 | tid, c->names.len, 0 };

	if (VEC_PUSH(c->lines, c->nlines, c->caplines, n))
		c->names.err = -ENOMEM;
	JB_LIT(&c->names, "{\"name\":\"thread_name\",\"ph\":\"M\"");
	put_ids(&c->names, pid, tid);
}

static void name_end(struct chrome_conv *c)
{
	if (c->nlines)
		c->lines[c->nlines - 1].len = c->names.len - c->lines[c->nlines - 1].off;
}

void chrome_names_take(struct chrome_conv *c, struct hmap *named, struct jbuf *out)
{
	for (uint32_t i = 0; i < c->nlines; i++) {
		const struct chrome_name *n = &c->lines[i];

		if (hmap_add(named, n->key, 0) != 1)
			continue;
		if (out->len)
			JB_LIT(out, ",\n");
		jb_mem(out, c->names.p + n->off, n->len);
	}
	if (c->names.err && !out->err)
		out->err = c->names.err;
}

static bool dftrace_meta(struct chrome_conv *c, const struct rec *e,
			 struct jbuf *b, int64_t *ts)
{
	struct span name;
	uint32_t pid, tid;
	int64_t us;

	if (SPAN_IS(e->name, "FH")) {
		fh_table_add(&c->fh, e);
		return false;
	}
	if (SPAN_IS(e->name, "CM") && js_get(e->args, "name", &name) &&
	    js_string(name, &name) && sources_mark_us(e, &us)) {
		*ts = rel(c, us * NS_PER_US);
		instant(c, e, b, name, *ts, 't');
		return true;
	}
	if (SPAN_IS(e->name, "lost_events")) {
		*ts = rel(c, c->src->max_ts);
		instant(c, e, b, e->name, *ts, 'p');
		return true;
	}
	if (!SPAN_IS(e->name, "thread_name") || !e->pid_num || !e->tid_num)
		return false; /* process names are the merge's; SH, HH: used */
	pid = sources_id(c->set, c->src, e->pid);
	tid = sources_id(c->set, c->src, e->tid);
	name_begin(c, pid, tid);
	put_args(&c->names, e->args, NULL, 0);
	jb_char(&c->names, '}');
	name_end(c);
	return false;
}

static bool dftrace_event(struct chrome_conv *c, const struct rec *e,
			  struct jbuf *b, int64_t *ts)
{
	if (e->ph == 'M')
		return dftrace_meta(c, e, b, ts);
	if (e->ph != 'X' || !e->pid_num || !e->tid_num || !e->has_ts)
		return false;
	if (SPAN_IS(e->cat, "dftracer")) {
		*ts = rel(c, e->ts_ns);
		instant(c, e, b, e->name, *ts, 'p');
		return true;
	}
	dftrace_x(c, e, b, ts);
	return true;
}

/* ---- torch.profiler ---- */

/* Where the torch trace's ops go: its own pid (Kineto), or the process
 * that ran the profiler (torch without Kineto names none). */
static uint32_t torch_pid(const struct chrome_conv *c, const struct rec *e)
{
	const struct source *d = c->src->paired;

	if (e->pid_num)
		return sources_id(c->set, c->src, e->pid);
	if (c->src->paired_pid)
		return sources_id(c->set, d, c->src->paired_pid);
	if (d && d->nanchors)
		return sources_id(c->set, d, d->anchors[0].pid);
	return d ? sources_id(c->set, d, d->root_pid) : 0;
}

/* torch's ops get tracks of their own beside the process's threads: two
 * instrumentations' spans need not nest with each other. */
static struct track *torch_track(struct chrome_conv *c, const struct rec *e,
				 uint32_t pid)
{
	uint64_t key = e->tid_num ? (uint64_t)e->tid : dft_hash64(e->tid_text.p, e->tid_text.len);
	struct track *t = hmap_get_ptr(&c->tracks, key);

	if (t)
		return t;
	t = calloc(1, sizeof(*t));
	if (!t || hmap_put_ptr(&c->tracks, key, t)) {
		free(t);
		return NULL;
	}
	t->tid = sources_spare_id(c->set);
	name_begin(c, pid, t->tid);
	JB_LIT(&c->names, ",\"args\":{\"name\":\"torch ");
	if (e->tid_num)
		jb_i64(&c->names, e->tid);
	else
		jb_str(&c->names, e->tid_text.p, e->tid_text.len);
	JB_LIT(&c->names, "\"}}");
	name_end(c);
	return t;
}

/* torch rounds ts and dur to the µs each, so a slice can seem to end up
 * to 1 µs after its parent, which Perfetto takes for a broken trace: such
 * a slice is trimmed to its parent's end, within torch's resolution.
 * A 0-µs slice gets 1 ns: speedscope puts an end before a begin at the
 * same time, so a 0-µs child in its parent's first µs would end before
 * its parent began (torch writes such children; so do our anchors). */
static int64_t nested_dur(struct track *t, int64_t start, int64_t dur)
{
	if (dur == 0)
		dur = 1;
	if (start < t->last_start)
		t->n = 0; /* not by start after all: nothing to go by */
	t->last_start = start;
	while (t->n && t->ends[t->n - 1] <= start)
		t->n--;
	if (t->n && start + dur > t->ends[t->n - 1] &&
	    start + dur - t->ends[t->n - 1] <= TORCH_RESOLUTION_NS)
		dur = t->ends[t->n - 1] - start;
	if (VEC_PUSH(t->ends, t->n, t->cap, start + dur))
		t->n = 0;
	return dur;
}

/* '{' and every member of event raw as it is (written strictly), but
 * its ids and ts, which are the merge's, and its dur if own_dur (the
 * merge writes it then). */
static void copy_members(struct jbuf *b, struct span raw, bool own_dur)
{
	const char *p = raw.p + 1, *end = raw.p + raw.len;
	struct span k, v;
	bool first = true;

	jb_char(b, '{');
	while (js_member(&p, end, &k, &v) == JS_OK) {
		if (SPAN_IS(k, "pid") || SPAN_IS(k, "tid") || SPAN_IS(k, "ts") ||
		    (own_dur && SPAN_IS(k, "dur")))
			continue;
		if (!first)
			jb_char(b, ',');
		first = false;
		strict_string(b, k);
		jb_char(b, ':');
		strict_value(b, v);
	}
	if (first)
		JB_LIT(b, "\"name\":\"\"");
}

/* Every member as it is, but ids and times, which are the merge's. */
static bool torch_event(struct chrome_conv *c, const struct rec *e,
			struct jbuf *b, int64_t *ts)
{
	uint32_t pid = torch_pid(c, e);
	struct track *track;

	if (e->ph == 'M' || !e->has_ts)
		return false; /* its own process and thread names */
	track = torch_track(c, e, pid);
	if (!track)
		return false;
	*ts = rel(c, e->ts_ns);
	copy_members(b, e->raw, true);
	put_ids(b, pid, track->tid);
	JB_LIT(b, ",\"ts\":");
	put_us(b, *ts);
	if (e->has_dur) {
		JB_LIT(b, ",\"dur\":");
		put_us(b, e->ph == 'X' ? nested_dur(track, e->ts_ns, e->dur_ns) : e->dur_ns);
	}
	jb_char(b, '}');
	return true;
}

/* An earlier merge's event, as it is: its ids remapped (its processes
 * may meet others' pids), its time put on this merge's base. */
static bool merged_event(struct chrome_conv *c, const struct rec *e,
			 struct jbuf *b, int64_t *ts)
{
	uint32_t pid = e->pid_num ? sources_id(c->set, c->src, e->pid) : 0;
	uint32_t tid = e->tid_num ? sources_id(c->set, c->src, e->tid) : 0;

	if (e->ph == 'M') {
		bool thread = SPAN_IS(e->name, "thread_name");

		if ((!thread && !SPAN_IS(e->name, "process_name")) ||
		    !first_name(c, pid, thread ? tid : 0))
			return false;
		*ts = 0;
	} else if (e->has_ts) {
		*ts = rel(c, e->ts_ns);
	} else {
		return false;
	}
	copy_members(b, e->raw, false);
	put_ids(b, pid, tid);
	if (e->has_ts) {
		JB_LIT(b, ",\"ts\":");
		put_us(b, *ts);
	}
	jb_char(b, '}');
	return true;
}

bool chrome_event(struct chrome_conv *c, const struct rec *e, struct jbuf *out,
		  int64_t *ts_ns)
{
	switch (c->src->kind) {
	case SRC_TORCH:
		return torch_event(c, e, out, ts_ns);
	case SRC_MERGED:
		return merged_event(c, e, out, ts_ns);
	default:
		return dftrace_event(c, e, out, ts_ns);
	}
}

/* ---- process names ---- */

static void name_process(struct source_set *set, const struct source *s,
			 uint32_t pid, const char *comm, struct jbuf *out)
{
	const struct source *host = s->paired ? s->paired : s;
	char name[512];
	int n = 0, rank = sources_rank(s, pid);

	if (rank >= 0)
		n += snprintf(name + n, sizeof(name) - n, "rank %d \xc2\xb7 ", rank);
	n += snprintf(name + n, sizeof(name) - n, "%s [%u]", comm, pid);
	if (host->host[0])
		n += snprintf(name + n, sizeof(name) - n, " @%s", host->host);
	if (out->len)
		JB_LIT(out, ",\n");
	JB_LIT(out, "{\"name\":\"process_name\",\"ph\":\"M\"");
	put_ids(out, sources_id(set, s, pid), 0);
	JB_LIT(out, ",\"args\":{\"name\":");
	jb_str(out, name, strnlen(name, sizeof(name)));
	JB_LIT(out, "}}");
}

/* Every process once: the traces' first, with their program names; then
 * those only a torch trace (Kineto's own pids) shows. */
void chrome_process_names(struct source_set *set, struct jbuf *out)
{
	struct hmap named = { 0 };

	for (int pass = 0; pass < 2; pass++) {
		for (uint32_t i = 0; i < set->n; i++) {
			const struct source *s = &set->src[i];
			uint64_t pid, v;
			size_t it = 0;

			if ((s->kind == SRC_DFTRACE) != (pass == 0) || s->kind == SRC_MERGED)
				continue; /* a merged input's names are its own */
			while (hmap_next(&s->pids, &it, &pid, &v)) {
				const char *comm = hmap_get_ptr(&s->comm, pid);

				if (hmap_add(&named, sources_id(set, s, pid), 0) != 1)
					continue;
				name_process(set, s, pid, comm ? comm : pass ? "torch" : "process",
					     out);
			}
		}
	}
	hmap_free(&named);
}
