/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The kernel's counts of records it could not hand over (ring buffer
 * full): per syscall and record kind, all CPUs summed, and with -D per
 * process too. */
#ifndef CAPTURE_LOST_H
#define CAPTURE_LOST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "write/files.h"

struct lost {
	int total_fd;		/* per-CPU array: slot -> count */
	int by_proc_fd;		/* hash: (tgid, slot) -> count, or -1 */
	int ncpus;
};

void lost_init(struct lost *l, int total_fd, int by_proc_fd);
/* lost[slot] for every slot, DFT_LOST_SLOTS of them. */
void lost_read(const struct lost *l, uint64_t *lost);
/* One process's losses; with consume, its counters are deleted once read,
 * so that a later process with the same pid starts at zero. */
void lost_read_process(const struct lost *l, uint32_t pid, uint64_t *lost,
		       size_t nslots, bool consume);
/* n more in slot, of pid: a loss user space made itself, counted with
 * the kernel side's (a record it read and could not keep). */
void lost_add(const struct lost *l, uint32_t pid, uint32_t slot, uint64_t n);
/* What the -D files ask for their process's losses. */
struct loss_reader lost_reader(struct lost *l);

#endif
