/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * I/O through file mappings, which no syscall shows: the pages a tracked
 * thread maps from a file at page faults (mm_filemap_fault, and the
 * fault-around mm_filemap_map_pages, which maps up to 16 pages at once),
 * the pages it reads from storage meanwhile (mm_filemap_add_to_page_cache:
 * not in the page cache), and the pages it dirties through a shared
 * mapping (writeback_dirty_folio outside a syscall). Coalesced per thread
 * into runs of page ranges of one file: one record per run, not per page.
 * The test that a run is waiting is inline here, for the hooks of other
 * features that end a run; the rest is in mmapio.bpf.c.
 */
#ifndef MMAPIO_BPF_H
#define MMAPIO_BPF_H

#include "core.bpf.h"

/* The current thread's run of pages as one record; the run is then
 * empty. */
int send_run(struct dft_task *st);

/* A syscall, an annotation, a rename or the exit ends the thread's run
 * (st is the current thread's). */
static __always_inline void flush_run(struct dft_task *st)
{
	if (st->run.n)
		send_run(st);
}

#endif
