// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "lib/jobenv.h"

extern char **environ;

/* In order of preference: the first one set wins. */
static const char *const rank_vars[] = { "RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK",
					 "PMIX_RANK", "SLURM_PROCID", NULL };
static const char *const local_vars[] = { "LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK",
					  "SLURM_LOCALID", NULL };
static const char *const world_vars[] = { "WORLD_SIZE", "OMPI_COMM_WORLD_SIZE",
					  "PMI_SIZE", "SLURM_NTASKS", NULL };

/* NAME=VALUE's number when name is NAME and VALUE a whole number >= 0. */
static int value_of(const char *entry, size_t len, const char *name)
{
	size_t n = strlen(name);
	char digits[12];
	long v;
	char *end;

	if (len <= n + 1 || memcmp(entry, name, n) || entry[n] != '=' ||
	    len - n - 1 >= sizeof(digits))
		return -1;
	memcpy(digits, entry + n + 1, len - n - 1);
	digits[len - n - 1] = 0;
	errno = 0;
	v = strtol(digits, &end, 10);
	return !*end && !errno && v >= 0 && v <= INT_MAX && end != digits ? (int)v : -1;
}

/* The first variable of the list set in the block; -1 if none. */
static int first_of(const char *env, size_t len, const char *const *names)
{
	for (; *names; names++) {
		for (size_t at = 0; at < len;) {
			const char *e = env + at;
			size_t n = strnlen(e, len - at);
			int v = value_of(e, n, *names);

			if (v >= 0)
				return v;
			at += n + 1;
		}
	}
	return -1;
}

struct job_rank job_rank_parse(const char *env, size_t len)
{
	struct job_rank r = { first_of(env, len, rank_vars), first_of(env, len, local_vars),
			      first_of(env, len, world_vars) };

	if (r.rank < 0) /* a size alone places nothing */
		r.world = r.local_rank = -1;
	return r;
}

struct job_rank job_rank_self(void)
{
	struct job_rank r = JOB_RANK_NONE;
	char *block = NULL;
	size_t len = 0;

	for (char **e = environ; e && *e; e++) {
		size_t n = strlen(*e) + 1;
		char *grown = realloc(block, len + n);

		if (!grown)
			break;
		block = grown;
		memcpy(block + len, *e, n);
		len += n;
	}
	if (block)
		r = job_rank_parse(block, len);
	free(block);
	return r;
}
