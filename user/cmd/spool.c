// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cmd/spool.h"
#include "lib/heap.h"
#include "lib/json.h"

/* A record: the time, the length, the text. */
struct spool_rec {
	int64_t ts;
	uint32_t len;
};

/* where sort(1) spills */
static const char *spool_dir(void)
{
	const char *dir = getenv("TMPDIR");

	return dir && *dir ? dir : "/tmp";
}

void spool_say(char *err, size_t errlen, int rc)
{
	snprintf(err, errlen, "cannot write a temporary file in '%s': %s", spool_dir(),
		 strerror(-rc));
}

int spool_new(FILE **f, char *err, size_t errlen)
{
	const char *dir = spool_dir();
	int fd;
	int rc;

	/* gone with the last descriptor */
	fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	*f = fd >= 0 ? fdopen(fd, "w+") : NULL;
	if (*f)
		return 0;
	rc = -errno;
	if (fd >= 0)
		close(fd);
	snprintf(err, errlen, "cannot make a temporary file in '%s': %s", dir, strerror(-rc));
	return rc;
}

int spool_put(void *f, int64_t ts, const char *text, size_t len)
{
	struct spool_rec r = { ts, len };

	if (len > UINT32_MAX)
		return -E2BIG;
	if (fwrite(&r, sizeof(r), 1, f) != 1 || fwrite(text, 1, len, f) != len)
		return errno ? -errno : -EIO;
	return 0;
}

/* A spool being read: its next event. */
struct spool_head {
	FILE *f;
	int64_t ts;
	struct jbuf text;
};

/* 1, 0 at the end, or -errno. */
static int spool_next(struct spool_head *h)
{
	struct spool_rec r;

	if (fread(&r, sizeof(r), 1, h->f) != 1)
		return ferror(h->f) ? -EIO : 0;
	jb_reset(&h->text);
	if (!jb_room(&h->text, r.len))
		return -ENOMEM;
	if (fread(h->text.p, 1, r.len, h->f) != r.len)
		return -EIO;	/* we wrote it whole */
	h->text.len = r.len;
	h->ts = r.ts;
	return 1;
}

/* The n spools' events in time order, to put; the spools are closed. */
static int spools_merge(FILE **in, int n, spool_put_fn put, void *ctx)
{
	struct spool_head *h = calloc(n, sizeof(*h));
	struct heap order = { 0 };
	struct heap_item it;
	int rc = h ? 0 : -ENOMEM;

	for (int i = 0; i < n && !rc; i++) {
		h[i].f = in[i];
		rc = fflush(in[i]) || fseek(in[i], 0, SEEK_SET) ? -errno : 0;
		rc = rc ? rc : jb_init(&h[i].text, 4096);
		rc = rc ? rc : spool_next(&h[i]);
		if (rc > 0)
			rc = heap_push(&order, h[i].ts, &h[i]);
	}
	while (rc >= 0 && heap_pop(&order, &it)) {
		struct spool_head *s = it.val;

		rc = put(ctx, s->ts, s->text.p, s->text.len);
		rc = rc ? rc : spool_next(s);
		if (rc > 0)
			rc = heap_push(&order, s->ts, s);
	}
	for (int i = 0; i < n; i++) {
		if (h)
			jb_free(&h[i].text);
		fclose(in[i]);
	}
	heap_free(&order);
	free(h);
	return rc < 0 ? rc : 0;
}

static int add_at(struct spools *s, int l, FILE *f, char *err, size_t errlen)
{
	FILE *up = NULL;
	int rc;

	s->at[l][s->n[l]++] = f;
	if (s->n[l] < SPOOL_FAN)
		return 0;
	if (l + 1 == SPOOL_LEVELS) {
		snprintf(err, errlen, "too many inputs for one merge");
		return -E2BIG;
	}
	rc = spool_new(&up, err, errlen);
	if (!rc)
		rc = spools_merge(s->at[l], s->n[l], spool_put, up);
	s->n[l] = 0;
	if (!rc)
		return add_at(s, l + 1, up, err, errlen);
	if (!err[0])
		spool_say(err, errlen, rc);
	if (up)
		fclose(up);
	return rc;
}

/* The merging thread: the queue's spools, in order, as spools_add()
 * would have taken them; after an error, the rest are closed. */
static void *merger(void *arg)
{
	struct spools *s = arg;
	char err[sizeof(s->err)] = "";

	lane_lock(&s->lane);
	for (;;) {
		FILE *f;
		int rc;

		while (!s->qn && !s->lane.closing)
			lane_wait(&s->lane);
		if (!s->qn)
			break;
		f = s->queue[s->qhead];
		s->qhead = (s->qhead + 1) % SPOOL_QUEUE;
		s->qn--;
		lane_wake(&s->lane);
		if (s->rc) {
			fclose(f);
			continue;
		}
		lane_unlock(&s->lane);
		rc = add_at(s, 0, f, err, sizeof(err));
		lane_lock(&s->lane);
		if (rc) {
			s->rc = rc;
			snprintf(s->err, sizeof(s->err), "%s", err);
		}
	}
	lane_unlock(&s->lane);
	return NULL;
}

int spools_start(struct spools *s)
{
	int rc;

	if (s->lane.running)
		return 0;
	rc = lane_start(&s->lane, merger, s);
	if (rc)
		lane_close(&s->lane);
	return rc;
}

/* The thread's error, said in err: its rc. */
static int thread_error(const struct spools *s, char *err, size_t errlen)
{
	if (s->rc)
		snprintf(err, errlen, "%s", s->err);
	return s->rc;
}

/* The thread done with every spool queued (it ends). */
static int spools_stop(struct spools *s, char *err, size_t errlen)
{
	int rc;

	if (!s->lane.running)
		return 0;
	lane_close(&s->lane);
	rc = thread_error(s, err, errlen);
	s->rc = 0;
	return rc;
}

int spools_add(struct spools *s, FILE *f, char *err, size_t errlen)
{
	int rc;

	if (!s->lane.running)
		return add_at(s, 0, f, err, errlen);
	/* bounded: a round waits while the thread is SPOOL_QUEUE behind */
	lane_lock(&s->lane);
	while (s->qn == SPOOL_QUEUE && !s->rc)
		lane_wait(&s->lane);
	rc = thread_error(s, err, errlen);
	if (rc) {
		fclose(f);
	} else {
		s->queue[(s->qhead + s->qn) % SPOOL_QUEUE] = f;
		s->qn++;
		lane_wake(&s->lane);
	}
	lane_unlock(&s->lane);
	return rc;
}

int spools_drain(struct spools *s, spool_put_fn put, void *ctx, char *err,
		 size_t errlen)
{
	FILE *all[SPOOL_LEVELS * SPOOL_FAN];
	int n = 0, rc = spools_stop(s, err, errlen);

	if (rc)
		return rc;

	for (int l = 0; l < SPOOL_LEVELS; l++) {
		memcpy(all + n, s->at[l], s->n[l] * sizeof(*all));
		n += s->n[l];
		s->n[l] = 0;
	}
	return spools_merge(all, n, put, ctx);
}

void spools_free(struct spools *s)
{
	char err[sizeof(s->err)];	/* not said: this is the cleanup */

	spools_stop(s, err, sizeof(err));
	for (int l = 0; l < SPOOL_LEVELS; l++) {
		for (int i = 0; i < s->n[l]; i++)
			fclose(s->at[l][i]);
		s->n[l] = 0;
	}
}
