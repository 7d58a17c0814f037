/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* What the record path keeps, shared by dispatch.c, correlate.c,
 * lifecycle.c and annot.c: nothing else sees inside a struct trace. */
#ifndef CORRELATE_STATE_H
#define CORRELATE_STATE_H

#include "correlate/flight.h"
#include "correlate/trace.h"
#include "model/fileids.h"
#include "model/window.h"
#include "write/files.h"
#include "write/writer.h"

struct trace {
	struct trace_config cfg;
	struct trace_stats stats;
	struct model model;
	struct writer writer;
	struct files files;
	struct step_window window;	/* --steps */
	struct fileids fileids;		/* files by (dev, ino) */
	bool root_execd;	/* -- CMD: until then, the root runs our code */
	struct hmap phase_ids;	/* dft_phase_id -> its cat and name */
	struct hmap uring_pending; /* io_uring requests submitted, not done */
	uint32_t region_names;	/* region cats and names interned (annot.c) */
	struct flight *flight;	/* --flight, or NULL */
	bool peeking;		/* the records in hand are a peek's (dispatch.c) */
	/* the record in hand: its process, alive at its time */
	uint32_t rec_pid;
	uint64_t rec_ns;
};

/* A call or region of th that began at ts is taken: false if a peek
 * took it already (dispatch.c), which it then forgets. */
bool record_is_new(struct thread *th, uint64_t ts);
/* The same for a region's begin or end, which may also be one of th's
 * ring that a peek took (trace_ring_peeked()). */
bool annot_is_new(struct thread *th, const struct dft_header *h);

/* correlate.c: what syscalls do to the model */
struct proc *trace_proc(struct trace *t, uint32_t pid);
struct thread *trace_thread(struct trace *t, struct proc *p, uint32_t tid);
void on_syscall(struct trace *t, const struct dft_syscall *e,
		const char **str, const size_t *len, uint8_t flags);
void on_paths(struct trace *t, const struct dft_paths *e, size_t size);

/* lifecycle.c: the life of processes and threads */
void on_fork(struct trace *t, const struct dft_fork *e);
void on_exec(struct trace *t, const struct dft_exec *e);
void on_exit_record(struct trace *t, const struct dft_exit *e);
void on_comm(struct trace *t, const struct dft_comm *e);
/* A call that changed the process's fds was lost: none is named after
 * what it was before. */
void on_fds_lost(struct trace *t, const struct dft_header *h);
void on_gpu(struct trace *t, const struct dft_gpu *e, size_t size);
/* The process's annotation sites in [lo, lo + len) are no more (an
 * unmapping; all of them: 0, UINT64_MAX at an exec or its end). */
void forget_sites(struct trace *t, struct proc *p, uint64_t lo, uint64_t len);
/* A folded total of GPU call id (--profile) as its event. */
void gpu_fold_event(const struct proc *p, unsigned int id, const struct dft_fold_key *k,
		    struct fold_event *ev);
/* Writes an event's last bytes; a failure stops the trace. */
void end_event(struct trace *t, struct sink *s);

/* hidden.c: I/O no syscall shows whole (mappings, io_uring, AIO) */
void on_mmap(struct trace *t, const struct dft_mmap *e);
void on_fileid(struct trace *t, const struct dft_fileid *e);
/* an AIO record of size bytes, or an io_uring request's submission (its
 * name may be cut short), and an io_uring request's end */
void on_async_record(struct trace *t, const void *data, size_t size);
void on_uring_submit(struct trace *t, const void *data, size_t size);
void on_uring_done(struct trace *t, const struct dft_uring_done *d);
void uring_pending_free(struct trace *t);

/* folded.c: totals the kernel folded */
void on_fold_record(struct trace *t, const struct dft_fold_rec *r);
/* Writes the totals of p not written yet: of thread tid, or all (0). */
void fold_write_totals(struct trace *t, struct proc *p, uint32_t tid);
/* A region began: its kernel-side id (from the strings as the kernel
 * read them) names these. */
void fold_learn_phase(struct trace *t, const struct dft_annot *raw,
		      const struct istr *cat, const struct istr *name);
void fold_phases_free(struct trace *t);
/* k's region, epoch and step: th's and p's now, as the kernel side keys
 * its totals (th may be NULL). */
void fold_key_where(struct trace *t, const struct proc *p, const struct thread *th,
		    struct dft_fold_key *k);
/* --flight: a call the kernel sent, which it does not fold (bpf/core.bpf.h:
 * flight_on), into p's totals; its file by the path its fd named (file,
 * fd; NULL, -1: none). */
void fold_sent_call(struct trace *t, struct proc *p, const struct thread *th,
		    const struct dft_syscall *e, const struct istr *file, int fd);

/* annot.c: annotated regions and context. Past this many distinct
 * region cats and names, a region's are its own (istr_loose): as many
 * as the exit summary's totals keep by name. */
#define REGION_NAMES_MAX PHASE_TOTALS_MAX
void on_annot(struct trace *t, const struct dft_annot *e);
/* Ends every open region of th from the innermost down to depth `to`. */
void close_regions(struct trace *t, struct proc *p, struct thread *th,
		   uint32_t to, uint64_t end_ns, const char *why);

/* flight.c: --flight's triggers (each a no-op without --flight) */
/* One I/O call, cuFile call or hidden I/O of dur_ns: slow-io. */
void flight_io(struct trace *t, const struct proc *p, uint32_t tid, uint64_t ts_ns,
	       uint64_t dur_ns, const struct istr *file);
/* p's last thread exited with a wait(2) status: exit. */
void flight_exit(struct trace *t, const struct proc *p, uint32_t tid, int status,
		 uint64_t ts_ns);
/* pid is gone: its running step with it. */
void flight_forget(struct trace *t, uint32_t pid);
/* p set its step annotation: the step before ends (slow-step, hang). */
void flight_step(struct trace *t, const struct proc *p, int64_t step, uint64_t ts_ns);
/* The window takes the flight sink's lines (the sink holds no more
 * than about FLIGHT_TAKE_BYTES between batches of records). */
#define FLIGHT_TAKE_BYTES (256u << 10)
void flight_take(struct trace *t);
/* The dumps still waiting are written (the end), then all is freed. */
void flight_finish(struct trace *t);
void flight_free(struct trace *t);

#endif
