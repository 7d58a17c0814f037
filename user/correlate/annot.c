// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The annotation state machine: a thread's stack of open regions (begin,
 * args, end, CM marks) and a process's context (epoch, step, user keys).
 * A region is written when it ends, with the id it took at its begin and
 * the args it has by then, so an update() inside a block labels the
 * blocks around it too, as pydftracer does.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "correlate/state.h"
#include "lib/hash.h"
#include "lib/procfs.h"
#include "model/profiler.h"

/* A region end with this count drops the region: it did not happen (the
 * last wait of an iteration, which found no element). */
#define REGION_DISCARD (-1)

static const struct istr *intern_str(const char *s, size_t max)
{
	return istr_intern(s, strnlen(s, max), false);
}

/* --steps: a region is written if it overlapped an open window, or if
 * it is dftrace.profiler's, which the merge needs whenever it was sent
 * (where a torch trace went is sent at its export, after the window). */
static bool in_window(const struct step_window *w, const struct phase_frame *f)
{
	static const struct istr *profiler; /* istrs live until exit */

	if (!profiler)
		profiler = istr_cstr(DFT_PROFILER_CAT);
	return !w->on || f->began_open || w->active || w->openings != f->openings ||
	       f->cat == profiler;
}

void close_regions(struct trace *t, struct proc *p, struct thread *th,
		   uint32_t to, uint64_t end_ns, const char *why)
{
	struct sink *s = files_sink(&t->files, p);

	while (th->phases.depth > to) {
		struct phase_frame *f = phase_top(&th->phases);
		uint64_t dur = end_ns > f->ts ? end_ns - f->ts : 0;

		if (s && in_window(&t->window, f)) {
			writer_region(&t->writer, s, p, th->tid, &th->phases,
				      th->phases.depth - 1, end_ns, why);
			end_event(t, s);
		}
		phase_add_time(&t->stats.phases, f->cat, f->name, dur);
		phase_pop(&th->phases);
	}
}

static struct phase_frame *push_region(struct trace *t, struct proc *p,
				       struct thread *th, const struct istr *cat,
				       const struct istr *name, uint64_t ts, int64_t count)
{
	struct phase_frame *f = phase_push(&th->phases);

	if (f)
		*f = (struct phase_frame){ cat, name, ts, p->next_id++, count, 0, { 0 },
					   .began_open = t->window.active,
					   .openings = t->window.openings };
	return f;
}


/* A discarded region goes unless events were written inside it: then it
 * stays, so that their p_idx names a region of the trace. */
static void discard_region(struct trace *t, struct proc *p, struct thread *th,
			   int idx, uint64_t ts)
{
	if (th->phases.f[idx].children)
		close_regions(t, p, th, idx, ts, NULL);
	else
		phase_pop(&th->phases);
}

/* cat and name: the end's, released here where loose (region_str()). */
static void on_region_end(struct trace *t, struct proc *p, struct thread *th,
			  const struct dft_annot *e, const struct istr *cat,
			  const struct istr *name)
{
	int idx = phase_find(&th->phases, cat, name);

	if (idx < 0) {
		/* Keep the stray end visible, as an empty event: its frame
		 * takes the names. */
		if (push_region(t, p, th, cat, name, e->h.ts, e->value)) {
			close_regions(t, p, th, th->phases.depth - 1, e->h.ts,
				      "end_without_begin");
			return;
		}
	} else {
		close_regions(t, p, th, idx + 1, e->h.ts, "ended_by_outer_end");
		if (e->value == REGION_DISCARD)
			discard_region(t, p, th, idx, e->h.ts);
		else
			close_regions(t, p, th, idx, e->h.ts, NULL);
	}
	istr_release(cat);
	istr_release(name);
}

/*
 * A user's key that the writer also puts in the same event's args would
 * repeat a JSON key: it is written user_<key> instead. A region's own args
 * go on its event only; the process context goes on every event, I/O and
 * ioctls included.
 */
static const struct istr *user_key(const char *k, bool context)
{
	char renamed[DFT_CAT_LEN + 8];
	size_t n = strnlen(k, DFT_CAT_LEN);

	if (!writer_owns_key(k, context))
		return istr_intern(k, n, false);
	n = snprintf(renamed, sizeof(renamed), "user_%.*s", (int)n, k);
	return istr_intern(renamed, n, false);
}

/* ---- sites: a region's strings where they cannot change ---- */

/* A region's strings at their addresses in a process. */
struct annot_site {
	struct dft_annot_site key;
	const struct istr *cat, *name;
};

#define SITES_MAX 1024	/* per process: a program has a few dozen */

static uint64_t site_hash(uint64_t cat, uint64_t name)
{
	uint64_t k[2] = { cat, name };

	return dft_hash64(k, sizeof(k));
}

static struct annot_site *site_get(const struct proc *p, uint64_t cat, uint64_t name)
{
	struct annot_site *s = hmap_get_ptr(&p->sites, site_hash(cat, name));

	return s && s->key.cat == cat && s->key.name == name ? s : NULL;
}

/* A region began with its strings at user addresses, both read whole:
 * the site is kept, and the capture side may let the kernel take the
 * id from there (DFT_ANNOT_CACHED) if the strings cannot change. */
static void learn_site(struct trace *t, struct proc *p, const struct dft_annot *in,
		       const struct phase_frame *f)
{
	uint64_t h = site_hash(in->cat_ptr, in->name_ptr);
	struct annot_site *s;

	if (in->h.flags & (DFT_ANNOT_FAULT_CAT | DFT_ANNOT_FAULT_NAME | DFT_ANNOT_CACHED) ||
	    !in->cat_ptr || !in->name_ptr || strnlen(in->cat, DFT_CAT_LEN) >= DFT_CAT_LEN - 1 ||
	    strnlen(in->name, DFT_NAME_LEN) >= DFT_NAME_LEN - 1)
		return; /* may be cut: not a site's whole strings */
	if ((s = hmap_get_ptr(&p->sites, h))) {
		if (s->key.cat == in->cat_ptr && s->key.name == in->name_ptr) {
			s->cat = f->cat; /* memory that can change: as it says now */
			s->name = f->name;
		}
		return; /* or another site of the same hash: this one uncached */
	}
	if (p->sites.n >= SITES_MAX || !(s = malloc(sizeof(*s))))
		return;
	*s = (struct annot_site){ { p->pid, 0, in->cat_ptr, in->name_ptr }, f->cat, f->name };
	if (hmap_put_ptr(&p->sites, h, s)) {
		free(s);
		return;
	}
	if (t->cfg.site_found)
		t->cfg.site_found(t->cfg.site_ctx, &s->key, dft_phase_id(in), p->alive_ns);
}

static bool in_range(uint64_t a, uint64_t lo, uint64_t len)
{
	return a >= lo && a - lo < len;
}

void forget_sites(struct trace *t, struct proc *p, uint64_t lo, uint64_t len)
{
	struct hmap keep = { 0 };
	struct annot_site *s;
	size_t it = 0;
	uint64_t h, v;

	while (hmap_next(&p->sites, &it, &h, &v)) {
		s = (struct annot_site *)(uintptr_t)v;
		if (!in_range(s->key.cat, lo, len) && !in_range(s->key.name, lo, len) &&
		    !hmap_put_ptr(&keep, h, s))
			continue;
		if (t->cfg.site_gone)
			t->cfg.site_gone(t->cfg.site_ctx, &s->key);
		free(s);
	}
	hmap_free(&p->sites);
	p->sites = keep;
}

/* The record with the strings the kernel side could not read, or did
 * not send, filled in from the process. A known site's record comes here
 * only when user space no longer knows the site (sent before it was
 * forgotten): on_annot names the others from their site. */
static const struct dft_annot *complete(const struct proc *p, const struct dft_annot *in,
				       struct dft_annot *copy)
{
	bool cached = in->h.flags & DFT_ANNOT_CACHED;

	if (!cached && !(in->h.flags & (DFT_ANNOT_FAULT_CAT | DFT_ANNOT_FAULT_NAME)))
		return in;
	if (cached) { /* the record ends before cat */
		memset(copy, 0, sizeof(*copy));
		memcpy(copy, in, offsetof(struct dft_annot, cat));
	} else {
		*copy = *in;
	}
	if (!p)
		return copy;
	if (cached || in->h.flags & DFT_ANNOT_FAULT_CAT)
		procfs_read_str(p->pid, in->cat_ptr, copy->cat, sizeof(copy->cat));
	if (cached || in->h.flags & DFT_ANNOT_FAULT_NAME)
		procfs_read_str(p->pid, in->name_ptr, copy->name, sizeof(copy->name));
	/* only the memory of the process that sent it, as it was then */
	if (!proc_proven(p))
		copy->cat[0] = copy->name[0] = 0;
	return copy;
}

static void set_region_arg(struct thread *th, const struct dft_annot *e)
{
	struct phase_frame *f = phase_top(&th->phases);

	if (f && e->cat[0])
		ctx_set(&f->args, user_key(e->cat, false),
			e->h.nr == DFT_ANNOT_ARG_STR ?
				intern_str(e->name, DFT_NAME_LEN) : NULL,
			e->value);
}

static void set_context(struct trace *t, struct proc *p,
			const struct dft_annot *e)
{
	const struct istr *key = e->cat[0] ? user_key(e->cat, true) : NULL;

	switch (e->h.nr) {
	case DFT_ANNOT_CTX_INT:
		if (key)
			ctx_set(&p->ctx, key, NULL, e->value);
		if (key == t->writer.key_step) {
			window_step(&t->window, e->value);
			flight_step(t, p, e->value, e->h.ts);
		}
		break;
	case DFT_ANNOT_CTX_STR:
		if (key)
			ctx_set(&p->ctx, key, intern_str(e->name, DFT_NAME_LEN), 0);
		break;
	default: /* DFT_ANNOT_CTX_CLEAR: one key, or all but the position */
		if (key)
			ctx_clear(&p->ctx, key);
		else
			ctx_clear_except(&p->ctx, t->writer.key_epoch,
					 t->writer.key_step);
	}
}

/* A region's cat or name: interned, while the trace has interned fewer
 * than REGION_NAMES_MAX of them; past that (a program naming regions
 * after each of a million files, say), a loose copy its holder releases,
 * so that memory stays bounded: such regions are written as named, and
 * their time is totalled as other names' (model/phases.h). */
static const struct istr *region_str(struct trace *t, const char *s, size_t max)
{
	size_t n = strnlen(s, max);
	const struct istr *i = istr_find(s, n, false);

	if (i)
		return i;
	if (t->region_names < REGION_NAMES_MAX) {
		t->region_names++;
		return istr_intern(s, n, false);
	}
	return istr_loose(s, n, false);
}

/* A region's strings: a known site's as it keeps them (most regions:
 * nothing to copy or hash), else the record's (region_str()). */
static void region_strs(struct trace *t, const struct dft_annot *e,
			const struct annot_site *site, const struct istr **cat,
			const struct istr **name)
{
	*cat = site ? site->cat : region_str(t, e->cat, DFT_CAT_LEN);
	*name = site ? site->name : region_str(t, e->name, DFT_NAME_LEN);
}

void on_annot(struct trace *t, const struct dft_annot *in)
{
	struct proc *p = trace_proc(t, in->h.tgid);
	const struct annot_site *site = NULL;
	const struct istr *cat, *name;
	struct dft_annot copy;
	const struct dft_annot *e = in;
	struct phase_frame *f;
	struct thread *th;
	struct sink *s;

	/* a known site's record ends at name_ptr: its strings are the site's */
	if (p && in->h.flags & DFT_ANNOT_CACHED)
		site = site_get(p, in->cat_ptr, in->name_ptr);
	if (!site)
		e = complete(p, in, &copy);
	if (!p || !(th = trace_thread(t, p, e->h.tid)) || !annot_is_new(th, &e->h))
		return;
	s = files_sink(&t->files, p);
	if (s)
		writer_names(&t->writer, s, p, th);
	switch (e->h.nr) {
	case DFT_ANNOT_BEGIN:
		region_strs(t, e, site, &cat, &name);
		f = push_region(t, p, th, cat, name, e->h.ts, e->value);
		if (!f) {
			istr_release(cat);
			istr_release(name);
		}
		/* the id the kernel side gave it: of the strings it read, or,
		 * at a known site, of the whole strings; a site user space
		 * knows was learned, with its id, from such a record. Loose
		 * names go with their frame: nothing else keeps them. */
		if (f && !site && !cat->loose && !name->loose) {
			fold_learn_phase(t, in->h.flags & DFT_ANNOT_CACHED ? e : in, f->cat, f->name);
			learn_site(t, p, in, f);
		}
		break;
	case DFT_ANNOT_ARG_INT:
	case DFT_ANNOT_ARG_STR:
		set_region_arg(th, e);
		break;
	case DFT_ANNOT_END:
		region_strs(t, e, site, &cat, &name);
		on_region_end(t, p, th, e, cat, name);
		break;
	case DFT_ANNOT_META:
		if (s && t->window.active)
			writer_cm(&t->writer, s, p, th, e->name, e->value, e->h.ts);
		break;
	case DFT_ANNOT_CTX_INT:
	case DFT_ANNOT_CTX_STR:
	case DFT_ANNOT_CTX_CLEAR:
		set_context(t, p, e);
		break;
	}
}
