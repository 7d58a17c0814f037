/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Marking running tasks as traced, in the kernel's task storage. */
#ifndef ATTACH_H
#define ATTACH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Marks one task (any thread). 0, or negative errno. */
int attach_task(int tasks_fd, pid_t tid);
/* Marks pids, all their threads and all their descendants, repeating
 * until a pass finds nothing new, so tasks created meanwhile are caught.
 * Calls adopt() once per process. */
int attach_tree(int tasks_fd, const pid_t *pids, int npids,
		void (*adopt)(pid_t pid), char *err, size_t errlen);
/* True when pid is gone or a zombie: no more records will come from it. */
bool process_exited(pid_t pid);

#endif
