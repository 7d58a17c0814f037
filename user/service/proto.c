// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "service/proto.h"

static int bad(char *err, size_t errlen, const char *why)
{
	snprintf(err, errlen, "bad request: %s", why);
	return -EPROTO;
}

int proto_check_header(const struct proto_header *h, char *err, size_t errlen)
{
	if (h->magic != PROTO_MAGIC)
		return bad(err, errlen, "not a dftrace-bpf client");
	if (h->version != PROTO_VERSION)
		return bad(err, errlen, "another version of dftrace-bpf");
	if (h->flags & ~PROTO_CHILD || h->reserved)
		return bad(err, errlen, "unknown flags");
	if (h->argc > PROTO_MAX_ARGS || h->len > PROTO_MAX_BYTES)
		return bad(err, errlen, "too many arguments");
	if (!(h->flags & PROTO_CHILD) != !h->child || h->child < 0)
		return bad(err, errlen, "a command's pid without its flag");
	return 0;
}

int proto_parse_args(const struct proto_header *h, char *buf, size_t len,
		     struct proto_request *r, char *err, size_t errlen)
{
	size_t at = 0;

	if (len != h->len)
		return bad(err, errlen, "arguments cut short");
	r->h = *h;
	r->argc = 0;
	while (at < len) {
		char *nul = memchr(buf + at, '\0', len - at);

		if (!nul)
			return bad(err, errlen, "an argument without its end");
		if ((uint32_t)r->argc == h->argc)
			return bad(err, errlen, "more arguments than said");
		r->argv[r->argc++] = buf + at;
		at = nul - buf + 1;
	}
	if ((uint32_t)r->argc != h->argc)
		return bad(err, errlen, "fewer arguments than said");
	r->argv[r->argc] = NULL;
	return 0;
}
