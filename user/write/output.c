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
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "lib/invoker.h"
#include "write/output.h"

#define IN_BUF_SIZE (1 << 20)	/* uncompressed bytes gathered per write/deflate */
#define Z_BUF_SIZE (256 << 10)	/* compressed bytes gathered per write */

#define TEMP_PREFIX ".dftrace-"
#define TEMP_NAME_LEN (sizeof(TEMP_PREFIX) - 1 + 6)

struct output {
	char *path;		/* as given, for messages */
	char *name;		/* final name inside dir_fd */
	char tmp_name[TEMP_NAME_LEN + 1]; /* named temporary inside dir_fd, or "" */
	int dir_fd;		/* O_PATH descriptor of the target's directory */
	bool own_dir_fd;	/* opened by us (else the caller's) */
	int fd;			/* -1 while suspended */
	bool to_stdout, gzip, committed, suspended;
	const struct invoker *as;
	dev_t dev;		/* the committed file, to check a reopen */
	ino_t ino;

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

/* Compresses n bytes at p with the given flush mode and writes out what
 * deflate produces. */
static int deflate_bytes(struct output *o, const void *p, size_t n, int flush)
{
	z_stream *zs = &o->zs;
	int zrc, err;

	zs->next_in = (unsigned char *)p;
	zs->avail_in = n;
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
	return 0;
}

int output_resume(struct output *o, char *err, size_t errlen);

/* Moves the pending bytes on: compressed for gzip, as they are otherwise. */
static int drain(struct output *o, int flush)
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
		err = drain(o, Z_NO_FLUSH);
	if (err)
		return fail(o, err);
	if (len > IN_BUF_SIZE) { /* too big to buffer: straight on */
		err = o->gzip ? deflate_bytes(o, buf, len, Z_NO_FLUSH) :
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

/* Splits path into a directory (opened, unless the caller gave one) and
 * the final name. */
static int open_dir(struct output *o, const int *dir_fd)
{
	const char *slash = strrchr(o->path, '/');
	char *dir;

	o->name = strdup(slash ? slash + 1 : o->path);
	if (!o->name)
		return -ENOMEM;
	if (dir_fd) {
		o->dir_fd = *dir_fd;
		return 0;
	}
	if (!slash)
		dir = strdup(".");
	else
		dir = slash == o->path ? strdup("/") :
					 strndup(o->path, slash - o->path);
	if (!dir)
		return -ENOMEM;
	o->dir_fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	free(dir);
	if (o->dir_fd < 0)
		return -errno;
	o->own_dir_fd = true;
	return 0;
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

/* A fresh ".dftrace-XXXXXX" in o->tmp_name: a fixed length, so that a
 * target name of any valid length works; uniqueness comes from O_EXCL
 * or linkat's EEXIST, not from the six random characters. */
static void random_temp_name(struct output *o)
{
	static const char chars[] =
		"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	char *x = o->tmp_name + sizeof(TEMP_PREFIX) - 1;
	unsigned char rnd[6];
	struct timespec ts;
	int i;

	memcpy(o->tmp_name, TEMP_PREFIX, sizeof(TEMP_PREFIX) - 1);
	if (getrandom(rnd, sizeof(rnd), GRND_NONBLOCK) != sizeof(rnd)) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		for (i = 0; i < 6; i++)
			rnd[i] = (unsigned char)((ts.tv_nsec >> (5 * i)) ^
						 (getpid() >> i) ^ rand());
	}
	for (i = 0; i < 6; i++)
		x[i] = chars[rnd[i] % (sizeof(chars) - 1)];
	x[6] = '\0';
}

#define TEMP_TRIES 100

/* Tries fresh temporary names until make() succeeds or fails otherwise
 * than on a name already taken. */
static int with_temp_name(struct output *o,
			  int (*make)(struct output *o, const void *arg),
			  const void *arg)
{
	for (int tries = 0; tries < TEMP_TRIES; tries++) {
		random_temp_name(o);
		if (!make(o, arg))
			return 0;
		if (errno != EEXIST)
			break;
	}
	o->tmp_name[0] = '\0';
	return -errno;
}

static int open_named(struct output *o, const void *unused)
{
	o->fd = openat(o->dir_fd, o->tmp_name,
		       O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_WRONLY, 0644);
	return o->fd < 0 ? -1 : 0;
}

/* Unnamed where the file system can (O_TMPFILE); else a hidden file that
 * exists from the start, which a tracer killed before the commit may
 * leave behind. */
static int create_temp(struct output *o)
{
	o->fd = openat(o->dir_fd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
	if (o->fd >= 0)
		return 0;
	if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)
		return -errno;
	return with_temp_name(o, open_named, NULL);
}

static int open_file(struct output *o, const struct output_opts *opts,
		     char *err, size_t errlen)
{
	struct fs_identity me;
	int rc;

	rc = invoker_fs_enter(opts->as, &me);
	if (rc)
		goto cannot;
	rc = open_dir(o, opts->dir_fd);
	if (!rc) {
		rc = check_target(o, err, errlen);
		if (rc) {
			fs_identity_restore(&me);
			return rc;
		}
		rc = create_temp(o);
	}
	fs_identity_restore(&me);
	if (!rc)
		return 0;
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

static int link_named(struct output *o, const void *self)
{
	return linkat(AT_FDCWD, self, o->dir_fd, o->tmp_name, AT_SYMLINK_FOLLOW);
}

/* Gives the unnamed file its temporary name. */
static int link_temp(struct output *o)
{
	char self[64];

	snprintf(self, sizeof(self), "/proc/self/fd/%d", o->fd);
	return with_temp_name(o, link_named, self);
}

static int place_file(struct output *o)
{
	struct stat st;
	int rc = 0;

	if (!o->tmp_name[0])
		rc = link_temp(o);
	if (!rc && renameat(o->dir_fd, o->tmp_name, o->dir_fd, o->name))
		rc = -errno;
	if (rc && o->tmp_name[0])
		unlinkat(o->dir_fd, o->tmp_name, 0);
	o->tmp_name[0] = '\0';
	if (!rc && !fstat(o->fd, &st)) {
		o->dev = st.st_dev;
		o->ino = st.st_ino;
	}
	return rc;
}

int output_commit(struct output *o, char *err, size_t errlen)
{
	struct fs_identity me;
	int rc;

	if (o->to_stdout || o->committed)
		return 0;
	rc = invoker_fs_enter(o->as, &me);
	if (!rc) {
		rc = place_file(o);
		fs_identity_restore(&me);
	}
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
	struct fs_identity me;
	struct stat st;
	int fd, rc;

	if (!o->suspended)
		return 0;
	rc = invoker_fs_enter(o->as, &me);
	if (rc)
		goto cannot;
	fd = openat(o->dir_fd, o->name, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
	rc = fd < 0 ? -errno : 0;
	fs_identity_restore(&me);
	if (rc)
		goto cannot;
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
	const char *slash = strrchr(new_path, '/');
	struct output moved = *o;
	struct fs_identity me;
	int rc;

	if (errlen)
		*err = '\0';
	if (o->to_stdout || !o->committed)
		return -EINVAL;
	moved.path = strdup(new_path);
	moved.name = strdup(slash ? slash + 1 : new_path);
	rc = moved.path && moved.name ? 0 : -ENOMEM;
	if (!rc)
		rc = invoker_fs_enter(o->as, &me);
	if (!rc) {
		rc = check_target(&moved, err, errlen);
		if (!rc && renameat(o->dir_fd, o->name, o->dir_fd, moved.name))
			rc = -errno;
		fs_identity_restore(&me);
	}
	if (rc) {
		if (!*err)
			snprintf(err, errlen, "cannot rename '%s' to '%s': %s",
				 o->path, new_path, strerror(-rc));
		free(moved.path);
		free(moved.name);
		return rc;
	}
	free(o->path);
	free(o->name);
	o->path = moved.path;
	o->name = moved.name;
	return 0;
}

/* ---- closing ---------------------------------------------------------- */

static void free_output(struct output *o)
{
	if (o->fd >= 0 && !o->to_stdout)
		close(o->fd);
	if (o->own_dir_fd)
		close(o->dir_fd);
	if (o->gzip)
		deflateEnd(&o->zs);
	free(o->zbuf);
	free(o->buf);
	free(o->name);
	free(o->path);
	free(o);
}

void output_abort(struct output *o)
{
	if (!o)
		return;
	if (o->tmp_name[0])
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
		rc = drain(o, Z_FINISH);
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
