// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include "lib/pfor.h"

struct pfor {
	uint32_t n, next;	/* next: __atomic */
	int (*fn)(void *ctx, uint32_t i);
	void *ctx;
	pthread_mutex_t lock;	/* over the failure */
	bool failed;
	uint32_t first;
	int rc;
};

static void *run(void *arg)
{
	struct pfor *p = arg;

	for (;;) {
		uint32_t i = __atomic_fetch_add(&p->next, 1, __ATOMIC_RELAXED);
		int rc;

		if (i >= p->n || __atomic_load_n(&p->failed, __ATOMIC_RELAXED))
			return NULL;
		rc = p->fn(p->ctx, i);
		if (!rc)
			continue;
		pthread_mutex_lock(&p->lock);
		if (!p->failed || i < p->first) {
			p->first = i;
			p->rc = rc;
		}
		__atomic_store_n(&p->failed, true, __ATOMIC_RELAXED);
		pthread_mutex_unlock(&p->lock);
	}
}

int pfor(uint32_t n, int jobs, int (*fn)(void *ctx, uint32_t i), void *ctx,
	 uint32_t *failed)
{
	struct pfor p = { .n = n, .fn = fn, .ctx = ctx };
	pthread_t threads[PFOR_MAX_JOBS];
	int started = 0;

	if (jobs <= 0)
		jobs = pfor_cores();
	if (jobs > PFOR_MAX_JOBS)
		jobs = PFOR_MAX_JOBS;
	if ((uint32_t)jobs > n)
		jobs = n ? n : 1;
	pthread_mutex_init(&p.lock, NULL);
	/* this thread is one of them */
	for (int t = 1; t < jobs; t++)
		if (!pthread_create(&threads[started], NULL, run, &p))
			started++;
	run(&p);
	for (int t = 0; t < started; t++)
		pthread_join(threads[t], NULL);
	pthread_mutex_destroy(&p.lock);
	if (p.failed && failed)
		*failed = p.first;
	return p.failed ? p.rc : 0;
}

int pfor_cores(void)
{
	cpu_set_t set;
	int n;

	if (sched_getaffinity(0, sizeof(set), &set))
		return 1;
	n = CPU_COUNT(&set);
	return n < 1 ? 1 : n > PFOR_MAX_JOBS ? PFOR_MAX_JOBS : n;
}
