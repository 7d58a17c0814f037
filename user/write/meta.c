// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The lines that are not X events of the traced program: FH, SH and HH
 * (with the host's hash, as DFTracer writes them), process_name and
 * thread_name, CM marks, lost_events, and the start and end events.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "lib/hash.h"
#include "version.h"
#include "write/keys.h"
#include "write/v2.h"
#include "write/writer.h"

/* ---- metadata lines ---- */

/* v2's metadata record, DFTracer's order, up to and with args.hhash:
 * {"name":..,"cat":"dftracer","type":..,"pid":..,"tid":..,"ph":4,"args":
 * {"hhash":"..." */
static void meta_head_v2(const struct writer *w, struct jbuf *b, const char *name,
			 enum v2_type type, uint32_t pid, uint32_t tid)
{
	JB_LIT(b, "{\"name\":\"");
	jb_mem(b, name, strlen(name));
	JB_LIT(b, "\",\"cat\":\"dftracer\",\"type\":");
	jb_u64(b, type);
	JB_LIT(b, ",\"pid\":");
	jb_u64(b, pid);
	JB_LIT(b, ",\"tid\":");
	jb_u64(b, tid);
	JB_LIT(b, ",\"ph\":" V2_STR(V2_PH_METADATA) ",\"args\":{\"hhash\":\"");
	jb_mem(b, w->hhash_hex, 16);
	jb_char(b, '"');
}

/* A metadata line's head up to and with args' "name": v2's, or v1's
 * ("ph":"M", args.hhash only where v1 has it: FH, SH, HH). */
static void meta_head(const struct writer *w, struct jbuf *b, const char *name,
		      uint32_t pid, bool v1_hhash)
{
	if (w->v2) {
		meta_head_v2(w, b, name, V2_DFTRACER, pid, pid);
		JB_LIT(b, ",\"name\":");
		return;
	}
	JB_LIT(b, "{\"name\":\"");
	jb_mem(b, name, strlen(name));
	JB_LIT(b, "\",\"cat\":\"dftracer\",\"pid\":");
	jb_u64(b, pid);
	JB_LIT(b, ",\"tid\":");
	jb_u64(b, pid);
	JB_LIT(b, ",\"ph\":\"M\",\"args\":{");
	if (v1_hhash) {
		JB_LIT(b, "\"hhash\":\"");
		jb_mem(b, w->hhash_hex, 16);
		JB_LIT(b, "\",");
	}
	JB_LIT(b, "\"name\":");
}

/* FH, SH and HH, with the host's hash as DFTracer writes them. */
static void write_hash_meta(struct writer *w, struct sink *s, const char *kind,
			    uint32_t pid, const char *str, size_t len,
			    uint64_t hash)
{
	struct jbuf *b = &s->buf;

	meta_head(w, b, kind, pid, true);
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

static void write_name_meta(const struct writer *w, struct sink *s, const char *what,
			    uint32_t pid, uint32_t tid, const char *name)
{
	struct jbuf *b = &s->buf;

	if (w->v2) {
		meta_head_v2(w, b, what, V2_DFTRACER, pid, tid);
		JB_LIT(b, ",\"name\":");
		jb_str(b, name, strnlen(name, DFT_COMM_LEN));
		JB_LIT(b, "}}\n");
		return;
	}
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

/* True if the name was written (new, or changed). */
static bool name_once(const struct writer *w, struct sink *s, const char *what, uint64_t key,
		      uint32_t pid, uint32_t tid, const char *comm)
{
	uint64_t h = dft_hash64(comm, strnlen(comm, DFT_COMM_LEN)), had;

	if (hmap_get(&s->named, key, &had) && had == h)
		return false;
	if (hmap_put(&s->named, key, h))
		return false;
	write_name_meta(w, s, what, pid, tid, comm);
	return true;
}

/* DFTracer's process info line: {"name":"PR",...,"args":{"name":"rank",
 * "value":"3"}}. */
static void write_pr(const struct writer *w, struct sink *s, uint32_t pid, const char *key,
		     int value)
{
	struct jbuf *b = &s->buf;

	meta_head(w, b, "PR", pid, false);
	jb_char(b, '"');
	jb_mem(b, key, strlen(key));
	JB_LIT(b, "\",\"value\":\"");
	jb_u64(b, value);
	JB_LIT(b, "\"}}\n");
}

/* A process's place in its job, with its name (and again after an exec). */
static void write_job(const struct writer *w, struct sink *s, const struct proc *p)
{
	if (p->job.rank < 0)
		return;
	write_pr(w, s, p->pid, "rank", p->job.rank);
	if (p->job.world > 0)
		write_pr(w, s, p->pid, "world_size", p->job.world);
	if (p->job.local_rank >= 0)
		write_pr(w, s, p->pid, "local_rank", p->job.local_rank);
}

void writer_names(const struct writer *w, struct sink *s, const struct proc *p,
		  const struct thread *t)
{
	struct sink_named *last = &s->last_named;
	uint32_t tid = t ? t->tid : 0;

	/* Most events come from the thread of the one before. */
	if (last->pid == p->pid && last->tid == tid &&
	    !memcmp(last->comm, p->comm, DFT_COMM_LEN) &&
	    (!t || !memcmp(last->thread_comm, t->comm, DFT_COMM_LEN)))
		return;
	if (name_once(w, s, "process_name", NAMED_PROCESS | p->pid, p->pid, p->pid,
		      p->comm))
		write_job(w, s, p);
	if (t)
		name_once(w, s, "thread_name", NAMED_THREAD | t->tid, p->pid, t->tid,
			  t->comm);
	last->pid = p->pid;
	last->tid = tid;
	memcpy(last->comm, p->comm, DFT_COMM_LEN);
	if (t)
		memcpy(last->thread_comm, t->comm, DFT_COMM_LEN);
}

void writer_forget_names(struct sink *s, uint32_t pid, uint32_t tid)
{
	if (pid)
		hmap_del(&s->named, NAMED_PROCESS | pid, NULL);
	hmap_del(&s->named, NAMED_THREAD | tid, NULL);
	if (s->last_named.tid == tid)
		s->last_named = (struct sink_named){ 0 };
}

/* ---- CM marks ---- */

/* v1's CM head, up to and with args.hhash: as pydftracer, with the id of
 * the enclosing region, none at the top. */
static void cm_head_v1(const struct writer *w, struct jbuf *b, uint32_t pid, uint32_t tid,
		       const struct phase_frame *top)
{
	jb_char(b, '{');
	if (top) {
		JB_LIT(b, "\"id\":");
		jb_u64(b, top->id);
		jb_char(b, ',');
	}
	JB_LIT(b, "\"name\":\"CM\",\"cat\":\"dftracer\",\"pid\":");
	jb_u64(b, pid);
	JB_LIT(b, ",\"tid\":");
	jb_u64(b, tid);
	JB_LIT(b, ",\"ph\":\"M\",\"args\":{\"hhash\":\"");
	jb_mem(b, w->hhash_hex, 16);
	jb_char(b, '"');
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

	if (w->v2) /* v2: no id but on complete records */
		meta_head_v2(w, b, "CM", V2_PYTHON, p->pid, t ? t->tid : p->pid);
	else
		cm_head_v1(w, b, p->pid, t ? t->tid : p->pid, top);
	JB_LIT(b, ",\"name\":");
	jb_str(b, mark, m);
	JB_LIT(b, ",\"value\":\"");
	jb_mem(b, value, n);
	JB_LIT(b, "\"}}\n");
}

/* ---- start, end, losses ---- */

/* --steps: the schedule, and at the end the active steps it covered. */
static void write_window(struct jbuf *b, const struct step_window *win, bool end)
{
	char text[512];

	window_spec_text(win, text, sizeof(text));
	JB_KEY_STR(b, steps, text, strlen(text));
	if (!end)
		return;
	window_seen_text(win, text, sizeof(text));
	JB_KEY_STR(b, steps_active, text, strlen(text));
}

/* The head of one of the tracer's own events (start, end, flight), up to
 * and with args.hhash. */
static void write_tracer_event(struct writer *w, struct jbuf *b, uint64_t id,
			       const char *name, uint32_t pid, uint32_t tid, uint64_t ts_us)
{
	JB_LIT(b, "{\"id\":");
	jb_u64(b, id);
	JB_LIT(b, ",\"name\":\"");
	jb_mem(b, name, strlen(name));
	JB_LIT(b, "\",\"cat\":\"dftracer\",");
	if (w->v2) {
		JB_LIT(b, "\"type\":");
		jb_u64(b, V2_DFTRACER);
		jb_char(b, ',');
	}
	JB_LIT(b, "\"pid\":");
	jb_u64(b, pid);
	JB_LIT(b, ",\"tid\":");
	jb_u64(b, tid);
	JB_LIT(b, ",\"ts\":");
	jb_u64(b, ts_us);
	if (w->v2)
		JB_LIT(b, ",\"dur\":0,\"ph\":" V2_STR(V2_PH_COMPLETE) ",\"args\":{\"hhash\":\"");
	else
		JB_LIT(b, ",\"dur\":0,\"ph\":\"X\",\"args\":{\"hhash\":\"");
	jb_mem(b, w->hhash_hex, 16);
	jb_char(b, '"');
}

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
	write_tracer_event(w, b, l->id, name, l->pid, l->pid, l->ts_us);
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
	if (l->rank >= 0 || w->rank >= 0)
		JB_KEY_INT(b, rank, l->rank >= 0 ? l->rank : w->rank);
	if (l->world_size > 0 || w->world_size > 0)
		JB_KEY_INT(b, world_size, l->world_size > 0 ? l->world_size : w->world_size);
	if (w->window && w->window->on)
		write_window(b, w->window, !strcmp(name, "end"));
	if (w->features)
		JB_KEY_STR(b, features, w->features, strlen(w->features));
	strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
	JB_KEY_STR(b, date, date, strlen(date));
	if (!strcmp(name, "end"))
		JB_KEY_INT(b, num_events, s->events);
	if (!strcmp(name, "end") && w->v2)
		v2_end_objects(b, w->cfg, s->layers);
	if (!strcmp(name, "end") && w->flight) {
		JB_KEY_INT(b, flight_dumps, w->flight->dumps);
		JB_KEY_INT(b, flight_skipped, w->flight->skipped);
	}
	if (lost >= 0)
		JB_KEY_INT(b, lost, lost);
	JB_LIT(b, "}}\n");
	if (!strcmp(name, "end"))
		sink_line_end(s, SINK_LAST);
}

void writer_start(struct writer *w, struct sink *s, const struct lifecycle *l,
		  int64_t lost)
{
	if (!w->v2) /* v2 is one object a line, and nothing else */
		JB_LIT(&s->buf, "[\n");
	write_lifecycle(w, s, "start", l, lost);
}

void writer_end(struct writer *w, struct sink *s, const struct lifecycle *l,
		int64_t lost)
{
	write_lifecycle(w, s, "end", l, lost);
	if (!w->v2)
		JB_LIT(&s->buf, "]\n");
}

void writer_flight(struct writer *w, struct sink *s, const struct flight_record *r)
{
	struct jbuf *b = &s->buf;

	sink_meta_so_far(s);
	write_tracer_event(w, b, r->id, "flight", r->pid, r->tid, writer_wall_us(w, r->at_ns));
	JB_KEY_STR(b, reason, r->reason, strlen(r->reason));
	JB_KEY_INT(b, dump, r->dump);
	JB_KEY_INT(b, window_from, writer_wall_us(w, r->from_ns));
	JB_KEY_INT(b, window_to, writer_wall_us(w, r->to_ns));
	JB_KEY_INT(b, window_s, r->keep_ns / 1000000000ull);
	JB_KEY_INT(b, window_events, r->events);
	if (r->has_step)
		JB_KEY_INT(b, trigger_step, r->step);
	if (r->dur_ns)
		JB_KEY_INT(b, trigger_dur_ns, r->dur_ns);
	if (r->median_ns)
		JB_KEY_INT(b, median_ns, r->median_ns);
	if (r->file)
		JB_KEY_HASH(b, fhash, r->file->hash);
	if (r->capped)
		JB_LIT(b, KEY(capped) "true");
	JB_LIT(b, "}}\n");
	sink_line_end(s, SINK_META);
}

static void write_lost_line(const struct writer *w, struct sink *s, uint32_t pid,
			    const char *op, uint64_t n)
{
	struct jbuf *b = &s->buf;

	meta_head(w, b, "lost_events", pid, false);
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
		[DFT_EV_ANNOT] = "annotation", [DFT_EV_MMAP] = "mmap_run",
		[DFT_EV_ASYNC] = "async_io", [DFT_EV_FILEID] = "file_name",
		[DFT_EV_FOLD] = "fold", [DFT_EV_URING_SUBMIT] = "io_uring_submit",
		[DFT_EV_URING_DONE] = "io_uring_done",
		[DFT_EV_FDS_LOST] = "fds_lost", [DFT_EV_GPU] = "gpu_call",
		[DFT_EV_RING_TIME] = "ring_bad_time",
	};

	return kind < DFT_EV__COUNT && names[kind] ? names[kind] : "other";
}

/* Syscalls that share a name (openat, open) share an entry. */
uint64_t writer_lost(const struct writer *w, struct sink *s, uint32_t pid, const uint64_t *lost,
		     size_t nslots)
{
	uint64_t total = 0, by_name[TRACE_MAX_OPS] = { 0 };

	for (size_t i = 0; i < nslots; i++)
		total += lost[i];
	for (size_t i = 0; i < nslots && i < DFT_NR_MAX; i++)
		if (lost[i] && sc_lookup(i) && sc_lookup(i)->silent)
			write_lost_line(w, s, pid, sc_lookup(i)->syscall, lost[i]);
		else if (lost[i] && sc_lookup(i))
			by_name[sc_name_index(sc_lookup(i))] += lost[i];
	for (int i = 0; i < sc_nnames(); i++)
		if (by_name[i])
			write_lost_line(w, s, pid, sc_name_at(i), by_name[i]);
	for (size_t i = DFT_NR_MAX; i < nslots; i++)
		if (lost[i])
			write_lost_line(w, s, pid, kind_name(i - DFT_NR_MAX), lost[i]);
	return total;
}
