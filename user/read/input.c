// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "lib/gz.h"
#include "read/input.h"

/* Raw (maybe compressed) bytes read at a time (the fuzzer builds with a
 * few). */
#ifndef READ_RAW_BUF
#define READ_RAW_BUF (1 << 20)
#endif

struct input {
	char *path;
	int fd;
	bool gzip;
	bool eof;		/* the file has no more raw bytes */
	bool member_done;	/* between two gzip members */
	struct gz_reader *zs;
	unsigned char *raw;
	size_t raw_len;		/* unconsumed raw bytes, from raw_pos */
	size_t raw_pos;
};

static int refill(struct input *in, char *err, size_t errlen)
{
	ssize_t n;

	if (in->raw_pos && in->raw_len)
		memmove(in->raw, in->raw + in->raw_pos, in->raw_len);
	in->raw_pos = 0;
	do
		n = read(in->fd, in->raw + in->raw_len, READ_RAW_BUF - in->raw_len);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		snprintf(err, errlen, "cannot read '%s': %s", in->path, strerror(errno));
		return -errno;
	}
	in->eof = n == 0;
	in->raw_len += n;
	return 0;
}

static void start_member(struct input *in)
{
	gz_reader_reset(in->zs);
	in->member_done = false;
}

int input_rewind(struct input *in, char *err, size_t errlen)
{
	unsigned char magic[2];

	if (lseek(in->fd, 0, SEEK_SET) < 0) {
		snprintf(err, errlen, "cannot read '%s': %s", in->path, strerror(errno));
		return -errno;
	}
	in->raw_len = in->raw_pos = 0;
	in->eof = false;
	if (refill(in, err, errlen))
		return -EIO;
	memcpy(magic, in->raw, in->raw_len >= 2 ? 2 : 0);
	in->gzip = in->raw_len >= 2 && magic[0] == 0x1f && magic[1] == 0x8b;
	if (in->gzip && !in->zs && !(in->zs = gz_reader_new())) {
		snprintf(err, errlen, "cannot read '%s': %s", in->path, strerror(ENOMEM));
		return -ENOMEM;
	}
	if (in->gzip)
		start_member(in);
	return 0;
}

int input_open(struct input **out, const char *path, bool regular, char *err,
	       size_t errlen)
{
	struct input *in = calloc(1, sizeof(*in));
	struct stat st;
	int rc;

	*out = NULL;
	if (in)
		in->fd = -1;
	if (!in || !(in->raw = malloc(READ_RAW_BUF)) || !(in->path = strdup(path))) {
		snprintf(err, errlen, "cannot read '%s': %s", path, strerror(ENOMEM));
		input_close(in);
		return -ENOMEM;
	}
	/* O_NONBLOCK: the open of a FIFO does not wait for a writer */
	in->fd = open(path, O_RDONLY | O_CLOEXEC | (regular ? O_NONBLOCK : 0));
	rc = in->fd < 0 ? -errno : 0;
	if (!rc && regular && (fstat(in->fd, &st) || !S_ISREG(st.st_mode)))
		rc = -EINVAL;
	if (rc) {
		snprintf(err, errlen, "cannot open '%s': %s", path,
			 in->fd >= 0 ? "not a regular file" : strerror(-rc));
		input_close(in);
		return rc;
	}
	rc = input_rewind(in, err, errlen);
	if (rc) {
		input_close(in);
		return rc;
	}
	*out = in;
	return 0;
}

/* The reason alone: the reader says where. */
static ssize_t bad_gzip(const struct input *in, const char *why, char *err,
			size_t errlen)
{
	snprintf(err, errlen, "%s", why);
	return -EBADMSG;
}

/* The next member starts where the last one ended; after the last, only
 * the end of the file may follow. */
static int next_member(struct input *in, char *err, size_t errlen)
{
	if (!in->raw_len && !in->eof && refill(in, err, errlen))
		return -EIO;
	if (!in->raw_len)
		return 0;
	if (in->raw_len < 2 || in->raw[in->raw_pos] != 0x1f ||
	    in->raw[in->raw_pos + 1] != 0x8b)
		return bad_gzip(in, "bytes after the end of the gzip stream", err, errlen);
	start_member(in);
	return 1;
}

static ssize_t inflate_some(struct input *in, void *buf, size_t n, char *err,
			    size_t errlen)
{
	for (;;) {
		const unsigned char *raw;
		ssize_t made;
		int rc;

		if (in->member_done) {
			rc = next_member(in, err, errlen);
			if (rc <= 0)
				return rc;
		}
		if (!in->raw_len && !in->eof && refill(in, err, errlen))
			return -EIO;
		raw = in->raw + in->raw_pos;
		made = gz_reader_get(in->zs, &raw, &in->raw_len, buf, n, &in->member_done);
		in->raw_pos = raw - in->raw;
		if (made < 0)
			return bad_gzip(in, made == GZ_CHECKSUM ?
					"gzip checksum mismatch" : "corrupt gzip data",
					err, errlen);
		if (made)
			return made;
		if (in->eof && !in->raw_len && !in->member_done) {
			bad_gzip(in, "gzip stream cut short (truncated file)", err, errlen);
			return -ENODATA;
		}
	}
}

ssize_t input_read(struct input *in, void *buf, size_t n, char *err,
		   size_t errlen)
{
	size_t take;

	if (in->gzip)
		return inflate_some(in, buf, n, err, errlen);
	if (!in->raw_len && !in->eof && refill(in, err, errlen))
		return -EIO;
	take = in->raw_len < n ? in->raw_len : n;
	memcpy(buf, in->raw + in->raw_pos, take);
	in->raw_pos += take;
	in->raw_len -= take;
	return take;
}

void input_close(struct input *in)
{
	if (!in)
		return;
	if (in->fd >= 0)
		close(in->fd);
	gz_reader_free(in->zs);
	free(in->raw);
	free(in->path);
	free(in);
}
