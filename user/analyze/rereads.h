/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Reads of what was read before, per file and epoch (the repeated_reads
 * finding, analyze/findings.h): each read's byte range, from its offset
 * (pread) or from the file position its fd's calls leave (open sets it
 * to 0, read moves it, lseek sets it to what it returns, close forgets
 * it; where events name no fd, the process's calls), against the
 * ranges read so far in the epoch. A key keeps RANGES_MAX disjoint
 * ranges at most; past them it is not judged (full).
 */
#ifndef ANALYZE_REREADS_H
#define ANALYZE_REREADS_H

#include <stdbool.h>
#include <stdint.h>
#include "lib/hmap.h"

struct ev;

#define RANGES_MAX 4096

struct reread_key {
	const char *file;	/* the caller's, one pointer a file (unescaped) */
	int64_t epoch;		/* -1: none */
	int64_t reads, rereads, reread_ns, reread_bytes, distinct;
	int64_t *lo, *hi;	/* disjoint, in order */
	uint32_t n, cap;
	bool full;
};

struct rereads {
	struct hmap keys;	/* hash of (file, epoch) -> struct reread_key * */
	struct hmap pos;	/* (input, pid, file) -> file position + 1 */
	uint64_t dropped;	/* keys past their bound */
	int err;
};

/* An event of input number input on file: its name, unescaped, the same
 * pointer for every event of the file and alive until rereads_free(). */
void rereads_add(struct rereads *r, uint16_t input, const struct ev *e, const char *file);
void rereads_free(struct rereads *r);

#endif
