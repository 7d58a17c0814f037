// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "lib/hash.h"
#include "lib/procfs.h"
#include "lib/vec.h"
#include "model/fileids.h"

struct fileid {
	uint64_t dev, ino;
	struct istr *path;	/* NULL: looked for, not found */
	bool code;		/* mapped executable */
};

#define KDEV(major, minor) ((uint64_t)(major) << 20 | (minor))

static uint64_t key_of(uint64_t dev, uint64_t ino)
{
	uint64_t k[2] = { dev, ino };

	return dft_hash64(k, sizeof(k));
}

static struct fileid *find(struct fileids *f, uint64_t dev, uint64_t ino)
{
	uint64_t v;

	for (uint64_t k = key_of(dev, ino); hmap_get(&f->by_id, k, &v); k++) {
		struct fileid *e = (void *)(uintptr_t)v;

		if (e->dev == dev && e->ino == ino)
			return e;
	}
	return NULL;
}

static struct fileid *remember(struct fileids *f, uint64_t dev, uint64_t ino,
			       struct istr *path, bool code)
{
	struct fileid *e = find(f, dev, ino);
	uint64_t k = key_of(dev, ino), v;

	if (e) {
		if (path)
			e->path = path;
		e->code |= code;
		return e;
	}
	e = malloc(sizeof(*e));
	if (!e)
		return NULL;
	*e = (struct fileid){ dev, ino, path, code };
	while (hmap_get(&f->by_id, k, &v))
		k++;
	if (hmap_put_ptr(&f->by_id, k, e)) {
		free(e);
		return NULL;
	}
	return e;
}

/* Files a process's /proc showed, kept once the process is proven the
 * one traced (model/procs.h). */
struct seen_file {
	uint64_t dev, ino;
	struct istr *path;
	bool code;
};

struct seen_files {
	struct seen_file *v;
	uint32_t n, cap;
};

static void saw(struct seen_files *s, uint64_t dev, uint64_t ino, const char *path, size_t n,
		bool code)
{
	struct seen_file f = { dev, ino, istr_intern(path, n, false), code };

	(void)VEC_PUSH(s->v, s->n, s->cap, f);
}

static void learn_map(const struct procfs_map *m, void *ctx)
{
	if (m->ino && m->path[0] == '/')
		saw(ctx, KDEV(m->major, m->minor), m->ino, m->path, strlen(m->path),
		    m->perms[2] == 'x');
}

/* The files its fds point at (deleted ones too: the link still opens). */
static void learn_fds(struct seen_files *s, uint32_t pid)
{
	char dir[64], target[4096];
	struct dirent *de;
	struct stat st;
	int dfd;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%u/fd", pid);
	d = opendir(dir);
	if (!d)
		return;
	dfd = dirfd(d);
	while ((de = readdir(d))) {
		ssize_t n;

		if (de->d_name[0] == '.' || fstatat(dfd, de->d_name, &st, 0) ||
		    !S_ISREG(st.st_mode))
			continue;
		n = readlinkat(dfd, de->d_name, target, sizeof(target) - 1);
		if (n <= 0 || target[0] != '/')
			continue;
		saw(s, KDEV(major(st.st_dev), minor(st.st_dev)), st.st_ino, target, n, false);
	}
	closedir(d);
}

/* What p maps and has open, as /proc shows it, if p is still the
 * process traced. */
static void learn_process(struct fileids *f, const struct proc *p)
{
	struct seen_files s = { 0 };

	procfs_each_map(p->pid, learn_map, &s);
	learn_fds(&s, p->pid);
	for (uint32_t i = 0; i < s.n && proc_proven(p); i++)
		remember(f, s.v[i].dev, s.v[i].ino, s.v[i].path, s.v[i].code);
	free(s.v);
}

struct istr *fileid_path(struct fileids *f, const struct proc *p, uint64_t dev, uint64_t ino)
{
	struct fileid *e = find(f, dev, ino);
	char name[64];

	/* /proc once per program a process runs: what it maps or opens
	 * later, its records name (a torch process's maps run to
	 * thousands of lines, and many files are in none of them) */
	if ((!e || !e->path) && hmap_add(&f->looked, p->pid, 0) == 1) {
		learn_process(f, p);
		e = find(f, dev, ino);
	}
	if (!e)
		e = remember(f, dev, ino, NULL, false);
	if (e && e->path)
		return e->path;
	snprintf(name, sizeof(name), "dev:ino %llu:%llu:%llu",
		 (unsigned long long)(dev >> 20), (unsigned long long)(dev & 0xfffff),
		 (unsigned long long)ino);
	return istr_intern(name, strlen(name), false);
}

void fileid_forget_process(struct fileids *f, uint32_t pid)
{
	hmap_del(&f->looked, pid, NULL);
}

void fileid_learn(struct fileids *f, uint64_t dev, uint64_t ino,
		  struct istr *path, bool code)
{
	remember(f, dev, ino, path, code);
}

struct istr *fileid_known(struct fileids *f, uint64_t dev, uint64_t ino)
{
	struct fileid *e = find(f, dev, ino);

	return e ? e->path : NULL;
}

bool fileid_is_code(struct fileids *f, uint64_t dev, uint64_t ino)
{
	struct fileid *e = find(f, dev, ino);

	return e && e->code;
}

void fileids_free(struct fileids *f)
{
	hmap_free(&f->looked);
	hmap_free_ptrs(&f->by_id);
}
