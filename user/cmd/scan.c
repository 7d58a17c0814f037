// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "analyze/sources.h"
#include "cmd/progress.h"
#include "cmd/scan.h"
#include "read/jscan.h"
#include "read/reader.h"

/* A merged file's metadata, ahead of its events (its process names come
 * last). Only a regular file can be read twice. */
static int learn_first(struct ev_input *in, const char *path, bool strict, char *err,
		       size_t errlen)
{
	struct reader *r;
	struct rec e;
	struct stat st;
	int rc;

	if (stat(path, &st) || !S_ISREG(st.st_mode))
		return 0;
	rc = reader_open(&r, path, strict ? READER_STRICT : 0, err, errlen);
	if (rc)
		return rc;
	while ((rc = reader_next(r, &e, err, errlen)) > 0)
		ev_input_learn(in, &e);
	reader_close(r);
	ev_input_learned(in);
	return rc;
}

/* What puts an input on the others' clock: ns to add; the process a
 * torch trace that names none (pid "CPU functions") belongs to; the
 * input whose processes a torch trace's are (-1: its own). warned: the
 * read that aligned it said what it left out. */
struct shift {
	int64_t offset_ns;
	double rate;		/* a host's drift: + rate * (t - rate_t0) */
	int64_t rate_t0;
	uint32_t pid;
	int32_t owner;
	bool warned;
};

/* The records an input's host is looked for in (HH comes first). */
#define HOST_LOOK 16

/* Whether an input times its events from its own start (a torch trace,
 * a merged file), not by the system's clock (a trace): its first record
 * says; and its host, from an HH line among its first records ("" if
 * none). */
static int input_clock(const char *path, bool *relative, char *host, size_t hostlen,
		       char *err, size_t errlen)
{
	struct reader *r;
	struct rec e;
	struct span v, name;
	int rc = reader_open(&r, path, 0, err, errlen);

	host[0] = 0;
	if (rc)
		return rc;
	*relative = reader_meta(r)->container;
	for (int i = 0; i < HOST_LOOK && !host[0] && reader_next(r, &e, err, errlen) > 0; i++) {
		if (!i && !*relative)
			*relative = !e.pid_num && e.pid_text.len;
		if (e.ph == 'M' && SPAN_IS(e.name, "HH") && e.args.len &&
		    js_get(e.args, "name", &v) && js_string(v, &name))
			js_unescape(name, host, hostlen);
	}
	reader_close(r);
	return 0;
}

/* Traces with torch traces, or of several hosts: one timeline, as merge
 * makes it (the torch traces' offsets from the dftrace.profiler anchors,
 * the hosts' from their collectives), or a refusal that says why. Inputs
 * on one kind of clock and of one host are left as they are. */
static int align_inputs(const struct inputs *inputs, struct shift *shifts, char *err,
			size_t errlen)
{
	struct source_set set = { .strict = inputs->strict, .align_hosts = true };
	char why[512] = "", host[256], first[256] = "";
	uint32_t relative = 0;
	bool hosts = false;
	int rc = 0;

	for (uint32_t i = 0; i < inputs->n && !rc; i++) {
		bool rel = false;

		rc = input_clock(inputs->paths[i], &rel, host, sizeof(host), err, errlen);
		relative += rel;
		if (host[0] && !first[0])
			snprintf(first, sizeof(first), "%s", host);
		hosts |= host[0] && strcmp(host, first);
	}
	if (rc || ((!relative || relative == inputs->n) && !hosts))
		return rc;
	rc = sources_scan(&set, inputs->paths, inputs->n, why, sizeof(why));
	if (!rc)
		rc = sources_decide(&set, why, sizeof(why));
	for (uint32_t i = 0; i < set.n && !rc; i++) {
		const struct source *src = &set.src[i];

		shifts[i].offset_ns = src->offset_ns;
		shifts[i].rate = src->rate;
		shifts[i].rate_t0 = src->rate_t0;
		shifts[i].warned = true;
		if (src->kind == SRC_TORCH && src->paired) {
			shifts[i].pid = src->paired_pid ? src->paired_pid : src->paired->root_pid;
			shifts[i].owner = src->paired - set.src;
		}
	}
	if (rc)
		snprintf(err, errlen, "traces and torch traces on clocks of their own: %s",
			 why);
	sources_free(&set);
	return rc;
}

/* t on the inputs' one timeline. */
static int64_t shifted(const struct shift *s, int64_t t)
{
	return clock_shift(t, s->offset_ns, s->rate, s->rate_t0);
}

/* Input number input into p, with what its metadata says in *in (made
 * ready by the caller, who frees it). */
static int scan_one(struct profile *p, struct ev_input *in, const char *path, uint16_t input,
		    bool strict, const struct shift *shift, struct progress *pr,
		    uint64_t *events, scan_visit visit, void *ctx, char *err, size_t errlen)
{
	struct reader *r;
	struct rec e;
	struct ev ev;
	int rc = reader_open(&r, path, strict ? READER_STRICT : 0, err, errlen);

	if (rc)
		return rc;
	in->by_start = reader_meta(r)->container;
	if (in->by_start && (rc = learn_first(in, path, strict, err, errlen))) {
		reader_close(r);
		return rc;
	}
	while ((rc = reader_next(r, &e, err, errlen)) > 0) {
		if (!ev_from_rec(in, &e, &ev))
			continue;
		ev.start = shifted(shift, ev.start);
		ev.end = shifted(shift, ev.end);
		if (!e.pid_num && shift->pid)
			ev.pid = shift->pid;
		rc = profile_add(p, in, input, &ev);
		if (!rc && visit)
			rc = visit(ctx, in, input, &ev);
		if (rc) {
			snprintf(err, errlen, "'%s': %s", path, strerror(-rc));
			break;
		}
		progress_show(pr, ++*events, 0, "events");
	}
	if (!rc && !shift->warned)
		reader_warn(r);
	reader_close(r);
	return rc;
}

/* Every input, the traces before the torch traces that are their
 * processes': those traces' metadata (their processes' names and ranks)
 * is kept until the end, the others' let go as each is done. */
static int scan_all(struct profile *p, const struct inputs *inputs, const struct shift *shifts,
		    struct progress *pr, uint64_t *events, scan_visit visit, void *ctx,
		    char *err, size_t errlen)
{
	struct ev_input *ins = calloc(inputs->n ? inputs->n : 1, sizeof(*ins));
	bool *owns = calloc(inputs->n ? inputs->n : 1, sizeof(*owns));
	int rc = ins && owns ? 0 : -ENOMEM;

	for (uint32_t i = 0; i < inputs->n && !rc; i++)
		if (shifts[i].owner >= 0)
			owns[shifts[i].owner] = true;
	for (int owned = 0; owned < 2; owned++) {
		for (uint32_t i = 0; i < inputs->n && !rc; i++) {
			if ((shifts[i].owner >= 0) != owned)
				continue;
			ev_input_init(&ins[i], inputs->paths[i]);
			if (owned) {
				ins[i].owner = &ins[shifts[i].owner];
				ins[i].owner_input = shifts[i].owner;
			}
			rc = scan_one(p, &ins[i], inputs->paths[i], i, inputs->strict, &shifts[i],
				      pr, events, visit, ctx, err, errlen);
			if (!owns[i])
				ev_input_free(&ins[i]);
		}
	}
	for (uint32_t i = 0; ins && owns && i < inputs->n; i++)
		if (owns[i])
			ev_input_free(&ins[i]);
	free(owns);
	free(ins);
	return rc;
}

int scan_profile(struct profile *p, const struct inputs *inputs, bool progress,
		 scan_visit visit, void *ctx, char *err, size_t errlen)
{
	struct progress pr = { .on = progress, .who = "dftrace-bpf" };
	uint64_t events = 0;
	struct shift *shifts;
	int rc = 0;

	if (inputs->n > UINT16_MAX) {
		snprintf(err, errlen, "more than %u inputs", UINT16_MAX);
		return -E2BIG;
	}
	shifts = calloc(inputs->n ? inputs->n : 1, sizeof(*shifts));
	if (!shifts)
		return -ENOMEM;
	for (uint32_t i = 0; i < inputs->n; i++)
		shifts[i].owner = -1;
	rc = align_inputs(inputs, shifts, err, errlen);
	if (!rc)
		rc = scan_all(p, inputs, shifts, &pr, &events, visit, ctx, err, errlen);
	free(shifts);
	progress_done(&pr, events, 0, "events");
	return rc ? rc : profile_finish(p);
}
