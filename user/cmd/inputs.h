/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The trace files a command was given: files as they are, and -D
 * directories as their .pfw and .pfw.gz files in name order. */
#ifndef CMD_INPUTS_H
#define CMD_INPUTS_H

#include <stddef.h>
#include <stdint.h>

struct inputs {
	char **paths;
	uint32_t n, cap;
};

/* 0, or -errno with a one-line message in err. */
int inputs_add(struct inputs *in, const char *arg, char *err, size_t errlen);
/* The same for an argument argp is parsing: a failure ends the command. */
struct argp_state;
void inputs_arg(struct inputs *in, const char *arg, struct argp_state *state);
void inputs_free(struct inputs *in);

#endif
