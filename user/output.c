/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The trace file sink.
 *
 * The tracer runs as root and may be told to write into a directory other
 * users can write to (/tmp), so the path's last component is hostile
 * ground: someone may have planted a symlink or file there.  Hence we never
 * open what is at the path.  We create a fresh temporary file next to it
 * with O_EXCL (which never follows a symlink) and rename(2) it onto the path
 * on commit, which replaces a symlink itself, never its target.  Symlinks
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
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "output.h"

#define IN_BUF_SIZE (1 << 20)	/* uncompressed bytes gathered per write/deflate */
#define Z_BUF_SIZE (256 << 10)	/* compressed bytes gathered per write */

struct output {
	char *path;		/* as given, for messages */
	char *name;		/* final name inside dir_fd */
	char *tmp_name;		/* temporary file inside dir_fd; NULL once committed */
	int dir_fd;		/* O_PATH descriptor of the target's directory */
	int fd;
	bool to_stdout, gzip, committed;

	unsigned char *buf;	/* pending uncompressed bytes */
	size_t len;
	z_stream zs;
	unsigned char *zbuf;	/* deflate output */

	uint64_t bytes_in, bytes_out;
	/* The last good boundary: all data up to it is on disk and readable. */
	uint64_t flushed_in;	/* bytes_in there */
	uint64_t good_off;	/* file size there */
	uint32_t good_crc;	/* gzip: CRC-32 of the data up to there */

	int err;		/* first write error, negative errno; sticky */
	bool cut;		/* the file was cut back after err */
	int cut_err;		/* why cutting back failed, or 0 */

	uint64_t fail_after;	/* test hook, see output_test_fail_writes */
	int fail_err;
};

/* A complete gzip file holding nothing: what a failed gzip output is cut
 * back to when it failed before its first flush. */
static const unsigned char empty_gzip[20] = {
	0x1f, 0x8b, 0x08, 0, 0, 0, 0, 0, 0, 0x03,	/* header, OS unix */
	0x03, 0x00,					/* final empty block */
	0, 0, 0, 0, 0, 0, 0, 0,				/* CRC-32, ISIZE */
};

/* ---- writing ---------------------------------------------------------- */

/* write(2) with the test hook's simulated full disk in front of it. */
/* off < 0: append (through the test hook); else pwrite at off, which
 * only the cut-back after a failure does. */
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

/* Compresses the pending input with the given flush mode and writes out
 * what deflate produces. */
static int deflate_pending(struct output *o, int flush)
{
	z_stream *zs = &o->zs;
	int zrc, err;

	zs->next_in = o->buf;
	zs->avail_in = o->len;
	do {
		zs->next_out = o->zbuf;
		zs->avail_out = Z_BUF_SIZE;
		zrc = deflate(zs, flush);
		if (zrc == Z_STREAM_ERROR)
			return -EINVAL;
		err = write_all(o, o->zbuf, Z_BUF_SIZE - zs->avail_out, -1);
		if (err)
			return err;
		/* Z_BUF_ERROR: nothing left to do (a repeated flush). */
	} while (zs->avail_out == 0 && zrc != Z_BUF_ERROR);
	if (flush == Z_FINISH && zrc != Z_STREAM_END)
		return -EIO;
	o->len = 0;
	return 0;
}

/* Moves the pending bytes on: compressed for gzip, as they are otherwise. */
static int drain(struct output *o, int flush)
{
	int err;

	if (o->gzip)
		return deflate_pending(o, flush);
	err = write_all(o, o->buf, o->len, -1);
	if (!err)
		o->len = 0;
	return err;
}

/* Cuts a failed file back to the last good boundary so it stays readable;
 * for gzip also ends the stream there.  Stdout cannot be cut back. */
static int cut_back(struct output *o)
{
	unsigned char tail[10];
	const void *end;
	size_t end_len;
	off_t off = o->good_off;

	if (o->to_stdout)
		return 0;
	if (o->gzip && off == 0) {
		end = empty_gzip;	/* not even the header was flushed */
		end_len = sizeof(empty_gzip);
	} else if (o->gzip) {
		uint32_t isize = (uint32_t)o->flushed_in; /* ISIZE is mod 2^32 */
		int i;

		/* Final fixed-Huffman block holding only end-of-block (10 bits:
		 * BFINAL=1, BTYPE=01, code 256 = 0000000), then the trailer:
		 * CRC-32 and ISIZE, little-endian. */
		tail[0] = 0x03;
		tail[1] = 0x00;
		for (i = 0; i < 4; i++) {
			tail[2 + i] = (unsigned char)(o->good_crc >> (8 * i));
			tail[6 + i] = (unsigned char)(isize >> (8 * i));
		}
		end = tail;
		end_len = sizeof(tail);
	} else {
		end = NULL;
		end_len = 0;
	}
	if (ftruncate(o->fd, off))
		return -errno;
	o->bytes_out = off;
	if (end_len) {
		int err = write_all(o, end, end_len, off);

		if (err)
			return err;
		o->bytes_out += end_len;
	}
	return 0;
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

int output_write(struct output *o, const void *buf, size_t len)
{
	const char *p = buf;

	if (o->err)
		return o->err;
	if (len <= IN_BUF_SIZE - o->len) {
		memcpy(o->buf + o->len, buf, len);
		o->len += len;
		o->bytes_in += len;
		return 0;
	}
	while (len) {
		size_t n = IN_BUF_SIZE - o->len;
		int err;

		if (n == 0) {
			err = drain(o, Z_NO_FLUSH);
			if (err)
				return fail(o, err);
			n = IN_BUF_SIZE;
		}
		if (n > len)
			n = len;
		memcpy(o->buf + o->len, p, n);
		o->len += n;
		o->bytes_in += n;
		p += n;
		len -= n;
	}
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
	err = drain(o, Z_FULL_FLUSH);
	if (err)
		return fail(o, err);
	o->flushed_in = o->bytes_in;
	o->good_off = o->bytes_out;
	if (o->gzip)
		o->good_crc = (uint32_t)o->zs.adler; /* gzip mode keeps CRC-32 here */
	return 0;
}

/* ---- opening and committing -------------------------------------------- */

/* Splits path into an opened directory and the final name. */
static int open_dir(struct output *o)
{
	const char *slash = strrchr(o->path, '/');
	char *dir;

	if (!slash) {
		dir = strdup(".");
		o->name = strdup(o->path);
	} else {
		dir = slash == o->path ? strdup("/") :
					 strndup(o->path, slash - o->path);
		o->name = strdup(slash + 1);
	}
	if (!dir || !o->name) {
		free(dir);
		return -ENOMEM;
	}
	o->dir_fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	free(dir);
	return o->dir_fd < 0 ? -errno : 0;
}

/* Refuses a target that rename would fail on or should never replace (a
 * directory, a device like /dev/null, also behind a symlink, e.g. a
 * /dev/stdout that is a pipe).  A symlink to a regular file or to nothing
 * is fine: the rename replaces the link. */
static int check_target(struct output *o, char *err, size_t errlen)
{
	struct stat st;
	bool link;
	int rc;

	if (!*o->name || !strcmp(o->name, ".") || !strcmp(o->name, "..")) {
		snprintf(err, errlen, "output '%s' is a directory", o->path);
		return -EISDIR;
	}
	if (fstatat(o->dir_fd, o->name, &st, AT_SYMLINK_NOFOLLOW)) {
		if (errno == ENOENT)
			return 0;
		goto cannot;
	}
	link = S_ISLNK(st.st_mode);
	if (link && fstatat(o->dir_fd, o->name, &st, 0))
		return 0;	/* dangling: nothing behind it to protect */
	if (S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "output '%s' is a directory", o->path);
		return -EISDIR;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "output '%s' is not a regular file%s",
			 o->path, link ? " (use '-' for stdout)" : "");
		return -EINVAL;
	}
	return 0;
cannot:
	rc = -errno;
	snprintf(err, errlen, "cannot create output '%s': %s", o->path,
		 strerror(-rc));
	return rc;
}

/* Six random name characters; uniqueness comes from O_EXCL, not from them. */
static void random_suffix(char *s)
{
	static const char chars[] =
		"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	unsigned char rnd[6];
	struct timespec ts;
	int i;

	if (getrandom(rnd, sizeof(rnd), GRND_NONBLOCK) != sizeof(rnd)) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		for (i = 0; i < 6; i++)
			rnd[i] = (unsigned char)((ts.tv_nsec >> (5 * i)) ^
						 (getpid() >> i) ^ rand());
	}
	for (i = 0; i < 6; i++)
		s[i] = chars[rnd[i] % (sizeof(chars) - 1)];
	s[6] = '\0';
}

/* Creates ".<name>.XXXXXX" next to the target; never opens anything old. */
static int create_temp(struct output *o)
{
	size_t size = strlen(o->name) + 10;
	int tries;

	o->tmp_name = malloc(size);
	if (!o->tmp_name)
		return -ENOMEM;
	for (tries = 0; tries < 100; tries++) {
		char *x = o->tmp_name + snprintf(o->tmp_name, size, ".%s.",
						 o->name);

		random_suffix(x);
		o->fd = openat(o->dir_fd, o->tmp_name,
			       O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC |
			       O_WRONLY, 0644);
		if (o->fd >= 0)
			return 0;
		if (errno != EEXIST)
			break;
	}
	free(o->tmp_name);
	o->tmp_name = NULL;
	return -errno;
}

static int give_to_user(struct output *o, const struct output_opts *opts,
			char *err, size_t errlen)
{
	if (opts->uid == (uid_t)-1 && opts->gid == (gid_t)-1)
		return 0;
	if (!fchown(o->fd, opts->uid, opts->gid))
		return 0;
	snprintf(err, errlen, "cannot give output '%s' to uid %d gid %d: %s",
		 o->path, (int)opts->uid, (int)opts->gid, strerror(errno));
	return -errno;
}

static int open_file(struct output *o, const struct output_opts *opts,
		     char *err, size_t errlen)
{
	int rc;

	rc = open_dir(o);
	if (rc)
		goto cannot;
	rc = check_target(o, err, errlen);
	if (rc)
		return rc;
	rc = create_temp(o);
	if (rc)
		goto cannot;
	return give_to_user(o, opts, err, errlen);
cannot:
	snprintf(err, errlen, "cannot create output '%s': %s", o->path,
		 strerror(-rc));
	return rc;
}

static int init_stream(struct output *o, int level)
{
	o->zbuf = malloc(Z_BUF_SIZE);
	if (!o->zbuf)
		return -ENOMEM;
	/* windowBits 15 + 16: a gzip header and trailer around the deflate. */
	if (deflateInit2(&o->zs, level, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
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
	o = calloc(1, sizeof(*o));
	if (!o)
		goto nomem;
	o->fd = -1;
	o->dir_fd = -1;
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
		rc = open_file(o, opts, err, errlen);
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
	if (o->to_stdout || o->committed)
		return 0;
	if (renameat(o->dir_fd, o->tmp_name, o->dir_fd, o->name)) {
		int rc = -errno;

		snprintf(err, errlen, "cannot create output '%s': %s", o->path,
			 strerror(-rc));
		return rc;
	}
	o->committed = true;
	free(o->tmp_name);
	o->tmp_name = NULL;
	return 0;
}

/* ---- closing ---------------------------------------------------------- */

static void free_output(struct output *o)
{
	if (o->fd >= 0 && !o->to_stdout)
		close(o->fd);
	if (o->dir_fd >= 0)
		close(o->dir_fd);
	if (o->gzip)
		deflateEnd(&o->zs);
	free(o->zbuf);
	free(o->buf);
	free(o->tmp_name);
	free(o->name);
	free(o->path);
	free(o);
}

void output_abort(struct output *o)
{
	if (!o)
		return;
	if (o->tmp_name)
		unlinkat(o->dir_fd, o->tmp_name, 0);
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
			 (unsigned long long)o->flushed_in);
	else
		snprintf(err, errlen,
			 "cannot write '%s': %s; trace cut at the last flush "
			 "(%llu bytes kept)", what, strerror(-o->err),
			 (unsigned long long)o->flushed_in);
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
		rc = drain(o, Z_FINISH);
		if (rc)
			fail(o, rc);
		else
			o->flushed_in = o->bytes_in;
	}
	/* close(2) can report a delayed write error (NFS); it is too late
	 * to cut the file back then. */
	if (!o->to_stdout && close(o->fd) && !o->err)
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
