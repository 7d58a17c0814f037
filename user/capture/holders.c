// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include "capture/holders.h"
#include "lib/procfs.h"
#include "lib/vec.h"

/* A process's executable mapping of a probed file, [start, end) where
 * known (end 0: not known, an exec). */
struct held {
	void *file;
	uint64_t start, end;
};

struct holdings {
	struct held *h;
	uint32_t n, cap;
};

/* ---- how many hold a file ---- */

uint32_t holders_of(const struct holders *h, const void *file)
{
	uint64_t n;

	return hmap_get(&h->count, (uintptr_t)file, &n) ? n : 0;
}

static bool count_up(struct holders *h, void *file)
{
	return !hmap_put(&h->count, (uintptr_t)file, holders_of(h, file) + 1);
}

/* One process fewer holds file: at none, it is released. */
static void count_down(struct holders *h, void *file)
{
	uint32_t n = holders_of(h, file);

	if (n > 1) {
		hmap_put(&h->count, (uintptr_t)file, n - 1); /* a key there: no room taken */
		return;
	}
	hmap_del(&h->count, (uintptr_t)file, NULL);
	h->released(h->ctx, file);
}

/* ---- a process's holdings ---- */

/* Whether s holds file in its first n entries. */
static bool holds(const struct holdings *s, uint32_t n, const void *file)
{
	for (uint32_t i = 0; s && i < n && i < s->n; i++)
		if (s->h[i].file == file)
			return true;
	return false;
}

static void free_holdings(struct holdings *s)
{
	if (s)
		free(s->h);
	free(s);
}

bool holders_has(const struct holders *h, uint32_t pid)
{
	uint64_t v;

	return hmap_get(&h->by_pid, pid, &v);
}

void holders_add(struct holders *h, uint32_t pid, void *file, uint64_t start, uint64_t end)
{
	struct holdings *s = hmap_get_ptr(&h->by_pid, pid);
	bool had = holds(s, UINT32_MAX, file);

	for (uint32_t i = 0; s && i < s->n; i++) {
		struct held *e = &s->h[i];

		if (e->file == file && (!e->end || (e->start == start && e->end == end))) {
			if (end)
				*e = (struct held){ file, start, end };
			return;
		}
	}
	if (!s && (s = calloc(1, sizeof(*s))) && hmap_put_ptr(&h->by_pid, pid, s)) {
		free(s);
		s = NULL;
	}
	if (s && !VEC_PUSH(s->h, s->n, s->cap, ((struct held){ file, start, end }))) {
		if (had || count_up(h, file))
			return;
		s->n--;
	}
	/* no memory: not held by pid, and released if no other holds it */
	if (!holders_of(h, file))
		h->released(h->ctx, file);
}

void holders_fork(struct holders *h, uint32_t parent, uint32_t child)
{
	struct holdings *s = hmap_get_ptr(&h->by_pid, parent);

	for (uint32_t i = 0; s && i < s->n; i++)
		holders_add(h, child, s->h[i].file, s->h[i].start, s->h[i].end);
}

void holders_gone(struct holders *h, uint32_t pid)
{
	struct holdings *s = hmap_del_ptr(&h->by_pid, pid);

	for (uint32_t i = 0; s && i < s->n; i++)
		if (!holds(s, i, s->h[i].file))
			count_down(h, s->h[i].file);
	free_holdings(s);
}

/* pid's holdings (it has some) become now's: the files it no longer
 * maps are let go. */
static void replace_holdings(struct holders *h, uint32_t pid, struct holdings *now)
{
	struct holdings *old = hmap_get_ptr(&h->by_pid, pid);
	uint32_t kept = 0;

	/* a file counted for pid twice or not at all would be released
	 * while mapped, or never: those not counted are left out */
	for (uint32_t i = 0; i < now->n; i++)
		if (holds(old, UINT32_MAX, now->h[i].file) || holds(now, kept, now->h[i].file) ||
		    count_up(h, now->h[i].file))
			now->h[kept++] = now->h[i];
	now->n = kept;
	for (uint32_t i = 0; i < old->n; i++)
		if (!holds(now, UINT32_MAX, old->h[i].file) && !holds(old, i, old->h[i].file))
			count_down(h, old->h[i].file);
	free(old->h);
	*old = *now;
	if (!old->n)
		free_holdings(hmap_del_ptr(&h->by_pid, pid));
}

/* ---- what /proc shows ---- */

/* A process's executable file mappings as /proc shows them: those of
 * probed files into now, the others kept to be looked at by path. */
struct rescan {
	struct holders *h;
	struct holdings now;
	struct unmatched {
		uint64_t start, end;
		char *path;
	} *other;
	uint32_t nother, capother;
};

static void rescan_map(const struct procfs_map *m, void *ctx)
{
	struct rescan *r = ctx;
	struct unmatched u = { m->start, m->end, NULL };
	void *file;

	if (m->perms[2] != 'x' || !m->path[0])
		return;
	file = r->h->find(r->h->ctx, makedev(m->major, m->minor), m->ino);
	if (file) {
		(void)VEC_PUSH(r->now.h, r->now.n, r->now.cap,
			       ((struct held){ file, m->start, m->end }));
		return;
	}
	if (m->path[0] == '/' && (u.path = strdup(m->path)) &&
	    VEC_PUSH(r->other, r->nother, r->capother, u))
		free(u.path);
}

/* Mappings /proc names by other ids than the files' own (overlayfs
 * before 6.8 shows the layer's inode): their paths are asked. Only
 * where a file the process held is not among those found. */
static void match_by_path(struct rescan *r, const struct holdings *old)
{
	bool missing = false;
	struct stat st;
	void *file;

	for (uint32_t i = 0; old && i < old->n; i++)
		missing |= !holds(&r->now, UINT32_MAX, old->h[i].file);
	for (uint32_t i = 0; missing && i < r->nother; i++) {
		if (stat(r->other[i].path, &st) ||
		    !(file = r->h->find(r->h->ctx, st.st_dev, st.st_ino)))
			continue;
		(void)VEC_PUSH(r->now.h, r->now.n, r->now.cap,
			       ((struct held){ file, r->other[i].start, r->other[i].end }));
	}
	for (uint32_t i = 0; i < r->nother; i++)
		free(r->other[i].path);
	free(r->other);
}

/* What pid maps now, as its thread tid sees it (a thread's /proc entry
 * stays while its process lives on after the main thread's exit). A
 * process /proc no longer knows maps nothing; one it cannot read for
 * another reason (no descriptor left), or that may be another by now,
 * keeps what it held: its exit, on its way, lets that go. */
static void rescan(struct holders *h, uint32_t pid, uint32_t tid, uint64_t alive_ns)
{
	struct rescan r = { .h = h };
	bool read = procfs_each_task_map(pid, tid, rescan_map, &r);

	if (!read && (errno == ENOENT || errno == ESRCH) && tid != pid)
		read = procfs_each_map(pid, rescan_map, &r);
	if (read ? h->proven && !h->proven(h->ctx, pid, alive_ns) :
		   errno != ENOENT && errno != ESRCH) {
		free(r.now.h);
		match_by_path(&r, NULL);
		return;
	}
	match_by_path(&r, hmap_get_ptr(&h->by_pid, pid));
	replace_holdings(h, pid, &r.now);
}

void holders_unmapped(struct holders *h, uint32_t pid, uint32_t tid, uint64_t addr,
		      uint64_t len, uint64_t alive_ns)
{
	const struct holdings *s = hmap_get_ptr(&h->by_pid, pid);
	uint64_t end = addr + len < addr ? UINT64_MAX : addr + len;

	for (uint32_t i = 0; s && i < s->n; i++) {
		if (!s->h[i].end || (s->h[i].start < end && addr < s->h[i].end)) {
			rescan(h, pid, tid, alive_ns);
			return;
		}
	}
}

void holders_free(struct holders *h)
{
	size_t it = 0;
	uint64_t key, v;

	while (hmap_next(&h->by_pid, &it, &key, &v))
		free_holdings((struct holdings *)(uintptr_t)v);
	hmap_free(&h->by_pid);
	hmap_free(&h->count);
}
