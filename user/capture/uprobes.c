// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "capture/uprobes.h"
#include "lib/vec.h"

/* A closer thread's stack: closing needs little. */
#define CLOSER_STACK (64 << 10)

/* ---- plans ---- */

int uprobe_plan_add(struct uprobe_plan *p, struct bpf_program *prog, bool retprobe,
		    const struct uprobe_site *site)
{
	struct uprobe_set *s = p->n ? &p->set[p->n - 1] : NULL;

	if (!s || s->prog != prog || s->retprobe != retprobe) {
		if (VEC_PUSH(p->set, p->n, p->cap,
			     ((struct uprobe_set){ .prog = prog, .retprobe = retprobe })))
			return -ENOMEM;
		s = &p->set[p->n - 1];
	}
	return VEC_PUSH(s->site, s->n, s->cap, *site);
}

uint32_t uprobe_plan_sites(const struct uprobe_plan *p)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < p->n; i++)
		n += p->set[i].n;
	return n;
}

uint32_t uprobe_plan_fds(const struct uprobe_plan *p, bool multi)
{
	/* a perf event and its link, each */
	return multi ? p->n : 2 * uprobe_plan_sites(p);
}

void uprobe_plan_free(struct uprobe_plan *p)
{
	for (uint32_t i = 0; i < p->n; i++)
		free(p->set[i].site);
	free(p->set);
	*p = (struct uprobe_plan){ 0 };
}

/* ---- attaching ---- */

/* union bpf_attr's link_create for uprobe_multi (Linux 6.6), which
 * Debian 12's header lacks: the kernel's ABI, after the four words every
 * link_create begins with. */
struct uprobe_multi_attr {
	uint32_t prog_fd, target_fd, attach_type, flags;
	uint64_t path, offsets, ref_ctr_offsets, cookies;
	uint32_t cnt, multi_flags, pid;
};

_Static_assert(sizeof(struct uprobe_multi_attr) <= sizeof(union bpf_attr),
	       "within the attr the kernel is given");

int uprobes_multi_link(int prog_fd, const char *path, bool retprobe,
		       const unsigned long *offsets, const uint64_t *cookies,
		       const unsigned long *semaphores, uint32_t n)
{
	union bpf_attr attr;
	struct uprobe_multi_attr a = {
		.prog_fd = prog_fd, .attach_type = UPROBES_MULTI_ATTACH,
		.path = (uintptr_t)path, .offsets = (uintptr_t)offsets,
		.ref_ctr_offsets = (uintptr_t)semaphores, .cookies = (uintptr_t)cookies,
		.cnt = n, .multi_flags = retprobe ? UPROBES_MULTI_RETURN : 0,
	};

	memset(&attr, 0, sizeof(attr));
	memcpy(&attr, &a, sizeof(a));
	return syscall(__NR_bpf, BPF_LINK_CREATE, &attr, sizeof(attr));
}

/* A set as one link. */
static int attach_multi(struct uprobe_links *links, const struct uprobe_set *s,
			const char *path)
{
	unsigned long *off = calloc(s->n, sizeof(*off)), *sema = calloc(s->n, sizeof(*sema));
	uint64_t *cookie = calloc(s->n, sizeof(*cookie));
	bool semaphores = false;
	int fd = -1, err = -ENOMEM;

	for (uint32_t i = 0; off && sema && cookie && i < s->n; i++) {
		off[i] = s->site[i].offset;
		cookie[i] = s->site[i].cookie;
		sema[i] = s->site[i].semaphore;
		semaphores |= sema[i] != 0;
	}
	if (off && sema && cookie) {
		fd = uprobes_multi_link(bpf_program__fd(s->prog), path, s->retprobe, off, cookie,
					semaphores ? sema : NULL, s->n);
		err = fd < 0 ? -errno : 0;
	}
	if (fd >= 0 && VEC_PUSH(links->l, links->n, links->cap,
				((struct uprobe_link){ .fd = fd }))) {
		close(fd);
		err = -ENOMEM;
	} else if (fd >= 0) {
		links->sites += s->n;
		links->fds++;
	}
	free(off);
	free(sema);
	free(cookie);
	return err;
}

/* A set as a perf event a site (libbpf's). */
static int attach_each(struct uprobe_links *links, const struct uprobe_set *s,
		       const char *path)
{
	for (uint32_t i = 0; i < s->n; i++) {
		LIBBPF_OPTS(bpf_uprobe_opts, o, .retprobe = s->retprobe,
			    .bpf_cookie = s->site[i].cookie,
			    .ref_ctr_offset = s->site[i].semaphore);
		struct bpf_link *l = bpf_program__attach_uprobe_opts(s->prog, -1, path,
								     s->site[i].offset, &o);

		if (!l)
			return -errno;
		if (VEC_PUSH(links->l, links->n, links->cap,
			     ((struct uprobe_link){ .link = l, .fd = -1 }))) {
			bpf_link__destroy(l);
			return -ENOMEM;
		}
		links->sites++;
		links->fds += 2;
	}
	return 0;
}

int uprobes_attach(struct uprobe_links *links, const struct uprobe_plan *p,
		   const char *path, bool multi)
{
	int err = 0;

	for (uint32_t i = 0; !err && i < p->n; i++)
		err = multi ? attach_multi(links, &p->set[i], path) :
			      attach_each(links, &p->set[i], path);
	return err;
}

static void release_link(const struct uprobe_link *l)
{
	if (l->link)
		bpf_link__destroy(l->link);
	else
		close(l->fd);
}

/* ---- the closer ---- */

/* Links of one tag still open. */
struct close_job {
	void *tag;
	uint32_t left;
};

struct close_item {
	struct uprobe_link link;
	struct close_job *job;
};

void closer_init(struct closer *c, uint32_t threads)
{
	*c = (struct closer){ .max_threads = threads };
	pthread_mutex_init(&c->mu, NULL);
	pthread_cond_init(&c->work, NULL);
	pthread_cond_init(&c->idle, NULL);
}

/* One link closed (c->mu held): its job done with the last. The room
 * for the tag was made when the job was handed over. */
static void closed_one(struct closer *c, struct close_job *job)
{
	if (--job->left == 0) {
		c->done[c->ndone++] = job->tag;
		c->jobs--;
		free(job);
	}
}

static void *closer_thread(void *arg)
{
	struct closer *c = arg;
	struct close_item it;

	pthread_mutex_lock(&c->mu);
	for (;;) {
		while ((c->head == c->n || c->paused) && !c->stop)
			pthread_cond_wait(&c->work, &c->mu);
		if (c->head == c->n)
			break;
		it = c->q[c->head++];
		if (c->head == c->n)
			c->head = c->n = 0;
		c->busy++;
		pthread_mutex_unlock(&c->mu);
		release_link(&it.link);
		pthread_mutex_lock(&c->mu);
		c->busy--;
		closed_one(c, it.job);
		if (c->head == c->n && !c->busy)
			pthread_cond_broadcast(&c->idle);
	}
	pthread_mutex_unlock(&c->mu);
	return NULL;
}

/* The threads, once: as many as can be made. None: the caller closes. */
static void start_threads(struct closer *c)
{
	pthread_attr_t attr;
	sigset_t all, old;

	c->started = true;
	c->threads = calloc(c->max_threads, sizeof(*c->threads));
	if (!c->threads || pthread_attr_init(&attr))
		return;
	pthread_attr_setstacksize(&attr, CLOSER_STACK);
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	while (c->nthreads < c->max_threads &&
	       !pthread_create(&c->threads[c->nthreads], &attr, closer_thread, c))
		c->nthreads++;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
}

/* Queues the links (c->mu held): false if there is no room. */
static bool queue_links(struct closer *c, struct uprobe_links *links, struct close_job *job)
{
	if (vec_reserve((void **)&c->q, &c->cap, c->n + links->n, sizeof(*c->q)) ||
	    vec_reserve((void **)&c->done, &c->capdone, c->ndone + c->jobs + 1,
			sizeof(*c->done)))
		return false;
	for (uint32_t i = 0; i < links->n; i++)
		c->q[c->n++] = (struct close_item){ links->l[i], job };
	c->jobs++;
	pthread_cond_broadcast(&c->work);
	return true;
}

void closer_submit(struct closer *c, struct uprobe_links *links, void *tag)
{
	struct close_job *job = malloc(sizeof(*job));
	bool queued = false;

	pthread_mutex_lock(&c->mu);
	if (!c->started)
		start_threads(c);
	if (job && c->nthreads) {
		*job = (struct close_job){ tag, links->n };
		queued = links->n && queue_links(c, links, job);
	}
	pthread_mutex_unlock(&c->mu);
	if (!queued) {
		/* no thread, no memory, or nothing to close: here, now */
		for (uint32_t i = 0; i < links->n; i++)
			release_link(&links->l[i]);
		free(job);
		pthread_mutex_lock(&c->mu);
		if (!vec_reserve((void **)&c->done, &c->capdone, c->ndone + c->jobs + 1,
				 sizeof(*c->done)))
			c->done[c->ndone++] = tag;
		pthread_mutex_unlock(&c->mu);
	}
	free(links->l);
	*links = (struct uprobe_links){ 0 };
}

void closer_pause(struct closer *c)
{
	pthread_mutex_lock(&c->mu);
	c->paused++;
	pthread_mutex_unlock(&c->mu);
}

void closer_resume(struct closer *c)
{
	pthread_mutex_lock(&c->mu);
	c->paused--;
	pthread_cond_broadcast(&c->work);
	pthread_mutex_unlock(&c->mu);
}

uint32_t closer_done(struct closer *c, void **tags, uint32_t max)
{
	uint32_t n;

	pthread_mutex_lock(&c->mu);
	n = c->ndone < max ? c->ndone : max;
	memcpy(tags, c->done + c->ndone - n, n * sizeof(*tags));
	c->ndone -= n;
	pthread_mutex_unlock(&c->mu);
	return n;
}

void closer_wait(struct closer *c)
{
	pthread_mutex_lock(&c->mu);
	while (c->head < c->n || c->busy)
		pthread_cond_wait(&c->idle, &c->mu);
	pthread_mutex_unlock(&c->mu);
}

void closer_free(struct closer *c)
{
	closer_wait(c);
	pthread_mutex_lock(&c->mu);
	c->stop = true;
	pthread_cond_broadcast(&c->work);
	pthread_mutex_unlock(&c->mu);
	for (uint32_t i = 0; i < c->nthreads; i++)
		pthread_join(c->threads[i], NULL);
	free(c->threads);
	free(c->q);
	free(c->done);
	pthread_mutex_destroy(&c->mu);
	pthread_cond_destroy(&c->work);
	pthread_cond_destroy(&c->idle);
	*c = (struct closer){ 0 };
}
