// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * dftrace-bpf: the tracer (capture/ -> correlate/ -> write/), or one of
 * the offline tools that read traces (read/ -> analyze/ -> render/).
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "capture/loader.h"
#include "capture/tracer.h"
#include "cmd/cmd.h"
#include "lib/invoker.h"
#include "service/serve.h"

static const struct subcommand {
	const char *name;
	int (*main)(int argc, char **argv);
	bool as_invoker;	/* reads files: as the user behind sudo */
} subcommands[] = {
	{ "merge", merge_main, true },
	{ "summary", summary_main, true },
	{ "report", report_main, true },
	/* signals a tracer: with the privilege it was given (a root
	 * tracer takes SIGUSR1 from root alone) */
	{ "dump", dump_main, false },
	/* the root service (service/serve.h) */
	{ "serve", serve_main, false },
};

/* The offline tools need no privilege: under sudo they become the user
 * behind it (uid, gid, groups) before reading anything, so that they
 * read, follow and write only what that user could. */
static int become_invoker(const char *name)
{
	struct invoker who;
	int err = invoker_init(&who);

	if (!err)
		err = invoker_become(&who);
	invoker_free(&who);
	if (err)
		fprintf(stderr, "%s: cannot become the invoking user: %s\n", name, strerror(-err));
	return err;
}

int main(int argc, char **argv)
{
	/* A traced command named like a subcommand goes after "--". */
	for (size_t i = 0; argc > 1 && i < sizeof(subcommands) / sizeof(*subcommands); i++)
		if (!strcmp(argv[1], subcommands[i].name)) {
			char name[64];

			/* messages and --help say "dftrace-bpf merge" */
			snprintf(name, sizeof(name), "dftrace-bpf %s", argv[1]);
			argv[1] = name;
			if (subcommands[i].as_invoker && become_invoker(name))
				return 1;
			return subcommands[i].main(argc - 1, argv + 1);
		}
	/* without the privilege to load BPF: through the service */
	return loader_may_load() ? tracer_main(argc, argv) : client_main(argc, argv);
}
