/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * gzip streams, written and read: through ISA-L's igzip where its
 * library (libisal.so.2) is installed, loaded at run time, else through
 * zlib, linked in. So the tracer is one binary that needs only libc's
 * family (Debian ships no static ISA-L), and keeps igzip's speed where
 * it can: level 1 on trace lines, 94 ns and 10.2 bytes an event here,
 * against zlib level 2's 462 ns and 11.0. DFTRACE_BPF_GZIP=zlib picks
 * zlib everywhere (the tests of both).
 */
#ifndef LIB_GZ_H
#define LIB_GZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* How far a write goes: on, to a byte-aligned block boundary from which
 * nothing looks back (where a cut-back may end the file), or to the end
 * of the stream. */
enum gz_flush { GZ_ON, GZ_FULL, GZ_FINISH };

/* "igzip" or "zlib": what this process uses. */
const char *gz_backend(void);

struct gz_writer;

/* A new gzip stream at gzip's level 1..9 (0: the fastest); NULL. */
struct gz_writer *gz_writer_new(int level);
/* Compresses n bytes at p up to flush, handing the output to out(ctx,
 * bytes, len) in pieces: 0, or out's error, or -EINVAL. */
int gz_writer_put(struct gz_writer *z, const void *p, size_t n, enum gz_flush flush,
		  int (*out)(void *ctx, const void *bytes, size_t len), void *ctx);
/* The CRC-32 of what was put so far (for a trailer written by hand). */
uint32_t gz_writer_crc(const struct gz_writer *z);
void gz_writer_free(struct gz_writer *z);

struct gz_reader;

struct gz_reader *gz_reader_new(void);
/* A new member begins. */
void gz_reader_reset(struct gz_reader *z);
/* Inflates from *in (*in_len bytes; both advanced past what was used)
 * into out: the bytes made, or GZ_CORRUPT or GZ_CHECKSUM. *done is set
 * at the member's end. */
ssize_t gz_reader_get(struct gz_reader *z, const unsigned char **in, size_t *in_len,
		      void *out, size_t n, bool *done);
void gz_reader_free(struct gz_reader *z);

#define GZ_CORRUPT (-1)
#define GZ_CHECKSUM (-2)

#endif
