// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Every line of a trace. The writer is on the consumer's hot path: no
 * stdio, no allocation per event; keys are literals, and the list of keys
 * the writer may put on an event is the X-macro list below, which the
 * key-writing macros check at compile time.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "lib/hash.h"
#include "model/ioctl_decode.h"
#include "version.h"
#include "write/writer.h"

/* Keys the writer puts in an event's args beside the context (I/O,
 * ioctls, process events, start and end); a user's context key among
 * them, or among the syscall arguments, is renamed user_<key>. */
#define EVENT_KEYS(X)                                                         \
	X(syscall) X(ret) X(fhash) X(fhash2) X(fname) X(fname2)              \
	X(fname_truncated) X(fname2_truncated) X(dir) X(type) X(nr) X(size)  \
	X(req_name) X(device) X(kind) X(exit_code) X(signal) X(core_dumped)  \
	X(privileged) X(cmd) X(cmd_hash) X(exec_hash) X(cwd) X(ppid) X(date) \
	X(version) X(num_events) X(lost)
/* Keys every X event has, and those a region event adds. */
#define REGION_KEYS(X)                                                        \
	X(hhash) X(level) X(p_idx) X(phase) X(phase_cat) X(count) X(unbalanced)

enum writer_key {
#define KEY_ENUM(k) WK_##k,
	EVENT_KEYS(KEY_ENUM) REGION_KEYS(KEY_ENUM)
#undef KEY_ENUM
};

/* ,"k": for a key of the lists above (anything else does not compile). */
#define KEY(k) ",\"" #k "\":"
#define JB_KEY(b, k) jb_mem((b), KEY(k), sizeof(KEY(k)) - 1 + 0 * WK_##k)
#define JB_KEY_INT(b, k, v) (JB_KEY((b), k), jb_i64((b), (v)))
#define JB_KEY_STR(b, k, s, n) (JB_KEY((b), k), jb_str((b), (s), (n)))
/* ,"k":"<16 hex digits>" */
#define JB_KEY_HASH(b, k, h) \
	(JB_KEY((b), k), jb_char((b), '"'), jb_hex16((b), (h)), jb_char((b), '"'))

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
	static const char *const event_keys[] = { EVENT_KEYS(KEY_NAME) };
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
	return 0;
}

void writer_free(struct writer *w)
{
	jb_free(&w->scratch);
}

/* ---- metadata lines ---- */

/* FH, SH and HH, with the host's hash as DFTracer writes them. */
static void write_hash_meta(struct writer *w, struct sink *s, const char *kind,
			    uint32_t pid, const char *str, size_t len,
			    uint64_t hash)
{
	struct jbuf *b = &s->buf;

	JB_LIT(b, "{\"name\":\"");
	jb_mem(b, kind, 2);
	JB_LIT(b, "\",\"cat\":\"dftracer\",\"pid\":");
	jb_u64(b, pid);
	JB_LIT(b, ",\"tid\":");
	jb_u64(b, pid);
	JB_LIT(b, ",\"ph\":\"M\",\"args\":{\"hhash\":\"");
	jb_mem(b, w->hhash_hex, 16);
	JB_LIT(b, "\",\"name\":");
	jb_str(b, str, len);
	JB_LIT(b, ",\"value\":\"");
	jb_hex16(b, hash);
	JB_LIT(b, "\"}}\n");
}

void writer_fh(struct writer *w, struct sink *s, uint32_t pid,
	       const struct istr *path)
{
	if (sink_first_sight(s, path->hash))
		write_hash_meta(w, s, "FH", pid, path->str, path->len, path->hash);
}

/* The same string can be both a file (FH) and a program (SH), and each
 * needs its own line: SH lines are remembered under a different key. */
#define SH_SEEN_SALT 0x5348000000005348ull

void writer_sh(struct writer *w, struct sink *s, uint32_t pid,
	       const struct istr *str)
{
	if (sink_first_sight(s, str->hash ^ SH_SEEN_SALT))
		write_hash_meta(w, s, "SH", pid, str->str, str->len, str->hash);
}

static void write_name_meta(struct sink *s, const char *what, uint32_t pid,
			    uint32_t tid, const char *name)
{
	struct jbuf *b = &s->buf;

	JB_LIT(b, "{\"name\":\"");
	jb_mem(b, what, strlen(what));
	JB_LIT(b, "\",\"ph\":\"M\",\"pid\":");
	jb_u64(b, pid);
	JB_LIT(b, ",\"tid\":");
	jb_u64(b, tid);
	JB_LIT(b, ",\"args\":{\"name\":");
	jb_str(b, name, strnlen(name, DFT_COMM_LEN));
	JB_LIT(b, "}}\n");
}

/* process_name and thread_name lines are written when a task is first
 * seen in a sink and again after a rename: the sink remembers the hash of
 * the name it last wrote for each. */
#define NAMED_PROCESS (1ull << 32)
#define NAMED_THREAD (2ull << 32)

static void name_once(struct sink *s, const char *what, uint64_t key,
		      uint32_t pid, uint32_t tid, const char *comm)
{
	uint64_t h = dft_hash64(comm, strnlen(comm, DFT_COMM_LEN)), had;

	if (hmap_get(&s->named, key, &had) && had == h)
		return;
	if (!hmap_put(&s->named, key, h))
		write_name_meta(s, what, pid, tid, comm);
}

void writer_names(struct sink *s, const struct proc *p, const struct thread *t)
{
	struct sink_named *last = &s->last_named;
	uint32_t tid = t ? t->tid : 0;

	/* Most events come from the thread of the one before. */
	if (last->pid == p->pid && last->tid == tid &&
	    !memcmp(last->comm, p->comm, DFT_COMM_LEN) &&
	    (!t || !memcmp(last->thread_comm, t->comm, DFT_COMM_LEN)))
		return;
	name_once(s, "process_name", NAMED_PROCESS | p->pid, p->pid, p->pid,
		  p->comm);
	if (t)
		name_once(s, "thread_name", NAMED_THREAD | t->tid, p->pid, t->tid,
			  t->comm);
	last->pid = p->pid;
	last->tid = tid;
	memcpy(last->comm, p->comm, DFT_COMM_LEN);
	if (t)
		memcpy(last->thread_comm, t->comm, DFT_COMM_LEN);
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
static void write_context(struct writer *w, struct jbuf *b,
			  const struct proc *p, const struct nesting *n)
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

void writer_begin_event(struct writer *w, struct sink *s, const struct proc *p,
			uint32_t tid, const struct nesting *n,
			const char *name_cat, size_t name_cat_len,
			uint64_t ts_ns, uint64_t dur_ns)
{
	struct jbuf *b = &s->buf;
	uint64_t ts = writer_wall_us(w, ts_ns);

	JB_LIT(b, "{\"id\":");
	jb_u64(b, n->id);
	jb_char(b, ',');
	jb_mem(b, name_cat, name_cat_len);
	JB_LIT(b, "\"pid\":");
	jb_u64(b, p->pid);
	JB_LIT(b, ",\"tid\":");
	jb_u64(b, tid);
	JB_LIT(b, ",\"ts\":");
	jb_u64(b, ts);
	JB_LIT(b, ",\"dur\":");
	/* Round both ends down so nested events stay nested in µs. */
	jb_u64(b, writer_wall_us(w, ts_ns + dur_ns) - ts);
	JB_LIT(b, ",\"ph\":\"X\",\"args\":{\"hhash\":\"");
	jb_mem(b, w->hhash_hex, 16);
	jb_char(b, '"');
	JB_KEY_INT(b, level, n->level);
	JB_KEY_INT(b, p_idx, n->parent_id);
	write_context(w, b, p, n);
	w->stats->events++;
}

int writer_end_event(struct sink *s)
{
	JB_LIT(&s->buf, "}}\n");
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

static void key_file(struct writer *w, struct jbuf *b, const struct file_keys *k,
		     const struct istr *path)
{
	jb_mem(b, k->hash, k->hash_len);
	jb_hex16(b, path->hash);
	jb_char(b, '"');
	if (path->truncated) {
		jb_mem(b, k->name, k->name_len);
		JB_LIT(b, "_truncated\":true");
	}
	if (w->inline_paths) {
		jb_mem(b, k->name, k->name_len);
		JB_LIT(b, "\":");
		jb_str(b, path->str, path->len);
	}
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

void writer_syscall(struct writer *w, struct sink *s, const struct proc *p,
		    const struct thread *t, const struct nesting *n,
		    const struct sc_desc *d, const struct dft_syscall *e,
		    const struct istr *f1, const struct istr *f2)
{
	static const char device[] = "\"name\":\"ioctl\",\"cat\":\"DEVICE\",";
	enum dev_class cls = d->effect == FX_IOCTL && f1 ?
				     dev_classify(f1->str) : DEV_NONE;
	struct jbuf *b = &s->buf;

	writer_names(s, p, t);
	if (f1)
		writer_fh(w, s, p->pid, f1);
	if (f2)
		writer_fh(w, s, p->pid, f2);
	if (cls != DEV_NONE)
		writer_begin_event(w, s, p, e->h.tid, n, device,
				   sizeof(device) - 1, e->h.ts, e->dur);
	else
		writer_begin_event(w, s, p, e->h.tid, n, d->json_name_cat,
				   d->json_name_cat_len, e->h.ts, e->dur);
	jb_mem(b, d->json_syscall_ret, d->json_syscall_ret_len);
	jb_i64(b, e->ret);
	write_args(b, d, e);
	if (f1)
		key_file(w, b, FILE1_KEYS, f1);
	if (f2)
		key_file(w, b, FILE2_KEYS, f2);
	if (d->effect == FX_IOCTL)
		write_ioctl_args(b, e, cls);
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

void writer_cm(struct writer *w, struct sink *s, const struct proc *p,
	       const struct thread *t, const char *name, bool is_end,
	       uint64_t ts_ns)
{
	const struct phase_frame *top = t ? phase_top(&t->phases) : NULL;
	struct jbuf *b = &s->buf;
	char value[24], mark[DFT_NAME_LEN + 8];
	int n = snprintf(value, sizeof(value), "%llu",
			 (unsigned long long)writer_wall_us(w, ts_ns));
	int m = snprintf(mark, sizeof(mark), "%.*s%s", DFT_NAME_LEN, name,
			 is_end ? ".end" : ".start");

	/* As pydftracer: the id of the enclosing region; none at the top. */
	jb_char(b, '{');
	if (top) {
		JB_LIT(b, "\"id\":");
		jb_u64(b, top->id);
		jb_char(b, ',');
	}
	JB_LIT(b, "\"name\":\"CM\",\"cat\":\"dftracer\",\"pid\":");
	jb_u64(b, p->pid);
	JB_LIT(b, ",\"tid\":");
	jb_u64(b, t ? t->tid : p->pid);
	JB_LIT(b, ",\"ph\":\"M\",\"args\":{\"hhash\":\"");
	jb_mem(b, w->hhash_hex, 16);
	JB_LIT(b, "\",\"name\":");
	jb_str(b, mark, m);
	JB_LIT(b, ",\"value\":\"");
	jb_mem(b, value, n);
	JB_LIT(b, "\"}}\n");
}

/* ---- start, end, losses ---- */

static void write_lifecycle(struct writer *w, struct sink *s, const char *name,
			    const struct lifecycle *l, int64_t lost)
{
	struct jbuf *b = &s->buf;
	time_t now = time(NULL);
	char date[64];

	if (sink_first_sight(s, w->host_hash))
		write_hash_meta(w, s, "HH", l->pid, w->host, strlen(w->host),
				w->host_hash);
	if (w->cmdline)
		writer_sh(w, s, l->pid, w->cmdline);
	if (l->exe)
		writer_sh(w, s, l->pid, l->exe);
	JB_LIT(b, "{\"id\":");
	jb_u64(b, l->id);
	JB_LIT(b, ",\"name\":\"");
	jb_mem(b, name, strlen(name));
	JB_LIT(b, "\",\"cat\":\"dftracer\",\"pid\":");
	jb_u64(b, l->pid);
	JB_LIT(b, ",\"tid\":");
	jb_u64(b, l->pid);
	JB_LIT(b, ",\"ts\":");
	jb_u64(b, l->ts_us);
	JB_LIT(b, ",\"dur\":0,\"ph\":\"X\",\"args\":{\"hhash\":\"");
	jb_mem(b, w->hhash_hex, 16);
	jb_char(b, '"');
	JB_KEY_STR(b, version, DFTRACE_VERSION, sizeof(DFTRACE_VERSION) - 1);
	if (w->cmdline) {
		JB_KEY_HASH(b, cmd_hash, w->cmdline->hash);
		JB_KEY_STR(b, cmd, w->cmdline->str, w->cmdline->len);
	}
	if (l->exe)
		JB_KEY_HASH(b, exec_hash, l->exe->hash);
	if (l->cwd)
		JB_KEY_STR(b, cwd, l->cwd->str, l->cwd->len);
	if (l->ppid)
		JB_KEY_INT(b, ppid, l->ppid);
	strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
	JB_KEY_STR(b, date, date, strlen(date));
	if (!strcmp(name, "end"))
		JB_KEY_INT(b, num_events, s->events);
	if (lost >= 0)
		JB_KEY_INT(b, lost, lost);
	JB_LIT(b, "}}\n");
}

void writer_start(struct writer *w, struct sink *s, const struct lifecycle *l,
		  int64_t lost)
{
	JB_LIT(&s->buf, "[\n");
	write_lifecycle(w, s, "start", l, lost);
}

void writer_end(struct writer *w, struct sink *s, const struct lifecycle *l,
		int64_t lost)
{
	write_lifecycle(w, s, "end", l, lost);
	JB_LIT(&s->buf, "]\n");
}

static void write_lost_line(struct sink *s, uint32_t pid, const char *op,
			    uint64_t n)
{
	struct jbuf *b = &s->buf;

	JB_LIT(b, "{\"name\":\"lost_events\",\"cat\":\"dftracer\",\"pid\":");
	jb_u64(b, pid);
	JB_LIT(b, ",\"tid\":");
	jb_u64(b, pid);
	JB_LIT(b, ",\"ph\":\"M\",\"args\":{\"name\":");
	jb_str(b, op, strlen(op));
	JB_LIT(b, ",\"value\":");
	jb_u64(b, n);
	JB_LIT(b, "}}\n");
}

static const char *kind_name(size_t kind)
{
	static const char *names[DFT_EV__COUNT] = {
		[DFT_EV_FORK] = "fork", [DFT_EV_EXEC] = "exec",
		[DFT_EV_EXIT] = "exit", [DFT_EV_COMM] = "comm",
		[DFT_EV_ANNOT] = "annotation",
	};

	return kind < DFT_EV__COUNT && names[kind] ? names[kind] : "other";
}

/* Syscalls that share a name (openat, open) share an entry. */
uint64_t writer_lost(struct sink *s, uint32_t pid, const uint64_t *lost,
		     size_t nslots)
{
	uint64_t total = 0, by_name[TRACE_MAX_OPS] = { 0 };

	for (size_t i = 0; i < nslots; i++)
		total += lost[i];
	for (size_t i = 0; i < nslots && i < DFT_NR_MAX; i++)
		if (lost[i] && sc_lookup(i) && sc_lookup(i)->silent)
			write_lost_line(s, pid, sc_lookup(i)->syscall, lost[i]);
		else if (lost[i] && sc_lookup(i))
			by_name[sc_name_index(sc_lookup(i))] += lost[i];
	for (int i = 0; i < sc_nnames(); i++)
		if (by_name[i])
			write_lost_line(s, pid, sc_name_at(i), by_name[i]);
	for (size_t i = DFT_NR_MAX; i < nslots; i++)
		if (lost[i])
			write_lost_line(s, pid, kind_name(i - DFT_NR_MAX), lost[i]);
	return total;
}
