/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The trace files a command was given: files as they are, and -D
 * directories as their .pfw and .pfw.gz files in name order. */
#ifndef CMD_INPUTS_H
#define CMD_INPUTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct inputs {
	char **paths;
	uint32_t n, cap;
	bool strict;	/* --strict: a trace cut short is refused */
};

/* --strict, said once for summary, report and merge */
#define INPUTS_OPT_STRICT 0x4001
#define INPUTS_STRICT_OPTION                                                  \
	{ "strict", INPUTS_OPT_STRICT, NULL, 0, "Refuse a trace cut short (a gzip " \
	  "stream without its end, as SIGKILL leaves it) rather than read it up "   \
	  "to its last whole line", 0 }

/* 0, or -errno with a one-line message in err. */
int inputs_add(struct inputs *in, const char *arg, char *err, size_t errlen);
/* The same for an argument argp is parsing: a failure ends the command. */
struct argp_state;
void inputs_arg(struct inputs *in, const char *arg, struct argp_state *state);
void inputs_free(struct inputs *in);

#endif
