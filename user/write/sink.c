// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include "write/sink.h"

/* Room for two batches: one being drained, one being built. */
#define SINK_BUF_BYTES (2 * SINK_DRAIN_BYTES)

static struct sink *sink_new(void)
{
	struct sink *s = calloc(1, sizeof(*s));

	if (s && jb_init(&s->buf, SINK_BUF_BYTES)) {
		free(s);
		return NULL;
	}
	return s;
}

static void sink_free(struct sink *s)
{
	jb_free(&s->buf);
	hmap_free(&s->seen);
	hmap_free(&s->named);
	free(s);
}

int sink_open(const struct output_opts *o, struct sink **out, char *err,
	      size_t errlen)
{
	struct sink *s = sink_new();
	int ret;

	if (!s)
		return -ENOMEM;
	ret = output_open(o, &s->out, err, errlen);
	if (ret) {
		sink_free(s);
		return ret;
	}
	*out = s;
	return 0;
}

struct sink *sink_memory(void)
{
	return sink_new();
}

bool sink_first_sight(struct sink *s, uint64_t hash)
{
	/* Out of memory: say yes, a repeated line is harmless. */
	return hmap_add(&s->seen, hash, 0) != 0;
}

int sink_flush(struct sink *s)
{
	int ret = 0;

	if (!s->out)
		return 0;
	if (s->buf.len)
		ret = output_write(s->out, s->buf.p, s->buf.len);
	jb_reset(&s->buf);
	return ret ? ret : output_flush(s->out);
}

int sink_suspend(struct sink *s)
{
	int ret = sink_flush(s);

	if (!ret)
		ret = output_suspend(s->out);
	if (!ret)
		s->suspended = true;
	return ret;
}

int sink_resume(struct sink *s, char *err, size_t errlen)
{
	int ret = output_resume(s->out, err, errlen);

	if (!ret)
		s->suspended = false;
	return ret;
}

int sink_close(struct sink *s, char *err, size_t errlen)
{
	int ret = 0;

	if (!s)
		return 0;
	if (s->out && s->buf.len)
		output_write(s->out, s->buf.p, s->buf.len);
	if (s->out)
		ret = output_close(s->out, err, errlen);
	sink_free(s);
	return ret;
}

void sink_abort(struct sink *s)
{
	if (!s)
		return;
	output_abort(s->out);
	sink_free(s);
}
