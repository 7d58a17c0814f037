/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The trace files a command was given: files as they are, and -D
 * directories as their .pfw and .pfw.gz files in name order, but for an
 * earlier merge's output there (skipped with a note). Each file once: an
 * input named twice (the same device and inode) is an error. */
#ifndef CMD_INPUTS_H
#define CMD_INPUTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "lib/hmap.h"

struct input_id {
	uint64_t dev, ino;	/* 0, 0: not there (the reader will say) */
};

struct inputs {
	char **paths;
	uint32_t n, cap;
	struct input_id *ids;	/* of paths[i] */
	uint32_t ids_cap;
	struct hmap by_id;	/* hash of the id -> index + 1 */
	bool strict;	/* --strict: a trace cut short is refused */
	int jobs;	/* --jobs: the cores that read; 0, all it may use */
};

/* --strict, said once for summary, report and merge */
#define INPUTS_OPT_STRICT 0x4001
#define INPUTS_STRICT_OPTION                                                  \
	{ "strict", INPUTS_OPT_STRICT, NULL, 0, "Refuse a trace cut short (a gzip " \
	  "stream without its end, as SIGKILL leaves it) rather than read it up "   \
	  "to its last whole line, and an event whose times are out of range "      \
	  "rather than leave it out", 0 }

/* --jobs, said once for summary, report and merge */
#define INPUTS_JOBS_OPTION                                                    \
	{ "jobs", 'j', "N", 0, "Read the inputs on N cores (default: every core "   \
	  "it may run on); what it reads and writes does not depend on it", 0 }

/* who: the command, for notes. 0, or -errno with a one-line message in
 * err. */
int inputs_add(struct inputs *in, const char *arg, const char *who, char *err,
	       size_t errlen);
/* The same for an argument argp is parsing: a failure ends the command. */
struct argp_state;
void inputs_arg(struct inputs *in, const char *arg, struct argp_state *state);
/* --jobs N for an argument argp is parsing: 1 to PFOR_MAX_JOBS (lib/pfor.h), else
 * the command ends. */
void inputs_jobs(struct inputs *in, const char *arg, struct argp_state *state);
/* An output must be none of the inputs: 0, or -EEXIST with a message. */
int inputs_check_output(const struct inputs *in, const char *output, char *err,
			size_t errlen);
/* Whether two paths name the same file (device and inode). */
bool inputs_same_file(const char *a, const char *b);
void inputs_free(struct inputs *in);

#endif
