// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <string.h>
#include "write/flightrec.h"

/*
 * A record, after the window's FLIGHT_REC_HEAD:
 *   type, flags                         a byte each
 *   pid, tid, id, level, p_idx,
 *   ts, dur, ret                        varints (p_idx, ret zigzag)
 * then a syscall's (REC_SYSCALL):
 *   dev class                           a byte
 *   nr, the args the line writes        varints
 * or a named event's (REC_NAMED):
 *   name, cat, op                       addresses (static strings)
 *   nargs, then each arg: key's address, key's length (a byte), and a
 *   zigzag varint, or (its key's length with ARG_IS_STR) the string's
 *   length as a varint and its bytes
 * and last:
 *   fhash, fhash2, context key          8 bytes each, where flags say
 */
enum rec_type { REC_SYSCALL, REC_NAMED };

#define ARG_IS_STR 0x80

enum rec_flags {
	REC_F1 = 1,
	REC_F2 = 2,
	REC_F1_TRUNC = 4,
	REC_F2_TRUNC = 8,
	REC_CTX = 16,
};

/* The most a syscall's record takes: 3 bytes, 9 + 6 varints of 10,
 * 3 hashes; a named event's, but for its strings: 2 bytes, 9 varints,
 * 3 addresses, and GPU_ARGS_MAX args of 19 bytes, 2 hashes. */
#define REC_MAX (3 + 15 * 10 + 3 * 8)
#define REC_NAMED_MAX (2 + 9 * 10 + 3 * 8 + GPU_ARGS_MAX * 19 + 2 * 8)

/* ---- varints ---- */

static unsigned char *put_uv(unsigned char *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (unsigned char)v | 0x80;
		v >>= 7;
	}
	*p++ = (unsigned char)v;
	return p;
}

static unsigned char *put_sv(unsigned char *p, int64_t v)
{
	return put_uv(p, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

static unsigned char *put_u64(unsigned char *p, uint64_t v)
{
	memcpy(p, &v, 8);
	return p + 8;
}

static unsigned char *put_ptr(unsigned char *p, const void *v)
{
	return put_u64(p, (uintptr_t)v);
}

struct rd {
	const unsigned char *p, *end;
	bool bad;
};

static uint64_t get_uv(struct rd *r)
{
	uint64_t v = 0;

	for (unsigned shift = 0; r->p < r->end && shift < 64; shift += 7) {
		unsigned char c = *r->p++;

		v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return v;
	}
	r->bad = true;
	return 0;
}

static int64_t get_sv(struct rd *r)
{
	uint64_t v = get_uv(r);

	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

static uint64_t get_u64(struct rd *r)
{
	uint64_t v = 0;

	if (r->end - r->p < 8) {
		r->bad = true;
		return 0;
	}
	memcpy(&v, r->p, 8);
	r->p += 8;
	return v;
}

/* ---- writing ---- */

/* The args writer_syscall_args() reads, as bits. */
static unsigned args_used(const struct sc_desc *d)
{
	unsigned used = d->effect == FX_IOCTL ? 1u << 1 : 0; /* the request */

	for (int i = 0; i < DFT_SC_NARGS; i++)
		if (d->args[i].type != ARG_SKIP && d->args[i].type != ARG_PATH)
			used |= 1u << i;
	return used;
}

/* The context's JSON as a context line, the first time s meets key
 * (again after the window let go of the generation that had it). */
#define CTX_SEEN_SALT 0x4354580000004354ull

static void put_context(const struct writer *w, struct sink *s, const struct proc *p,
			const struct nesting *n, uint64_t key)
{
	struct jbuf *b = &s->buf;

	if (!sink_first_sight(s, key ^ CTX_SEEN_SALT))
		return;
	jb_char(b, FLIGHT_CTX);
	jb_hex16(b, key);
	writer_context(w, b, p, n);
	jb_char(b, '\n');
}

/* What every record begins with, after its head: type to ret. */
static unsigned char *put_common(unsigned char *q, enum rec_type type, unsigned char flags,
				 uint32_t pid, uint32_t tid, const struct nesting *n,
				 uint64_t ts, uint64_t dur, int64_t ret)
{
	*q++ = (unsigned char)type;
	*q++ = flags;
	q = put_uv(q, pid);
	q = put_uv(q, tid);
	q = put_uv(q, n->id);
	q = put_uv(q, (uint64_t)n->level);
	q = put_sv(q, n->parent_id);
	q = put_uv(q, ts);
	q = put_uv(q, dur);
	return put_sv(q, ret);
}

static unsigned char file_flags(const struct file_ref *f1, const struct file_ref *f2)
{
	return (f1 ? REC_F1 | (f1->truncated ? REC_F1_TRUNC : 0) : 0) |
	       (f2 ? REC_F2 | (f2->truncated ? REC_F2_TRUNC : 0) : 0);
}

/* Room for a record of at most max bytes in s->recs, the event begun
 * (its context line first, if new): where its head goes, or NULL (out of
 * memory: recs.err, which writer_end_event() says). */
static unsigned char *begin_record(struct writer *w, struct sink *s, const struct proc *p,
				   const struct nesting *n, uint32_t tid, uint64_t key,
				   uint64_t end_ns, size_t max)
{
	if (key)
		put_context(w, s, p, n, key);
	writer_event_starts(w, s, tid, end_ns);
	s->rec_open = true;
	s->nrecs++;
	if (!jb_room(&s->recs, FLIGHT_REC_HEAD + max))
		return NULL;
	return (unsigned char *)s->recs.p + s->recs.len;
}

static void end_record(struct sink *s, unsigned char *start, unsigned char *q,
		       const struct file_ref *f1, const struct file_ref *f2, uint64_t key)
{
	uint16_t len;

	if (f1)
		q = put_u64(q, f1->hash);
	if (f2)
		q = put_u64(q, f2->hash);
	if (key)
		q = put_u64(q, key);
	len = (uint16_t)(q - start - FLIGHT_REC_HEAD);
	start[0] = FLIGHT_REC;
	memcpy(start + 1, &len, 2);
	s->recs.len += q - start;
}

void flightrec_syscall(struct writer *w, struct sink *s, const struct proc *p,
		       const struct nesting *n, const struct sc_desc *d,
		       const struct dft_syscall *e, const struct file_ref *f1,
		       const struct file_ref *f2, enum dev_class cls)
{
	uint64_t key = writer_context_key(w, p, n);
	unsigned char *start = begin_record(w, s, p, n, e->h.tid, key, e->h.ts + e->dur, REC_MAX);
	unsigned used = args_used(d);
	unsigned char *q;

	if (!start)
		return;
	q = put_common(start + FLIGHT_REC_HEAD, REC_SYSCALL,
		       file_flags(f1, f2) | (key ? REC_CTX : 0), p->pid, e->h.tid, n,
		       e->h.ts, e->dur, e->ret);
	*q++ = (unsigned char)cls;
	q = put_uv(q, e->h.nr);
	for (int i = 0; i < DFT_SC_NARGS; i++)
		if (used & 1u << i)
			q = put_uv(q, e->args[i]);
	end_record(s, start, q, f1, f2, key);
}

/* A string arg's room: its bytes and their length, a record's 64 KiB
 * holding GPU_ARGS_MAX of them whole with room to spare. Longer strings
 * are cut, which none is: a kernel's name is cut at DFT_GPU_STR (128),
 * the other string args are ours (a datatype, an api). */
#define STR_ARG_MAX 1024u
_Static_assert(REC_NAMED_MAX + GPU_ARGS_MAX * (10 + STR_ARG_MAX) <= UINT16_MAX,
	       "a named event's record must fit its two-byte length");

static size_t str_room(const struct named_event *ev)
{
	size_t room = 0;

	for (int i = 0; i < ev->nargs; i++)
		if (ev->args[i].str)
			room += 10 + (ev->args[i].str->len < STR_ARG_MAX ? ev->args[i].str->len
									 : STR_ARG_MAX);
	return room;
}

void flightrec_named(struct writer *w, struct sink *s, const struct proc *p,
		     const struct nesting *n, uint32_t tid, const struct named_event *ev)
{
	uint64_t key = writer_context_key(w, p, n);
	int nargs = ev->nargs < GPU_ARGS_MAX ? ev->nargs : GPU_ARGS_MAX;
	unsigned char *start = begin_record(w, s, p, n, tid, key, ev->ts_ns + ev->dur_ns,
					    REC_NAMED_MAX + str_room(ev));
	unsigned char *q;

	if (!start)
		return;
	q = put_common(start + FLIGHT_REC_HEAD, REC_NAMED,
		       file_flags(ev->file, NULL) | (key ? REC_CTX : 0), p->pid, tid, n,
		       ev->ts_ns, ev->dur_ns, ev->ret);
	q = put_ptr(q, ev->name);
	q = put_ptr(q, ev->cat);
	q = put_ptr(q, ev->op);
	*q++ = (unsigned char)nargs;
	for (int i = 0; i < nargs; i++) {
		const struct event_arg *a = &ev->args[i];

		q = put_ptr(q, a->key);
		*q++ = (unsigned char)a->key_len | (a->str ? ARG_IS_STR : 0);
		if (a->str) {
			uint32_t len = a->str->len < STR_ARG_MAX ? a->str->len : STR_ARG_MAX;

			q = put_uv(q, len);
			memcpy(q, a->str->str, len);
			q += len;
		} else {
			q = put_sv(q, a->v);
		}
	}
	end_record(s, start, q, ev->file, NULL, key);
}

/* ---- formatting, at a dump ---- */

/* The JSON of the context line key (after its head, before its
 * newline): what the record's context was; empty if the window lost it,
 * which it does not (a generation stays while a chunk may use it). */
static void put_context_of(const struct hmap *ctx_lines, uint64_t key, struct jbuf *out)
{
	const char *line = hmap_get_ptr(ctx_lines, key);
	const char *nl = line ? strchr(line, '\n') : NULL;

	if (nl && nl - line >= FLIGHT_CTX_HEAD)
		jb_mem(out, line + FLIGHT_CTX_HEAD, nl - line - FLIGHT_CTX_HEAD);
}

static const void *get_ptr(struct rd *r)
{
	return (const void *)(uintptr_t)get_u64(r);
}

struct rec_common {
	unsigned char type, flags;
	struct event_head h;
	int64_t ret;
};

static void get_common(struct rd *r, struct rec_common *c)
{
	if (r->end - r->p < 2) {
		r->bad = true;
		return;
	}
	c->type = *r->p++;
	c->flags = *r->p++;
	c->h.pid = (uint32_t)get_uv(r);
	c->h.tid = (uint32_t)get_uv(r);
	c->h.id = get_uv(r);
	c->h.level = (int)get_uv(r);
	c->h.parent_id = get_sv(r);
	c->h.ts_ns = get_uv(r);
	c->h.dur_ns = get_uv(r);
	c->ret = get_sv(r);
}

/* The hashes and the context key the flags say, to the record's end. */
struct rec_tail {
	struct file_ref f1, f2;
	uint64_t key;
};

static void get_tail(struct rd *r, unsigned char flags, struct rec_tail *t)
{
	if (flags & REC_F1)
		t->f1 = (struct file_ref){ get_u64(r), flags & REC_F1_TRUNC, NULL };
	if (flags & REC_F2)
		t->f2 = (struct file_ref){ get_u64(r), flags & REC_F2_TRUNC, NULL };
	if (flags & REC_CTX)
		t->key = get_u64(r);
	if (r->p != r->end)
		r->bad = true;
}

static int format_syscall(const struct writer *w, struct rd *r, const struct rec_common *c,
			  const struct hmap *ctx_lines, struct jbuf *out)
{
	struct dft_syscall e = { .ret = c->ret };
	unsigned char cls = r->p < r->end ? *r->p++ : DEV_CLASS_COUNT;
	struct rec_tail t = { 0 };
	const struct sc_desc *d;
	const char *name_cat;
	size_t name_len;
	unsigned used;

	e.h.nr = (unsigned short)get_uv(r);
	d = sc_lookup(e.h.nr);
	if (!d || cls >= DEV_CLASS_COUNT || r->bad)
		return -EIO;
	used = args_used(d);
	for (int i = 0; i < DFT_SC_NARGS; i++)
		if (used & 1u << i)
			e.args[i] = get_uv(r);
	get_tail(r, c->flags, &t);
	if (r->bad)
		return -EIO;
	writer_syscall_name(d, cls, &name_cat, &name_len);
	writer_head(w, out, &c->h, name_cat, name_len);
	if (t.key)
		put_context_of(ctx_lines, t.key, out);
	writer_syscall_args(w, out, d, &e, c->flags & REC_F1 ? &t.f1 : NULL,
			    c->flags & REC_F2 ? &t.f2 : NULL, cls);
	return 0;
}

/* A string arg as the istr writer_named_args() takes, in strs. */
static const struct istr *str_arg(struct jbuf *strs, size_t *at, const unsigned char *p,
				  uint32_t len)
{
	struct istr *s = (struct istr *)(strs->p + *at);

	memset(s, 0, sizeof(*s));
	s->len = len;
	memcpy(s->str, p, len);
	s->str[len] = 0;
	*at += (sizeof(*s) + len + 1 + 7) & ~(size_t)7;
	return s;
}

static int format_named(const struct writer *w, struct rd *r, const struct rec_common *c,
			const struct hmap *ctx_lines, struct jbuf *out)
{
	struct event_arg args[GPU_ARGS_MAX];
	struct named_event ev = { .ts_ns = c->h.ts_ns, .dur_ns = c->h.dur_ns, .ret = c->ret,
				  .args = args };
	struct jbuf strs = { 0 };
	struct rec_tail t = { 0 };
	char name_cat[96];
	size_t at = 0;
	int ret = -EIO;

	ev.name = get_ptr(r);
	ev.cat = get_ptr(r);
	ev.op = get_ptr(r);
	ev.nargs = r->p < r->end ? *r->p++ : GPU_ARGS_MAX + 1;
	if (ev.nargs > GPU_ARGS_MAX || !ev.name || !ev.cat)
		goto out;
	for (int i = 0; i < ev.nargs && !r->bad; i++) {
		struct event_arg *a = &args[i];
		unsigned char klen;

		a->key = get_ptr(r);
		klen = r->p < r->end ? *r->p++ : 0;
		a->key_len = klen & ~ARG_IS_STR;
		a->str = NULL;
		a->v = 0;
		if (!(klen & ARG_IS_STR)) {
			a->v = get_sv(r);
			continue;
		}
		uint64_t len = get_uv(r);

		/* at the first string, room for every one the record holds */
		if (r->bad || len > (uint64_t)(r->end - r->p) || len > STR_ARG_MAX ||
		    (!strs.p && jb_init(&strs, GPU_ARGS_MAX * (sizeof(struct istr) + 8) +
						       (r->end - r->p)))) {
			r->bad = true;
			break;
		}
		a->str = str_arg(&strs, &at, r->p, (uint32_t)len);
		r->p += len;
	}
	get_tail(r, c->flags, &t);
	if (r->bad)
		goto out;
	ev.file = c->flags & REC_F1 ? &t.f1 : NULL;
	writer_head(w, out, &c->h, name_cat, writer_named_name(&ev, name_cat, sizeof(name_cat)));
	if (t.key)
		put_context_of(ctx_lines, t.key, out);
	writer_named_args(w, out, &ev);
	ret = 0;
out:
	jb_free(&strs);
	return ret;
}

int flightrec_format(void *ctx, const unsigned char *rec, size_t len,
		     const struct hmap *ctx_lines, uint64_t from_ns, struct jbuf *out)
{
	const struct writer *w = ctx;
	struct rd r = { rec, rec + len, false };
	struct rec_common c;
	int ret;

	get_common(&r, &c);
	if (r.bad)
		return -EIO;
	if (from_ns && c.h.ts_ns + c.h.dur_ns < from_ns)
		return 0; /* ended before the window */
	switch (c.type) {
	case REC_SYSCALL:
		ret = format_syscall(w, &r, &c, ctx_lines, out);
		break;
	case REC_NAMED:
		ret = format_named(w, &r, &c, ctx_lines, out);
		break;
	default:
		ret = -EIO;
	}
	if (ret)
		return ret;
	JB_LIT(out, "}}\n");
	return 1;
}
