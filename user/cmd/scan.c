// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
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

static int scan_one(struct profile *p, const char *path, uint16_t input, bool strict,
		    struct progress *pr, uint64_t *events, scan_visit visit, void *ctx,
		    char *err, size_t errlen)
{
	struct ev_input in;
	struct reader *r;
	struct rec e;
	struct ev ev;
	int rc = reader_open(&r, path, strict ? READER_STRICT : 0, err, errlen);

	if (rc)
		return rc;
	ev_input_init(&in, path);
	in.by_start = reader_meta(r)->container;
	if (in.by_start && (rc = learn_first(&in, path, strict, err, errlen))) {
		ev_input_free(&in);
		reader_close(r);
		return rc;
	}
	while ((rc = reader_next(r, &e, err, errlen)) > 0) {
		if (!ev_from_rec(&in, &e, &ev))
			continue;
		rc = profile_add(p, &in, input, &ev);
		if (!rc && visit)
			rc = visit(ctx, &in, input, &ev);
		if (rc) {
			snprintf(err, errlen, "'%s': %s", path, strerror(-rc));
			break;
		}
		progress_show(pr, ++*events, 0, "events");
	}
	if (!rc)
		reader_warn_cut(r);
	ev_input_free(&in);
	reader_close(r);
	return rc;
}

int scan_profile(struct profile *p, const struct inputs *inputs, bool progress,
		 scan_visit visit, void *ctx, char *err, size_t errlen)
{
	struct progress pr = { .on = progress, .who = "dftrace-bpf" };
	uint64_t events = 0;
	int rc = 0;

	if (inputs->n > UINT16_MAX) {
		snprintf(err, errlen, "more than %u inputs", UINT16_MAX);
		return -E2BIG;
	}
	for (uint32_t i = 0; i < inputs->n && !rc; i++)
		rc = scan_one(p, inputs->paths[i], i, inputs->strict, &pr, &events, visit,
			      ctx, err, errlen);
	progress_done(&pr, events, 0, "events");
	return rc ? rc : profile_finish(p);
}
