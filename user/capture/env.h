/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Command-line options of dftrace-bpf. */
#ifndef CAPTURE_ENV_H
#define CAPTURE_ENV_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "capture/scope.h"
#include "correlate/flight.h"
#include "dftrace.h"
#include "lib/traceformat.h"

#define ENV_MAX_PIDS 64
/* The service's word for a client's command (hidden from --help): -p of
 * that pid, which the client has set up as -- CMD would be. */
#define ENV_HELD_OPTION "--held-command"

struct env {
	pid_t pids[ENV_MAX_PIDS];
	int npids;
	const char *output;	/* file, or "-" for stdout */
	const char *output_dir;	/* one file per process */
	bool plain;		/* with output_dir: .pfw instead of .pfw.gz */
	int gzip_level;
	bool gzip_level_given;	/* -z: only where gzip is written */
	double duration;	/* seconds; 0 = until the tree exits */
	bool inline_paths;
	enum trace_format format;	/* --format */
	uint64_t ringbuf_size;
	bool quiet;
	bool verbose;
	const char *pid_file;	/* written once tracing has begun */
	bool torch;		/* label PyTorch phases in a launched python */
	bool no_gpu;		/* --no-gpu: the GPU libraries are not probed */
	/* --fentry (1), --no-fentry (-1), or neither (0: the hooks where the
	 * tracer stays on, --flight and the host-wide scopes) */
	int fentry;
	bool no_region_rings;	/* --no-region-rings: a probe on each begin and end */
	struct scope_opts scope;	/* -a, --cgroup, --uid, --comm */
	double profile_s;	/* --profile: totals every so many seconds; 0: off */
	bool flight_on;		/* --flight: totals, and a window dumped on triggers */
	bool triggers_given;	/* --trigger */
	bool flight_tuned;	/* --flight-mem, -after or -max */
	struct flight_opts flight;	/* its times, cap and triggers */
	bool steps_on;		/* --steps */
	struct dft_steps steps;
	char **command;		/* argv after "--", NULL-terminated */
	bool held;		/* pids[0] is the command a client started and holds
				 * (the service's ENV_HELD_OPTION): as -- CMD for --torch */
};

/* Parses argv into env; exits with a usage error on bad input. */
void env_parse(struct env *env, int argc, char **argv);

#endif
