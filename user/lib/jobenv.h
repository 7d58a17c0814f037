/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* A process's place in a parallel job, from the variables its launcher
 * sets: torchrun, Open MPI, PMI, PMIx, Slurm. */
#ifndef LIB_JOBENV_H
#define LIB_JOBENV_H

#include <stddef.h>

struct job_rank {
	int rank, local_rank, world;	/* -1: not said */
};

#define JOB_RANK_NONE ((struct job_rank){ -1, -1, -1 })

/* From an environment block: NUL-separated NAME=VALUE (as
 * /proc/PID/environ holds it), len bytes; hostile bytes are fine. */
struct job_rank job_rank_parse(const char *env, size_t len);
/* From our own environment. */
struct job_rank job_rank_self(void);

#endif
