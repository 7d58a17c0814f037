// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * dftrace-bpf report: one self-contained HTML page of charts and tables.
 * read (each input once) -> analyze (profile.c, timeline.c) -> render
 * (html.c, svg.c).
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
#include "lib/invoker.h"
#include "render/html.h"
#include "write/output.h"

struct report_opts {
	const char *output;
	struct inputs inputs;
	bool quiet;
};

static const char report_doc[] =
"One HTML page, self-contained (no script, nothing fetched): I/O bandwidth\n"
"over time per process, time by phase per epoch and per step, the top\n"
"files by bytes and by time, latency histograms of the busiest operations,\n"
"and the summary's tables. Reads what summary reads.\n"
"\n"
"EXAMPLES:\n"
"    dftrace-bpf report t.pfw.gz                   # report.html\n"
"    dftrace-bpf report -o run7.html traces/ merged.json\n";

static const struct argp_option report_options[] = {
	{ "output", 'o', "OUT", 0, "The page (default report.html)", 0 },
	{ "quiet", 'q', NULL, 0, "No progress line", 0 },
	INPUTS_STRICT_OPTION,
	INPUTS_JOBS_OPTION,
	{},
};

static error_t parse_report(int key, char *arg, struct argp_state *state)
{
	struct report_opts *o = state->input;

	switch (key) {
	case 'o':
		o->output = arg;
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
			argp_error(state, "no trace: give the traces to report on");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

struct report_scan {
	struct timeline tl;
	struct straggler strag;
};

/* Bytes over time, from the calls that moved them; the steps' stragglers. */
static int add_event(void *ctx, const struct ev_input *in, uint16_t input, const struct ev *e)
{
	struct report_scan *r = ctx;
	int rc = straggler_visit(&r->strag, in, input, e);

	if (rc || e->kind != EV_IO || e->bytes <= 0)
		return rc;
	return timeline_add(&r->tl, ev_process(in, input, e->pid), e->start, e->bytes);
}

static int write_page(const char *path, const struct jbuf *page, char *err, size_t errlen)
{
	struct output_opts oo = { .path = path, .gzip_level = -1 };
	struct invoker who;
	struct output *out = NULL;
	int rc = invoker_init(&who);

	oo.as = &who;
	if (!rc)
		rc = output_open(&oo, &out, err, errlen);
	if (!rc)
		rc = output_write(out, page->p, page->len);
	if (!rc)
		rc = output_flush(out);
	if (!rc)
		rc = output_commit(out, err, errlen);
	if (!rc) {
		rc = output_close(out, err, errlen);
		out = NULL;
	}
	output_abort(out);
	invoker_free(&who);
	return rc;
}

int report_main(int argc, char **argv)
{
	static const struct argp argp = { report_options, parse_report, "TRACE...",
					  report_doc, NULL, NULL, NULL };
	struct report_opts o = { .output = "report.html" };
	struct report_scan r = { 0 };
	struct profile p;
	struct jbuf page = { 0 };
	char err[512] = "";
	int rc;

	argp_parse(&argp, argc, argv, 0, NULL, &o);
	rc = profile_init(&p, report_specs, RG__COUNT, err, sizeof(err));
	if (!rc)
		profile_find(&p, FINDINGS_MIN_SHARE);
	if (!rc)
		rc = inputs_check_output(&o.inputs, o.output, err, sizeof(err));
	if (!rc)
		rc = scan_profile(&p, &o.inputs, &(struct scan_opts){
					  .progress = !o.quiet && isatty(STDERR_FILENO),
					  .jobs = o.inputs.jobs, .visit = add_event, .ctx = &r },
				  err, sizeof(err));
	if (!rc)
		rc = jb_init(&page, 1 << 20);
	if (!rc) {
		struct report_data d = { &p, &r.tl, o.inputs.paths, o.inputs.n, &r.strag };

		rc = html_report(&page, &d);
	}
	if (!rc)
		rc = write_page(o.output, &page, err, sizeof(err));
	if (rc)
		fprintf(stderr, "dftrace-bpf report: %s\n", err[0] ? err : strerror(-rc));
	else if (!o.quiet)
		fprintf(stderr, "report: %s\n", o.output);
	jb_free(&page);
	timeline_free(&r.tl);
	straggler_free(&r.strag);
	profile_free(&p);
	inputs_free(&o.inputs);
	return rc ? 1 : 0;
}
