/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Inside an output: shared by output.c (the stream: buffers, gzip,
 * failures) and place.c (where the file is made, named and reopened). */
#ifndef WRITE_OUTPUT_IMPL_H
#define WRITE_OUTPUT_IMPL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "lib/gz.h"
#include "write/output.h"

#define IN_BUF_SIZE (1 << 20)	/* uncompressed bytes gathered per write/deflate */

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
	struct gz_writer *zs;	/* one standard gzip stream */

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

/* place.c: everything that touches the directory, as o->as. */

/* The directory and a new unnamed (or, without O_TMPFILE, hidden) file
 * in it; 0 or -errno with a message in err. */
int place_open(struct output *o, const struct output_opts *opts, char *err,
	       size_t errlen);
/* Gives the file its name, replacing what is there: 0 or -errno. */
int place_commit(struct output *o);
/* The committed file again, for writing: an fd or -errno. */
int place_reopen(struct output *o);
/* A new name in the same directory: 0 or -errno with a message. */
int place_rename(struct output *o, const char *new_path, char *err,
		 size_t errlen);
/* Removes a temporary name left by a failed start. */
void place_discard(struct output *o);

#endif
