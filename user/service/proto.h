/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The service's wire format (dftrace-bpf serve, issue 38), on a Unix
 * stream socket.
 *
 * The client sends one request: a header, then the tracer's arguments
 * (argc strings, each ending in NUL, len bytes in all), and with the
 * header its descriptors (SCM_RIGHTS): its working directory, its
 * stdout and stderr, and, for "-- CMD", a pidfd of the command it
 * started and holds. Nothing in it says who the client is: the service
 * asks the kernel (SO_PEERCRED).
 *
 * The service answers with replies: READY (tracing has begun: the
 * client lets its command go; value: the tracer's pid), DONE (value: the
 * tracer's exit status), ERROR (value: a text's length, the text after
 * it: why the request was refused).
 */
#ifndef SERVICE_PROTO_H
#define SERVICE_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PROTO_MAGIC 0x42544644u	/* "DFTB" */
#define PROTO_VERSION 1
#define PROTO_MAX_ARGS 256
#define PROTO_MAX_BYTES (64u << 10)
#define PROTO_MAX_ERROR 1024
/* cwd, stdout, stderr, and the command's pidfd */
#define PROTO_FDS 3
#define PROTO_MAX_FDS 4

enum { PROTO_CHILD = 1 };	/* flags: a pidfd of the client's command follows */

struct proto_header {
	uint32_t magic;
	uint16_t version, flags;
	uint32_t argc, len;
	int32_t child;		/* PROTO_CHILD: the command's pid */
	uint32_t reserved;
};

enum proto_reply_kind { PROTO_READY = 1, PROTO_DONE, PROTO_ERROR };

struct proto_reply {
	uint32_t kind;
	int32_t value;
};

/* A request's arguments, checked: argv[argc] is NULL; they point into
 * the caller's buffer. */
struct proto_request {
	struct proto_header h;
	char *argv[PROTO_MAX_ARGS + 1];
	int argc;
};

/* The header, checked alone (the payload's length comes from it): 0, or
 * -EPROTO with why in err. */
int proto_check_header(const struct proto_header *h, char *err, size_t errlen);
/* The payload of len bytes (h->len) split into r's arguments: 0, or
 * -EPROTO with why in err. buf is kept (r points into it). */
int proto_parse_args(const struct proto_header *h, char *buf, size_t len,
		     struct proto_request *r, char *err, size_t errlen);

#endif
