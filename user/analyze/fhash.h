/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The file paths of one trace: DFTracer's FH lines map a hash (v2: 16 hex
 * digits in a string; v1: an integer) to a path, and events name their
 * file by args.fhash. Paths are kept as the file wrote them: JSON string
 * contents, still escaped, ready to be written again.
 */
#ifndef ANALYZE_FHASH_H
#define ANALYZE_FHASH_H

#include <stdbool.h>
#include "lib/hmap.h"
#include "read/jscan.h"
#include "read/reader.h"

struct fh_table {
	struct hmap paths;	/* hash of the token -> struct fh_path * */
};

struct fh_path {
	size_t len;
	char text[];		/* escaped; not NUL-terminated */
};

/* Learns the path of an FH line (ph "M", name "FH"). */
void fh_table_add(struct fh_table *t, const struct rec *e);
/* The path an fhash value names, or NULL. */
const struct fh_path *fh_table_get(const struct fh_table *t, struct span fhash);
void fh_table_free(struct fh_table *t);

#endif
