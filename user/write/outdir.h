/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * -D: a directory of trace files, one per process.
 *
 * One directory descriptor serves every file.  A pid that comes back
 * (pid reuse) never replaces a file of this run: the n-th process with a
 * pid gets "<comm>-<pid>.<n>.pfw.gz".  When descriptors run short, the
 * least recently used files are suspended (complete on disk, closed) and
 * reopened when written to again: each stays one gzip stream.
 */
#ifndef WRITE_OUTDIR_H
#define WRITE_OUTDIR_H

#include <stdint.h>
#include <stddef.h>
#include "lib/hmap.h"
#include "write/sink.h"

struct invoker;

struct outdir {
	uint64_t clock;		/* use counter: a sink's last_use is a tick */
	char *path;
	int dir_fd;
	const struct invoker *as;
	int gzip_level;
	struct hmap gens;	/* pid -> files made for it so far */
	struct sink **open;	/* every file not yet closed; sink->slot */
	uint32_t nopen, capopen;
	uint32_t nheld;		/* of those, holding a descriptor */
	uint32_t budget;	/* descriptors we may hold */
	uint64_t suspensions;
	char host[64];		/* in every file name */
};

/* What names a process's file beside its pid. */
struct file_tag {
	const char *comm;
	int rank;		/* -1: unknown */
};

/* Creates the directory if needed (as `as`, with its permissions) and
 * opens it.  gzip_level -1: plain .pfw files. */
int outdir_open(struct outdir **out, const char *path, const struct invoker *as,
		int gzip_level, char *err, size_t errlen);
/* A new, committed file for process pid, named after the host and tag:
 * DIR/<host>[-r<rank>]-<comm>-<pid>[.<gen>].pfw[.gz]. */
int outdir_create(struct outdir *d, uint32_t pid, const struct file_tag *tag,
		  struct sink **out, char *err, size_t errlen);
/* Names s's file after tag: a process that exec'd. */
int outdir_rename(struct outdir *d, struct sink *s, const struct file_tag *tag,
		  char *err, size_t errlen);
/* Before writing to s: it holds a descriptor, and counts as just used. */
int outdir_resume(struct outdir *d, struct sink *s, char *err, size_t errlen);
static inline int outdir_use(struct outdir *d, struct sink *s, char *err,
			     size_t errlen)
{
	s->last_use = ++d->clock;
	return s->suspended ? outdir_resume(d, s, err, errlen) : 0;
}
/* Closes s's file for good (its last lines already written). */
int outdir_close_file(struct outdir *d, struct sink *s, char *err,
		      size_t errlen);
/* Closes the directory; every file must be closed already.  NULL-safe. */
void outdir_free(struct outdir *d);

#endif
