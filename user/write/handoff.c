// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <string.h>
#include "write/handoff.h"
#include "write/output.h"

static void *writer(void *arg)
{
	struct handoff *h = arg;

	lane_lock(&h->lane);
	for (;;) {
		int rc;

		while (!h->busy && !h->lane.closing)
			lane_wait(&h->lane);
		if (!h->busy)
			break;
		lane_unlock(&h->lane);
		rc = output_write(h->out, h->full.p, h->full.len);
		jb_reset(&h->full);
		lane_lock(&h->lane);
		if (rc && !h->rc)
			h->rc = rc;
		h->busy = false;
		lane_wake(&h->lane);
	}
	lane_unlock(&h->lane);
	return NULL;
}

int handoff_start(struct handoff *h, struct output *out)
{
	memset(h, 0, sizeof(*h));
	h->out = out;
	if (jb_init(&h->fill, HANDOFF_BYTES + 4096) || jb_init(&h->full, HANDOFF_BYTES + 4096)) {
		jb_free(&h->fill);
		return -ENOMEM;
	}
	/* with no thread, the caller writes */
	lane_start(&h->lane, writer, h);
	return 0;
}

/* The filled buffer to the thread, once it has written the last. */
static int hand_over(struct handoff *h)
{
	struct jbuf t;
	int rc;

	if (!h->lane.running) {
		rc = output_write(h->out, h->fill.p, h->fill.len);
		jb_reset(&h->fill);
		return rc;
	}
	lane_lock(&h->lane);
	while (h->busy)
		lane_wait(&h->lane);
	rc = h->rc;
	if (!rc) {
		t = h->full;
		h->full = h->fill;
		h->fill = t;
		h->busy = true;
		lane_wake(&h->lane);
	}
	lane_unlock(&h->lane);
	return rc;
}

int handoff_put(struct handoff *h, const void *p, size_t len)
{
	jb_mem(&h->fill, p, len);
	if (h->fill.err)
		return h->fill.err;
	return h->fill.len >= HANDOFF_BYTES ? hand_over(h) : 0;
}

int handoff_end(struct handoff *h)
{
	int rc = h->fill.err ? h->fill.err : h->fill.len ? hand_over(h) : 0;

	/* the thread has written all it was handed, and ends */
	lane_close(&h->lane);
	rc = rc ? rc : h->rc;
	jb_free(&h->fill);
	jb_free(&h->full);
	return rc;
}
