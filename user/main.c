// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * dftrace-bpf: the tracer (capture/ -> correlate/ -> write/), or one of
 * the offline tools that read traces (read/ -> analyze/ -> render/).
 */
#include <stdio.h>
#include <string.h>
#include "capture/tracer.h"
#include "cmd/cmd.h"

static const struct subcommand {
	const char *name;
	int (*main)(int argc, char **argv);
} subcommands[] = {
	{ "merge", merge_main },
	{ "summary", summary_main },
	{ "report", report_main },
};

int main(int argc, char **argv)
{
	/* A traced command named like a subcommand goes after "--". */
	for (size_t i = 0; argc > 1 && i < sizeof(subcommands) / sizeof(*subcommands); i++)
		if (!strcmp(argv[1], subcommands[i].name)) {
			char name[64];

			/* messages and --help say "dftrace-bpf merge" */
			snprintf(name, sizeof(name), "dftrace-bpf %s", argv[1]);
			argv[1] = name;
			return subcommands[i].main(argc - 1, argv + 1);
		}
	return tracer_main(argc, argv);
}
