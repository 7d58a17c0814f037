// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer over the trace reader (user/read): every shape it takes
 * (.pfw lines, DFTracer's, torch's array, Kineto's object), plain or
 * gzipped, read whole or skimmed, through buffers of a few bytes (the
 * Makefile builds it so) so that a read boundary falls on every byte.
 *
 * An input's first byte says how its other bytes are given to the reader:
 *   bit 0  gzipped (as one member, or bit 2: as two)
 *   bit 1  READER_SKIM
 *   bit 3  READER_STRICT (an event out of range refused, not skipped)
 * Each event goes through summary's analyses too (profile and findings).
 * tests/fuzz/run runs it; see there for the corpus and the crashes kept.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>
#include "analyze/profile.h"
#include "read/reader.h"

static void put_gzip_member(int fd, const uint8_t *p, size_t n)
{
	z_stream z = { 0 };
	unsigned char out[4096];

	if (deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		abort();
	z.next_in = (unsigned char *)p;
	z.avail_in = n;
	do {
		z.next_out = out;
		z.avail_out = sizeof(out);
		deflate(&z, Z_FINISH);
		if (write(fd, out, sizeof(out) - z.avail_out) < 0)
			abort();
	} while (z.avail_out == 0);
	deflateEnd(&z);
}

/* The events through the analyses too (summary's groupings, with the
 * findings): whatever an event says, they neither crash nor leak. */
static void analyze(struct profile *p, struct ev_input *in, const struct rec *e)
{
	struct ev ev;

	if (ev_from_rec(in, e, &ev) > 0)
		profile_add(p, in, 0, &ev);
}

/* Everything a caller looks at in an event, so that each span is read. */
static void use_event(const struct rec *e)
{
	struct rec_fine fine = REC_FINE_NONE;
	char text[256];
	struct span v;
	int64_t start, end;

	js_unescape(e->name, text, sizeof(text));
	js_unescape(e->cat, text, sizeof(text));
	if (e->args.len && js_get(e->args, "fhash", &v))
		js_unescape(v, text, sizeof(text));
	for (int i = 0; i < e->nargs; i++)
		rec_fine_member(e->arg_key[i], e->arg_val[i], &fine);
	if (e->has_ts && e->has_dur)
		rec_span_ns(e, fine, &start, &end);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64], err[512];
	struct reader *r;
	struct rec e;
	unsigned int mode;
	int fd, rc;

	if (!size)
		return 0;
	mode = data[0];
	data++;
	size--;
	fd = memfd_create("trace", MFD_CLOEXEC);
	if (fd < 0)
		abort();
	if (!(mode & 1)) {
		if (size && write(fd, data, size) != (ssize_t)size)
			abort();
	} else if (mode & 4) {
		put_gzip_member(fd, data, size / 2);
		put_gzip_member(fd, data + size / 2, size - size / 2);
	} else {
		put_gzip_member(fd, data, size);
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	err[0] = 0;
	rc = reader_open(&r, path, (mode & 2 ? READER_SKIM : 0) | (mode & 8 ? READER_STRICT : 0),
			 err, sizeof(err));
	if (!rc) {
		const struct reader_meta *m = reader_meta(r);
		char *specs[] = { "op", "phase,file", "rank,step" };
		struct ev_input in;
		struct profile p;
		uint64_t line;

		if (m->distributed_info)
			(void)strlen(m->distributed_info);
		ev_input_init(&in, path);
		if (profile_init(&p, specs, 3, err, sizeof(err)))
			abort();
		profile_find(&p, 0);
		while ((rc = reader_next(r, &e, err, sizeof(err))) > 0) {
			use_event(&e);
			analyze(&p, &in, &e);
		}
		profile_finish(&p);
		profile_free(&p);
		ev_input_free(&in);
		/* events skipped have a line; none when strict refuses them */
		if (reader_skipped(r, &line) && (line < 1 || (mode & 8)))
			abort();
		reader_close(r);
	}
	/* an error says what, in one line */
	if (rc < 0 && (!err[0] || strchr(err, '\n')))
		abort();
	close(fd);
	return 0;
}
