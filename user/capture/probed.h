/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The files of traced processes that carry probes (annotations:
 * capture/usdt.h; GPU and collective calls: capture/gpuprobes.h), and
 * how long their probes stay.
 *
 * Uprobes are attached per file, system-wide (pid -1): every process that
 * maps the file hits them and the kernel side keeps only tracked tasks.
 * That covers children, dlopen in other processes and shared libraries
 * with one attach per file, and the kernel raises each probe's semaphore
 * in every process that maps it.
 *
 * A file's probes are held while a traced process maps it. The record
 * path says what each process maps (an executable mapping, an exec, the
 * mappings /proc shows of a process found running), which ones inherit
 * mappings (a fork), and where mappings may have gone (an unmapping, an
 * exec, the end of a process): /proc then says what is left. When the
 * last process mapping a file has let it go, its links are released
 * (capture/uprobes.h's closer) with its specs, and the file is
 * forgotten: mapped again, it is attached again.
 *
 * The record path may not block on ELF parsing, attaching or reading
 * /proc: it queues what it sees, in its order, and the run loop takes
 * the queue between batches (probed_attach_pending()).
 *
 * Bounded: at most PROBED_SITES_MAX uprobes, in at most a quarter of the
 * descriptors the tracer may open, are held at once, those still being
 * closed too. A file that would take more waits, unprobed, until others
 * are released (said once), and its calls meanwhile are not seen.
 */
#ifndef CAPTURE_PROBED_H
#define CAPTURE_PROBED_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "capture/holders.h"
#include "capture/uprobes.h"
#include "capture/usdtspec.h"
#include "lib/hmap.h"

/* Every probed instruction is a uprobe the kernel keeps in each process
 * mapping its file (and, before Linux 6.6, two descriptors here). */
#define PROBED_SITES_MAX 4096

struct dftrace_bpf;
struct loader;
struct probed_event;

struct probed_opts {
	struct dftrace_bpf *skel;
	struct loader *loader;	/* where the probes' programs are loaded */
	bool annotations;	/* USDT notes looked for */
	bool gpu;		/* GPU and collective libraries */
	bool verbose;
	bool multi;		/* uprobe_multi links (features.h) */
	uint32_t fd_budget;	/* descriptors the probes may hold */
};

struct probed_files {
	struct probed_opts o;
	bool specs_ok;		/* the specs' map is libbpf 1.1's */
	struct usdt_specs specs;
	struct closer closer;
	struct hmap files;	/* hash of (dev, ino) -> struct probed_file * */
	struct hmap plain;	/* files that carry none: hash of (dev, ino, ctime) */
	struct holders holders;	/* which processes map them */
	struct hmap queued;	/* pids with an offer or a fork queued */
	struct probed_event *queue;
	uint32_t nqueue, capqueue;
	uint32_t sites, fds;	/* held: attached, or being closed */
	struct hmap said;	/* reasons said once (errno; 0: the bound) */
	bool attached_any;	/* some file was probed this run */
};

void probed_init(struct probed_files *pf, const struct probed_opts *o);
/* pid mapped path executable at [addr, addr + len) (len 0: not known,
 * an exec). */
void probed_offer(struct probed_files *pf, uint32_t pid, const char *path, uint64_t addr,
		  uint64_t len);
/* Every executable file mapping of pid, from /proc/PID/maps, if pid is
 * still the traced process a record showed alive at alive_ns
 * (attach_proven()). */
void probed_offer_maps(struct probed_files *pf, uint32_t pid, uint64_t alive_ns);
/* child maps what parent maps. */
void probed_forked(struct probed_files *pf, uint32_t parent, uint32_t child);
/* Mappings of pid in [addr, addr + len) went (an unmapping seen in its
 * thread tid, an exec, at alive_ns); tid 0: all of them, it has ended. */
void probed_unmapped(struct probed_files *pf, uint32_t pid, uint32_t tid, uint64_t addr,
		     uint64_t len, uint64_t alive_ns);
/* The queue, in its order: files attached, held, released. */
void probed_attach_pending(struct probed_files *pf);
/* Uprobes held now: attached, or being closed. */
uint32_t probed_sites(const struct probed_files *pf);
/* Releases every probe and waits until they are closed; the struct can
 * be used again after probed_init(). NULL-safe. */
void probed_free(struct probed_files *pf);

#endif
