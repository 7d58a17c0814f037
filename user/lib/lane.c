// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <string.h>
#include "lib/lane.h"

int lane_start(struct lane *l, void *(*fn)(void *), void *arg)
{
	int rc;

	memset(l, 0, sizeof(*l));
	pthread_mutex_init(&l->lock, NULL);
	pthread_cond_init(&l->cond, NULL);
	l->made = true;
	rc = pthread_create(&l->thread, NULL, fn, arg);
	l->running = !rc;
	return -rc;
}

void lane_close(struct lane *l)
{
	if (l->running) {
		lane_lock(l);
		l->closing = true;
		lane_wake(l);
		lane_unlock(l);
		pthread_join(l->thread, NULL);
		l->running = false;
	}
	if (l->made) {
		pthread_mutex_destroy(&l->lock);
		pthread_cond_destroy(&l->cond);
		l->made = false;
	}
}
