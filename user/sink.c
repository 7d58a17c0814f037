// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include "sink.h"

int sink_open(const struct output_opts *o, struct sink **out, char *err,
	      size_t errlen)
{
	struct sink *s = calloc(1, sizeof(*s));
	int ret;

	if (!s)
		return -ENOMEM;
	ret = jb_init(&s->buf, 512 << 10);
	if (!ret)
		ret = output_open(o, &s->out, err, errlen);
	if (ret) {
		jb_free(&s->buf);
		free(s);
		return ret;
	}
	*out = s;
	return 0;
}

static int seen_grow(struct sink *s)
{
	size_t cap = s->seen_cap ? s->seen_cap * 2 : 256;
	uint64_t *n = calloc(cap, sizeof(*n));

	if (!n)
		return -ENOMEM;
	for (size_t i = 0; i < s->seen_cap; i++) {
		size_t j;

		if (!s->seen[i])
			continue;
		for (j = s->seen[i] & (cap - 1); n[j]; j = (j + 1) & (cap - 1))
			;
		n[j] = s->seen[i];
	}
	free(s->seen);
	s->seen = n;
	s->seen_cap = cap;
	return 0;
}

bool sink_first_sight(struct sink *s, uint64_t hash)
{
	size_t i;

	if (!hash)
		hash = 1; /* 0 marks an empty slot */
	if ((s->seen_n + 1) * 2 > s->seen_cap && seen_grow(s))
		return true;
	for (i = hash & (s->seen_cap - 1); s->seen[i];
	     i = (i + 1) & (s->seen_cap - 1))
		if (s->seen[i] == hash)
			return false;
	s->seen[i] = hash;
	s->seen_n++;
	return true;
}

int sink_flush(struct sink *s)
{
	int ret = 0;

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
	int ret;

	if (!s)
		return 0;
	if (s->buf.len)
		output_write(s->out, s->buf.p, s->buf.len);
	ret = output_close(s->out, err, errlen);
	jb_free(&s->buf);
	free(s->seen);
	free(s);
	return ret;
}

void sink_abort(struct sink *s)
{
	if (!s)
		return;
	output_abort(s->out);
	jb_free(&s->buf);
	free(s->seen);
	free(s);
}
