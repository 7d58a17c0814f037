// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The X events of the traced program: syscalls, process events, regions.
 * The writer is on the consumer's hot path: no stdio, no allocation per
 * event; keys are literals from write/keys.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "lib/hash.h"
#include "model/ioctl_decode.h"
#include "write/keys.h"
#include "lib/jobenv.h"
#include "write/flightrec.h"
#include "write/v2.h"
#include "write/writer.h"

static bool in_list(const char *k, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(k, list[i]))
			return true;
	return false;
}

#define IN_LIST(k, list) in_list((k), (list), sizeof(list) / sizeof((list)[0]))

bool writer_owns_key(const char *key, bool context)
{
#define KEY_NAME(k) #k,
	static const char *const region_keys[] = { REGION_KEYS(KEY_NAME) };
	static const char *const event_keys[] = { EVENT_KEYS(KEY_NAME) IO_KEYS(KEY_NAME)
						   GPU_KEYS(KEY_NAME) AGG_KEYS(KEY_NAME) };
#undef KEY_NAME

	return IN_LIST(key, region_keys) ||
	       (context && (IN_LIST(key, event_keys) || sc_is_arg_key(key)));
}

/* ---- clock and host ---- */

#define NS_PER_S 1000000000LL

/* Reads both clocks with the smallest gap we can get, once. */
static int64_t measure_clock_offset(void)
{
	struct timespec m0, r, m1;
	int64_t best = INT64_MAX, offset = 0;

	for (int i = 0; i < 5; i++) {
		int64_t gap, mid;

		clock_gettime(CLOCK_MONOTONIC, &m0);
		clock_gettime(CLOCK_REALTIME, &r);
		clock_gettime(CLOCK_MONOTONIC, &m1);
		gap = (m1.tv_sec - m0.tv_sec) * NS_PER_S + (m1.tv_nsec - m0.tv_nsec);
		if (gap < best) {
			mid = m0.tv_sec * NS_PER_S + m0.tv_nsec + gap / 2;
			best = gap;
			offset = r.tv_sec * NS_PER_S + r.tv_nsec - mid;
		}
	}
	return offset;
}

uint64_t writer_wall_us(const struct writer *w, uint64_t mono_ns)
{
	return (uint64_t)((int64_t)mono_ns + w->clock_offset_ns) / 1000;
}

uint64_t writer_now_us(void)
{
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	return now.tv_sec * 1000000ull + now.tv_nsec / 1000;
}

/* A tracer started per rank (mpirun, srun, torchrun's environment) says
 * which in start's args, for the merge to name the processes after it. */
static void job_rank(struct writer *w)
{
	struct job_rank r = job_rank_self();

	w->rank = r.rank;
	w->world_size = r.world;
}

int writer_init(struct writer *w, const char *cmdline, bool inline_paths,
		struct trace_stats *stats)
{
	struct jbuf hex;
	int err;

	memset(w, 0, sizeof(*w));
	err = jb_init(&w->scratch, 256);
	if (err)
		return err;
	w->clock_offset_ns = measure_clock_offset();
	if (gethostname(w->host, sizeof(w->host) - 1))
		strcpy(w->host, "localhost");
	w->host_hash = dft_hash64(w->host, strlen(w->host));
	hex = (struct jbuf){ w->hhash_hex, 0, sizeof(w->hhash_hex), 0 };
	jb_hex16(&hex, w->host_hash);
	w->inline_paths = inline_paths;
	w->cmdline = cmdline ? istr_cstr(cmdline) : NULL;
	w->key_epoch = istr_cstr("epoch");
	w->key_step = istr_cstr("step");
	w->stats = stats;
	job_rank(w);
	return 0;
}

void writer_free(struct writer *w)
{
	jb_free(&w->scratch);
}

/* ---- complete events ---- */

struct nesting nest_in(struct proc *p, struct thread *t)
{
	struct phase_frame *top = t ? phase_top(&t->phases) : NULL;

	if (top)
		top->children++;
	return (struct nesting){ p->next_id++, t ? (int)t->phases.depth + 1 : 1,
				 top ? (int64_t)top->id : -1, top,
				 t ? &t->phases : NULL, NULL };
}

static void write_entry(struct jbuf *b, const struct ctx_entry *e)
{
	jb_char(b, ',');
	jb_str(b, e->key->str, e->key->len);
	jb_char(b, ':');
	if (e->str)
		jb_str(b, e->str->str, e->str->len);
	else
		jb_i64(b, e->num);
}

static void write_entries(struct jbuf *b, const struct phase_ctx *c)
{
	for (uint32_t i = 0; i < c->n; i++)
		write_entry(b, &c->e[i]);
}

/* The innermost value of key among the args of the open regions. */
static const struct ctx_entry *region_arg(const struct phase_stack *st,
					  const struct istr *key)
{
	const struct ctx_entry *e = NULL;

	for (uint32_t d = st ? st->depth : 0; !e && d-- > 0;)
		e = ctx_find(&st->f[d].args, key);
	return e;
}

/*
 * The enclosing phase and the context. Python's update(epoch=, step=)
 * gives a region and its subtree, not the process, an epoch and a step
 * (region args): an I/O event inside takes the innermost ones, over the
 * process's. A region event's own args override the process's keys, so
 * that no key is written twice.
 */
void writer_context(const struct writer *w, struct jbuf *b, const struct proc *p,
		    const struct nesting *n)
{
	const struct ctx_entry *epoch = NULL, *step = NULL;

	if (n->phase) {
		JB_KEY_STR(b, phase_cat, n->phase->cat->str, n->phase->cat->len);
		JB_KEY_STR(b, phase, n->phase->name->str, n->phase->name->len);
	}
	if (!n->own && n->phase) {
		epoch = region_arg(n->stack, w->key_epoch);
		step = region_arg(n->stack, w->key_step);
	}
	for (uint32_t i = 0; i < p->ctx.n; i++) {
		const struct ctx_entry *e = &p->ctx.e[i];

		if (ctx_find(n->own, e->key) || (epoch && e->key == w->key_epoch) ||
		    (step && e->key == w->key_step))
			continue;
		write_entry(b, e);
	}
	if (epoch)
		write_entry(b, epoch);
	if (step)
		write_entry(b, step);
}

/* What writer_context() writes depends on, as one number. */
static uint64_t key_mix(uint64_t k, uint64_t v)
{
	k = (k ^ v) * 0x9e3779b97f4a7c15ull;
	return k ^ k >> 29;
}

static uint64_t key_mix_entry(uint64_t k, const struct ctx_entry *e)
{
	if (!e)
		return key_mix(k, 0x6e6f6e65ull); /* none */
	k = key_mix(k, e->key->hash);
	return e->str ? key_mix(k, e->str->hash) : key_mix(k ^ 0x6e756dull, (uint64_t)e->num);
}

uint64_t writer_context_key(const struct writer *w, const struct proc *p,
			    const struct nesting *n)
{
	uint64_t k = 0x63747800ull;

	if (!n->phase && !p->ctx.n)
		return 0;
	if (n->phase) {
		k = key_mix(key_mix(k, n->phase->cat->hash), n->phase->name->hash);
		if (!n->own) {
			k = key_mix_entry(k, region_arg(n->stack, w->key_epoch));
			k = key_mix_entry(k, region_arg(n->stack, w->key_step));
		}
	}
	for (uint32_t i = 0; i < p->ctx.n; i++)
		k = key_mix_entry(k, &p->ctx.e[i]);
	for (uint32_t i = 0; n->own && i < n->own->n; i++)
		k = key_mix_entry(k, &n->own->e[i]);
	return k ? k : 1;
}

/* The µs of ts and dur, as DFTracer's readers want them, hide the order
 * of calls within a µs: "ns10d" keeps both ends to 10 ns as D…DSS, the
 * duration in 10 ns and then the start's digits. A call's duration
 * repeats from call to call where its end's digits don't, so gzip matches
 * it (doc/trace-format.md has the figures). */
static void writer_fine(struct jbuf *b, uint64_t wall_ns, uint64_t dur_ns)
{
	JB_KEY_INT(b, ns10d, ((wall_ns + dur_ns) / 10 - wall_ns / 10) * 100 + wall_ns / 10 % 100);
}

int writer_head(const struct writer *w, struct jbuf *b, const struct event_head *h,
		const char *name_cat, size_t name_cat_len)
{
	uint64_t ts = writer_wall_us(w, h->ts_ns);
	uint64_t wall_ns = (uint64_t)((int64_t)h->ts_ns + w->clock_offset_ns);
	int type = 0;

	JB_LIT(b, "{\"id\":");
	jb_u64(b, h->id);
	jb_char(b, ',');
	jb_mem(b, name_cat, name_cat_len);
	if (w->v2) {
		type = v2_type_of_name_cat(name_cat, name_cat_len);
		JB_LIT(b, "\"type\":");
		jb_u64(b, type);
		jb_char(b, ',');
	}
	JB_LIT(b, "\"pid\":");
	jb_u64(b, h->pid);
	JB_LIT(b, ",\"tid\":");
	jb_u64(b, h->tid);
	JB_LIT(b, ",\"ts\":");
	jb_u64(b, ts);
	JB_LIT(b, ",\"dur\":");
	/* Round both ends down so nested events stay nested in µs. */
	jb_u64(b, writer_wall_us(w, h->ts_ns + h->dur_ns) - ts);
	if (w->v2)
		JB_LIT(b, ",\"ph\":" V2_STR(V2_PH_COMPLETE) ",\"args\":{\"hhash\":\"");
	else
		JB_LIT(b, ",\"ph\":\"X\",\"args\":{\"hhash\":\"");
	jb_mem(b, w->hhash_hex, 16);
	jb_char(b, '"');
	JB_KEY_INT(b, level, h->level);
	JB_KEY_INT(b, p_idx, h->parent_id);
	writer_fine(b, wall_ns, h->dur_ns);
	return type;
}

void writer_event_starts(struct writer *w, struct sink *s, uint32_t tid,
			 uint64_t end_ns)
{
	sink_meta_so_far(s);
	sink_event_end(s, end_ns);
	s->line_tid = tid;
	w->stats->events++;
}

void writer_begin_event(struct writer *w, struct sink *s, const struct proc *p,
			uint32_t tid, const struct nesting *n,
			const char *name_cat, size_t name_cat_len,
			uint64_t ts_ns, uint64_t dur_ns)
{
	struct event_head h = { n->id, n->level, n->parent_id, p->pid, tid, ts_ns, dur_ns };

	writer_event_starts(w, s, tid, ts_ns + dur_ns);
	s->layers |= 1u << writer_head(w, &s->buf, &h, name_cat, name_cat_len);
	writer_context(w, &s->buf, p, n);
}

int writer_end_event(struct sink *s)
{
	if (s->rec_open) { /* a flight record: whole already */
		s->rec_open = false;
		s->events++;
		return s->recs.err;
	}
	JB_LIT(&s->buf, "}}\n");
	sink_line_end(s, s->line_tid);
	s->events++;
	return sink_maybe_drain(s);
}

/* ---- syscalls ---- */

struct file_keys {
	const char *hash, *name;
	unsigned char hash_len, name_len;
};

#define FILE_KEYS(h, n) \
	(&(const struct file_keys){ KEY(h) "\"", ",\"" #n, \
				    sizeof(KEY(h)) + 0 * WK_##h, \
				    sizeof(",\"" #n) - 1 + 0 * WK_##n })
#define FILE1_KEYS FILE_KEYS(fhash, fname)
#define FILE2_KEYS FILE_KEYS(fhash2, fname2)

static void key_file_ref(const struct writer *w, struct jbuf *b, const struct file_keys *k,
			 const struct file_ref *f)
{
	const struct istr *path = f->path;

	jb_mem(b, k->hash, k->hash_len);
	jb_hex16(b, f->hash);
	jb_char(b, '"');
	if (f->truncated) {
		jb_mem(b, k->name, k->name_len);
		JB_LIT(b, "_truncated\":true");
	}
	if (w->inline_paths && path) {
		jb_mem(b, k->name, k->name_len);
		JB_LIT(b, "\":");
		jb_str(b, path->str, path->len);
	}
}

static struct file_ref file_ref_of(const struct istr *path)
{
	return (struct file_ref){ path->hash, path->truncated, path };
}

static void key_file(const struct writer *w, struct jbuf *b, const struct file_keys *k,
		     const struct istr *path)
{
	struct file_ref f = file_ref_of(path);

	key_file_ref(w, b, k, &f);
}

/* ,"key":"0x..." without leading zeros */
static void key_hex(struct jbuf *b, const char *key, uint64_t v)
{
	char hex[17];
	struct jbuf h = { hex, 0, sizeof(hex), 0 };
	int i = 0;

	jb_hex16(&h, v);
	while (i < 15 && hex[i] == '0')
		i++;
	JB_LIT(b, ",\"");
	jb_mem(b, key, strlen(key));
	JB_LIT(b, "\":\"0x");
	jb_mem(b, hex + i, 16 - i);
	jb_char(b, '"');
}

static void write_args(struct jbuf *b, const struct sc_desc *d,
		       const struct dft_syscall *e)
{
	for (int i = 0; i < DFT_SC_NARGS; i++) {
		const struct arg_desc *a = &d->args[i];

		switch (a->type) {
		case ARG_INT:
		case ARG_FD:
		case ARG_FD2:
		case ARG_DIRFD:
			jb_mem(b, a->json_key, a->json_key_len);
			jb_i64(b, a->wide ? (int64_t)e->args[i] : (int32_t)e->args[i]);
			break;
		case ARG_UINT:
			jb_mem(b, a->json_key, a->json_key_len);
			jb_u64(b, e->args[i]);
			break;
		case ARG_HEX:
			key_hex(b, a->key, e->args[i]);
			break;
		default:
			break;
		}
	}
}

static void write_ioctl_args(struct jbuf *b, const struct dft_syscall *e,
			     enum dev_class cls)
{
	unsigned long req = (unsigned int)e->args[1];
	struct ioctl_req r;
	bool transfer = false;
	const char *name = ioctl_name(cls, req, &transfer);

	if (ioctl_class_uses_ioc(cls)) {
		ioctl_split(req, &r);
		JB_KEY_STR(b, dir, ioctl_dir_name(r.dir), strlen(ioctl_dir_name(r.dir)));
		JB_KEY_INT(b, type, r.type);
		JB_KEY_INT(b, nr, r.nr);
		JB_KEY_INT(b, size, r.size);
	}
	if (name)
		JB_KEY_STR(b, req_name, name, strlen(name));
	if (cls != DEV_NONE) {
		JB_KEY_STR(b, device, dev_class_name(cls),
			   strlen(dev_class_name(cls)));
		if (transfer)
			JB_KEY_STR(b, kind, "transfer", 8);
		else
			JB_KEY_STR(b, kind, "control", 7);
	}
}

void writer_syscall_args(const struct writer *w, struct jbuf *b, const struct sc_desc *d,
			 const struct dft_syscall *e, const struct file_ref *f1,
			 const struct file_ref *f2, enum dev_class cls)
{
	jb_mem(b, d->json_syscall_ret, d->json_syscall_ret_len);
	jb_i64(b, e->ret);
	write_args(b, d, e);
	if (f1)
		key_file_ref(w, b, FILE1_KEYS, f1);
	if (f2)
		key_file_ref(w, b, FILE2_KEYS, f2);
	if (d->effect == FX_IOCTL)
		write_ioctl_args(b, e, cls);
}

void writer_syscall_name(const struct sc_desc *d, enum dev_class cls,
			 const char **name_cat, size_t *len)
{
	static const char device[] = "\"name\":\"ioctl\",\"cat\":\"DEVICE\",";

	*name_cat = cls != DEV_NONE ? device : d->json_name_cat;
	*len = cls != DEV_NONE ? sizeof(device) - 1 : d->json_name_cat_len;
}

void writer_syscall(struct writer *w, struct sink *s, const struct proc *p,
		    const struct thread *t, const struct nesting *n,
		    const struct sc_desc *d, const struct dft_syscall *e,
		    const struct istr *f1, const struct istr *f2)
{
	enum dev_class cls = d->effect == FX_IOCTL && f1 ?
				     dev_classify(f1->str) : DEV_NONE;
	struct file_ref r1, r2;
	const char *name_cat;
	size_t len;

	writer_names(w, s, p, t);
	if (f1)
		writer_fh(w, s, p->pid, f1);
	if (f2)
		writer_fh(w, s, p->pid, f2);
	if (f1)
		r1 = file_ref_of(f1);
	if (f2)
		r2 = file_ref_of(f2);
	if (s->records) {
		flightrec_syscall(w, s, p, n, d, e, f1 ? &r1 : NULL, f2 ? &r2 : NULL, cls);
		return;
	}
	writer_syscall_name(d, cls, &name_cat, &len);
	writer_begin_event(w, s, p, e->h.tid, n, name_cat, len, e->h.ts, e->dur);
	writer_syscall_args(w, &s->buf, d, e, f1 ? &r1 : NULL, f2 ? &r2 : NULL, cls);
}

/* ---- processes ---- */

void writer_proc_event(struct writer *w, struct sink *s, const struct proc *p,
		       uint32_t tid, const struct nesting *n, const char *name,
		       uint64_t ts_ns)
{
	char name_cat[64];
	int len = snprintf(name_cat, sizeof(name_cat),
			   "\"name\":\"%s\",\"cat\":\"PROC\",", name);

	writer_begin_event(w, s, p, tid, n, name_cat, len, ts_ns, 0);
}

void writer_exec_args(struct writer *w, struct sink *s, const struct proc *p,
		      bool privileged)
{
	struct jbuf *b = &s->buf;

	if (p->exe)
		JB_KEY_HASH(b, exec_hash, p->exe->hash);
	if (p->cmdline) {
		JB_KEY_HASH(b, cmd_hash, p->cmdline->hash);
		if (w->inline_paths)
			JB_KEY_STR(b, cmd, p->cmdline->str, p->cmdline->len);
	}
	if (privileged)
		JB_LIT(b, KEY(privileged) "true");
}

void writer_exit_args(struct sink *s, int status)
{
	struct jbuf *b = &s->buf;

	if (WIFSIGNALED(status)) {
		JB_KEY_INT(b, exit_code, 128 + WTERMSIG(status));
		JB_KEY_INT(b, signal, WTERMSIG(status));
		if (WCOREDUMP(status))
			JB_LIT(b, KEY(core_dumped) "true");
	} else {
		JB_KEY_INT(b, exit_code, WEXITSTATUS(status));
	}
}

/* ---- annotations ---- */

void writer_region(struct writer *w, struct sink *s, const struct proc *p,
		   uint32_t tid, const struct phase_stack *st, int idx,
		   uint64_t end_ns, const char *unbalanced)
{
	struct phase_frame *f = &st->f[idx];
	struct phase_frame *parent = idx ? &st->f[idx - 1] : NULL;
	struct nesting n = { f->id, idx + 1, parent ? (int64_t)parent->id : -1,
			     parent, st, &f->args };
	uint64_t dur = end_ns > f->ts ? end_ns - f->ts : 0;
	struct jbuf *nc = &w->scratch;

	if (parent)
		parent->children++;
	jb_reset(nc);
	JB_LIT(nc, "\"name\":");
	jb_str(nc, f->name->str, f->name->len);
	JB_LIT(nc, ",\"cat\":");
	jb_str(nc, f->cat->str, f->cat->len);
	jb_char(nc, ',');
	if (nc->err)
		return;
	writer_begin_event(w, s, p, tid, &n, nc->p, nc->len, f->ts, dur);
	if (f->count)
		JB_KEY_INT(&s->buf, count, f->count);
	write_entries(&s->buf, &f->args);
	if (unbalanced)
		JB_KEY_STR(&s->buf, unbalanced, unbalanced, strlen(unbalanced));
}

/* ---- I/O the kernel saw outside a syscall ---- */

int writer_named_name(const struct named_event *ev, char *buf, size_t size)
{
	int len = snprintf(buf, size, "\"name\":\"%s\",\"cat\":\"%s\",", ev->name, ev->cat);

	return len < 0 ? 0 : len >= (int)size ? (int)size - 1 : len;
}

void writer_named_args(const struct writer *w, struct jbuf *b, const struct named_event *ev)
{
	JB_KEY_INT(b, ret, ev->ret);
	if (ev->op)
		JB_KEY_STR(b, op, ev->op, strlen(ev->op));
	for (int i = 0; i < ev->nargs; i++) {
		const struct event_arg *a = &ev->args[i];

		jb_mem(b, a->key, a->key_len);
		if (a->str)
			jb_str(b, a->str->str, a->str->len);
		else
			jb_i64(b, a->v);
	}
	if (ev->file)
		key_file_ref(w, b, FILE1_KEYS, ev->file);
}

/* ev of thread tid (t: its model, or NULL where there was no memory
 * for one) (its file, if any, in file: ev->file is set here) into s. */
static void writer_named(struct writer *w, struct sink *s, const struct proc *p,
			 const struct thread *t, uint32_t tid, const struct nesting *n,
			 struct named_event *ev, const struct istr *file)
{
	struct file_ref f;
	char name_cat[96];
	int len;

	writer_names(w, s, p, t);
	if (file) {
		writer_fh(w, s, p->pid, file);
		f = file_ref_of(file);
		ev->file = &f;
	}
	if (s->records) {
		flightrec_named(w, s, p, n, tid, ev);
		return;
	}
	len = writer_named_name(ev, name_cat, sizeof(name_cat));
	writer_begin_event(w, s, p, tid, n, name_cat, len, ev->ts_ns, ev->dur_ns);
	writer_named_args(w, &s->buf, ev);
}

void writer_hidden_io(struct writer *w, struct sink *s, const struct proc *p,
		      const struct thread *t, const struct nesting *n,
		      const struct hidden_io *io)
{
	struct named_event ev = { io->name, "POSIX", io->op, io->ts_ns, io->dur_ns, io->ret,
				  NULL, io->args, io->nargs };

	writer_named(w, s, p, t, t->tid, n, &ev, io->file);
}

void writer_gpu(struct writer *w, struct sink *s, const struct proc *p,
		const struct thread *t, const struct nesting *n, const struct gpu_event *g)
{
	struct named_event ev = { g->name, g->cat, NULL, g->ts_ns, g->dur_ns, g->ret,
				  NULL, g->args, g->nargs };

	writer_named(w, s, p, t, g->tid, n, &ev, g->file);
}

/* Its own id, at the top level, in the phase the kernel saw. */
/* v2's dur_min and dur_max: the least bucket's low bound and the most
 * bucket's high bound, in µs (N calls took [2^B, 2^(B+1)) ns). */
static void hist_bounds_us(const struct fold_event *f, uint64_t *lo_us, uint64_t *hi_us)
{
	*lo_us = (1ull << f->hist_lo) / 1000;
	*hi_us = ((1ull << (f->hist_hi + 1)) + 999) / 1000;
}

/* v2: an aggregated record's head, in DFTracer's order, up to and with
 * args.hhash, then the calls and the time: {"name":..,"cat":..,"type":..,
 * "ts":..,"ph":3,"pid":..,"tid":..,"args":{"hhash":..,"dft_cnt":.. */
static void fold_head_v2(struct writer *w, struct sink *s, const struct proc *p,
			 uint32_t tid, const struct nesting *n, const struct fold_event *f)
{
	struct jbuf *b = &s->buf;
	uint64_t ts = writer_wall_us(w, f->ts_ns), lo, hi;
	uint64_t dur = writer_wall_us(w, f->ts_ns + f->dur_ns) - ts;
	int type = v2_type_of_name_cat(f->name_cat, f->name_cat_len);

	writer_event_starts(w, s, tid, f->ts_ns + f->dur_ns);
	s->layers |= 1u << type;
	jb_char(b, '{');
	jb_mem(b, f->name_cat, f->name_cat_len);
	JB_LIT(b, "\"type\":");
	jb_u64(b, type);
	JB_LIT(b, ",\"ts\":");
	jb_u64(b, ts);
	JB_LIT(b, ",\"ph\":" V2_STR(V2_PH_AGGREGATED) ",\"pid\":");
	jb_u64(b, p->pid);
	JB_LIT(b, ",\"tid\":");
	jb_u64(b, tid);
	JB_LIT(b, ",\"args\":{\"hhash\":\"");
	jb_mem(b, w->hhash_hex, 16);
	jb_char(b, '"');
	writer_context(w, b, p, n);
	JB_KEY_INT(b, dft_cnt, f->calls);
	/* DFTracer's rule: one call's numbers plain, many calls' summed */
	if (f->calls <= 1) {
		JB_KEY_INT(b, dur, dur);
	} else {
		JB_KEY_INT(b, dur_sum, dur);
		if (f->hist_lo >= 0) {
			hist_bounds_us(f, &lo, &hi);
			JB_KEY_INT(b, dur_min, lo);
			JB_KEY_INT(b, dur_max, hi);
			JB_KEY_STR(b, dur_bounds, "log2", 4);
		}
	}
	writer_fine(b, (uint64_t)((int64_t)f->ts_ns + w->clock_offset_ns), f->dur_ns);
	if (f->data && f->calls <= 1)
		JB_KEY_INT(b, ret, f->bytes);
	else if (f->data) /* size_sum: where DFTracer's loaders take a total's bytes */
		JB_KEY_INT(b, ret_sum, f->bytes), JB_KEY_INT(b, size_sum, f->bytes);
	else if (f->gpu_bytes && f->calls <= 1)
		JB_KEY_INT(b, bytes, f->bytes);
	else if (f->gpu_bytes)
		JB_KEY_INT(b, bytes_sum, f->bytes);
}

void writer_fold(struct writer *w, struct sink *s, struct proc *p,
		 const struct thread *t, const struct fold_event *f)
{
	struct nesting n = { p->next_id++, 1, -1, (struct phase_frame *)f->phase, NULL, NULL };
	struct jbuf *b = &s->buf;

	writer_names(w, s, p, t);
	if (f->file)
		writer_fh(w, s, p->pid, f->file);
	if (w->v2)
		fold_head_v2(w, s, p, t->tid, &n, f);
	else
		writer_begin_event(w, s, p, t->tid, &n, f->name_cat, f->name_cat_len,
				   f->ts_ns, f->dur_ns);
	if (f->call)
		JB_KEY_STR(b, syscall, f->call, strlen(f->call));
	if (!w->v2 && f->data) /* v2's numbers are in its head */
		JB_KEY_INT(b, ret, f->bytes);
	else if (!w->v2 && f->gpu_bytes)
		JB_KEY_INT(b, bytes, f->bytes);
	if (f->kernel)
		JB_KEY_STR(b, kernel, f->kernel->str, f->kernel->len);
	JB_KEY_STR(b, folded, f->why, strlen(f->why));
	if (!w->v2)
		JB_KEY_INT(b, calls, f->calls);
	JB_KEY_INT(b, errors, f->errors);
	JB_KEY_INT(b, span_ns, f->span_ns);
	JB_KEY_STR(b, hist, f->hist, f->hist_len);
	if (f->file)
		key_file(w, b, FILE1_KEYS, f->file);
}
