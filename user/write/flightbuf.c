// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "lib/gz.h"
#include "lib/hash.h"
#include "lib/traceformat.h"
#include "lib/vec.h"
#include "write/flightbuf.h"

/* A sealed chunk's bytes live in pages of their own, not in the heap:
 * chunks live for the window and go oldest first, among the heap's
 * short-lived buffers (a chunk's compression, the lines in hand), and
 * there they fragmented it: under a flood with the window at its cap
 * the tracer's anonymous memory grew some 40 kB a second, flat with
 * the chunks in pages. The pages are what the cap counts. */
static size_t chunk_pages(size_t len)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	return (len + page - 1) / page * page;
}

/* The smallest spare that holds len with at most half as much again
 * to spare, or -1. */
static int spare_for(const struct flightbuf *fb, size_t len)
{
	size_t need = chunk_pages(len);
	int best = -1;

	for (uint32_t i = 0; i < fb->nspares; i++) {
		size_t have = fb->spares[i].map_len;

		if (have >= need && have <= need + need / 2 &&
		    (best < 0 || have < fb->spares[best].map_len))
			best = (int)i;
	}
	return best;
}

static void spare_take(struct flightbuf *fb, uint32_t i)
{
	fb->spares[i] = fb->spares[--fb->nspares];
}

static void spare_unmap(struct flightbuf *fb, uint32_t i)
{
	munmap(fb->spares[i].p, fb->spares[i].map_len);
	fb->used -= fb->spares[i].map_len;
	spare_take(fb, i);
}

/* len bytes at p, copied into a spare's pages or new ones (counted in
 * used): the copy, its pages' length in *map_len; NULL */
static unsigned char *chunk_keep(struct flightbuf *fb, const unsigned char *p, size_t len,
				 uint32_t *map_len)
{
	int i = spare_for(fb, len);
	void *m;

	if (i >= 0) {
		m = fb->spares[i].p;
		*map_len = fb->spares[i].map_len;
		spare_take(fb, (uint32_t)i);
	} else {
		*map_len = (uint32_t)chunk_pages(len);
		m = mmap(NULL, *map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED)
			return NULL;
		fb->used += *map_len;
	}
	memcpy(m, p, len);
	return m;
}

/* A chunk's pages go: kept as a spare (still in used) where spare is
 * set and there is room, else unmapped. */
static void chunk_free(struct flightbuf *fb, struct flight_chunk *c, bool spare)
{
	if (!c->z)
		return;
	if (spare && fb->nspares < FLIGHT_SPARES) {
		fb->spares[fb->nspares++] = (struct flight_spare){ c->z, c->map_len };
	} else {
		munmap(c->z, c->map_len);
		fb->used -= c->map_len;
	}
	c->z = NULL;
}

/* A new newest generation of metadata: 0 or -ENOMEM. */
static int new_gen(struct flightbuf *fb)
{
	struct flight_meta g = { .last_chunk = UINT64_MAX };

	if (fb->ngens)
		fb->gens[fb->ngens - 1].last_chunk = fb->sealed; /* pending's, to come */
	if (fb->gfirst > 16 && fb->gfirst * 2 > fb->ngens) {
		memmove(fb->gens, fb->gens + fb->gfirst,
			(fb->ngens - fb->gfirst) * sizeof(*fb->gens));
		fb->ngens -= fb->gfirst;
		fb->gfirst = 0;
	}
	if (jb_init(&g.lines, 16u << 10))
		return -ENOMEM;
	if (VEC_PUSH(fb->gens, fb->ngens, fb->capgens, g)) {
		jb_free(&g.lines);
		return -ENOMEM;
	}
	hmap_free(&fb->meta_seen);
	return 0;
}

/* Generations no chunk left can use go. */
static void drop_gens(struct flightbuf *fb)
{
	while (fb->ngens - fb->gfirst > 1 && fb->gens[fb->gfirst].last_chunk < fb->dropped) {
		fb->used -= fb->gens[fb->gfirst].lines.len;
		jb_free(&fb->gens[fb->gfirst++].lines);
	}
}

int flightbuf_init(struct flightbuf *fb, uint64_t keep_ns, size_t cap)
{
	memset(fb, 0, sizeof(*fb));
	fb->keep_ns = keep_ns;
	fb->cap = cap;
	if (jb_init(&fb->pending, FLIGHT_CHUNK_BYTES + (64u << 10)) || new_gen(fb)) {
		flightbuf_free(fb);
		return -ENOMEM;
	}
	return 0;
}

void flightbuf_free(struct flightbuf *fb)
{
	for (uint32_t i = fb->first; i < fb->n; i++)
		chunk_free(fb, &fb->chunks[i], false);
	while (fb->nspares)
		spare_unmap(fb, 0);
	free(fb->chunks);
	jb_free(&fb->pending);
	for (uint32_t i = fb->gfirst; i < fb->ngens; i++)
		jb_free(&fb->gens[i].lines);
	free(fb->gens);
	hmap_free(&fb->meta_seen);
	memset(fb, 0, sizeof(*fb));
}

/* ---- taking lines ---- */

/* Past the line that begins at p: its newline, or end. */
static const char *line_end(const char *p, const char *end)
{
	const char *nl = memchr(p, '\n', end - p);

	return nl ? nl + 1 : end;
}

/* What a line between events is: kept for every dump (names), an event
 * of the window (a CM mark), or nothing a dump wants (the losses, said
 * by the trace's own end; the file's "["). */
enum meta_kind { META_KEEP, META_EVENT, META_DROP };

/* A v2 metadata line's ph. */
#define V2_META "\"ph\":" V2_STR(V2_PH_METADATA) ","

static enum meta_kind meta_kind(const char *line, size_t len)
{
	const char *name = memmem(line, len < 48 ? len : 48, "\"name\":\"", 8);

	if (line[0] == FLIGHT_CTX)
		return META_KEEP;
	if (!name)
		return META_DROP; /* "[": the file's own */
	name += 8;
	if (!strncmp(name, "CM\"", 3))
		return META_EVENT;
	if (!strncmp(name, "lost_events\"", 12))
		return META_DROP;
	/* an event among them: only where the sink lost its runs */
	return memmem(line, len, "\"ph\":\"M\"", 8) || memmem(line, len, V2_META, sizeof(V2_META) - 1) ?
		       META_KEEP : META_EVENT;
}

/* What makes a metadata line a repeat: an FH, SH or HH line's kind and
 * value (the same file met by two processes, or by the window and a
 * process's file), any other line's whole text. */
static uint64_t meta_key(const char *line, size_t len)
{
	const char *v = memmem(line, len, "\",\"value\":\"", 11);
	bool hashed = len > 12 && line[10] == 'H' && line[11] == '"' && v;

	if (!hashed)
		return dft_hash64(line, len);
	v += 11;
	return dft_hash64(v, line + len - v) ^ (uint64_t)(unsigned char)line[9] << 56;
}

static void keep_meta(struct flightbuf *fb, const char *line, size_t len)
{
	uint64_t h = meta_key(line, len);
	struct jbuf *m = &fb->gens[fb->ngens - 1].lines;
	size_t had;

	if (m->len > FLIGHT_META_GEN && m->len > fb->cap / 16 && !new_gen(fb)) {
		fb->names_lost = true;
		m = &fb->gens[fb->ngens - 1].lines;
	}
	if (hmap_add(&fb->meta_seen, h, 0) == 0)
		return; /* written already (also when out of memory: a repeat is harmless) */
	had = m->len;
	jb_mem(m, line, len);
	if (m->err)
		fb->err = m->err;
	else
		fb->used += m->len - had;
}

static uint32_t count_lines(const char *p, size_t len)
{
	uint32_t n = 0;

	for (const char *end = p + len; (p = memchr(p, '\n', end - p)); p++)
		n++;
	return n;
}

static void take_event(struct flightbuf *fb, const char *p, size_t len)
{
	uint32_t n = count_lines(p, len);

	jb_mem(&fb->pending, p, len);
	fb->pend_events += n;
	fb->events_in += n;
}

static void take_meta(struct flightbuf *fb, const char *p, size_t len)
{
	for (const char *end = p + len, *next; p < end; p = next) {
		next = line_end(p, end);
		switch (meta_kind(p, next - p)) {
		case META_KEEP:
			keep_meta(fb, p, next - p);
			break;
		case META_EVENT:
			take_event(fb, p, next - p);
			break;
		default:
			break;
		}
	}
}

void flightbuf_take(struct flightbuf *fb, struct sink *s, uint64_t now_ns)
{
	uint32_t from = 0;
	size_t before = fb->pending.len;

	if (!s->buf.len && !s->recs.len)
		return;
	if (!fb->pending.len)
		fb->pend_since = now_ns;
	if (s->runs_failed) { /* out of memory: no runs to tell them apart */
		take_meta(fb, s->buf.p, s->buf.len);
	} else {
		for (uint32_t i = 0; i < s->nruns; from = s->runs[i++].end) {
			if (s->runs[i].tid == SINK_META)
				take_meta(fb, s->buf.p + from, s->runs[i].end - from);
			else if (s->runs[i].tid != SINK_LAST)
				take_event(fb, s->buf.p + from, s->runs[i].end - from);
		}
	}
	if (s->recs.err && !fb->err)
		fb->err = s->recs.err;
	else if (s->recs.len)
		jb_mem(&fb->pending, s->recs.p, s->recs.len);
	fb->pend_events += s->nrecs;
	fb->events_in += s->nrecs;
	if (fb->pending.len > before && s->end_hi) {
		if (!fb->pend_lo || s->end_lo < fb->pend_lo)
			fb->pend_lo = s->end_lo;
		if (s->end_hi > fb->pend_hi)
			fb->pend_hi = s->end_hi;
	}
	if (fb->pending.err)
		fb->err = fb->pending.err;
	fb->used += fb->pending.len - before;
	jb_reset(&s->buf);
	jb_reset(&s->recs);
	s->recs.err = 0;
	s->nrecs = 0;
	s->nruns = 0;
	s->runs_failed = false;
	s->end_lo = s->end_hi = 0;
}

/* ---- chunks ---- */

struct zbuf {
	unsigned char *p;
	size_t len, cap;
};

static int zbuf_put(void *ctx, const void *bytes, size_t len)
{
	struct zbuf *z = ctx;

	if (z->len + len > z->cap) {
		size_t cap = (z->len + len) * 2;
		unsigned char *p = realloc(z->p, cap);

		if (!p)
			return -ENOMEM;
		z->p = p;
		z->cap = cap;
	}
	memcpy(z->p + z->len, bytes, len);
	z->len += len;
	return 0;
}

static int compress(struct flightbuf *fb, const struct jbuf *lines, struct zbuf *z,
		    uint32_t *map_len)
{
	struct gz_writer *w = gz_writer_new(1);
	unsigned char *p;
	int ret;

	if (!w)
		return -ENOMEM;
	ret = gz_writer_put(w, lines->p, lines->len, GZ_FINISH, zbuf_put, z);
	gz_writer_free(w);
	p = ret ? NULL : chunk_keep(fb, z->p, z->len, map_len);
	free(z->p);
	z->p = p;
	return ret ? ret : p ? 0 : -ENOMEM;
}

static void drop_pending(struct flightbuf *fb)
{
	fb->used -= fb->pending.len;
	jb_reset(&fb->pending);
	fb->pend_lo = fb->pend_hi = 0;
	fb->pend_events = 0;
}

void flightbuf_seal(struct flightbuf *fb)
{
	struct flight_chunk c = { fb->pend_lo, fb->pend_hi, fb->pend_events,
				  (uint32_t)fb->pending.len, 0, NULL, 0 };
	struct zbuf z = { 0 };
	int ret;

	if (!fb->pending.len)
		return;
	/* compact the array's dropped head now and then */
	if (fb->first > 64 && fb->first * 2 > fb->n) {
		memmove(fb->chunks, fb->chunks + fb->first,
			(fb->n - fb->first) * sizeof(*fb->chunks));
		fb->n -= fb->first;
		fb->first = 0;
	}
	ret = compress(fb, &fb->pending, &z, &c.map_len);
	if (!ret) {
		c.z = z.p;
		c.z_len = (uint32_t)z.len;
		ret = VEC_PUSH(fb->chunks, fb->n, fb->capchunks, c);
		if (ret)
			chunk_free(fb, &c, true);
	}
	if (ret && !fb->err)
		fb->err = ret;
	if (!ret)
		fb->sealed++;
	drop_pending(fb);
}

/* The oldest chunk goes; its pages to the spares where spare is set
 * (the window moved on: the next seal wants them), else unmapped (the
 * cap binds). */
static void drop_oldest(struct flightbuf *fb, bool spare)
{
	chunk_free(fb, &fb->chunks[fb->first++], spare);
	fb->dropped++;
}

void flightbuf_tick(struct flightbuf *fb, uint64_t now_ns, uint64_t hold_ns)
{
	uint64_t floor = now_ns > fb->keep_ns ? now_ns - fb->keep_ns : 0;

	if (fb->pending.len >= FLIGHT_CHUNK_BYTES ||
	    (fb->pending.len && now_ns - fb->pend_since >= FLIGHT_CHUNK_NS))
		flightbuf_seal(fb);
	if (hold_ns && hold_ns < floor)
		floor = hold_ns;
	while (fb->first < fb->n && fb->chunks[fb->first].hi_ns < floor)
		drop_oldest(fb, true);
	/* no chunk left to follow (the flood ended) or over the cap: the
	 * spares go first */
	while (fb->nspares && (fb->first == fb->n || fb->used > fb->cap))
		spare_unmap(fb, 0);
	while (fb->first < fb->n && fb->used > fb->cap) {
		drop_oldest(fb, false);
		fb->capped++;
		drop_gens(fb);
	}
	drop_gens(fb);
}

static bool in_span(const struct flight_chunk *c, uint64_t from_ns, uint64_t to_ns)
{
	return c->hi_ns >= from_ns && c->lo_ns <= to_ns;
}

struct flight_span flightbuf_span(const struct flightbuf *fb, uint64_t from_ns,
				  uint64_t to_ns)
{
	struct flight_span s = { 0 };

	for (uint32_t i = fb->first; i < fb->n; i++) {
		const struct flight_chunk *c = &fb->chunks[i];

		if (!in_span(c, from_ns, to_ns))
			continue;
		if (!s.chunks || c->lo_ns < s.from_ns)
			s.from_ns = c->lo_ns;
		if (c->hi_ns > s.to_ns)
			s.to_ns = c->hi_ns;
		s.events += c->events;
		s.chunks++;
	}
	return s;
}

typedef int (*lines_out)(void *ctx, const void *bytes, size_t len);

/* Hands out the lines of [p, end) but those leave_out(line, arg) says
 * to, in runs; the number handed out is added to *kept. */
static int put_lines_but(const char *p, const char *end,
			 bool (*leave_out)(const char *line, size_t len, void *arg), void *arg,
			 uint64_t *kept, lines_out out, void *ctx)
{
	const char *run = p, *next;
	int ret = 0;

	for (; p < end && !ret; p = next) {
		next = line_end(p, end);
		if (!leave_out(p, next - p, arg)) {
			++*kept;
			continue;
		}
		if (p > run)
			ret = out(ctx, run, p - run);
		run = next;
	}
	return !ret && end > run ? out(ctx, run, end - run) : ret;
}

/* Whether an event line ended before from_us (wall-clock µs, as its ts
 * and dur): a line without them (a CM mark) did not. */
static bool ended_before(const char *line, size_t len, uint64_t from_us)
{
	const char *ts = memmem(line, len, ",\"ts\":", 6);
	const char *dur = ts ? memmem(ts, len - (ts - line), ",\"dur\":", 7) : NULL;

	return dur && strtoull(ts + 6, NULL, 10) + strtoull(dur + 7, NULL, 10) < from_us;
}

/* A dump being written: the events of the chunks, lines and records
 * alike, gathered in buf and handed out in batches. */
struct dump_walk {
	uint64_t from_ns, from_us;	/* 0: every event of the chunk */
	uint64_t *events;		/* counts those handed out */
	flight_rec_fmt fmt;
	void *fmt_ctx;
	const struct hmap *ctx_lines;
	struct jbuf buf;
	lines_out out;
	void *ctx;
};

#define DUMP_BATCH (256u << 10)

static int dump_flush(struct dump_walk *d)
{
	int ret = d->buf.err ? d->buf.err : d->buf.len ? d->out(d->ctx, d->buf.p, d->buf.len) : 0;

	jb_reset(&d->buf);
	return ret;
}

/* The event at p (a record or a line) into d->buf, but for one that
 * ended before the window; how far it went, or NULL (not an event). */
static const char *put_event(struct dump_walk *d, const char *p, const char *end)
{
	const char *next;
	uint16_t len;
	int ret;

	if (*p != FLIGHT_REC) {
		next = line_end(p, end);
		if (!d->from_us || !ended_before(p, next - p, d->from_us)) {
			jb_mem(&d->buf, p, next - p);
			++*d->events;
		}
		return next;
	}
	if (end - p < FLIGHT_REC_HEAD)
		return NULL;
	memcpy(&len, p + 1, 2);
	if (end - p - FLIGHT_REC_HEAD < len)
		return NULL;
	ret = d->fmt(d->fmt_ctx, (const unsigned char *)p + FLIGHT_REC_HEAD, len,
		     d->ctx_lines, d->from_ns, &d->buf);
	if (ret < 0)
		return NULL;
	*d->events += ret;
	return p + FLIGHT_REC_HEAD + len;
}

static int inflate_chunk(const struct flight_chunk *c, struct gz_reader *r, char *buf)
{
	const unsigned char *in = c->z;
	size_t in_len = c->z_len, have = 0;
	bool done = false;
	ssize_t n;

	gz_reader_reset(r);
	while (!done) {
		n = gz_reader_get(r, &in, &in_len, buf + have, c->raw_len - have, &done);
		if (n < 0 || (n == 0 && !done && (!in_len || have == c->raw_len)))
			return -EIO; /* our own chunk: memory gone bad */
		have += n;
	}
	return have == c->raw_len ? 0 : -EIO;
}

static int write_chunk(const struct flight_chunk *c, struct gz_reader *r, char **buf,
		       size_t *size, struct dump_walk *d)
{
	const char *p, *end;
	int ret = 0;

	if (c->raw_len > *size) {
		char *bigger = realloc(*buf, c->raw_len);

		if (!bigger)
			return -ENOMEM;
		*buf = bigger;
		*size = c->raw_len;
	}
	if ((ret = inflate_chunk(c, r, *buf)))
		return ret;
	for (p = *buf, end = p + c->raw_len; p < end && !ret; p = put_event(d, p, end)) {
		if (!p)
			return -EIO;
		if (d->buf.len >= DUMP_BATCH)
			ret = dump_flush(d);
	}
	return ret ? ret : p ? 0 : -EIO;
}

/* The metadata lines, each once; a context line is not handed out but
 * kept in ctx_lines (its key: the 16 hex digits after its mark). */
struct meta_walk {
	struct hmap seen;
	struct hmap *ctx_lines;
};

static uint64_t hex_key(const char *p)
{
	uint64_t v = 0;

	for (int i = 0; i < 16; i++)
		v = v << 4 | (uint64_t)(p[i] <= '9' ? p[i] - '0' : p[i] - 'a' + 10);
	return v;
}

static bool meta_left_out(const char *line, size_t len, void *arg)
{
	struct meta_walk *m = arg;

	if (line[0] != FLIGHT_CTX)
		return hmap_add(&m->seen, meta_key(line, len), 0) == 0;
	if (len > FLIGHT_CTX_HEAD && line[len - 1] == '\n')
		hmap_add(m->ctx_lines, hex_key(line + 1), (uintptr_t)line);
	return true;
}

/* Every generation's lines, the newest first, each line once. */
static int write_meta(const struct flightbuf *fb, struct hmap *ctx_lines, lines_out out,
		      void *ctx)
{
	struct meta_walk m = { { 0 }, ctx_lines };
	uint64_t lines = 0;
	int ret = 0;

	for (uint32_t i = fb->ngens; i-- > fb->gfirst && !ret;) {
		const struct jbuf *g = &fb->gens[i].lines;

		ret = put_lines_but(g->p, g->p + g->len, meta_left_out, &m, &lines, out, ctx);
	}
	hmap_free(&m.seen);
	return ret;
}

int flightbuf_write(const struct flightbuf *fb, uint64_t from_ns, uint64_t to_ns,
		    int64_t wall_offset_ns, uint64_t *events, flight_rec_fmt fmt,
		    void *fmt_ctx, lines_out out, void *ctx)
{
	struct hmap ctx_lines = { 0 };
	struct dump_walk d = { .events = events, .fmt = fmt, .fmt_ctx = fmt_ctx,
			       .ctx_lines = &ctx_lines, .out = out, .ctx = ctx };
	struct gz_reader *r = NULL;
	size_t size = 0;
	char *buf = NULL;
	int ret = write_meta(fb, &ctx_lines, out, ctx);

	if (!ret && (!(r = gz_reader_new()) || jb_init(&d.buf, DUMP_BATCH + (64u << 10))))
		ret = -ENOMEM;
	for (uint32_t i = fb->first; i < fb->n && !ret; i++) {
		const struct flight_chunk *c = &fb->chunks[i];
		bool whole = c->lo_ns >= from_ns; /* else its events one by one */

		if (!in_span(c, from_ns, to_ns))
			continue;
		d.from_ns = whole ? 0 : from_ns;
		d.from_us = whole ? 0 : (uint64_t)((int64_t)from_ns + wall_offset_ns) / 1000;
		ret = write_chunk(c, r, &buf, &size, &d);
	}
	if (!ret)
		ret = dump_flush(&d);
	jb_free(&d.buf);
	free(buf);
	if (r)
		gz_reader_free(r);
	hmap_free(&ctx_lines);
	return ret;
}
