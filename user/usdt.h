/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Finding dftrace annotations (USDT notes of provider "dftrace") in the
 * executables and libraries of traced processes, and attaching to them. */
#ifndef USDT_H
#define USDT_H

#include <stdbool.h>
#include <sys/types.h>

struct dftrace_bpf;

void usdt_init(struct dftrace_bpf *skel, bool verbose);
/* A file a traced process mapped executable (or exec'd): attached to
 * once if it carries dftrace probes. Queued; usdt_attach_pending() does
 * the work outside the ring-buffer callback. */
void usdt_offer(const char *path);
/* Every executable file mapping of pid, from /proc/PID/maps. */
void usdt_offer_maps(pid_t pid);
void usdt_attach_pending(void);
int usdt_binaries_attached(void);
void usdt_free(void);

#endif
