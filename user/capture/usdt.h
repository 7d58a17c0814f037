/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Finding dftrace annotations (USDT notes of provider "dftrace", and
 * CPython's provider "python") and GPU and collective libraries
 * (capture/gpuprobes.h) among the executables and libraries of traced
 * processes, and attaching to them. The record path offers files as it
 * sees them mapped or exec'd (it may not block on ELF parsing and
 * attaching); the run loop attaches what is pending between batches.
 */
#ifndef CAPTURE_USDT_H
#define CAPTURE_USDT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "dftrace.h"
#include "lib/hmap.h"

struct dftrace_bpf;
struct bpf_link;

struct usdt_attacher {
	struct dftrace_bpf *skel;
	bool annotations;	/* USDT notes looked for */
	bool gpu;		/* GPU and collective libraries (capture/gpuprobes.h) */
	bool verbose;
	struct hmap seen;	/* (dev, ino) of every file looked at */
	char **pending;		/* paths offered, not yet looked at */
	uint32_t npending, cappending;
	struct bpf_link **links;
	uint32_t nlinks, caplinks;
};

void usdt_init(struct usdt_attacher *u, struct dftrace_bpf *skel, bool annotations,
	       bool gpu, bool verbose);
/* A file a traced process mapped executable (or exec'd): attached to once
 * if it carries probes. Queued for usdt_attach_pending(). */
void usdt_offer(struct usdt_attacher *u, const char *path);
/* Every executable file mapping of pid, from /proc/PID/maps, if pid is
 * still the traced process a record showed alive at alive_ns
 * (attach_proven()). */
void usdt_offer_maps(struct usdt_attacher *u, pid_t pid, uint64_t alive_ns);
void usdt_attach_pending(struct usdt_attacher *u);
/* A region's strings at a site of a traced process (trace.h's
 * site_found): in read-only memory, the kernel side takes the
 * region's id from annot_sites from now on. site_gone: no more. */
void usdt_site_found(void *ctx, const struct dft_annot_site *site, uint32_t id,
		     uint64_t alive_ns);
void usdt_site_gone(void *ctx, const struct dft_annot_site *site);
/* Detaches every probe; the attacher can be used again. NULL-safe. */
void usdt_free(struct usdt_attacher *u);

#endif
