/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A thread of its own beside its owner, with the lock and the condition
 * their hand-offs wait on: the reader's batches (cmd/feed.c), the spools'
 * merging (cmd/spool.c), the output's second buffer (write/handoff.c).
 * What is handed over, and when to wait, is theirs; starting, waking and
 * ending the thread is here.
 */
#ifndef LIB_LANE_H
#define LIB_LANE_H

#include <pthread.h>
#include <stdbool.h>

struct lane {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;	/* whatever either side waits for changed */
	bool made;		/* the lock and condition are */
	bool running;		/* the thread was made, and not yet joined */
	bool closing;		/* lane_close() asks it to end (under lock) */
};

/* The lock and condition made, then fn(arg) on a thread of its own: 0,
 * or -errno where no thread could be made (the lock and condition still
 * serve; running is false). lane_close() undoes it either way. */
int lane_start(struct lane *l, void *(*fn)(void *), void *arg);
/* closing set and said, the thread joined, the lock and condition gone.
 * Safe to repeat, and on a zeroed lane never started. */
void lane_close(struct lane *l);

static inline void lane_lock(struct lane *l)
{
	pthread_mutex_lock(&l->lock);
}

static inline void lane_unlock(struct lane *l)
{
	pthread_mutex_unlock(&l->lock);
}

/* Under the lock: until the other side wakes it. */
static inline void lane_wait(struct lane *l)
{
	pthread_cond_wait(&l->cond, &l->lock);
}

/* Under the lock: what the other side waits for changed. */
static inline void lane_wake(struct lane *l)
{
	pthread_cond_broadcast(&l->cond);
}

#endif
