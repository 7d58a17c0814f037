/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The consumer side of the BPF ring buffer, read in place. Unlike
 * libbpf's ring_buffer__consume, which publishes its position after every
 * record, the position goes back to the kernel once per batch: each
 * bpf_ringbuf_reserve reads it, and a line the consumer has just written
 * on another CPU costs the traced syscall a cache miss.
 */
#ifndef CAPTURE_RING_H
#define CAPTURE_RING_H

#include <stddef.h>
#include <stdint.h>

struct ring {
	int epoll_fd;
	unsigned long *consumer_pos;	/* ours to write */
	const unsigned long *producer_pos;
	const uint8_t *data;	/* mapped twice in a row: a record never wraps */
	uint64_t mask;
	size_t page_size, publish_bytes;
};

/* Maps the ring of map_fd (a BPF_MAP_TYPE_RINGBUF): 0 or -errno. */
int ring_open(struct ring *r, int map_fd);
/* Unmaps it; a ring never opened or already closed is fine. */
void ring_close(struct ring *r);
/* Waits up to timeout_ms (0: not at all) for a wakeup: 0, or -errno. */
int ring_wait(struct ring *r, int timeout_ms);
/* Hands each record there now to fn until fn returns non-zero (returned)
 * or none is left (0). */
int ring_consume(struct ring *r, int (*fn)(void *ctx, void *data, size_t size), void *ctx);
/* Bytes the producers have written that are not consumed yet. */
uint64_t ring_pending(const struct ring *r);
/* Where producers are now, and whether everything up to such a mark has
 * been consumed: to drain what is there, not what keeps coming. */
uint64_t ring_mark(const struct ring *r);
bool ring_reached(const struct ring *r, uint64_t mark);

#endif
