// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "analyze/sources.h"
#include "cmd/progress.h"
#include "cmd/scan.h"
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
	uint32_t pid;
	int32_t owner;
	bool warned;
};

/* Whether an input times its events from its own start (a torch trace,
 * a merged file), not by the system's clock (a trace): its first record
 * says. */
static int relative_clock(const char *path, bool *relative, char *err, size_t errlen)
{
	struct reader *r;
	struct rec e;
	int rc = reader_open(&r, path, 0, err, errlen);

	if (rc)
		return rc;
	*relative = reader_meta(r)->container;
	if (!*relative && reader_next(r, &e, err, errlen) > 0)
		*relative = !e.pid_num && e.pid_text.len;
	reader_close(r);
	return 0;
}

/* Traces with torch traces: one timeline, as merge makes it (the torch
 * traces' offsets from the dftrace.profiler anchors), or a refusal that
 * says why. Inputs on one kind of clock are left as they are. */
static int align_inputs(const struct inputs *inputs, struct shift *shifts, char *err,
			size_t errlen)
{
	struct source_set set = { .strict = inputs->strict };
	uint32_t relative = 0;
	char why[512] = "";
	int rc = 0;

	for (uint32_t i = 0; i < inputs->n && !rc; i++) {
		bool rel = false;

		rc = relative_clock(inputs->paths[i], &rel, err, errlen);
		relative += rel;
	}
	if (rc || !relative || relative == inputs->n)
		return rc;
	rc = sources_scan(&set, inputs->paths, inputs->n, why, sizeof(why));
	if (!rc)
		rc = sources_decide(&set, why, sizeof(why));
	for (uint32_t i = 0; i < set.n && !rc; i++) {
		const struct source *src = &set.src[i];

		shifts[i].offset_ns = src->offset_ns;
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
		ev.start += shift->offset_ns;
		ev.end += shift->offset_ns;
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
