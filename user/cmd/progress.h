/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* A progress line on a terminal, redrawn twice a second at most: the
 * files done, the events and their rate. */
#ifndef CMD_PROGRESS_H
#define CMD_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

struct progress {
	bool on;
	const char *who;	/* "dftrace-bpf merge" */
	uint32_t files_done, files;	/* the caller's to keep; files 0: not said */
	uint64_t start_ns, next_ns;
	uint32_t calls;
};

/* events done, of total (0: a count alone). */
void progress_show(struct progress *p, uint64_t done, uint64_t total);
/* The same, the clock looked at now (not per event: while waiting). */
void progress_look(struct progress *p, uint64_t done, uint64_t total);
/* The last line, ended. */
void progress_done(struct progress *p, uint64_t done, uint64_t total);

#endif
