/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The trace file sink.
 *
 * The tracer runs as root and may be told to write into a directory other
 * users can write to (/tmp), so the path's last component is hostile
 * ground: someone may have planted a symlink or file there.  Hence we never
 * open what is at the path.  We create a fresh unnamed file in its
 * directory (O_TMPFILE; where the file system lacks it, a new hidden file
 * made with O_EXCL, which never follows a symlink), give it a temporary
 * name on commit and rename(2) that onto the path, which replaces a
 * symlink itself, never its target.  Until the commit nothing is visible,
 * so a tracer killed during start-up leaves nothing behind.  Under sudo
 * all of that runs with the invoking user's file-system identity, so the
 * kernel refuses what that user could not do.  Symlinks
 * in the parent directories are followed: only the owner of a directory
 * can plant those, and someone who owns a parent of the output directory
 * could move the output anywhere anyway.  The directory is opened once and
 * all later calls are relative to it, so the temporary file and the rename
 * stay in one directory even if a parent is swapped meanwhile.
 *
 * Writes fail in one way only: the output turns failed and is cut back to
 * the last flush, which callers place at line ends, so what is kept reads
 * as a complete trace.  For gzip the cut lands on a full-flush boundary,
 * where the deflate stream is byte-aligned, and a final empty block plus
 * the gzip trailer for the data up to there closes it properly. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "write/output_impl.h"

/* A complete gzip file holding nothing: what a failed gzip output is cut
 * back to when it failed before its first flush. */
static const unsigned char empty_gzip[20] = {
	0x1f, 0x8b, 0x08, 0, 0, 0, 0, 0, 0, 0x03,	/* header, OS unix */
	0x03, 0x00,					/* final empty block */
	0, 0, 0, 0, 0, 0, 0, 0,				/* CRC-32, ISIZE */
};

/* ---- writing ---------------------------------------------------------- */

/* write(2) with the test hook's simulated full disk in front of it when
 * off < 0; else pwrite at off, which only the cut-back after a failure
 * does. */
static ssize_t raw_write(struct output *o, const void *p, size_t n, off_t off)
{
	ssize_t done;

	if (off >= 0)
		return pwrite(o->fd, p, n, off);
	if (o->fail_err) {
		if (!o->fail_after) {
			errno = o->fail_err;
			return -1;
		}
		if (n > o->fail_after)
			n = o->fail_after;	/* a short write, as on ENOSPC */
	}
	done = write(o->fd, p, n);
	if (done > 0 && o->fail_err)
		o->fail_after -= done;
	return done;
}

static int write_all(struct output *o, const void *buf, size_t len, off_t off)
{
	const char *p = buf;

	while (len) {
		ssize_t n = raw_write(o, p, len, off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		p += n;
		len -= n;
		if (off >= 0)
			off += n;
		else
			o->bytes_out += n;
	}
	return 0;
}

/* A batch this big goes to igzip from the caller's buffer. */
#define SINK_BATCH_MIN (64u << 10)

static int write_out(void *ctx, const void *p, size_t n)
{
	return write_all(ctx, p, n, -1);
}

/* Compresses n bytes at p with the given flush mode and writes out what
 * deflate produces (lib/gz.h: igzip, else zlib). */
static int deflate_bytes(struct output *o, const void *p, size_t n, enum gz_flush flush)
{
	return gz_writer_put(o->zs, p, n, flush, write_out, o);
}

int output_resume(struct output *o, char *err, size_t errlen);

/* Moves the pending bytes on: compressed for gzip, as they are otherwise. */
static int drain(struct output *o, enum gz_flush flush)
{
	int err;

	/* Callers resume a suspended output first, to manage descriptors;
	 * one that did not still gets its bytes written. */
	if (o->suspended && (err = output_resume(o, NULL, 0)))
		return err;
	err = o->gzip ? deflate_bytes(o, o->buf, o->len, flush) :
			write_all(o, o->buf, o->len, -1);
	if (!err)
		o->len = 0;
	return err;
}

/* What ends the file at the last good boundary: for gzip the end of the
 * stream there (the whole of an empty one if not even the header was
 * flushed); nothing for plain text.  Returns its length. */
static size_t end_at_boundary(const struct output *o, unsigned char tail[10],
			      const void **end)
{
	uint32_t isize = (uint32_t)o->flushed_in; /* ISIZE is mod 2^32 */

	if (!o->gzip)
		return 0;
	if (o->good_off == 0) {
		*end = empty_gzip;
		return sizeof(empty_gzip);
	}
	/* Final fixed-Huffman block holding only end-of-block (10 bits:
	 * BFINAL=1, BTYPE=01, code 256 = 0000000), then the trailer: CRC-32
	 * and ISIZE, little-endian. */
	tail[0] = 0x03;
	tail[1] = 0x00;
	for (int i = 0; i < 4; i++) {
		tail[2 + i] = (unsigned char)(o->good_crc >> (8 * i));
		tail[6 + i] = (unsigned char)(isize >> (8 * i));
	}
	*end = tail;
	return 10;
}

/* Cuts the file back to the last good boundary and ends it there, so it
 * stays readable.  Stdout cannot be cut back. */
static int cut_back(struct output *o)
{
	unsigned char tail[10];
	const void *end = NULL;
	size_t end_len = end_at_boundary(o, tail, &end);
	int err;

	if (o->to_stdout)
		return 0;
	if (ftruncate(o->fd, o->good_off))
		return -errno;
	o->bytes_out = o->good_off;
	err = write_all(o, end, end_len, o->good_off);
	if (!err)
		o->bytes_out += end_len;
	return err;
}

/* Enters the failed state for good: remembers err, cuts the file back. */
static int fail(struct output *o, int err)
{
	if (o->err)
		return o->err;
	o->err = err;
	o->len = 0;
	o->cut = !o->to_stdout;
	o->cut_err = cut_back(o);
	return err;
}

/* Callers hand over whole lines, and the buffer is written out only
 * between two calls: so a plain file grows by whole lines, and a tracer
 * killed meanwhile leaves no torn line. */
int output_write(struct output *o, const void *buf, size_t len)
{
	int err = 0;

	if (o->err)
		return o->err;
	if (len > IN_BUF_SIZE - o->len)
		err = drain(o, GZ_ON);
	if (err)
		return fail(o, err);
	/* too big to buffer, or gzip handed a batch (the sink's): straight
	 * on, without a copy; the lines stay whole between two calls */
	if (len > IN_BUF_SIZE || (o->gzip && !o->len && len >= SINK_BATCH_MIN)) {
		err = o->gzip ? deflate_bytes(o, buf, len, GZ_ON) :
				write_all(o, buf, len, -1);
		if (err)
			return fail(o, err);
	} else {
		memcpy(o->buf + o->len, buf, len);
		o->len += len;
	}
	o->bytes_in += len;
	return 0;
}

int output_flush(struct output *o)
{
	int err;

	if (o->err)
		return o->err;
	/* Nothing new: skip, or gzip would add an empty block each time. */
	if (o->bytes_in == o->flushed_in)
		return 0;
	err = drain(o, GZ_FULL);
	if (err)
		return fail(o, err);
	o->flushed_in = o->bytes_in;
	o->good_off = o->bytes_out;
	if (o->gzip)
		o->good_crc = gz_writer_crc(o->zs); /* CRC-32 of the input so far */
	return 0;
}

/* ---- opening and committing -------------------------------------------- */

static int init_stream(struct output *o, int level)
{
	o->zs = gz_writer_new(level);
	if (!o->zs)
		return -ENOMEM;
	o->gzip = true;
	return 0;
}

int output_open(const struct output_opts *opts, struct output **out,
		char *err, size_t errlen)
{
	struct output *o;
	int rc = -ENOMEM;

	*out = NULL;
	if (errlen)
		*err = '\0';
	if (opts->gzip_level < -1 || opts->gzip_level > 9) {
		snprintf(err, errlen, "invalid gzip level %d (want 0..9)",
			 opts->gzip_level);
		return -EINVAL;
	}
	if (!*opts->path) {
		snprintf(err, errlen, "empty output path");
		return -EINVAL;
	}
	o = calloc(1, sizeof(*o));
	if (!o)
		goto nomem;
	o->fd = -1;
	o->dir_fd = -1;
	o->as = opts->as;
	o->path = strdup(opts->path);
	o->buf = malloc(IN_BUF_SIZE);
	if (!o->path || !o->buf)
		goto nomem;
	if (opts->gzip_level >= 0 && init_stream(o, opts->gzip_level))
		goto nomem;
	if (!strcmp(opts->path, "-")) {
		o->to_stdout = true;
		o->fd = STDOUT_FILENO;
	} else {
		rc = place_open(o, opts, err, errlen);
		if (rc)
			goto fail;
	}
	*out = o;
	return 0;
nomem:
	snprintf(err, errlen, "cannot create output '%s': %s", opts->path,
		 strerror(ENOMEM));
fail:
	output_abort(o);
	return rc;
}

int output_commit(struct output *o, char *err, size_t errlen)
{
	int rc;

	if (o->to_stdout || o->committed)
		return 0;
	rc = place_commit(o);
	if (rc) {
		snprintf(err, errlen, "cannot create output '%s': %s", o->path,
			 strerror(-rc));
		return rc;
	}
	o->committed = true;
	return 0;
}

/* A suspended file is complete: flushed, and for gzip ended after the
 * flush (the end is cut off again on resume, and the stream goes on). */
int output_suspend(struct output *o)
{
	unsigned char tail[10];
	const void *end = NULL;
	size_t end_len;
	int rc;

	if (o->to_stdout || !o->committed || o->suspended)
		return 0;
	rc = output_flush(o);
	if (rc)
		return rc;
	end_len = end_at_boundary(o, tail, &end);
	rc = write_all(o, end, end_len, o->good_off);
	if (rc)
		return fail(o, rc);
	close(o->fd);
	o->fd = -1;
	o->suspended = true;
	return 0;
}

/* A resume that fails leaves the file as suspend left it: complete. */
static int fail_suspended(struct output *o, int err)
{
	o->err = err;
	o->len = 0;
	o->cut = true;
	return err;
}

int output_resume(struct output *o, char *err, size_t errlen)
{
	struct stat st;
	int fd, rc;

	if (!o->suspended)
		return 0;
	fd = place_reopen(o);
	if (fd < 0) {
		rc = fd;
		goto cannot;
	}
	if (fstat(fd, &st) || st.st_dev != o->dev || st.st_ino != o->ino ||
	    st.st_size < (off_t)o->good_off || ftruncate(fd, o->good_off) ||
	    lseek(fd, o->good_off, SEEK_SET) != (off_t)o->good_off) {
		close(fd);
		snprintf(err, errlen, "cannot reopen output '%s': it was "
			 "replaced or cut while closed", o->path);
		return fail_suspended(o, -ESTALE);
	}
	o->fd = fd;
	o->bytes_out = o->good_off;
	o->suspended = false;
	return 0;
cannot:
	snprintf(err, errlen, "cannot reopen output '%s': %s", o->path,
		 strerror(-rc));
	return fail_suspended(o, rc);
}

bool output_suspended(const struct output *o)
{
	return o->suspended;
}

int output_rename(struct output *o, const char *new_path, char *err,
		  size_t errlen)
{
	if (errlen)
		*err = '\0';
	if (o->to_stdout || !o->committed)
		return -EINVAL;
	return place_rename(o, new_path, err, errlen);
}

/* ---- closing ---------------------------------------------------------- */

static void free_output(struct output *o)
{
	if (o->fd >= 0 && !o->to_stdout)
		close(o->fd);
	if (o->own_dir_fd)
		close(o->dir_fd);
	gz_writer_free(o->zs);
	free(o->buf);
	free(o->name);
	free(o->path);
	free(o);
}

void output_abort(struct output *o)
{
	if (!o)
		return;
	place_discard(o);
	free_output(o);
}

static void describe_failure(const struct output *o, char *err, size_t errlen)
{
	const char *what = o->to_stdout ? "stdout" : o->path;

	if (o->to_stdout)
		snprintf(err, errlen, "cannot write to stdout: %s",
			 strerror(-o->err));
	else if (!o->cut)
		snprintf(err, errlen, "cannot write '%s': %s", what,
			 strerror(-o->err));
	else if (o->cut_err)
		snprintf(err, errlen,
			 "cannot write '%s': %s; cutting it back to the last "
			 "flush failed too (%s), the file may be unreadable",
			 what, strerror(-o->err), strerror(-o->cut_err));
	else if (o->err == -ENOSPC)
		snprintf(err, errlen,
			 "disk full writing '%s': trace cut at the last flush "
			 "(%llu bytes kept)", what,
			 (unsigned long long)o->bytes_out);
	else
		snprintf(err, errlen,
			 "cannot write '%s': %s; trace cut at the last flush "
			 "(%llu bytes kept)", what, strerror(-o->err),
			 (unsigned long long)o->bytes_out);
}

int output_close(struct output *o, char *err, size_t errlen)
{
	int rc;

	if (errlen)
		*err = '\0';
	if (!o)
		return 0;
	if (!o->to_stdout && !o->committed) {
		snprintf(err, errlen, "output '%s' closed before commit; "
			 "discarded", o->path);
		output_abort(o);
		return -EINVAL;
	}
	if (!o->err) {
		rc = drain(o, GZ_FINISH);
		if (rc)
			fail(o, rc);
		else
			o->flushed_in = o->bytes_in;
	}
	/* close(2) can report a delayed write error (NFS); it is too late
	 * to cut the file back then. */
	if (!o->to_stdout && o->fd >= 0 && close(o->fd) && !o->err)
		o->err = -errno;
	o->fd = -1;
	rc = o->err;
	if (rc)
		describe_failure(o, err, errlen);
	free_output(o);
	return rc;
}

/* ---- accessors -------------------------------------------------------- */

bool output_failed(const struct output *o)
{
	return o->err != 0;
}

uint64_t output_bytes_in(const struct output *o)
{
	return o->bytes_in;
}

uint64_t output_bytes_out(const struct output *o)
{
	return o->bytes_out;
}

const char *output_path(const struct output *o)
{
	return o->path;
}

void output_test_fail_writes(struct output *o, uint64_t after, int err)
{
	o->fail_after = after;
	o->fail_err = err;
}
