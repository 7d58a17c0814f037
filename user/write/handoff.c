// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <string.h>
#include "write/handoff.h"
#include "write/output.h"

static void *writer(void *arg)
{
	struct handoff *h = arg;

	pthread_mutex_lock(&h->lock);
	for (;;) {
		int rc;

		while (!h->busy && !h->closing)
			pthread_cond_wait(&h->cond, &h->lock);
		if (!h->busy)
			break;
		pthread_mutex_unlock(&h->lock);
		rc = output_write(h->out, h->full.p, h->full.len);
		jb_reset(&h->full);
		pthread_mutex_lock(&h->lock);
		if (rc && !h->rc)
			h->rc = rc;
		h->busy = false;
		pthread_cond_broadcast(&h->cond);
	}
	pthread_mutex_unlock(&h->lock);
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
	pthread_mutex_init(&h->lock, NULL);
	pthread_cond_init(&h->cond, NULL);
	h->threaded = !pthread_create(&h->thread, NULL, writer, h);
	return 0;
}

/* The filled buffer to the thread, once it has written the last. */
static int hand_over(struct handoff *h)
{
	struct jbuf t;
	int rc;

	if (!h->threaded) {
		rc = output_write(h->out, h->fill.p, h->fill.len);
		jb_reset(&h->fill);
		return rc;
	}
	pthread_mutex_lock(&h->lock);
	while (h->busy)
		pthread_cond_wait(&h->cond, &h->lock);
	rc = h->rc;
	if (!rc) {
		t = h->full;
		h->full = h->fill;
		h->fill = t;
		h->busy = true;
		pthread_cond_broadcast(&h->cond);
	}
	pthread_mutex_unlock(&h->lock);
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

	if (h->threaded) {
		pthread_mutex_lock(&h->lock);
		h->closing = true;
		pthread_cond_broadcast(&h->cond);
		pthread_mutex_unlock(&h->lock);
		pthread_join(h->thread, NULL);
		rc = rc ? rc : h->rc;
		h->threaded = false;
	}
	pthread_mutex_destroy(&h->lock);
	pthread_cond_destroy(&h->cond);
	jb_free(&h->fill);
	jb_free(&h->full);
	return rc;
}
