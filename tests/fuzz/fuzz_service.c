// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer over what the service (dftrace-bpf serve) parses: a client's
 * request (user/service/proto.c: its header, then its arguments) and the
 * policy file (user/service/policy.c). An input's first byte says which:
 * even, a request (the header's bytes, then the arguments'); odd, a
 * policy's text. tests/fuzz/run runs it.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "service/policy.h"
#include "service/proto.h"

static void request(const uint8_t *p, size_t n)
{
	struct proto_header h;
	static struct proto_request r;
	char err[256], *args;

	if (n < sizeof(h))
		return;
	memcpy(&h, p, sizeof(h));
	if (proto_check_header(&h, err, sizeof(err)))
		return;
	p += sizeof(h);
	n -= sizeof(h);
	/* the service reads h.len bytes into a buffer of that size, or fewer */
	args = malloc(n ? n : 1);
	if (!args)
		return;
	memcpy(args, p, n);
	if (!proto_parse_args(&h, args, n, &r, err, sizeof(err)))
		for (int i = 0; i < r.argc; i++)
			if (strlen(r.argv[i]) > n)
				abort();
	free(args);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct policy p;
	char err[256];

	if (!size)
		return 0;
	if (data[0] & 1)
		(void)policy_parse(&p, (const char *)data + 1, size - 1, "fuzz", err, sizeof(err));
	else
		request(data + 1, size - 1);
	return 0;
}
