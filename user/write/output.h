/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* A trace file: buffered plain text or one gzip stream, written to
 * a private temporary file that replaces the target only on commit, and cut
 * back to the last flush if a write fails so what is kept stays readable. */
#ifndef WRITE_OUTPUT_H
#define WRITE_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct output;
struct invoker;

struct output_opts {
	const char *path;	/* "-" means stdout */
	int gzip_level;		/* -1: plain text; 0..9: one gzip stream */
	/* Who creates and renames the file: the kernel applies that user's
	 * permissions, and the file is theirs.  NULL: ourselves. */
	const struct invoker *as;
	/* A directory the caller holds open until every output in it is
	 * closed; the file is made there under path's last component (path
	 * is still what messages show).  NULL: path's own directory. */
	const int *dir_fd;
};

/* Creates a new unnamed file in o->path's directory (never following or
 * opening what is there).  Returns 0 or a negative errno with a one-line
 * message in err.  Nothing is left on disk when it fails, nor when the
 * process dies before the commit. */
int output_open(const struct output_opts *opts, struct output **out,
		char *err, size_t errlen);

/* Puts the file at the path (replacing what is there, a symlink itself
 * rather than its target); until then an older trace at the path is
 * untouched.  A no-op for stdout and when already committed. */
int output_commit(struct output *o, char *err, size_t errlen);

/* Flushes and closes the file descriptor of a committed file, keeping the
 * stream's state, so that many outputs can share few descriptors: the file
 * stays one stream.  Until output_resume(), nothing may be written. */
int output_suspend(struct output *o);
/* Reopens a suspended file, as the user it was created as; fails if the
 * path no longer names the same file.  A no-op if not suspended. */
int output_resume(struct output *o, char *err, size_t errlen);
bool output_suspended(const struct output *o);
/* Renames a committed file within its directory (new_path's last
 * component); the new name is checked like a target of output_open. */
int output_rename(struct output *o, const char *new_path, char *err,
		  size_t errlen);

/* Buffers len bytes (whole lines only).  Returns 0, or the negative errno
 * of the first failed write: the output is then failed for good and every
 * later call returns that error without doing anything. */
int output_write(struct output *o, const void *buf, size_t len);

/* Writes out everything so far; for gzip a full flush, so the file
 * decompresses up to here even if it is later cut short.  Returns like
 * output_write. */
int output_flush(struct output *o);

/* Finishes the stream, closes and frees; NULL-safe.  Returns 0 or a
 * negative errno with a message in err (also for an earlier failed write).
 * Closing an uncommitted output is a caller bug: it discards it as
 * output_abort does and returns -EINVAL. */
int output_close(struct output *o, char *err, size_t errlen);

/* Discards the output (its temporary file too, if not committed) and
 * frees it; NULL-safe. */
void output_abort(struct output *o);

bool output_failed(const struct output *o);
uint64_t output_bytes_in(const struct output *o);  /* uncompressed bytes accepted */
uint64_t output_bytes_out(const struct output *o); /* bytes on disk */
const char *output_path(const struct output *o);

/* Test-only fault injection, since a unit test cannot fill a disk: the next
 * `after` bytes reach the file, then every write fails with errno err as on
 * a full disk.  Cutting the file back afterwards writes for real. */
void output_test_fail_writes(struct output *o, uint64_t after, int err);

#endif
