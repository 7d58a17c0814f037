/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* A progress line on a terminal, redrawn twice a second at most. */
#ifndef CMD_PROGRESS_H
#define CMD_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

struct progress {
	bool on;
	const char *who;	/* "dftrace-bpf merge" */
	uint64_t next_ns;
	uint32_t calls;
};

/* total 0: a count alone. */
void progress_show(struct progress *p, uint64_t done, uint64_t total, const char *what);
/* The last line, ended. */
void progress_done(struct progress *p, uint64_t done, uint64_t total, const char *what);

#endif
