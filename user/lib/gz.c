// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* gzip through igzip (loaded at run time) or zlib: see gz.h. */
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <isa-l/igzip_lib.h>
#include <zlib.h>
#include "lib/gz.h"

#define ISAL_LIB "libisal.so.2"
#define ZLIB_GZIP_WBITS (15 + 16)	/* a gzip header and trailer */

/* ISA-L's entry points, from its library where it loads. */
static struct {
	bool tried, loaded;
	void (*deflate_init)(struct isal_zstream *);
	int (*deflate)(struct isal_zstream *);
	void (*inflate_init)(struct inflate_state *);
	int (*inflate)(struct inflate_state *);
} isal;

static bool use_isal(void)
{
	const char *want = getenv("DFTRACE_BPF_GZIP");
	void *lib;

	if (isal.tried)
		return isal.loaded;
	isal.tried = true;
	if (want && !strcmp(want, "zlib"))
		return false;
	lib = dlopen(ISAL_LIB, RTLD_NOW | RTLD_LOCAL);
	if (!lib)
		return false;
	isal.deflate_init = (void (*)(struct isal_zstream *))dlsym(lib, "isal_deflate_init");
	isal.deflate = (int (*)(struct isal_zstream *))dlsym(lib, "isal_deflate");
	isal.inflate_init = (void (*)(struct inflate_state *))dlsym(lib, "isal_inflate_init");
	isal.inflate = (int (*)(struct inflate_state *))dlsym(lib, "isal_inflate");
	isal.loaded = isal.deflate_init && isal.deflate && isal.inflate_init && isal.inflate;
	return isal.loaded;
}

const char *gz_backend(void)
{
	return use_isal() ? "igzip" : "zlib";
}

/* ---- writing ---- */

#define OUT_SIZE (256 << 10)	/* compressed bytes handed on at a time */

struct gz_writer {
	bool isal;
	struct isal_zstream zs;
	unsigned char *level_buf;	/* igzip's working memory for its level */
	z_stream z;
	unsigned char out[OUT_SIZE];
};

/* gzip's levels 1..9 onto igzip's 0..3: 1 and 2 are igzip 1 (the same
 * size on trace lines), 3..5 igzip 2, 6..9 igzip 3. */
static int isal_writer_init(struct gz_writer *z, int level)
{
	static const uint32_t buf_size[] = { ISAL_DEF_LVL0_DEFAULT, ISAL_DEF_LVL1_DEFAULT,
					     ISAL_DEF_LVL2_DEFAULT, ISAL_DEF_LVL3_DEFAULT };
	int lvl = level <= 0 ? 0 : level <= 2 ? 1 : level <= 5 ? 2 : 3;

	z->level_buf = malloc(buf_size[lvl]);
	if (!z->level_buf)
		return -ENOMEM;
	isal.deflate_init(&z->zs);
	z->zs.gzip_flag = IGZIP_GZIP;
	z->zs.level = lvl;
	z->zs.level_buf = z->level_buf;
	z->zs.level_buf_size = buf_size[lvl];
	return 0;
}

struct gz_writer *gz_writer_new(int level)
{
	struct gz_writer *z = calloc(1, sizeof(*z));
	int err;

	if (!z)
		return NULL;
	z->isal = use_isal();
	if (z->isal)
		err = isal_writer_init(z, level);
	else
		err = deflateInit2(&z->z, level <= 0 ? 1 : level, Z_DEFLATED, ZLIB_GZIP_WBITS, 8,
				   Z_DEFAULT_STRATEGY) == Z_OK ? 0 : -ENOMEM;
	if (err) {
		free(z);
		return NULL;
	}
	return z;
}

static int isal_put(struct gz_writer *z, const void *p, size_t n, enum gz_flush flush,
		    int (*out)(void *, const void *, size_t), void *ctx)
{
	struct isal_zstream *zs = &z->zs;
	int err;

	zs->next_in = (uint8_t *)p;
	zs->avail_in = n;
	zs->flush = flush == GZ_FULL ? FULL_FLUSH : NO_FLUSH;
	zs->end_of_stream = flush == GZ_FINISH;
	do {
		zs->next_out = z->out;
		zs->avail_out = OUT_SIZE;
		if (isal.deflate(zs) != COMP_OK)
			return -EINVAL;
		err = out(ctx, z->out, OUT_SIZE - zs->avail_out);
		if (err)
			return err;
	} while (zs->avail_in || zs->avail_out == 0 ||
		 (flush == GZ_FINISH && zs->internal_state.state != ZSTATE_END));
	return 0;
}

static int zlib_put(struct gz_writer *z, const void *p, size_t n, enum gz_flush flush,
		    int (*out)(void *, const void *, size_t), void *ctx)
{
	int mode = flush == GZ_FULL ? Z_FULL_FLUSH : flush == GZ_FINISH ? Z_FINISH : Z_NO_FLUSH;
	int rc, err;

	z->z.next_in = (Bytef *)p;
	z->z.avail_in = n;
	do {
		z->z.next_out = z->out;
		z->z.avail_out = OUT_SIZE;
		rc = deflate(&z->z, mode);
		if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR)
			return -EINVAL;
		err = out(ctx, z->out, OUT_SIZE - z->z.avail_out);
		if (err)
			return err;
	} while (z->z.avail_in || z->z.avail_out == 0 ||
		 (flush == GZ_FINISH && rc != Z_STREAM_END));
	return 0;
}

int gz_writer_put(struct gz_writer *z, const void *p, size_t n, enum gz_flush flush,
		  int (*out)(void *ctx, const void *bytes, size_t len), void *ctx)
{
	return z->isal ? isal_put(z, p, n, flush, out, ctx) : zlib_put(z, p, n, flush, out, ctx);
}

uint32_t gz_writer_crc(const struct gz_writer *z)
{
	/* zlib keeps a gzip stream's CRC-32 where a zlib stream's Adler is */
	return z->isal ? z->zs.internal_state.crc : (uint32_t)z->z.adler;
}

void gz_writer_free(struct gz_writer *z)
{
	if (!z)
		return;
	if (!z->isal)
		deflateEnd(&z->z);
	free(z->level_buf);
	free(z);
}

/* ---- reading ---- */

struct gz_reader {
	bool isal;
	struct inflate_state zs;
	z_stream z;
};

struct gz_reader *gz_reader_new(void)
{
	struct gz_reader *z = calloc(1, sizeof(*z));

	if (!z)
		return NULL;
	z->isal = use_isal();
	if (!z->isal && inflateInit2(&z->z, ZLIB_GZIP_WBITS) != Z_OK) {
		free(z);
		return NULL;
	}
	gz_reader_reset(z);
	return z;
}

void gz_reader_reset(struct gz_reader *z)
{
	if (z->isal) {
		isal.inflate_init(&z->zs);
		z->zs.crc_flag = ISAL_GZIP;
	} else {
		inflateReset(&z->z);
	}
}

static ssize_t isal_get(struct gz_reader *z, const unsigned char **in, size_t *in_len,
			void *out, size_t n, bool *done)
{
	int rc;

	z->zs.next_in = (uint8_t *)*in;
	z->zs.avail_in = *in_len;
	z->zs.next_out = out;
	z->zs.avail_out = n;
	rc = isal.inflate(&z->zs);
	*in += *in_len - z->zs.avail_in;
	*in_len = z->zs.avail_in;
	if (rc < 0)
		return rc == ISAL_INCORRECT_CHECKSUM ? GZ_CHECKSUM : GZ_CORRUPT;
	*done = z->zs.block_state == ISAL_BLOCK_FINISH;
	return n - z->zs.avail_out;
}

static ssize_t zlib_get(struct gz_reader *z, const unsigned char **in, size_t *in_len,
			void *out, size_t n, bool *done)
{
	int rc;

	z->z.next_in = (Bytef *)*in;
	z->z.avail_in = *in_len;
	z->z.next_out = out;
	z->z.avail_out = n;
	rc = inflate(&z->z, Z_NO_FLUSH);
	*in += *in_len - z->z.avail_in;
	*in_len = z->z.avail_in;
	if (rc == Z_DATA_ERROR)
		return z->z.msg && strstr(z->z.msg, "check") ? GZ_CHECKSUM : GZ_CORRUPT;
	if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR)
		return GZ_CORRUPT;
	*done = rc == Z_STREAM_END;
	return n - z->z.avail_out;
}

ssize_t gz_reader_get(struct gz_reader *z, const unsigned char **in, size_t *in_len,
		      void *out, size_t n, bool *done)
{
	*done = false;
	return z->isal ? isal_get(z, in, in_len, out, n, done) :
			 zlib_get(z, in, in_len, out, n, done);
}

void gz_reader_free(struct gz_reader *z)
{
	if (!z)
		return;
	if (!z->isal)
		inflateEnd(&z->z);
	free(z);
}
