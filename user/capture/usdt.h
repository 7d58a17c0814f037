/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * dftrace annotations (USDT notes of provider "dftrace") and CPython's
 * probes (provider "python") in a file: which program takes each probe,
 * at which offsets, with which argument specs (capture/usdtspec.h). What
 * is attached when, and for how long, is capture/probed.h's.
 */
#ifndef CAPTURE_USDT_H
#define CAPTURE_USDT_H

#include <gelf.h>
#include <stdbool.h>
#include <stdint.h>
#include "capture/uprobes.h"
#include "capture/usdtspec.h"
#include "dftrace.h"

struct dftrace_bpf;

/* The spec indexes a file's sites carry, one a site: given back once
 * its links are closed. */
struct usdt_spec_ids {
	uint32_t *id;
	uint32_t n, cap;
};

/* What a file's notes gave, for -v. */
struct usdt_found {
	int probes;		/* probes with a site planned */
	int pinned;		/* of them, taken by a pinned program */
	bool rings;		/* regions from threads' rings */
	bool python;		/* CPython's provider */
};

/* elf's probes of ours into plan, each site's spec in ids: 0 (nothing
 * planned where the file has none), or -errno: -ENOSPC when the specs'
 * map is full. Sites whose arguments are of a form not known here are
 * left out. The annotation programs are loaded (lazy) for the first
 * file that has probes. */
int usdt_plan(struct loader *loader, struct usdt_specs *specs, Elf *elf,
	      struct uprobe_plan *plan, struct usdt_spec_ids *ids, struct usdt_found *found);
/* Gives the indexes back; ids is left empty. */
void usdt_put_specs(struct usdt_specs *specs, struct usdt_spec_ids *ids);

/* A region's strings at a site of a traced process (trace.h's
 * site_found): in read-only memory, the kernel side takes the
 * region's id from annot_sites from now on. site_gone: no more.
 * ctx: the skeleton. */
void usdt_site_found(void *ctx, const struct dft_annot_site *site, uint32_t id,
		     uint64_t alive_ns);
void usdt_site_gone(void *ctx, const struct dft_annot_site *site);

#endif
