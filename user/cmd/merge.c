// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * dftrace-bpf merge: traces of several ranks, hosts and tools on one
 * timeline, as one Chrome Trace Event file. read (each input, once to
 * learn what it is and once to convert it) -> analyze (pairing, clocks,
 * ids) -> render (Chrome JSON), streamed through a reorder window.
 */
#include <argp.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "analyze/sources.h"
#include "cmd/cmd.h"
#include "cmd/convert.h"
#include "cmd/inputs.h"
#include "cmd/progress.h"
#include "lib/fdlimit.h"
#include "lib/invoker.h"
#include "lib/termsafe.h"
#include "render/chrome.h"
#include "write/handoff.h"
#include "write/output.h"

enum { OPT_NO_DISCOVER = 0x100, OPT_NO_ALIGN_HOSTS };

struct merge_opts {
	const char *output;
	struct inputs inputs;
	bool quiet, no_discover, no_align_hosts;
};

static const char merge_doc[] =
"Merge traces of several ranks, hosts and tools onto one timeline, as one\n"
"Chrome Trace Event file (strict JSON) that Perfetto, Chromium's DevTools\n"
"and speedscope open. Inputs: dftrace-bpf traces (.pfw, .pfw.gz, -D\n"
"directories), DFTracer's own, and torch.profiler traces (export_chrome_trace\n"
"files, tensorboard's *.pt.trace.json[.gz]). A trace that recorded its\n"
"torch.profiler trace (dftrace.profiler) brings it in by itself, if it is a\n"
"regular file that reads whole (else a warning says why not).\n"
"\n"
"EXAMPLES:\n"
"    dftrace-bpf merge -o view.json t.pfw.gz       # any trace, viewer-ready\n"
"    dftrace-bpf merge -o all.json.gz traces/       # every process of a -D run\n"
"    dftrace-bpf merge --file-list torch-trace-0-of-2.json trace-0-of-2.pfw.gz\n"
"        --output combined-0.json                   # the seed's spelling\n";

static const struct argp_option merge_options[] = {
	{ "output", 'o', "OUT", 0, "The merged file; *.gz is gzipped", 0 },
	{ "file-list", 'f', NULL, 0, "The inputs follow (as merge_trace spells it)", 0 },
	{ "quiet", 'q', NULL, 0, "No progress, no summary", 0 },
	INPUTS_STRICT_OPTION,
	INPUTS_JOBS_OPTION,
	{ "no-discover", OPT_NO_DISCOVER, NULL, 0, "Only the inputs given: not the torch "
	  "traces the traces recorded", 0 },
	{ "no-align-hosts", OPT_NO_ALIGN_HOSTS, NULL, 0, "Keep each host's wall clock (PTP-"
	  "synchronised hosts) rather than line the hosts up from their collectives", 0 },
	{},
};

static error_t parse_merge(int key, char *arg, struct argp_state *state)
{
	struct merge_opts *o = state->input;

	switch (key) {
	case 'o':
		o->output = arg;
		break;
	case 'f':
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
	case OPT_NO_DISCOVER:
		o->no_discover = true;
		break;
	case OPT_NO_ALIGN_HOSTS:
		o->no_align_hosts = true;
		break;
	case ARGP_KEY_ARG:
		inputs_arg(&o->inputs, arg, state);
		break;
	case ARGP_KEY_END:
		if (!o->output)
			argp_error(state, "no output: give -o OUT");
		if (!o->inputs.n)
			argp_error(state, "nothing to merge: give the traces");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

/* ---- the pass that writes ---- */

struct merge {
	struct source_set set;
	struct output *out;
	struct handoff written;	/* the events' text, to out on a thread */
	struct convert cv;	/* the conversion (cmd/convert.h) */
	bool first;
	struct progress progress;
	char err[512];
};

static int write_text(void *ctx, const char *text, size_t len)
{
	struct merge *m = ctx;
	int rc = 0;

	if (!m->first)
		rc = handoff_put(&m->written, ",\n", 2);
	m->first = false;
	return rc ? rc : handoff_put(&m->written, text, len);
}

static int write_names(struct merge *m)
{
	struct jbuf names;
	int rc = jb_init(&names, 4096);

	if (!rc)
		chrome_process_names(&m->set, &names);
	if (!rc && m->cv.names.len) {
		if (names.len)
			JB_LIT(&names, ",\n");
		jb_mem(&names, m->cv.names.p, m->cv.names.len);
	}
	rc = rc ? rc : names.err ? names.err : m->cv.names.err;
	if (!rc && names.len)
		rc = write_text(m, names.p, names.len);
	jb_free(&names);
	return rc;
}

/* Each host's clock as the merge set it (analyze/hostclock.h). */
static void host_clocks(const struct source_set *set, struct jbuf *b)
{
	JB_LIT(b, ",\"host_clocks\":[");
	for (uint32_t k = 0; k < set->nfits; k++) {
		const struct host_fit *f = &set->fits[k];

		if (k)
			jb_char(b, ',');
		JB_LIT(b, "{\"host\":");
		jb_str(b, f->host, strlen(f->host));
		if (f->reference)
			JB_LIT(b, ",\"reference\":true");
		JB_LIT(b, ",\"pairs\":");
		jb_i64(b, f->pairs);
		if (f->pairs) {
			JB_LIT(b, ",\"correction_ns\":");
			jb_i64(b, f->corr_ns);
			JB_LIT(b, ",\"low_ns\":");
			jb_i64(b, f->lo_ns);
			JB_LIT(b, ",\"high_ns\":");
			jb_i64(b, f->hi_ns);
		}
		if (f->rate) {
			JB_LIT(b, ",\"rate_ppb\":");
			jb_i64(b, (int64_t)(f->rate * 1e9));
			JB_LIT(b, ",\"rate_from_ns\":");
			jb_i64(b, f->t0_ns);
		}
		jb_char(b, '}');
	}
	jb_char(b, ']');
}

static int write_tail(struct merge *m)
{
	struct jbuf b;
	int rc = jb_init(&b, 1024);
	char head[160];
	int n = snprintf(head, sizeof(head),
			 "\n],\n\"displayTimeUnit\":\"ns\",\n\"baseTimeNanoseconds\":%lld,\n"
			 "\"otherData\":{\"producer\":\"" MERGE_PRODUCER "\"",
			 (long long)m->set.base_ns);

	if (rc)
		return rc;
	jb_mem(&b, head, n);
	if (m->set.nfits > 1)
		host_clocks(&m->set, &b);
	JB_LIT(&b, "}}\n");
	rc = b.err ? b.err : output_write(m->out, b.p, b.len);
	jb_free(&b);
	return rc;
}

static int merge_run(struct merge *m, int jobs)
{
	int rc, ended;

	m->cv.set = &m->set;
	m->cv.out = write_text;
	m->cv.ctx = m;
	m->cv.progress = &m->progress;
	m->cv.jobs = jobs;
	m->progress.files = m->set.n;
	m->first = true;
	rc = output_write(m->out, "{\"traceEvents\":[\n", 17);
	if (rc || (rc = handoff_start(&m->written, m->out)))
		return rc;
	rc = convert_run(&m->cv);
	if (rc && !m->err[0])
		snprintf(m->err, sizeof(m->err), "%s", m->cv.err);
	if (!rc)
		rc = write_names(m);
	ended = handoff_end(&m->written);	/* the thread goes whatever rc is */
	if (!rc)
		rc = ended;
	if (!rc)
		rc = write_tail(m);
	if (rc && !m->err[0] && output_failed(m->out))
		snprintf(m->err, sizeof(m->err), "cannot write '%s': %s", output_path(m->out),
			 strerror(-rc));
	return rc;
}

/* ---- the command ---- */

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* A torch trace given under the recorded one's file name stands for it
 * where it is gone (moved with the traces). */
static bool given_moved(const struct source_set *set, const char *path)
{
	for (uint32_t i = 0; i < set->n; i++)
		if (set->src[i].kind == SRC_TORCH &&
		    !strcmp(base_name(set->src[i].path), base_name(path)))
			return true;
	return false;
}

/* The input that recorded torch trace path. */
static const char *recorder_of(const struct source_set *set, const char *path)
{
	for (uint32_t i = 0; i < set->n; i++)
		for (uint32_t j = 0; j < set->src[i].ntorch; j++)
			if (!strcmp(set->src[i].torch_paths[j].path, path))
				return set->src[i].path;
	return "?";
}

/* A recorded torch trace that is not where it was written: most likely
 * copied or moved with the traces, so say how to name it. */
/* One line on stderr, after "dftrace-bpf merge: ". Its paths may be a
 * traced program's (a recorded torch trace): never raw on a terminal. */
static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	char text[2048], safe[4 * sizeof(text)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	termsafe(safe, sizeof(safe), text);
	fprintf(stderr, "dftrace-bpf merge: %s\n", safe);
}

static void hint_moved(const struct merge *m, const char *path,
		       const struct merge_opts *o)
{
	say("hint: '%s' recorded it there; if it is "
		"elsewhere now, give it as an input: dftrace-bpf merge -o %s %s "
		"DIR/%s", recorder_of(&m->set, path), o->output,
		recorder_of(&m->set, path), base_name(path));
}

/* A torch trace a trace recorded, when not given: a path the traced
 * program wrote, so one that is missing, not a regular file or does not
 * read whole is left out, with a warning. */
static int discover(struct merge *m, const char *path, const struct merge_opts *o)
{
	char why[512] = "";
	int rc = -EEXIST;

	if (access(path, F_OK) && given_moved(&m->set, path))
		return 0;
	if (inputs_same_file(path, o->output))
		snprintf(why, sizeof(why), "'%s' is the output", path);
	else
		rc = sources_scan_discovered(&m->set, path, why, sizeof(why));

	if (rc == -ENOMEM)
		return rc;
	if (rc)
		say("warning: left out a torch trace a trace recorded: %s", why);
	if (rc == -ENOENT)
		hint_moved(m, path, o);
	else if (!rc && !o->quiet)
		say("with '%s', the torch trace a trace recorded (--no-discover: without)",
		    path);
	return 0;
}

static int scan_inputs(struct merge *m, const struct merge_opts *o)
{
	char **more;
	int rc = inputs_check_output(&o->inputs, o->output, m->err, sizeof(m->err));

	if (!rc)
		rc = sources_scan(&m->set, o->inputs.paths, o->inputs.n, o->inputs.jobs, m->err,
				  sizeof(m->err));
	if (rc)
		return rc;
	more = o->no_discover ? calloc(1, sizeof(*more)) : sources_discovered(&m->set);
	if (!more)
		return -ENOMEM;
	for (int n = 0; more[n]; n++)
		if (!rc)
			rc = discover(m, more[n], o);
	for (int n = 0; more[n]; n++)
		free(more[n]);
	free(more);
	return rc ? rc : sources_decide(&m->set, m->err, sizeof(m->err));
}

static int open_output(struct merge *m, const char *path, const struct invoker *who)
{
	size_t n = strlen(path);
	struct output_opts o = { .path = path, .as = who,
				 .gzip_level = n > 3 && !strcmp(path + n - 3, ".gz") ? 2 : -1 };

	return output_open(&o, &m->out, m->err, sizeof(m->err));
}

/* One line a host, where there are several (analyze/hostclock.h). */
static void report_hosts(const struct source_set *set)
{
	const struct host_fit *ref = NULL;

	for (uint32_t k = 0; k < set->nfits; k++)
		if (set->fits[k].reference)
			ref = &set->fits[k];
	for (uint32_t k = 0; set->nfits > 1 && k < set->nfits; k++) {
		const struct host_fit *f = &set->fits[k];

		if (!ref)
			say("host '%s': no collectives to line the hosts up: its clock kept",
			    f->host);
		else if (f->reference)
			say("host '%s': the reference clock", f->host);
		else if (!f->pairs)
			say("host '%s': no collective in common with '%s': its clock kept",
			    f->host, ref->host);
		else if (f->rate)
			say("host '%s': clock %+.3f ms and a drift of %+.1f ppm fitted to line up "
			    "with '%s' (%u pairs of collectives%s)", f->host, f->corr_ns / 1e6,
			    f->rate * 1e6, ref->host, f->pairs,
			    f->outside ? ", some outside their bounds" : ", each inside its bounds");
		else if (f->lo_ns <= f->hi_ns)
			say("host '%s': clock %+.3f ms to line up with '%s', within [%+.3f, %+.3f] "
			    "ms (%u pairs of collectives)", f->host, f->corr_ns / 1e6, ref->host,
			    f->lo_ns / 1e6, f->hi_ns / 1e6, f->pairs);
		else
			say("host '%s': clock %+.3f ms to line up with '%s', the median of %u "
			    "pairs of collectives, whose bounds disagree by %.3f ms (two "
			    "communicators' calls paired?)", f->host, f->corr_ns / 1e6,
			    ref->host, f->pairs, (f->lo_ns - f->hi_ns) / 1e6);
	}
}

static void report_alignment(const struct merge *m)
{
	report_hosts(&m->set);
	for (uint32_t i = 0; i < m->set.n; i++) {
		const struct source *s = &m->set.src[i];

		if (s->nanchors_used)
			say("'%s' aligned to '%s' within %.1f us (%u anchors)", s->path,
			    s->paired->path, s->align_err_ns / 1e3, s->nanchors_used);
	}
}

int merge_main(int argc, char **argv)
{
	static const struct argp argp = { merge_options, parse_merge,
					  "-o OUT INPUT...\n--file-list INPUT... --output OUT",
					  merge_doc, NULL, NULL, NULL };
	struct merge_opts o = { 0 };
	struct merge m = { 0 };
	struct invoker who;
	int rc;

	argp_parse(&argp, argc, argv, ARGP_IN_ORDER, NULL, &o);
	m.set.strict = o.inputs.strict;
	m.set.align_hosts = !o.no_align_hosts;
	/* as the tracer does, though the rounds hold a few dozen at most */
	fd_limit_raise(NULL);
	rc = invoker_init(&who);
	if (!rc)
		rc = scan_inputs(&m, &o);
	if (!rc)
		rc = open_output(&m, o.output, &who);
	m.progress = (struct progress){ .on = !o.quiet && isatty(STDERR_FILENO),
					.who = "dftrace-bpf merge" };
	if (!rc)
		rc = merge_run(&m, o.inputs.jobs);
	if (!rc)
		rc = output_commit(m.out, m.err, sizeof(m.err));
	if (!rc) {
		rc = output_close(m.out, m.err, sizeof(m.err));
		m.out = NULL;
	}
	progress_done(&m.progress, m.cv.read, m.cv.total);
	if (rc) {
		say("%s", m.err[0] ? m.err : strerror(-rc));
		output_abort(m.out);
	} else if (!o.quiet) {
		report_alignment(&m);
	}
	convert_free(&m.cv);
	sources_free(&m.set);
	invoker_free(&who);
	inputs_free(&o.inputs);
	return rc ? 1 : 0;
}
