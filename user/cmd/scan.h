/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Every event of every input into a profile: the read -> analyze step
 * that summary and report share. */
#ifndef CMD_SCAN_H
#define CMD_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include "analyze/profile.h"
#include "cmd/inputs.h"

/* Called with each event after the profile has it (NULL: none). */
typedef int (*scan_visit)(void *ctx, const struct ev_input *in, uint16_t input,
			  const struct ev *e);

struct scan_opts {
	bool progress;		/* on stderr, as it goes */
	int jobs;		/* the cores that read: 0, all this process may use */
	scan_visit visit;	/* NULL: none */
	void *ctx;
};

/* 0, or -errno with a one-line message naming the file in err. */
int scan_profile(struct profile *p, const struct inputs *inputs, const struct scan_opts *o,
		 char *err, size_t errlen);

#endif
