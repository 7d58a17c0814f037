// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * dftrace-bpf summary: a flat profile of traces, as torch.profiler's
 * key_averages().table() gives one, with DFAnalyzer's headline figures.
 * read (each input once) -> analyze (profile.c) -> render (table.c).
 */
#include <argp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "analyze/straggler.h"
#include "cmd/cmd.h"
#include "cmd/inputs.h"
#include "cmd/scan.h"
#include "render/table.h"

#define DEFAULT_TOP 20

enum { OPT_JSON = 0x100, OPT_CSV, OPT_FINDINGS, OPT_MIN_SHARE };

struct summary_opts {
	struct inputs inputs;
	char *by[PROFILE_MAX_GROUPINGS];
	int nby;
	struct table_opts table;
	bool top_given, json, csv, quiet, findings;
	double min_share;	/* of the wall time, for a finding */
};

static const char summary_doc[] =
"A flat profile of traces: one row per op, phase, file, process, rank,\n"
"epoch or step (or several nested), with calls, total and self time,\n"
"avg/min/max/p50/p99, bytes, bandwidth and % of wall time; headline\n"
"figures first (I/O time, unoverlapped I/O, bytes, files, processes,\n"
"ranks). Reads dftrace-bpf traces (.pfw, .pfw.gz, -D directories),\n"
"DFTracer's, and merged files with torch's operators.\n"
"\n"
"A row's total counts each event once (a phase's calls are in the phase's\n"
"time); its self time is its total minus the time of the children (regions\n"
"and calls) in other rows. --findings says which rows are problems.\n"
"\n"
"EXAMPLES:\n"
"    dftrace-bpf summary t.pfw.gz                  # by op, top 20 by total\n"
"    dftrace-bpf summary --by phase,op t.pfw.gz    # I/O under each phase\n"
"    dftrace-bpf summary --by file --sort bytes --top 10 traces/\n"
"    dftrace-bpf summary --by rank --by epoch --json merged.json\n"
"    dftrace-bpf summary --findings t.pfw.gz         # what is wrong, and where\n";

static const struct argp_option summary_options[] = {
	{ "by", 'b', "KEYS", 0, "Rows by op, phase, file, process, rank, epoch or step; "
	  "comma-separated to nest; repeat for more tables (default op)", 0 },
	{ "sort", 's', "COL", 0, "total (default), self, calls, avg, min, max, p50, p99, "
	  "bytes, bandwidth or key", 0 },
	{ "top", 't', "N", 0, "The first N rows (default 20 in the table, all in "
	  "--json and --csv; 0: all)", 0 },
	{ "json", OPT_JSON, NULL, 0, "JSON (times in ns)", 0 },
	{ "csv", OPT_CSV, NULL, 0, "CSV (times in ns)", 0 },
	{ "findings", OPT_FINDINGS, NULL, 0, "The I/O problems the events show, first: "
	  "where, what they cost, what to try (README: Findings)", 0 },
	{ "findings-min-share", OPT_MIN_SHARE, "PCT", 0, "A finding costs at least PCT% "
	  "of the wall time (default 5)", 0 },
	{ "quiet", 'q', NULL, 0, "No progress line", 0 },
	INPUTS_STRICT_OPTION,
	INPUTS_JOBS_OPTION,
	{},
};

static error_t parse_summary(int key, char *arg, struct argp_state *state)
{
	struct summary_opts *o = state->input;
	char err[512] = "";
	long n;
	char *end;

	switch (key) {
	case 'b':
		if (o->nby == PROFILE_MAX_GROUPINGS)
			argp_error(state, "more than %d --by", PROFILE_MAX_GROUPINGS);
		if (by_spec_check(arg, err, sizeof(err)))
			argp_error(state, "%s", err);
		o->by[o->nby++] = arg;
		break;
	case 's':
		n = sort_col_parse(arg);
		if (n < 0)
			argp_error(state, "unknown column '%s' for --sort (%s)", arg,
				   sort_col_names());
		o->table.sort = n;
		break;
	case 't':
		errno = 0;
		n = strtol(arg, &end, 10);
		if (errno || *end || n < 0 || n > UINT32_MAX)
			argp_error(state, "--top wants a number of rows, not '%s'", arg);
		o->table.top = n;
		o->top_given = true;
		break;
	case OPT_JSON:
		o->json = true;
		break;
	case OPT_CSV:
		o->csv = true;
		break;
	case OPT_FINDINGS:
		o->findings = true;
		break;
	case OPT_MIN_SHARE:
		errno = 0;
		o->min_share = strtod(arg, &end) / 100;
		if (errno || end == arg || *end || !(o->min_share >= 0 && o->min_share <= 1))
			argp_error(state, "--findings-min-share wants a percentage from 0 to 100, "
				   "not '%s'", arg);
		o->findings = true;
		break;
	case 'q':
		o->quiet = true;
		break;
	case INPUTS_OPT_STRICT:
		o->inputs.strict = true;
		break;
	case 'j':
		inputs_jobs(&o->inputs, arg, state);
		break;
	case ARGP_KEY_ARG:
		inputs_arg(&o->inputs, arg, state);
		break;
	case ARGP_KEY_END:
		if (!o->inputs.n)
			argp_error(state, "no trace: give the traces to summarize");
		if (o->json && o->csv)
			argp_error(state, "--json and --csv: one or the other");
		if (o->findings && o->csv)
			argp_error(state, "--findings and --csv: the findings are in the text "
				   "and --json");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

/* Whether --by names key (in a list or alone). */
static bool by_has(const struct summary_opts *o, const char *key)
{
	size_t n = strlen(key);

	for (int i = 0; i < o->nby; i++)
		for (const char *p = o->by[i]; (p = strstr(p, key)); p += n)
			if ((p == o->by[i] || p[-1] == ',') && (!p[n] || p[n] == ','))
				return true;
	return false;
}

int summary_main(int argc, char **argv)
{
	static const struct argp argp = { summary_options, parse_summary, "TRACE...",
					  summary_doc, NULL, NULL, NULL };
	static char op[] = "op";
	struct summary_opts o = { .min_share = FINDINGS_MIN_SHARE };
	struct straggler strag = { 0 };
	bool stragglers;
	struct profile p;
	char err[512] = "";
	int rc;

	argp_parse(&argp, argc, argv, 0, NULL, &o);
	if (!o.nby)
		o.by[o.nby++] = op;
	if (!o.top_given && !o.json && !o.csv)
		o.table.top = DEFAULT_TOP;
	/* per step, the rank the others waited for: --by rank,step in text */
	stragglers = by_has(&o, "rank") && by_has(&o, "step") && !o.json && !o.csv;
	rc = profile_init(&p, o.by, o.nby, err, sizeof(err));
	if (!rc && o.findings)
		profile_find(&p, o.min_share);
	if (!rc)
		rc = scan_profile(&p, &o.inputs, &(struct scan_opts){
					  .progress = !o.quiet && isatty(STDERR_FILENO),
					  .jobs = o.inputs.jobs,
					  .visit = stragglers ? straggler_visit : NULL,
					  .ctx = &strag }, err, sizeof(err));
	if (!rc && o.json)
		rc = table_json(stdout, &p, &o.table);
	else if (!rc && o.csv)
		table_csv(stdout, &p, &o.table);
	else if (!rc)
		table_text(stdout, &p, &o.table);
	if (!rc && stragglers)
		straggler_print(&strag, stdout, o.table.top);
	if (!rc && (fflush(stdout) || ferror(stdout)))
		rc = -errno;
	if (rc)
		fprintf(stderr, "dftrace-bpf summary: %s\n", err[0] ? err : strerror(-rc));
	profile_free(&p);
	straggler_free(&strag);
	inputs_free(&o.inputs);
	return rc ? 1 : 0;
}
