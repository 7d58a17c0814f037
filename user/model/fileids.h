/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Files by the kernel's name for them, (dev, ino): I/O that names no fd
 * (a page fault, a registered io_uring file) comes with that. Learned at
 * each file mmap from its fd, and from a process's /proc/PID/maps and
 * the files its fds point at when one is first asked for.
 */
#ifndef MODEL_FILEIDS_H
#define MODEL_FILEIDS_H

#include <stdbool.h>
#include <stdint.h>
#include "lib/hmap.h"
#include "model/istr.h"
#include "model/procs.h"

struct fileids {
	struct hmap by_id;	/* hash of (dev, ino) -> struct fileid * */
	struct hmap looked;	/* pids whose /proc was read since their exec */
};

/* (dev, ino) is path; code: mapped executable, a program or a library. */
void fileid_learn(struct fileids *f, uint64_t dev, uint64_t ino,
		  struct istr *path, bool code);
/* The path of (dev, ino) if known already, else NULL: no /proc. */
struct istr *fileid_known(struct fileids *f, uint64_t dev, uint64_t ino);
/* Mapped executable by some traced process: pages of it are the loading
 * of code, not data read. */
bool fileid_is_code(struct fileids *f, uint64_t dev, uint64_t ino);
/* The path of (dev, ino) (dev as the kernel keeps it: major << 20 |
 * minor), looking at p's mappings and fds (through its gate) if it is
 * not known; a name that says so ("dev:ino 8:1:1234") when they do not
 * show it. */
struct istr *fileid_path(struct fileids *f, const struct proc *p, uint64_t dev, uint64_t ino);
/* pid ran a new program, or ended: its /proc is worth a look again. */
void fileid_forget_process(struct fileids *f, uint32_t pid);
void fileids_free(struct fileids *f);

#endif
