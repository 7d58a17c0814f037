// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Correlation and JSON writing. Every kernel record passes through here
 * once: the fd tables are updated, files are named, and one line per
 * event is appended to the right sink. This is the consumer's hot path:
 * no stdio, no allocation per event once paths and tasks are known.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include "ioctl_decode.h"
#include "procfs.h"
#include "procs.h"
#include "syscalls.h"
#include "trace.h"
#include "usdt.h"
#include "version.h"

#define AT_FDCWD_VALUE (-100)
#define CLOEXEC_FLAG 02000000
#define FD_CLOEXEC_FLAG 1
#define CLOSE_RANGE_CLOEXEC_FLAG (1u << 2)
#define F_SETFD_CMD 2
#define F_DUPFD_CLOEXEC_CMD 1030
#define PROT_EXEC_FLAG 4

static struct trace_config cfg;
static struct sink *main_sink;
static struct proc root;	/* the single file's start/end: exe, cwd, ppid */
static const struct path *key_epoch, *key_step; /* interned once */
static struct trace_stats stats;
static int64_t clock_offset_ns; /* CLOCK_REALTIME - CLOCK_MONOTONIC */
static char hhash_hex[17];
static char host[256];
static uint64_t host_hash;

uint64_t trace_wall_us(uint64_t mono_ns)
{
	return (uint64_t)((int64_t)mono_ns + clock_offset_ns) / 1000;
}

/* Reads both clocks with the smallest gap we can get, once. */
static void measure_clock_offset(void)
{
	struct timespec m0, r, m1;
	int64_t best = INT64_MAX;

	for (int i = 0; i < 5; i++) {
		clock_gettime(CLOCK_MONOTONIC, &m0);
		clock_gettime(CLOCK_REALTIME, &r);
		clock_gettime(CLOCK_MONOTONIC, &m1);
		int64_t gap = (m1.tv_sec - m0.tv_sec) * 1000000000LL +
			      (m1.tv_nsec - m0.tv_nsec);
		if (gap < best) {
			int64_t mid = m0.tv_sec * 1000000000LL + m0.tv_nsec + gap / 2;

			best = gap;
			clock_offset_ns = r.tv_sec * 1000000000LL + r.tv_nsec - mid;
		}
	}
}

static void hex16(char out[17], uint64_t v)
{
	static const char digits[] = "0123456789abcdef";

	for (int i = 15; i >= 0; i--, v >>= 4)
		out[i] = digits[v & 15];
	out[16] = 0;
}

/* ---- metadata lines ---- */

static void write_hash_meta(struct sink *s, const char *kind, uint32_t pid,
			    const char *str, size_t len, uint64_t hash)
{
	struct jbuf *b = &s->buf;

	JB_LIT(b, "{\"name\":\"");
	jb_mem(b, kind, 2);
	JB_LIT(b, "\",\"cat\":\"dftracer\",\"pid\":");
	jb_u64(b, pid);
	JB_LIT(b, ",\"tid\":");
	jb_u64(b, pid);
	JB_LIT(b, ",\"ph\":\"M\",\"args\":{\"name\":");
	jb_str(b, str, len);
	JB_LIT(b, ",\"value\":\"");
	jb_hex16(b, hash);
	JB_LIT(b, "\"}}\n");
}

static void ensure_fh(struct sink *s, uint32_t pid, const struct path *path)
{
	if (sink_first_sight(s, path->hash))
		write_hash_meta(s, "FH", pid, path->str, path->len, path->hash);
}

/* The same string can be both a file (FH) and a program (SH), and each
 * needs its own line: SH lines are remembered under a different key. */
#define SH_SEEN_SALT 0x5348000000005348ull

static void ensure_sh(struct sink *s, uint32_t pid, const struct path *str)
{
	if (sink_first_sight(s, str->hash ^ SH_SEEN_SALT))
		write_hash_meta(s, "SH", pid, str->str, str->len, str->hash);
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

/* ---- per-process sinks ---- */

static void write_lifecycle(struct sink *s, const char *name, uint32_t pid,
			    uint64_t ts_us, const struct proc *p, int64_t lost);

/* What one process has lost before its file opened (-D, file opened at
 * its first record): the start event says so. */
static int64_t lost_so_far(uint32_t pid)
{
	uint64_t lost[DFT_LOST_SLOTS];
	int64_t total = 0;

	cfg.proc_lost(pid, lost, DFT_LOST_SLOTS, false);
	for (size_t i = 0; i < DFT_LOST_SLOTS; i++)
		total += lost[i];
	return total;
}

/* The first write error stops the trace; main reports it once. */
static void write_failed(int err, const char *msg)
{
	if (stats.write_error)
		return;
	stats.write_error = err ? err : -EIO;
	snprintf(stats.write_error_msg, sizeof(stats.write_error_msg), "%s", msg);
}

static struct sink *open_proc_sink(struct proc *p)
{
	char err[TRACE_ERR_LEN];
	struct sink *s;
	struct timespec now;
	int rc = outdir_create(cfg.outdir, p->pid, p->comm, &s, err, sizeof(err));

	if (rc) {
		write_failed(rc, err);
		return NULL;
	}
	JB_LIT(&s->buf, "[\n");
	clock_gettime(CLOCK_REALTIME, &now);
	write_lifecycle(s, "start", p->pid,
			now.tv_sec * 1000000ull + now.tv_nsec / 1000, p,
			lost_so_far(p->pid));
	return s;
}

static struct sink *sink_of(struct proc *p)
{
	char err[TRACE_ERR_LEN];
	int rc;

	if (main_sink)
		return main_sink;
	if (!p->sink)
		return p->sink = open_proc_sink(p);
	rc = outdir_use(cfg.outdir, p->sink, err, sizeof(err));
	if (rc) {
		write_failed(rc, err);
		return NULL;
	}
	return p->sink;
}

/* ---- tasks ---- */

static struct proc *proc_of(uint32_t pid)
{
	struct proc *p = proc_get(pid);

	if (!p) {
		p = proc_from_procfs(pid);
		if (p)
			stats.live++;
	}
	return p;
}

static struct thread *thread_of(struct proc *p, uint32_t tid)
{
	struct thread *t = thread_get(tid);
	char comm[DFT_COMM_LEN], what[32];

	if (t)
		return t;
	snprintf(what, sizeof(what), "task/%u/comm", tid);
	procfs_comm(p->pid, what, comm);
	return thread_add(tid, p->pid, comm[0] ? comm : p->comm);
}

static void ensure_names(struct sink *s, struct proc *p, struct thread *t)
{
	if (!p->named) {
		write_name_meta(s, "process_name", p->pid, p->pid, p->comm);
		p->named = true;
	}
	if (t && !t->named) {
		write_name_meta(s, "thread_name", p->pid, t->tid, t->comm);
		t->named = true;
	}
}

/* ---- complete events ---- */

/* Where an event sits among its thread's annotated phases. */
struct nesting {
	uint64_t id;
	int level;		/* DFTracer's level: 1 at the top */
	int64_t parent_id;	/* DFTracer's p_idx: -1 at the top */
	const struct phase_frame *phase; /* innermost enclosing region */
	const struct phase_stack *stack; /* all the enclosing regions */
	const struct phase_ctx *own;	/* a region event's own args, or NULL */
};

/* A new event inside whatever the thread has open. */
static struct nesting nest_in(struct proc *p, const struct thread *t)
{
	const struct phase_frame *top = t ? phase_top(&t->phases) : NULL;

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
					  const struct path *key)
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
static void write_context(struct jbuf *b, const struct proc *p,
			  const struct nesting *n)
{
	const struct ctx_entry *epoch = NULL, *step = NULL;

	if (n->phase) {
		JB_LIT(b, ",\"phase_cat\":");
		jb_str(b, n->phase->cat->str, n->phase->cat->len);
		JB_LIT(b, ",\"phase\":");
		jb_str(b, n->phase->name->str, n->phase->name->len);
	}
	if (!n->own && n->phase) {
		epoch = region_arg(n->stack, key_epoch);
		step = region_arg(n->stack, key_step);
	}
	for (uint32_t i = 0; i < p->ctx.n; i++) {
		const struct ctx_entry *e = &p->ctx.e[i];

		if (ctx_find(n->own, e->key) || (epoch && e->key == key_epoch) ||
		    (step && e->key == key_step))
			continue;
		write_entry(b, e);
	}
	if (epoch)
		write_entry(b, epoch);
	if (step)
		write_entry(b, step);
}

static void begin_event_at(struct jbuf *b, struct proc *p, uint32_t tid,
			   const struct nesting *n, const char *name_cat,
			   size_t name_cat_len, uint64_t ts_ns, uint64_t dur_ns)
{
	uint64_t ts = trace_wall_us(ts_ns);

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
	jb_u64(b, trace_wall_us(ts_ns + dur_ns) - ts);
	JB_LIT(b, ",\"ph\":\"X\",\"args\":{\"hhash\":\"");
	jb_mem(b, hhash_hex, 16);
	JB_LIT(b, "\",\"level\":");
	jb_u64(b, n->level);
	JB_LIT(b, ",\"p_idx\":");
	jb_i64(b, n->parent_id);
	write_context(b, p, n);
	stats.events++;
}

static void begin_event(struct jbuf *b, struct proc *p, struct thread *t,
			uint32_t tid, const char *name_cat, size_t name_cat_len,
			uint64_t ts_ns, uint64_t dur_ns)
{
	struct nesting n = nest_in(p, t);

	begin_event_at(b, p, tid, &n, name_cat, name_cat_len, ts_ns, dur_ns);
}

static void end_event(struct sink *s)
{
	JB_LIT(&s->buf, "}}\n");
	s->events++;
	if (sink_maybe_drain(s))
		write_failed(-EIO, "cannot write the trace");
}

static void key_int(struct jbuf *b, const char *key, size_t klen, int64_t v)
{
	jb_mem(b, key, klen);
	jb_i64(b, v);
}

#define KEY_INT(b, lit, v) key_int((b), lit, sizeof(lit) - 1, (v))

/* ,"key":"<16 hex digits>" */
static void key_hash(struct jbuf *b, const char *key, size_t klen, uint64_t h)
{
	jb_mem(b, key, klen);
	jb_hex16(b, h);
	jb_char(b, '"');
}

#define KEY_HASH(b, lit, h) key_hash((b), lit, sizeof(lit) - 1, (h))

struct file_keys {
	const char *hash, *name;
	unsigned char hash_len, name_len;
};

#define FILE_KEYS(h, n) (&(const struct file_keys){ h, n, sizeof(h) - 1, sizeof(n) - 1 })
#define FILE1_KEYS FILE_KEYS(",\"fhash\":\"", ",\"fname")
#define FILE2_KEYS FILE_KEYS(",\"fhash2\":\"", ",\"fname2")

static void key_file(struct sink *s, const struct file_keys *k,
		     const struct path *path)
{
	struct jbuf *b = &s->buf;

	key_hash(b, k->hash, k->hash_len, path->hash);
	if (path->truncated) {
		jb_mem(b, k->name, k->name_len);
		JB_LIT(b, "_truncated\":true");
	}
	if (cfg.inline_paths) {
		jb_mem(b, k->name, k->name_len);
		JB_LIT(b, "\":");
		jb_str(b, path->str, path->len);
	}
}

static void key_hex(struct jbuf *b, const char *key, uint64_t v)
{
	char hex[17];
	int i = 0;

	hex16(hex, v);
	while (i < 15 && hex[i] == '0')
		i++;
	JB_LIT(b, ",\"");
	jb_mem(b, key, strlen(key));
	JB_LIT(b, "\":\"0x");
	jb_mem(b, hex + i, 16 - i);
	jb_char(b, '"');
}

/* The file(s) a syscall touches, resolved before its effects apply. */
struct files {
	struct path *f[2];
};

static struct path *resolve_arg(struct proc *p, const struct sc_desc *d,
				const struct dft_syscall *e, int i,
				const char *str, size_t len, bool trunc)
{
	struct path *base = p->cwd;

	if ((len == 0 || str[0] != '/') && i > 0 &&
	    d->args[i - 1].type == ARG_DIRFD &&
	    (int)e->args[i - 1] != AT_FDCWD_VALUE)
		base = fd_path(p, (int)e->args[i - 1]);
	return path_resolve(base, str, len, trunc);
}

static void name_files(struct proc *p, const struct sc_desc *d,
		       const struct dft_syscall *e, const char **str,
		       const size_t *len, uint8_t flags, struct files *out)
{
	int npath = 0;

	out->f[0] = out->f[1] = NULL;
	for (int i = 0; i < 6; i++) {
		switch (d->args[i].type) {
		case ARG_FD:
			out->f[0] = fd_path(p, (int)e->args[i]);
			break;
		case ARG_FD2:
			out->f[1] = fd_path(p, (int)e->args[i]);
			break;
		case ARG_PATH:
			if (npath < 2 && str[npath])
				out->f[npath] = resolve_arg(
					p, d, e, i, str[npath], len[npath],
					flags & (npath ? DFT_F_TRUNC1 : DFT_F_TRUNC0));
			npath++;
			break;
		default:
			break;
		}
	}
	if (d->effect == FX_MUNMAP) {
		struct mapping *m = map_find(p, e->args[0]);

		out->f[0] = m ? m->path : NULL;
	}
}

static void write_args(struct jbuf *b, const struct sc_desc *d,
		       const struct dft_syscall *e)
{
	for (int i = 0; i < 6; i++) {
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

static void write_ioctl_args(struct sink *s, const struct dft_syscall *e,
			     const struct path *dev)
{
	enum dev_class cls = dev ? dev_classify(dev->str) : DEV_NONE;
	unsigned long req = (unsigned int)e->args[1];
	struct ioctl_req r;
	bool transfer = false;
	const char *name = ioctl_name(cls, req, &transfer);
	struct jbuf *b = &s->buf;

	if (ioctl_class_uses_ioc(cls)) {
		ioctl_split(req, &r);
		JB_LIT(b, ",\"dir\":\"");
		jb_mem(b, ioctl_dir_name(r.dir), strlen(ioctl_dir_name(r.dir)));
		JB_LIT(b, "\"");
		KEY_INT(b, ",\"type\":", r.type);
		KEY_INT(b, ",\"nr\":", r.nr);
		KEY_INT(b, ",\"size\":", r.size);
	}
	if (name) {
		JB_LIT(b, ",\"req_name\":");
		jb_str(b, name, strlen(name));
	}
	if (cls != DEV_NONE) {
		JB_LIT(b, ",\"device\":");
		jb_str(b, dev_class_name(cls), strlen(dev_class_name(cls)));
		if (transfer)
			JB_LIT(b, ",\"kind\":\"transfer\"");
		else
			JB_LIT(b, ",\"kind\":\"control\"");
	}
}

static const char *ioctl_name_cat(struct path *dev, size_t *len)
{
	static const char device[] = "\"name\":\"ioctl\",\"cat\":\"DEVICE\",";

	if (dev && dev_classify(dev->str) != DEV_NONE) {
		*len = sizeof(device) - 1;
		return device;
	}
	return NULL;
}

/* O_CLOEXEC in a "flags" argument (openat2's comes from its open_how). */
static bool cloexec_requested(const struct sc_desc *d,
			      const struct dft_syscall *e)
{
	for (int i = 0; i < 6; i++)
		if (d->args[i].key && !strcmp(d->args[i].key, "flags"))
			return e->args[i] & CLOEXEC_FLAG;
	return false;
}

/* How /proc/PID/fd shows an fd made by a call we do not name. Pipes and
 * sockets are exact from the inode number the kernel side read; other
 * anonymous inodes are read from /proc, or named after their call. */
static const char *new_fd_kind(const struct sc_desc *d)
{
	static const struct { const char *prefix, *kind; } kinds[] = {
		{ "pipe", "pipe" }, { "socket", "socket" }, { "accept", "socket" },
		{ "eventfd", "anon_inode:[eventfd]" },
		{ "epoll", "anon_inode:[eventpoll]" },
		{ "timerfd", "anon_inode:[timerfd]" },
		{ "signalfd", "anon_inode:[signalfd]" },
		{ "inotify", "anon_inode:inotify" },
		{ "fanotify", "anon_inode:[fanotify]" },
		{ "userfaultfd", "anon_inode:[userfaultfd]" },
		{ "perf_event", "anon_inode:[perf_event]" },
		{ "pidfd", "anon_inode:[pidfd]" },
		{ "io_uring", "anon_inode:[io_uring]" },
		{ "memfd", "memfd:?" },
	};

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (!strncmp(d->syscall, kinds[i].prefix, strlen(kinds[i].prefix)))
			return kinds[i].kind;
	return "handle:?";
}

static void label_new_fd(struct proc *p, const struct sc_desc *d, int fd,
			 uint64_t ino, bool cloexec)
{
	const char *kind = new_fd_kind(d);
	char label[64];
	int n;

	if (ino && (!strcmp(kind, "pipe") || !strcmp(kind, "socket"))) {
		n = snprintf(label, sizeof(label), "%s:[%llu]", kind,
			     (unsigned long long)ino);
		fd_assign(p, fd, path_intern(label, n, false), cloexec);
	} else {
		fd_relabel(p, fd, kind, cloexec);
	}
}

/* fd-table and mapping updates, applied after the event is written. */
static void apply_effect(struct proc *p, const struct sc_desc *d,
			 const struct dft_syscall *e, const struct files *f)
{
	int64_t ret = e->ret;

	switch (d->effect) {
	case FX_OPEN:
	case FX_DUP2:
		if (ret >= 0)
			fd_assign(p, ret, f->f[0], cloexec_requested(d, e));
		break;
	case FX_NEWFD:
		if (ret >= 0)
			label_new_fd(p, d, ret, d->silent ? e->args[5] : 0,
				     cloexec_requested(d, e));
		break;
	case FX_NEWFD_PAIR:
		if (ret == 0 && e->args[5] != ~0ull) {
			label_new_fd(p, d, (int32_t)e->args[5], e->args[3],
				     cloexec_requested(d, e));
			label_new_fd(p, d, (int32_t)(e->args[5] >> 32), e->args[4],
				     cloexec_requested(d, e));
		}
		break;
	case FX_CLOSE:
		if (ret == 0)
			fd_close(p, e->args[0]);
		break;
	case FX_CLOSE_RANGE:
		if (ret == 0)
			fd_close_range(p, e->args[0], e->args[1],
				       e->args[2] & CLOSE_RANGE_CLOEXEC_FLAG);
		break;
	case FX_DUP:
		if (ret >= 0)
			fd_assign(p, ret, f->f[0], false);
		break;
	case FX_FCNTL:
		if (ret < 0)
			break;
		if ((int)e->args[1] == F_SETFD_CMD)
			fd_set_cloexec(p, e->args[0], e->args[2] & FD_CLOEXEC_FLAG);
		else
			fd_assign(p, ret, f->f[0],
			       (int)e->args[1] == F_DUPFD_CLOEXEC_CMD);
		break;
	case FX_CHDIR:
	case FX_FCHDIR:
		if (ret == 0 && f->f[0])
			p->cwd = f->f[0];
		break;
	case FX_MMAP:
		if (ret >= 0 || ret < -4095)
			map_add(p, ret, e->args[1], f->f[0]);
		if ((ret >= 0 || ret < -4095) && (e->args[2] & PROT_EXEC_FLAG) && f->f[0])
			usdt_offer(f->f[0]->str);
		break;
	case FX_MUNMAP:
		if (ret == 0 && !strcmp(d->syscall, "munmap"))
			map_remove(p, e->args[0], e->args[1]);
		break;
	default:
		break;
	}
}

static void count_op(const struct sc_desc *d, int64_t ret)
{
	int i = sc_name_index(d);

	stats.count[i]++;
	if (d->moves_bytes && ret > 0)
		stats.bytes[i] += ret;
}

static void on_syscall(const struct dft_syscall *e, const char **str,
		       const size_t *len, uint8_t flags)
{
	const struct sc_desc *d = sc_lookup(e->h.nr);
	const char *name_cat;
	size_t name_cat_len;
	struct proc *p;
	struct thread *t;
	struct files f;
	struct sink *s;

	if (!d || !(p = proc_of(e->h.tgid)))
		return;
	if (d->silent) {
		apply_effect(p, d, e, NULL);
		return;
	}
	name_files(p, d, e, str, len, flags, &f);
	if (d->effect == FX_MUNMAP && !f.f[0])
		return; /* anonymous memory: not file I/O */
	t = thread_of(p, e->h.tid);
	s = sink_of(p);
	if (s) {
		ensure_names(s, p, t);
		for (int i = 0; i < 2; i++)
			if (f.f[i])
				ensure_fh(s, p->pid, f.f[i]);
		name_cat = d->json_name_cat;
		name_cat_len = d->json_name_cat_len;
		if (d->effect == FX_IOCTL) {
			const char *dev = ioctl_name_cat(f.f[0], &name_cat_len);

			if (dev)
				name_cat = dev;
		}
		begin_event(&s->buf, p, t, e->h.tid, name_cat, name_cat_len,
			    e->h.ts, e->dur);
		jb_mem(&s->buf, d->json_syscall_ret, d->json_syscall_ret_len);
		jb_i64(&s->buf, e->ret);
		write_args(&s->buf, d, e);
		if (f.f[0])
			key_file(s, FILE1_KEYS, f.f[0]);
		if (f.f[1])
			key_file(s, FILE2_KEYS, f.f[1]);
		if (d->effect == FX_IOCTL)
			write_ioctl_args(s, e, f.f[0]);
		end_event(s);
	}
	count_op(d, e->ret);
	if (d->moves_bytes && e->ret > 0 && t && phase_top(&t->phases))
		phase_add_bytes(phase_top(&t->phases)->cat,
				phase_top(&t->phases)->name, e->ret);
	apply_effect(p, d, e, &f);
}

static void on_paths(const struct dft_paths *e, size_t size)
{
	const char *data = (const char *)(e + 1);
	size_t avail = size - sizeof(*e), len[2] = { 0, 0 };
	const char *str[2] = { NULL, NULL };

	for (int i = 0, off = 0; i < 2; i++) {
		size_t n = e->len[i];

		if (!n || off + n > avail)
			break;
		str[i] = data + off;
		len[i] = strnlen(str[i], n);
		off += n;
	}
	on_syscall(&e->sc, str, len, e->sc.h.flags);
}

/* ---- lifecycle ---- */

static void close_regions(struct sink *s, struct proc *p, struct thread *t,
			  uint32_t to, uint64_t end_ns, const char *why);

static void write_proc_event(struct proc *p, uint32_t tid, const char *name,
			     uint64_t ts_ns)
{
	char name_cat[64];
	int n = snprintf(name_cat, sizeof(name_cat),
			 "\"name\":\"%s\",\"cat\":\"PROC\",", name);
	struct sink *s = sink_of(p);
	struct thread *t;

	if (!s)
		return;
	t = thread_of(p, tid);
	ensure_names(s, p, t);
	begin_event(&s->buf, p, t, tid, name_cat, n, ts_ns, 0);
}

static void on_fork(const struct dft_fork *e)
{
	struct proc *p = proc_of(e->h.tgid), *c;

	if (!p)
		return;
	if (e->h.flags & DFT_F_FAULT0)
		stats.untracked_children++;
	if (e->h.flags & DFT_F_THREAD) {
		thread_add(e->child_tid, p->pid, e->comm);
		return;
	}
	c = proc_get(e->child_tgid);
	if (!c) {
		c = proc_fork(p, e->child_tgid);
		if (c)
			stats.live++;
	}
	if (c)
		thread_add(e->child_tid, c->pid, e->comm);
}

static void forget_process(struct proc *p, uint32_t tid, uint64_t ts_ns);

/* -D: a file opened before the exec was named after the old program. */
static void rename_after_exec(struct proc *p)
{
	char err[TRACE_ERR_LEN];

	if (cfg.outdir && p->sink &&
	    outdir_rename(cfg.outdir, p->sink, p->comm, err, sizeof(err)))
		fprintf(stderr, "dftrace-bpf: %s\n", err);
}

static void on_exec(const struct dft_exec *e)
{
	struct proc *p = proc_of(e->h.tgid);
	struct thread *t;
	struct sink *s;

	if (!p)
		return;
	/* The old program's regions and context end with it. */
	t = thread_get(e->old_tid);
	if (t && t->phases.depth)
		close_regions(sink_of(p), p, t, 0, e->h.ts, "open_at_exec");
	ctx_free(&p->ctx);
	if (e->old_tid != e->h.tid)
		thread_free(e->old_tid);
	fd_exec(p);
	memcpy(p->comm, e->comm, DFT_COMM_LEN);
	p->comm[DFT_COMM_LEN - 1] = 0;
	p->named = false;
	rename_after_exec(p);
	if (e->argv_len)
		p->cmdline = cmdline_intern(e->argv, e->argv_len,
					    e->argv_len >= DFT_ARGV_MAX);
	t = thread_add(e->h.tid, p->pid, e->comm);
	if (t)
		t->named = false;
	/* A new program may carry annotations. */
	p->exe = procfs_link(p->pid, "exe");
	if (p->exe && !(e->h.flags & DFT_F_PRIVILEGED))
		usdt_offer(p->exe->str);
	s = sink_of(p);
	if (s) {
		if (p->cmdline)
			ensure_sh(s, p->pid, p->cmdline);
		if (p->exe)
			ensure_sh(s, p->pid, p->exe);
		write_proc_event(p, e->h.tid, "exec", e->h.ts);
		if (p->exe)
			KEY_HASH(&s->buf, ",\"exec_hash\":\"", p->exe->hash);
		if (p->cmdline) {
			KEY_HASH(&s->buf, ",\"cmd_hash\":\"", p->cmdline->hash);
			if (cfg.inline_paths) {
				JB_LIT(&s->buf, ",\"cmd\":");
				jb_str(&s->buf, p->cmdline->str, p->cmdline->len);
			}
		}
		if (e->h.flags & DFT_F_PRIVILEGED)
			JB_LIT(&s->buf, ",\"privileged\":true");
		end_event(s);
	}
	/* The kernel side has stopped tracing it: this is its last record. */
	if (e->h.flags & DFT_F_PRIVILEGED) {
		stats.privileged++;
		forget_process(p, e->h.tid, e->h.ts);
	}
}

static void write_lost(struct sink *s, uint32_t pid, const char *op,
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
	static const char *names[] = { [DFT_EV_FORK] = "fork",
				       [DFT_EV_EXEC] = "exec",
				       [DFT_EV_EXIT] = "exit",
				       [DFT_EV_COMM] = "comm",
				       [DFT_EV_ANNOT] = "annotation" };

	return kind < sizeof(names) / sizeof(names[0]) && names[kind] ?
		       names[kind] : "other";
}

/* lost_events metadata for every slot with losses, under pid; returns
 * their sum. Syscalls that share a name (openat, open) share an entry. */
static uint64_t write_lost_table(struct sink *s, uint32_t pid,
				 const uint64_t *lost, size_t nslots)
{
	uint64_t total = 0, by_name[TRACE_MAX_OPS] = { 0 };

	for (size_t i = 0; i < nslots; i++)
		total += lost[i];
	for (size_t i = 0; i < nslots && i < DFT_NR_MAX; i++)
		if (lost[i] && sc_lookup(i) && sc_lookup(i)->silent)
			write_lost(s, pid, sc_lookup(i)->syscall, lost[i]);
		else if (lost[i] && sc_lookup(i))
			by_name[sc_name_index(sc_lookup(i))] += lost[i];
	for (int i = 0; i < sc_nnames(); i++)
		if (by_name[i])
			write_lost(s, pid, sc_name_at(i), by_name[i]);
	for (size_t i = DFT_NR_MAX; i < nslots; i++)
		if (lost[i])
			write_lost(s, pid, kind_name(i - DFT_NR_MAX), lost[i]);
	return total;
}

/* -D: ends a process's file with its losses and the end event. */
static void close_proc_sink(struct proc *p, uint64_t ts_us)
{
	uint64_t lost[DFT_LOST_SLOTS];
	int64_t total = -1;
	char err[TRACE_ERR_LEN];
	struct sink *s;
	int rc;

	if (main_sink)
		return;
	/* A process whose every record was lost still gets a file, whose
	 * start counts them all. */
	s = p->sink || lost_so_far(p->pid) ? sink_of(p) : NULL;
	cfg.proc_lost(p->pid, lost, DFT_LOST_SLOTS, true);
	if (!s)
		return;
	total = write_lost_table(s, p->pid, lost, DFT_LOST_SLOTS);
	stats.lost_in_files += total;
	write_lifecycle(s, "end", p->pid, ts_us, p, total);
	JB_LIT(&s->buf, "]\n");
	rc = outdir_close_file(cfg.outdir, s, err, sizeof(err));
	if (rc)
		write_failed(rc, err);
	p->sink = NULL;
}

/* ---- annotations ---- */

static const struct path *intern_str(const char *s, size_t max)
{
	return path_intern(s, strnlen(s, max), false);
}

/* A region is written when it ends, with the id it took at its begin. */
static void write_region(struct sink *s, struct proc *p, uint32_t tid,
			 const struct phase_stack *st, int idx, uint64_t end_ns,
			 const char *unbalanced)
{
	const struct phase_frame *f = &st->f[idx];
	const struct phase_frame *parent = idx ? &st->f[idx - 1] : NULL;
	struct nesting n = { f->id, idx + 1, parent ? (int64_t)parent->id : -1,
			     parent, st, &f->args };
	uint64_t dur = end_ns > f->ts ? end_ns - f->ts : 0;
	static struct jbuf name_cat;

	jb_reset(&name_cat);
	JB_LIT(&name_cat, "\"name\":");
	jb_str(&name_cat, f->name->str, f->name->len);
	JB_LIT(&name_cat, ",\"cat\":");
	jb_str(&name_cat, f->cat->str, f->cat->len);
	jb_char(&name_cat, ',');
	if (name_cat.err)
		return;
	begin_event_at(&s->buf, p, tid, &n, name_cat.p, name_cat.len, f->ts, dur);
	if (f->count)
		KEY_INT(&s->buf, ",\"count\":", f->count);
	write_entries(&s->buf, &f->args);
	if (unbalanced) {
		JB_LIT(&s->buf, ",\"unbalanced\":");
		jb_str(&s->buf, unbalanced, strlen(unbalanced));
	}
	end_event(s);
	phase_add_time(f->cat, f->name, dur);
}

/* Ends every region from the innermost down to depth `to`. */
static void close_regions(struct sink *s, struct proc *p, struct thread *t,
			  uint32_t to, uint64_t end_ns, const char *why)
{
	while (t->phases.depth > to) {
		if (s)
			write_region(s, p, t->tid, &t->phases, t->phases.depth - 1,
				     end_ns, why);
		phase_pop(&t->phases);
	}
}

static void on_region_end(struct sink *s, struct proc *p, struct thread *t,
			  const struct dft_annot *e)
{
	int idx = phase_find(&t->phases, intern_str(e->cat, DFT_CAT_LEN),
			     intern_str(e->name, DFT_NAME_LEN));

	if (idx < 0) {
		/* Keep the stray end visible, as an empty event. */
		struct phase_frame *f = phase_push(&t->phases);

		if (!f)
			return;
		*f = (struct phase_frame){ intern_str(e->cat, DFT_CAT_LEN),
					   intern_str(e->name, DFT_NAME_LEN),
					   e->h.ts, p->next_id++, e->value, { 0 } };
		close_regions(s, p, t, t->phases.depth - 1, e->h.ts,
			      "end_without_begin");
		return;
	}
	close_regions(s, p, t, idx + 1, e->h.ts, "ended_by_outer_end");
	close_regions(s, p, t, idx, e->h.ts, NULL);
}

static void write_meta_mark(struct sink *s, struct proc *p, uint32_t tid,
			    const struct dft_annot *e)
{
	struct jbuf *b = &s->buf;
	char value[24], mark[DFT_NAME_LEN + 8];
	int n = snprintf(value, sizeof(value), "%llu",
			 (unsigned long long)trace_wall_us(e->h.ts));
	int m = snprintf(mark, sizeof(mark), "%.*s%s", DFT_NAME_LEN, e->name,
			 e->value ? ".end" : ".start");

	JB_LIT(b, "{\"id\":");
	jb_u64(b, p->next_id);
	JB_LIT(b, ",\"name\":\"CM\",\"cat\":\"dftracer\",\"pid\":");
	jb_u64(b, p->pid);
	JB_LIT(b, ",\"tid\":");
	jb_u64(b, tid);
	JB_LIT(b, ",\"ph\":\"M\",\"args\":{\"hhash\":\"");
	jb_mem(b, hhash_hex, 16);
	JB_LIT(b, "\",\"name\":");
	jb_str(b, mark, m);
	JB_LIT(b, ",\"value\":\"");
	jb_mem(b, value, n);
	JB_LIT(b, "\"}}\n");
}

/* Reads a string the kernel side could not (its page was not in yet);
 * process_vm_readv faults it in. Empty if the process is gone. */
static void read_remote_str(uint32_t pid, uint64_t addr, char *dst, size_t size)
{
	struct iovec local = { dst, size - 1 }, remote = { (void *)addr, size - 1 };
	ssize_t n;

	/* Stay inside the page the string starts in, then try the rest. */
	remote.iov_len = local.iov_len = 4096 - (addr & 4095) < size - 1 ?
						 4096 - (addr & 4095) : size - 1;
	n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	if (n > 0 && (size_t)n < size - 1 && !memchr(dst, 0, n)) {
		struct iovec l2 = { dst + n, size - 1 - n }, r2 = { (void *)(addr + n), size - 1 - n };
		ssize_t m = process_vm_readv(pid, &l2, 1, &r2, 1, 0);

		if (m > 0)
			n += m;
	}
	dst[n > 0 ? n : 0] = 0;
}

static bool in_list(const char *k, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(k, list[i]))
			return true;
	return false;
}

#define IN_LIST(k, list) in_list((k), (list), sizeof(list) / sizeof((list)[0]))

/*
 * A user's key that the writer also puts in the same event's args would
 * repeat a JSON key: it is written user_<key> instead. A region's own args
 * go on its event only; the process context goes on every event, I/O and
 * ioctls included.
 */
static const struct path *user_key(const char *k, bool context)
{
	static const char *const region_keys[] = {
		"hhash", "level", "p_idx", "phase", "phase_cat", "count",
		"unbalanced",
	};
	static const char *const event_keys[] = {
		"syscall", "ret", "fhash", "fhash2", "fname", "fname2",
		"fname_truncated", "fname2_truncated", "dir", "type", "nr",
		"size", "req_name", "device", "kind", "exit_code", "signal",
		"core_dumped", "privileged", "cmd",
		"cmd_hash", "exec_hash", "cwd", "ppid", "date", "version",
		"num_events", "lost",
	};
	char renamed[DFT_CAT_LEN + 8];
	size_t n = strnlen(k, DFT_CAT_LEN);
	bool clash = IN_LIST(k, region_keys) ||
		     (context && (IN_LIST(k, event_keys) || sc_is_arg_key(k)));

	if (!clash)
		return path_intern(k, n, false);
	n = snprintf(renamed, sizeof(renamed), "user_%.*s", (int)n, k);
	return path_intern(renamed, n, false);
}

static void on_annot(const struct dft_annot *in)
{
	struct dft_annot copy, *e = (struct dft_annot *)in;
	struct proc *p = proc_of(in->h.tgid);

	if (in->h.flags & (DFT_F_FAULT0 | DFT_F_FAULT1)) {
		copy = *in;
		if (in->h.flags & DFT_F_FAULT0)
			read_remote_str(in->h.tgid, in->cat_ptr, copy.cat, sizeof(copy.cat));
		if (in->h.flags & DFT_F_FAULT1)
			read_remote_str(in->h.tgid, in->name_ptr, copy.name, sizeof(copy.name));
		e = &copy;
	}
	struct thread *t;
	struct phase_frame *f;
	struct sink *s;

	if (!p || !(t = thread_of(p, e->h.tid)))
		return;
	s = sink_of(p);
	if (s)
		ensure_names(s, p, t);
	switch (e->h.nr) {
	case DFT_ANNOT_BEGIN:
		f = phase_push(&t->phases);
		if (f)
			*f = (struct phase_frame){ intern_str(e->cat, DFT_CAT_LEN),
						   intern_str(e->name, DFT_NAME_LEN),
						   e->h.ts, p->next_id++, e->value, { 0 } };
		break;
	case DFT_ANNOT_ARG_INT:
	case DFT_ANNOT_ARG_STR:
		f = phase_top(&t->phases);
		if (f && e->cat[0])
			ctx_set(&f->args, user_key(e->cat, false),
				e->h.nr == DFT_ANNOT_ARG_STR ?
					intern_str(e->name, DFT_NAME_LEN) : NULL,
				e->value);
		break;
	case DFT_ANNOT_END:
		on_region_end(s, p, t, e);
		break;
	case DFT_ANNOT_META:
		if (s)
			write_meta_mark(s, p, e->h.tid, e);
		break;
	case DFT_ANNOT_CTX_INT:
		if (e->cat[0])
			ctx_set(&p->ctx, user_key(e->cat, true), NULL, e->value);
		break;
	case DFT_ANNOT_CTX_STR:
		if (e->cat[0])
			ctx_set(&p->ctx, user_key(e->cat, true),
				intern_str(e->name, DFT_NAME_LEN), 0);
		break;
	case DFT_ANNOT_CTX_CLEAR:
		ctx_clear(&p->ctx, e->cat[0] ? user_key(e->cat, true) : NULL);
		break;
	}
}

/* wait(2) status as a shell reports it: exit_code, and the signal. */
static void write_exit_status(struct jbuf *b, int status)
{
	if (WIFSIGNALED(status)) {
		KEY_INT(b, ",\"exit_code\":", 128 + WTERMSIG(status));
		KEY_INT(b, ",\"signal\":", WTERMSIG(status));
		if (WCOREDUMP(status))
			JB_LIT(b, ",\"core_dumped\":true");
	} else {
		KEY_INT(b, ",\"exit_code\":", WEXITSTATUS(status));
	}
}

/* No more records will come from p: its file ends, its state goes. */
static void forget_process(struct proc *p, uint32_t tid, uint64_t ts_ns)
{
	thread_free(tid);
	close_proc_sink(p, trace_wall_us(ts_ns));
	proc_free(p);
	if (stats.live)
		stats.live--;
}

static void on_exit_record(const struct dft_exit *e)
{
	struct proc *p = proc_get(e->h.tgid);
	struct thread *t = thread_get(e->h.tid);
	struct sink *s;

	if (p && t && t->phases.depth)
		close_regions(sink_of(p), p, t, 0, e->h.ts, "open_at_exit");
	if (!p || !(e->h.flags & DFT_F_GROUP_DEAD)) {
		thread_free(e->h.tid);
		return;
	}
	s = sink_of(p);
	if (s) {
		write_proc_event(p, e->h.tid, "exit", e->h.ts);
		write_exit_status(&s->buf, e->exit_code);
		end_event(s);
	}
	forget_process(p, e->h.tid, e->h.ts);
}

static void on_comm(const struct dft_comm *e)
{
	struct proc *p = proc_of(e->h.tgid);
	struct thread *t;

	if (!p)
		return;
	t = thread_add(e->h.tid, p->pid, e->comm);
	if (t)
		t->named = false;
	if (e->h.tid == p->pid) {
		memcpy(p->comm, e->comm, DFT_COMM_LEN);
		p->comm[DFT_COMM_LEN - 1] = 0;
		p->named = false;
	}
}

int trace_handle_record(void *ctx, void *data, size_t size)
{
	const struct dft_header *h = data;

	stats.records++;
	if (size < sizeof(*h))
		return 0;
	switch (h->kind) {
	case DFT_EV_SYSCALL:
		if (size >= sizeof(struct dft_syscall)) {
			const char *str[2] = { NULL, NULL };
			size_t len[2] = { 0, 0 };

			on_syscall(data, str, len, 0);
		}
		break;
	case DFT_EV_PATHS:
		if (size >= sizeof(struct dft_paths))
			on_paths(data, size);
		break;
	case DFT_EV_FORK:
		if (size >= sizeof(struct dft_fork))
			on_fork(data);
		break;
	case DFT_EV_EXEC:
		if (size >= sizeof(struct dft_exec))
			on_exec(data);
		break;
	case DFT_EV_EXIT:
		if (size >= sizeof(struct dft_exit))
			on_exit_record(data);
		break;
	case DFT_EV_COMM:
		if (size >= sizeof(struct dft_comm))
			on_comm(data);
		break;
	case DFT_EV_ANNOT:
		if (size >= sizeof(struct dft_annot))
			on_annot(data);
		break;
	}
	return 0;
}

/* ---- start, end, setup ---- */

static void write_lifecycle(struct sink *s, const char *name, uint32_t pid,
			    uint64_t ts_us, const struct proc *p, int64_t lost)
{
	struct jbuf *b = &s->buf;
	struct path *cmd = cfg.cmdline ? path_intern(cfg.cmdline,
						     strlen(cfg.cmdline), false) :
					 NULL;
	time_t now = time(NULL);
	char date[64];

	if (sink_first_sight(s, host_hash))
		write_hash_meta(s, "HH", pid, host, strlen(host), host_hash);
	if (!p)
		p = &root;
	if (cmd)
		ensure_sh(s, pid, cmd);
	if (p->exe)
		ensure_sh(s, pid, p->exe);
	JB_LIT(b, "{\"id\":0,\"name\":\"");
	jb_mem(b, name, strlen(name));
	JB_LIT(b, "\",\"cat\":\"dftracer\",\"pid\":");
	jb_u64(b, pid);
	JB_LIT(b, ",\"tid\":");
	jb_u64(b, pid);
	JB_LIT(b, ",\"ts\":");
	jb_u64(b, ts_us);
	JB_LIT(b, ",\"dur\":0,\"ph\":\"X\",\"args\":{\"hhash\":\"");
	jb_mem(b, hhash_hex, 16);
	JB_LIT(b, "\",\"version\":\"" DFTRACE_VERSION "\"");
	if (cmd) {
		KEY_HASH(b, ",\"cmd_hash\":\"", cmd->hash);
		JB_LIT(b, ",\"cmd\":");
		jb_str(b, cmd->str, cmd->len);
	}
	if (p->exe)
		KEY_HASH(b, ",\"exec_hash\":\"", p->exe->hash);
	if (p->cwd) {
		JB_LIT(b, ",\"cwd\":");
		jb_str(b, p->cwd->str, p->cwd->len);
	}
	if (p->ppid)
		KEY_INT(b, ",\"ppid\":", p->ppid);
	strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
	JB_LIT(b, ",\"date\":");
	jb_str(b, date, strlen(date));
	if (!strcmp(name, "end"))
		KEY_INT(b, ",\"num_events\":", s->events);
	if (lost >= 0)
		KEY_INT(b, ",\"lost\":", lost);
	JB_LIT(b, "}}\n");
}

/* What the single file's start and end say of the traced program: the
 * first process as it is (-p), or as it will be once it execs (-- CMD). */
static void describe_root(void)
{
	char state;
	pid_t ppid;

	root.pid = cfg.root_pid;
	if (cfg.root_exe)
		root.exe = path_intern(cfg.root_exe, strlen(cfg.root_exe), false);
	else if (!cfg.root_launched)
		root.exe = procfs_link(cfg.root_pid, "exe");
	root.cwd = procfs_link(cfg.root_pid, "cwd");
	if (procfs_stat(cfg.root_pid, &state, &ppid, NULL) == 0 && ppid > 0)
		root.ppid = ppid;
}

int trace_init(const struct trace_config *config, struct sink *sink)
{
	struct timespec now;
	int err;

	cfg = *config;
	main_sink = sink;
	measure_clock_offset();
	err = sc_init();
	if (err)
		return err;
	if (gethostname(host, sizeof(host) - 1))
		strcpy(host, "localhost");
	host_hash = dft_hash64(host, strlen(host));
	key_epoch = path_intern("epoch", 5, false);
	key_step = path_intern("step", 4, false);
	hex16(hhash_hex, host_hash);
	if (main_sink) {
		describe_root();
		JB_LIT(&main_sink->buf, "[\n");
		clock_gettime(CLOCK_REALTIME, &now);
		write_lifecycle(main_sink, "start", cfg.root_pid,
				now.tv_sec * 1000000ull + now.tv_nsec / 1000,
				NULL, 0); /* nothing is traced yet */
	}
	return 0;
}

void trace_adopt(uint32_t pid)
{
	proc_of(pid);
}

static void close_each(struct proc *p, void *ctx)
{
	close_proc_sink(p, *(uint64_t *)ctx);
}

void trace_finish(const uint64_t *lost, size_t nslots)
{
	struct timespec now;
	uint64_t now_us, total;

	clock_gettime(CLOCK_REALTIME, &now);
	now_us = now.tv_sec * 1000000ull + now.tv_nsec / 1000;
	if (main_sink) {
		total = write_lost_table(main_sink, cfg.root_pid, lost, nslots);
		write_lifecycle(main_sink, "end", cfg.root_pid, now_us, NULL, total);
		JB_LIT(&main_sink->buf, "]\n");
	}
	procs_each(close_each, &now_us);
	total = 0;
	for (size_t i = 0; i < nslots; i++)
		total += lost[i];
	if (cfg.outdir)
		stats.files_reopened = cfg.outdir->suspensions;
	if (cfg.proc_lost && total > stats.lost_in_files)
		stats.lost_elsewhere = total - stats.lost_in_files;
}

static void flush_each(struct proc *p, void *ctx)
{
	int *ret = ctx;

	if (p->sink && sink_flush(p->sink) && !*ret)
		*ret = -EIO;
}

int trace_flush(void)
{
	int ret = 0;

	if (main_sink)
		ret = sink_flush(main_sink);
	else
		procs_each(flush_each, &ret);
	if (ret && !stats.write_error)
		stats.write_error = ret;
	return ret;
}

const struct trace_stats *trace_stats(void)
{
	return &stats;
}
