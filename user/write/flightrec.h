/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * --flight's syscall events (and I/O outside syscalls, GPU calls) as
 * binary records: what the event's line would say, kept in 20 to 60
 * bytes before the window compresses it, and
 * formatted as that line only when a dump writes it. The consumer takes
 * about a million syscalls a second and dumps a few of them: formatting
 * JSON for the rest was half of its time in flight mode.
 *
 * The context (phase, epoch, step, the process's keys) is not in the
 * record: the record holds writer_context_key(), and the context's JSON,
 * formatted once per key and window generation, is a context line among
 * the window's metadata (write/flightbuf.h).
 */
#ifndef WRITE_FLIGHTREC_H
#define WRITE_FLIGHTREC_H

#include "write/flightbuf.h"
#include "write/writer.h"

/* Writes e as a record into s->recs (s->records): its names and files'
 * FH lines are in s->buf already. */
void flightrec_syscall(struct writer *w, struct sink *s, const struct proc *p,
		       const struct nesting *n, const struct sc_desc *d,
		       const struct dft_syscall *e, const struct file_ref *f1,
		       const struct file_ref *f2, enum dev_class cls);

/* The same for an I/O outside syscalls or a GPU call (its FH line in
 * s->buf already). */
void flightrec_named(struct writer *w, struct sink *s, const struct proc *p,
		     const struct nesting *n, uint32_t tid, const struct named_event *ev);

/* flight_rec_fmt for flightbuf_write: ctx is the struct writer. */
int flightrec_format(void *ctx, const unsigned char *rec, size_t len,
		     const struct hmap *ctx_lines, uint64_t from_ns, struct jbuf *out);

#endif
