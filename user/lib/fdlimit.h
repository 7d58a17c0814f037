/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The descriptors a process may hold: the soft limit raised to the hard
 * one, as the tracer's -D and merge's inputs want. */
#ifndef LIB_FDLIMIT_H
#define LIB_FDLIMIT_H

#include <sys/resource.h>

/* 0, or -errno; *was (if not NULL) gets the limits found first. */
int fd_limit_raise(struct rlimit *was);
/* The descriptors this process holds now (0 if /proc cannot say). */
unsigned int fd_count_open(void);

#endif
