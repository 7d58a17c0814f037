// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Totals of calls the kernel folded (bpf/fold.h): each becomes one event
 * of the call's name, with the bytes in args.ret as DFAnalyzer reads
 * them, the summed time as its duration, and the calls, errors, span and
 * latency histogram in args. The file and the phase are those the kernel
 * keyed it by: (dev, ino), and the id of the innermost region, which
 * user space learns from the regions' own records.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "correlate/state.h"
#include "lib/hash.h"
#include "model/gpucalls.h"
#include "model/paths.h"

struct phase_name {
	const struct istr *cat, *name;
};

/* A total user space folded keys its file by the path the fd named, not
 * by the kernel's (dev, ino): dev says so, ino holds the interned path
 * (which lives till exit). The kernel's dev is a major and a minor in 32
 * bits. */
#define FOLD_DEV_PATH (~0ull)

struct fold_total {
	struct dft_fold_key key;
	struct dft_fold fold;
};

/* The id the kernel side gives the thread's innermost region, as its
 * region stack does (bpf/fold.bpf.h: track_phase): of the strings as it
 * reads them. */
static uint32_t phase_id_of(const struct thread *th)
{
	struct phase_frame *top = th ? phase_top(&th->phases) : NULL;
	struct dft_annot a;

	if (!top)
		return 0;
	if (top->kernel_id)
		return top->kernel_id;
	memset(a.cat, 0, sizeof(a.cat));
	memset(a.name, 0, sizeof(a.name));
	memcpy(a.cat, top->cat->str, top->cat->len < DFT_CAT_LEN ? top->cat->len : DFT_CAT_LEN - 1);
	memcpy(a.name, top->name->str,
	       top->name->len < DFT_NAME_LEN ? top->name->len : DFT_NAME_LEN - 1);
	top->kernel_id = dft_phase_id(&a);
	return top->kernel_id;
}

/* The process's epoch or step now, as the kernel side keys totals. */
static void pos_now(struct dft_fold_key *k, const struct proc *p, const struct istr *key,
		    unsigned int bit, long long *value)
{
	const struct ctx_entry *c = ctx_find(&p->ctx, key);

	if (!c)
		return;
	if (c->str) {
		k->pos_str |= bit;
	} else {
		k->pos_set |= bit;
		*value = c->num;
	}
}

void fold_key_where(struct trace *t, const struct proc *p, const struct thread *th,
		    struct dft_fold_key *k)
{
	k->phase = phase_id_of(th);
	pos_now(k, p, t->writer.key_epoch, DFT_POS_EPOCH, &k->epoch);
	pos_now(k, p, t->writer.key_step, DFT_POS_STEP, &k->step);
}

void fold_learn_phase(struct trace *t, const struct dft_annot *raw,
		      const struct istr *cat, const struct istr *name)
{
	uint32_t id = dft_phase_id(raw);
	struct phase_name *n = hmap_get_ptr(&t->phase_ids, id);

	if (n)
		return;
	n = malloc(sizeof(*n));
	if (!n)
		return;
	*n = (struct phase_name){ cat, name };
	if (hmap_put_ptr(&t->phase_ids, id, n))
		free(n);
}

void fold_phases_free(struct trace *t)
{
	hmap_free_ptrs(&t->phase_ids);
}

void trace_name_file(struct trace *t, uint32_t pid, uint64_t dev, uint64_t ino,
		     const char *path, size_t size)
{
	struct proc *p = proc_get(&t->model, pid);
	size_t len = strnlen(path, size);

	/* relative: to the cwd it most likely had (a dirfd is not kept) */
	fileid_learn(&t->fileids, dev, ino,
		     path_resolve(p ? p->cwd : NULL, path, len, len == size), false);
}

/* "pipe:[N]", "socket:[N]": N, the inode the label names; else 0. */
static uint64_t label_ino(const struct istr *label)
{
	const char *b = label ? strstr(label->str, ":[") : NULL;

	return b && label->str[0] != '/' ? strtoull(b + 2, NULL, 10) : 0;
}

/* The file, by the kernel's name for it: learned from the records (an
 * open's, a mapping's), else from the name the kernel kept when a record
 * found no room, else the fd's label if it is of that inode (a pipe), else
 * from /proc. The fd table alone is not trusted: under overload it may
 * have missed the open that reused the fd. */
static const struct istr *fold_file(struct trace *t, struct proc *p,
				    const struct dft_fold_key *k, const struct dft_fold *f)
{
	struct dft_name_key nk = { k->dev, k->ino, p->pid, 0 };
	char path[DFT_PATH_MAX];
	struct istr *named;

	if (k->dev == FOLD_DEV_PATH)
		return (const struct istr *)(uintptr_t)k->ino;
	if (!k->ino)
		return NULL;
	named = fileid_known(&t->fileids, k->dev, k->ino);
	if (named)
		return named;
	if (t->cfg.lost_name && t->cfg.lost_name(t->cfg.lost_name_ctx, &nk, path, sizeof(path))) {
		trace_name_file(t, p->pid, k->dev, k->ino, path, sizeof(path));
		return fileid_known(&t->fileids, k->dev, k->ino);
	}
	named = f->fd >= 0 ? fd_path(p, f->fd) : NULL;
	if (named && label_ino(named) == k->ino)
		return named;
	return fileid_path(&t->fileids, p, k->dev, k->ino);
}

/* "B:N B:N ...": N calls took [2^B, 2^(B+1)) ns; and the least and the
 * most B with calls (-1: none), for v2's dur_min and dur_max. */
static void hist_of(const struct dft_fold *f, char *buf, size_t size, struct fold_event *ev)
{
	size_t n = 0;

	buf[0] = 0;
	ev->hist_lo = ev->hist_hi = -1;
	for (int b = 0; b < DFT_FOLD_BUCKETS && n < size; b++) {
		if (!f->hist[b])
			continue;
		n += snprintf(buf + n, size - n, "%s%d:%u", n ? " " : "", b, f->hist[b]);
		if (ev->hist_lo < 0)
			ev->hist_lo = b;
		ev->hist_hi = b;
	}
	ev->hist = buf;
	ev->hist_len = n < size ? n : size - 1;
}

/* One of the process's epoch and step as the total's calls saw it: the
 * integer they had, none, or (a string's) the one it has now. */
static void pos_of_calls(struct phase_ctx *c, const struct istr *key, unsigned int bit,
			 const struct dft_fold_key *k, int64_t value)
{
	if (k->pos_str & bit)
		return;
	if (k->pos_set & bit)
		ctx_set(c, key, NULL, value);
	else
		ctx_clear(c, key);
}

/* The process's context as the total's calls saw it, in place of its
 * own until restore_context(): false if that is its own (no epoch or
 * step then or now), or if there was no memory for it. */
static bool calls_context(struct trace *t, struct proc *p, const struct dft_fold_key *k,
			  struct phase_ctx *saved)
{
	struct phase_ctx c = { 0 };

	if (!k->pos_set && !k->pos_str && !ctx_find(&p->ctx, t->writer.key_epoch) &&
	    !ctx_find(&p->ctx, t->writer.key_step))
		return false;
	if (ctx_copy(&c, &p->ctx))
		return false;
	pos_of_calls(&c, t->writer.key_epoch, DFT_POS_EPOCH, k, k->epoch);
	pos_of_calls(&c, t->writer.key_step, DFT_POS_STEP, k, k->step);
	*saved = p->ctx;
	p->ctx = c;
	return true;
}

static void restore_context(struct proc *p, struct phase_ctx *saved)
{
	ctx_free(&p->ctx);
	p->ctx = *saved;
}

/* One total as its event. */
static void write_total(struct trace *t, struct proc *p, const struct dft_fold_key *k,
			const struct dft_fold *f)
{
	const struct sc_desc *d = sc_lookup(k->nr);
	unsigned int gpu = k->nr >= DFT_GPU_NR_BASE ? k->nr - DFT_GPU_NR_BASE : 0;
	/* a thread gone by now is written under its process's name */
	struct thread gone = { .tid = k->tid, .pid = p->pid };
	struct thread *th = thread_get(&t->model, k->tid);
	const struct phase_name *ph = k->phase ? hmap_get_ptr(&t->phase_ids, k->phase) : NULL;
	bool data = d && d->moves_bytes;
	struct phase_frame frame = { 0 };
	struct fold_event ev;
	struct phase_ctx saved;
	struct sink *s;
	char hist[DFT_FOLD_BUCKETS * 16];
	bool own;

	if (!th) {
		memcpy(gone.comm, p->comm, sizeof(gone.comm));
		th = &gone;
	}
	/* a silent call is neither written nor counted, as a sent one */
	if (d && !d->silent)
		stats_count(&t->stats, sc_name_index(d), f->calls, data, f->bytes,
			    ph ? ph->cat : NULL, ph ? ph->name : NULL);
	if ((d && d->silent) || !(s = files_sink(&t->files, p)))
		return;
	if (ph) {
		frame.cat = ph->cat;
		frame.name = ph->name;
	}
	ev = (struct fold_event){
		.ts_ns = f->first_ns, .dur_ns = f->dur_ns,
		.span_ns = f->last_ns - f->first_ns, .calls = f->calls,
		.errors = f->errors, .bytes = f->bytes, .data = data,
		.why = t->cfg.profile ? "profile" : "overload",
		.file = gpu ? NULL : fold_file(t, p, k, f), .phase = ph ? &frame : NULL,
	};
	hist_of(f, hist, sizeof(hist), &ev);
	if (d) {
		ev.name_cat = d->json_name_cat;
		ev.name_cat_len = d->json_name_cat_len;
		ev.call = d->syscall;
	} else {
		gpu_fold_event(p, gpu, k, &ev);
	}
	own = calls_context(t, p, k, &saved);
	files_own(s, true);
	writer_fold(&t->writer, s, p, th, &ev);
	if (own)
		restore_context(p, &saved);
	end_event(t, s);
	files_own(s, false);
}

static void add_total(struct dft_fold *to, const struct dft_fold *f)
{
	to->calls += f->calls;
	to->bytes += f->bytes;
	to->errors += f->errors;
	to->dur_ns += f->dur_ns;
	if (f->first_ns < to->first_ns)
		to->first_ns = f->first_ns;
	if (f->last_ns >= to->last_ns) {
		to->last_ns = f->last_ns;
		to->fd = f->fd;
	}
	for (int i = 0; i < DFT_FOLD_BUCKETS; i++)
		to->hist[i] += f->hist[i];
}

/* Added to p's total of the same key, written at the next interval, the
 * thread's end or the process's: that total, or NULL if written now (no
 * memory to keep it). */
static struct fold_total *fold_into(struct trace *t, struct proc *p,
				    const struct dft_fold_key *k, const struct dft_fold *f)
{
	uint64_t h = dft_hash64(k, sizeof(*k));
	struct fold_total *n = hmap_get_ptr(&p->folds, h);

	if (n && !memcmp(&n->key, k, sizeof(*k))) {
		add_total(&n->fold, f);
		return n;
	}
	if (n) /* another key of the same hash: out first */
		write_total(t, p, &n->key, &n->fold);
	else if (!(n = malloc(sizeof(*n))) || hmap_put_ptr(&p->folds, h, n)) {
		free(n);
		write_total(t, p, k, f);
		return NULL;
	}
	n->key = *k;
	n->fold = *f;
	return n;
}

/* A thread's running total reaches us each time its key changes, which
 * under --profile can be every call. */
void trace_fold(struct trace *t, const struct dft_fold_key *k, const struct dft_fold *f)
{
	/* A process not seen yet (its fork record found no room, and
	 * its calls were folded since) is known from here: its calls are
	 * written, not dropped. Its exit forgets it; a lost exit, the
	 * sweep of the dead (trace_sweep()). */
	bool known = sc_lookup(k->nr) || gpu_call(k->nr - DFT_GPU_NR_BASE);
	struct proc *p = known && f->calls ? trace_proc(t, k->tgid) : NULL;

	if (!p) { /* no memory for it */
		t->stats.folds_orphaned += f->calls;
		return;
	}
	fold_into(t, p, k, f);
}

void fold_sent_call(struct trace *t, struct proc *p, const struct thread *th,
		    const struct dft_syscall *e, const struct istr *file, int fd)
{
	struct dft_fold_key k = { .tgid = e->h.tgid, .tid = e->h.tid, .nr = e->h.nr };
	struct fold_total *last = p->fold_last;
	struct dft_fold f;

	if (file) {
		k.dev = FOLD_DEV_PATH;
		k.ino = (uintptr_t)file;
	}
	fold_key_where(t, p, th, &k);
	/* a loop's calls: the total the last one went to, no lookup */
	if (last && !memcmp(&last->key, &k, sizeof(k))) {
		dft_fold_add_call(&last->fold, e->ret, e->dur, e->h.ts + e->dur, fd);
		return;
	}
	/* zeroed only here: its histogram is most of it */
	f = (struct dft_fold){ .first_ns = e->h.ts };
	dft_fold_add_call(&f, e->ret, e->dur, e->h.ts + e->dur, fd);
	p->fold_last = fold_into(t, p, &k, &f);
}

struct fold_out {
	struct trace *t;
	uint32_t tid;	/* 0: every thread's */
};

/* Writes p's totals (of one thread, or all), which then go. */
static void write_proc_totals(struct proc *p, void *ctx)
{
	struct fold_out *o = ctx;
	struct hmap keep = { 0 };
	struct fold_total *n;
	size_t it = 0;
	uint64_t h, v;

	while (hmap_next(&p->folds, &it, &h, &v)) {
		n = (struct fold_total *)(uintptr_t)v;
		if (o->tid && n->key.tid != o->tid && !hmap_put_ptr(&keep, h, n))
			continue;
		write_total(o->t, p, &n->key, &n->fold);
		free(n);
	}
	hmap_free(&p->folds);
	p->folds = keep;
	p->fold_last = NULL;
}

void fold_write_totals(struct trace *t, struct proc *p, uint32_t tid)
{
	struct fold_out o = { t, tid };

	write_proc_totals(p, &o);
}

void trace_write_folds(struct trace *t)
{
	struct fold_out o = { t, 0 };

	procs_each(&t->model, write_proc_totals, &o);
}

void on_fold_record(struct trace *t, const struct dft_fold_rec *r)
{
	trace_fold(t, &r->key, &r->fold);
}
