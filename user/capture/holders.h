/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Which traced processes map which probed files (capture/probed.h's):
 * each process's executable mappings of them, with their ranges where
 * known. A file is held while one process maps it; when the last lets it
 * go, the owner is told (released).
 *
 * Mappings come from what the record path saw (a mapping, an exec, a
 * fork, /proc at a process's discovery); where one may have gone (an
 * unmapping that overlaps it, an exec), /proc/PID/maps says what is left.
 */
#ifndef CAPTURE_HOLDERS_H
#define CAPTURE_HOLDERS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "lib/hmap.h"

struct holders {
	struct hmap by_pid;	/* pid -> struct holdings * */
	struct hmap count;	/* file -> the processes that hold it */
	/* The probed file of these ids, or NULL; and one no process holds
	 * any more. ctx: the owner's. */
	void *(*find)(void *ctx, dev_t dev, ino_t ino);
	void (*released)(void *ctx, void *file);
	/* pid is still the process that was alive at alive_ns: what was
	 * read of /proc/PID before is its (capture/attach.h's
	 * attach_proven). NULL: taken as proven. */
	bool (*proven)(void *ctx, uint32_t pid, uint64_t alive_ns);
	void *ctx;
};

/* pid maps file at [start, end) (end 0: somewhere, an exec). A file
 * nobody can be recorded as holding (no memory) is released. */
void holders_add(struct holders *h, uint32_t pid, void *file, uint64_t start, uint64_t end);
/* child maps what parent maps. */
void holders_fork(struct holders *h, uint32_t parent, uint32_t child);
/* [addr, addr + len) of pid was unmapped by its thread tid (an exec:
 * all of it) at alive_ns: where that may have taken a mapping it holds,
 * /proc says which are left. */
void holders_unmapped(struct holders *h, uint32_t pid, uint32_t tid, uint64_t addr,
		      uint64_t len, uint64_t alive_ns);
/* pid has ended: it holds nothing. */
void holders_gone(struct holders *h, uint32_t pid);
bool holders_has(const struct holders *h, uint32_t pid);
/* How many processes hold file. */
uint32_t holders_of(const struct holders *h, const void *file);
/* Forgets every holding (nothing is released). */
void holders_free(struct holders *h);

#endif
