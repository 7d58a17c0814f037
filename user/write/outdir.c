// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include "dftrace.h"
#include "lib/invoker.h"
#include "lib/vec.h"
#include "lib/fdlimit.h"
#include "write/outdir.h"

/* Descriptors kept for everything else: /proc reads, the uprobes of
 * libraries found later with annotations. The kernel side's own (each
 * program, map and link has one) are counted: the budget is taken at the
 * first file, after they are made. */
#define FD_RESERVE 64
#define MIN_BUDGET 8

static uint32_t fd_budget(void)
{
	struct rlimit rl;
	uint64_t room;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur == RLIM_INFINITY)
		return UINT32_MAX;
	room = rl.rlim_cur > fd_count_open() + FD_RESERVE ?
		       rl.rlim_cur - fd_count_open() - FD_RESERVE : 0;
	return room < MIN_BUDGET ? MIN_BUDGET : room > UINT32_MAX ? UINT32_MAX : room;
}

static int make_dir(const char *path, const struct invoker *as, char *err,
		    size_t errlen)
{
	struct fs_identity me;
	int fd, rc = invoker_fs_enter(as, &me);

	if (rc)
		goto cannot;
	if (mkdir(path, 0755) && errno != EEXIST)
		rc = -errno;
	fd = rc ? -1 : open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (!rc && fd < 0)
		rc = -errno;
	fs_identity_restore(&me);
	if (rc)
		goto cannot;
	return fd;
cannot:
	snprintf(err, errlen, "cannot create output directory '%s': %s", path,
		 rc == -ENOTDIR ? "not a directory" : strerror(-rc));
	return rc;
}

/* Safe bytes of a name for a file name: no '/', no '.', nothing that is
 * not printable ASCII. */
static void safe_copy(char *dst, size_t size, const char *src)
{
	size_t i;

	for (i = 0; i + 1 < size && src[i]; i++) {
		char c = src[i];

		dst[i] = c == '/' || c == '.' || c < 0x20 || c > 0x7e ? '_' : c;
	}
	dst[i] = 0;
}

int outdir_open(struct outdir **out, const char *path, const struct invoker *as,
		int gzip_level, char *err, size_t errlen)
{
	struct outdir *d;
	int fd;

	*out = NULL;
	if (!*path) {
		snprintf(err, errlen, "empty output directory path");
		return -EINVAL;
	}
	fd = make_dir(path, as, err, errlen);
	if (fd < 0)
		return fd;
	d = calloc(1, sizeof(*d));
	if (!d || !(d->path = strdup(path))) {
		free(d);
		close(fd);
		snprintf(err, errlen, "cannot create output directory '%s': %s",
			 path, strerror(ENOMEM));
		return -ENOMEM;
	}
	d->dir_fd = fd;
	d->as = as;
	if (gethostname(d->host, sizeof(d->host) - 1))
		strcpy(d->host, "localhost");
	safe_copy(d->host, sizeof(d->host), d->host);
	d->gzip_level = gzip_level;
	*out = d;
	return 0;
}

/* DIR/<host>[-r<rank>]-<comm>-<pid>[.<gen>].pfw[.gz]: files of several
 * nodes and ranks in one shared directory never collide. comm comes from
 * the traced process, so only safe bytes of it are kept. */
static void file_name(const struct outdir *d, char *buf, size_t len,
		      const struct file_tag *tag, uint32_t pid, uint32_t gen)
{
	char comm[DFT_COMM_LEN], rank[16] = "", g[16] = "";

	safe_copy(comm, sizeof(comm), tag->comm);
	if (tag->rank >= 0)
		snprintf(rank, sizeof(rank), "-r%d", tag->rank);
	if (gen > 1)
		snprintf(g, sizeof(g), ".%u", gen);
	snprintf(buf, len, "%s/%s%s-%s-%u%s.pfw%s", d->path, d->host, rank,
		 comm[0] ? comm : "proc", pid, g, d->gzip_level >= 0 ? ".gz" : "");
}

/* Least recently used first. */
static int by_last_use(const void *a, const void *b)
{
	const struct sink *x = *(struct sink *const *)a, *y = *(struct sink *const *)b;

	return x->last_use < y->last_use ? -1 : x->last_use > y->last_use;
}

/* Suspends the older half of the files holding a descriptor, so that a
 * run with more files than descriptors reopens files in batches. */
static int make_room(struct outdir *d)
{
	struct sink **held = malloc(d->nheld * sizeof(*held));
	uint32_t n = 0;
	int err = 0;

	if (!held)
		return -ENOMEM;
	for (uint32_t i = 0; i < d->nopen; i++)
		if (!d->open[i]->suspended)
			held[n++] = d->open[i];
	qsort(held, n, sizeof(*held), by_last_use);
	for (uint32_t i = 0; i < (n + 1) / 2 && !err; i++) {
		err = sink_suspend(held[i]);
		if (!err) {
			d->nheld--;
			d->suspensions++;
		}
	}
	free(held);
	return err;
}

static int ensure_room(struct outdir *d, char *err, size_t errlen)
{
	int rc;

	/* counted at the first file, once the kernel side holds its
	 * descriptors (a program, a map, a link: each one) */
	if (!d->budget)
		d->budget = fd_budget();
	if (d->nheld < d->budget)
		return 0;
	rc = make_room(d);
	if (rc)
		snprintf(err, errlen, "cannot close idle trace files in '%s': %s",
			 d->path, strerror(-rc));
	return rc;
}

static int track(struct outdir *d, struct sink *s)
{
	s->slot = d->nopen;
	if (VEC_PUSH(d->open, d->nopen, d->capopen, s))
		return -ENOMEM;
	d->nheld++;
	return 0;
}

int outdir_create(struct outdir *d, uint32_t pid, const struct file_tag *tag,
		  struct sink **out, char *err, size_t errlen)
{
	uint64_t gen = 1;
	struct output_opts o = { .gzip_level = d->gzip_level, .as = d->as,
				 .dir_fd = &d->dir_fd };
	char path[4096];
	struct sink *s;
	int rc;

	if (hmap_get(&d->gens, pid, &gen))
		gen++;
	rc = ensure_room(d, err, errlen);
	if (rc)
		return rc;
	file_name(d, path, sizeof(path), tag, pid, gen);
	o.path = path;
	rc = sink_open(&o, &s, err, errlen);
	if (!rc && (rc = output_commit(s->out, err, errlen)))
		sink_abort(s);
	if (!rc && (rc = track(d, s))) {
		sink_abort(s);
		snprintf(err, errlen, "cannot create '%s': %s", path, strerror(-rc));
	}
	if (rc)
		return rc;
	hmap_put(&d->gens, pid, gen);
	s->pid = pid;
	s->gen = gen;
	s->last_use = ++d->clock;
	*out = s;
	return 0;
}

int outdir_rename(struct outdir *d, struct sink *s, const struct file_tag *tag,
		  char *err, size_t errlen)
{
	char path[4096];

	file_name(d, path, sizeof(path), tag, s->pid, s->gen);
	if (!strcmp(path, output_path(s->out)))
		return 0;
	return output_rename(s->out, path, err, errlen);
}

int outdir_resume(struct outdir *d, struct sink *s, char *err, size_t errlen)
{
	int rc;

	if (!s->suspended)
		return 0;
	rc = ensure_room(d, err, errlen);
	if (!rc)
		rc = sink_resume(s, err, errlen);
	if (!rc)
		d->nheld++;
	return rc;
}

int outdir_close_file(struct outdir *d, struct sink *s, char *err,
		      size_t errlen)
{
	struct sink *last = d->open[--d->nopen];

	d->open[s->slot] = last;
	last->slot = s->slot;
	if (!s->suspended)
		d->nheld--;
	return sink_close(s, err, errlen);
}

void outdir_free(struct outdir *d)
{
	if (!d)
		return;
	for (uint32_t i = 0; i < d->nopen; i++)
		sink_abort(d->open[i]);
	close(d->dir_fd);
	hmap_free(&d->gens);
	free(d->open);
	free(d->path);
	free(d);
}
