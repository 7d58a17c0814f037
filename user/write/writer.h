/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The DFTracer line writer: every line a trace holds, in one place. X
 * events (syscalls, regions, process events, start and end), the metadata
 * lines (FH, SH, HH, process_name, thread_name, lost_events) and CM marks.
 * It knows the keys it writes, so the annotations ask it which user keys
 * would clash (writer_owns_key). Lines go into a sink's buffer; which sink
 * is the routing's business (write/files.c).
 */
#ifndef WRITE_WRITER_H
#define WRITE_WRITER_H

#include <stdbool.h>
#include <stdint.h>
#include "dftrace.h"
#include "model/ioctl_decode.h"
#include "model/procs.h"
#include "model/stats.h"
#include "model/syscalls.h"
#include "model/window.h"
#include "write/keys.h"
#include "write/sink.h"

/* --flight's dumps written and skipped, for the end event. */
struct flight_counts {
	uint64_t dumps, skipped;
};

struct writer {
	int64_t clock_offset_ns;	/* CLOCK_REALTIME - CLOCK_MONOTONIC */
	char hhash_hex[17];
	uint64_t host_hash;
	char host[256];
	bool inline_paths;		/* -P: args.fname beside args.fhash */
	const struct istr *cmdline;	/* what was traced, for start/end */
	int rank, world_size;		/* the job's, from our environment; -1 */
	const struct step_window *window;	/* --steps, for start and end */
	const char *features;	/* the kernel's, for start and end; or NULL */
	const struct istr *key_epoch, *key_step;
	struct trace_stats *stats;	/* counts the events written */
	const struct flight_counts *flight;	/* --flight's, for end; or NULL */
	struct jbuf scratch;		/* a region's "name":..,"cat":.. */
	bool v2;			/* --format v2 (lib/traceformat.h) */
	const char *cfg;		/* v2's end: args.cfg's inside, or NULL */
};

int writer_init(struct writer *w, const char *cmdline, bool inline_paths,
		struct trace_stats *stats);
void writer_free(struct writer *w);
/* CLOCK_MONOTONIC ns to wall-clock µs, as in the trace. */
uint64_t writer_wall_us(const struct writer *w, uint64_t mono_ns);
/* Wall-clock µs now. */
uint64_t writer_now_us(void);

/* Where an event sits among its thread's annotated regions. */
struct nesting {
	uint64_t id;
	int level;		/* DFTracer's level: 1 at the top */
	int64_t parent_id;	/* DFTracer's p_idx: -1 at the top */
	struct phase_frame *phase; /* innermost enclosing region */
	const struct phase_stack *stack; /* all the enclosing regions */
	const struct phase_ctx *own;	/* a region event's own args, or NULL */
};

/* A new event inside whatever the thread has open: takes the process's
 * next id. */
struct nesting nest_in(struct proc *p, struct thread *t);

/* The metadata a line about p/t needs first: process_name and
 * thread_name (again after a rename), FH and SH of the strings. */
void writer_names(const struct writer *w, struct sink *s, const struct proc *p,
		  const struct thread *t);
/* A thread (and, pid non-zero, its process) has ended: what was written
 * of its names is forgotten, so that a long trace keeps no state of
 * processes that are gone (a reused id is named again). */
void writer_forget_names(struct sink *s, uint32_t pid, uint32_t tid);
void writer_fh(struct writer *w, struct sink *s, uint32_t pid,
	       const struct istr *path);
void writer_sh(struct writer *w, struct sink *s, uint32_t pid,
	       const struct istr *str);

/* An X event: the head up to and with the context args; the caller adds
 * its own args, then writer_end_event() closes it. name_cat is the
 * ready-made "name":"...","cat":"...", fragment. */
void writer_begin_event(struct writer *w, struct sink *s, const struct proc *p,
			uint32_t tid, const struct nesting *n,
			const char *name_cat, size_t name_cat_len,
			uint64_t ts_ns, uint64_t dur_ns);
/* Returns non-zero when the sink could not take the line. */
int writer_end_event(struct sink *s);

/* The pieces of an X event, for the events a flight window keeps as
 * records and writes at a dump (write/flightrec.c): the same bytes
 * either way. */
struct event_head {
	uint64_t id;
	int level;
	int64_t parent_id;
	uint32_t pid, tid;
	uint64_t ts_ns, dur_ns;	/* CLOCK_MONOTONIC */
};

/* {"id":..,"name":..,"cat":..,"pid":..,"tid":..,"ts":..,"dur":..,"ph":"X",
 * "args":{"hhash":..,"level":..,"p_idx":..,"ns10d":.. (v2: "type":.. after
 * cat, "ph":1). Returns the event's v2 layer (0 in v1). */
int writer_head(const struct writer *w, struct jbuf *b, const struct event_head *h,
		 const char *name_cat, size_t name_cat_len);
/* ,"phase_cat":..,"phase":.. and the context keys (epoch, step, the
 * process's) of an event nested as n. */
void writer_context(const struct writer *w, struct jbuf *b, const struct proc *p,
		    const struct nesting *n);
/* A number that differs where writer_context() would write differently
 * (64-bit hashes of the strings); 0: it writes nothing. */
uint64_t writer_context_key(const struct writer *w, const struct proc *p,
			    const struct nesting *n);
/* s takes an event of thread tid that ends at end_ns: what was written
 * before it is metadata, and the event is counted. */
void writer_event_starts(struct writer *w, struct sink *s, uint32_t tid,
			 uint64_t end_ns);

/* A file an event names: its hash, and its name where -P writes it. */
struct file_ref {
	uint64_t hash;
	bool truncated;
	const struct istr *path;	/* NULL: not written */
};

/* A syscall event's "name":..,"cat":.. fragment. */
void writer_syscall_name(const struct sc_desc *d, enum dev_class cls,
			 const char **name_cat, size_t *len);
/* A syscall event's args after the head and the context. */
void writer_syscall_args(const struct writer *w, struct jbuf *b, const struct sc_desc *d,
			 const struct dft_syscall *e, const struct file_ref *f1,
			 const struct file_ref *f2, enum dev_class cls);

/* One syscall's event, files resolved (f1, f2 may be NULL). */
void writer_syscall(struct writer *w, struct sink *s, const struct proc *p,
		    const struct thread *t, const struct nesting *n,
		    const struct sc_desc *d, const struct dft_syscall *e,
		    const struct istr *f1, const struct istr *f2);
/* A PROC event (fork, exec, exit) left open for its args. */
void writer_proc_event(struct writer *w, struct sink *s, const struct proc *p,
		       uint32_t tid, const struct nesting *n, const char *name,
		       uint64_t ts_ns);
void writer_exec_args(struct writer *w, struct sink *s, const struct proc *p,
		      bool privileged);
/* wait(2) status as a shell reports it: exit_code, signal, core_dumped. */
void writer_exit_args(struct sink *s, int status);
/* A region, written when it ends with the id it took at its begin. */
void writer_region(struct writer *w, struct sink *s, const struct proc *p,
		   uint32_t tid, const struct phase_stack *st, int idx,
		   uint64_t end_ns, const char *unbalanced);
/* A CM mark "<name>.start"/".end" with the id of the enclosing region. */
void writer_cm(struct writer *w, struct sink *s, const struct proc *p,
	       const struct thread *t, const char *name, bool is_end,
	       uint64_t ts_ns);

/* An argument of an event the kernel or a call table names (I/O
 * outside syscalls, GPU calls): a number, or a string. The key is a
 * literal (IO_ARG, GPU_ARG): a flight record keeps its address. */
struct event_arg {
	const char *key;	/* ,"pages": */
	size_t key_len;
	int64_t v;
	const struct istr *str;	/* a string value instead, or NULL */
};

#define EVENT_ARG(k, val, s) { KEY(k), sizeof(KEY(k)) - 1 + 0 * WK_##k, (val), (s) }

/* Such an event: "name":name,"cat":cat, then ret, op, the args, the
 * file. name, cat and op are literals or the call tables' (a flight
 * record keeps their addresses). */
struct named_event {
	const char *name, *cat, *op;	/* op: args.op, or NULL */
	uint64_t ts_ns, dur_ns;	/* CLOCK_MONOTONIC */
	int64_t ret;
	const struct file_ref *file;	/* or NULL */
	const struct event_arg *args;
	int nargs;
};

/* Its "name":..,"cat":.., fragment into buf: the length. */
int writer_named_name(const struct named_event *ev, char *buf, size_t size);
/* Its args after the head and the context. */
void writer_named_args(const struct writer *w, struct jbuf *b, const struct named_event *ev);

/* An I/O the kernel saw outside a syscall: a run of pages through a
 * mapping, an io_uring request, an AIO iocb. Written as a POSIX event
 * named for DFAnalyzer ("mmap_read", "io_uring_write", "aio_read"). */
#define IO_ARG(k, val) EVENT_ARG(k, val, NULL)

struct hidden_io {
	const char *name;
	uint64_t ts_ns, dur_ns;	/* CLOCK_MONOTONIC */
	int64_t ret;		/* bytes moved, or the result (-errno) */
	const char *op;		/* args.op, or NULL */
	const struct istr *file;
	const struct event_arg *args;
	int nargs;
};

void writer_hidden_io(struct writer *w, struct sink *s, const struct proc *p,
		      const struct thread *t, const struct nesting *n,
		      const struct hidden_io *io);

/* A GPU or collective library call (bpf/gpu.h). Its name and cat are
 * ours (the call table's), its strings the traced process's. */
#define GPU_ARG(k, val) EVENT_ARG(k, val, NULL)
#define GPU_ARG_STR(k, s) EVENT_ARG(k, 0, s)
#define GPU_ARGS_MAX 16

struct gpu_event {
	const char *name, *cat;
	uint32_t tid;
	uint64_t ts_ns, dur_ns;	/* CLOCK_MONOTONIC */
	int64_t ret;
	const struct istr *file;	/* cuFile's */
	struct event_arg args[GPU_ARGS_MAX];
	int nargs;
};

void writer_gpu(struct writer *w, struct sink *s, const struct proc *p,
		const struct thread *t, const struct nesting *n, const struct gpu_event *g);

/* A total of calls the kernel folded (bpf/fold.h). */
struct fold_event {
	const char *name_cat;	/* "name":"pread","cat":"POSIX", */
	size_t name_cat_len;
	const char *call;	/* args.syscall; NULL: none (a GPU call's) */
	const struct istr *kernel;	/* args.kernel of folded launches */
	uint64_t ts_ns, dur_ns;	/* first call's start; the calls' summed time */
	uint64_t span_ns;	/* first call's start to last call's end */
	uint64_t calls, errors, bytes;
	bool data;		/* bytes are what it moved: args.ret */
	bool gpu_bytes;		/* bytes are args.bytes (copies, collectives) */
	const char *why;	/* "profile", "overload" */
	const struct istr *file;
	const struct phase_frame *phase;	/* the region it was in, or NULL */
	const char *hist;	/* "B:N ...": N calls took [2^B, 2^(B+1)) ns */
	size_t hist_len;
	int hist_lo, hist_hi;	/* its least and most B; -1: no calls */
};

void writer_fold(struct writer *w, struct sink *s, struct proc *p,
		 const struct thread *t, const struct fold_event *f);

/* start and end: about the process the file holds, or the traced command. */
struct lifecycle {
	uint32_t pid, ppid;
	int rank, world_size;	/* the process's, -1: the tracer's own */
	uint64_t id;
	uint64_t ts_us;
	const struct istr *exe, *cwd;
};

void writer_start(struct writer *w, struct sink *s, const struct lifecycle *l,
		  int64_t lost);
void writer_end(struct writer *w, struct sink *s, const struct lifecycle *l,
		int64_t lost);
/* --flight: what a dump holds and why it was written. */
struct flight_record {
	uint64_t id;
	const char *reason;
	uint32_t pid, tid;	/* the trigger's */
	uint64_t at_ns;		/* the trigger's time */
	uint64_t from_ns, to_ns;	/* the span the dump covers */
	uint64_t keep_ns;	/* --flight SECONDS */
	bool has_step;
	int64_t step;
	uint64_t dur_ns, median_ns;
	const struct istr *file;
	uint64_t events;
	uint64_t dump;		/* its number */
	bool capped;		/* --flight-mem cut the window at least once */
};

/* The file's FH line is the window's: not written here. */
void writer_flight(struct writer *w, struct sink *s, const struct flight_record *r);

/* lost_events lines for every slot with losses; returns their sum. */
uint64_t writer_lost(const struct writer *w, struct sink *s, uint32_t pid, const uint64_t *lost,
		     size_t nslots);

/* True if the writer puts key on an event itself: in every event's args
 * (context keys are written on I/O events too) or in a region's. */
bool writer_owns_key(const char *key, bool context);

#endif
