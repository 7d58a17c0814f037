/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The bytes of a trace file: plain, or gzip (one stream or several
 * members), inflated with ISA-L as they are read. */
#ifndef READ_INPUT_H
#define READ_INPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct input;

/* 0, or -errno with a one-line message in err. regular: only a regular
 * file (a path a trace recorded: never a FIFO to hang on). */
int input_open(struct input **in, const char *path, bool regular, char *err,
	       size_t errlen);
/* Up to n bytes: how many, 0 at the end, or -errno with a message in err
 * (a corrupt gzip stream is -EBADMSG, one cut short -ENODATA, with the
 * reason alone in err, since the caller knows where in the text that is). */
ssize_t input_read(struct input *in, void *buf, size_t n, char *err,
		   size_t errlen);
/* Back to the first byte. */
int input_rewind(struct input *in, char *err, size_t errlen);
void input_close(struct input *in);

#endif
