// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <bpf/bpf.h>
#include "capture/ring.h"

/* Published at least this often: the kernel counts what we have not
 * consumed as full, and a small ring (-b 16K) needs it back soon. */
#define PUBLISH_MAX (32u << 10)

int ring_open(struct ring *r, int map_fd)
{
	struct bpf_map_info info;
	__u32 len = sizeof(info);
	/* edge-triggered: woken when the kernel wakes us (every so many
	 * records, or a record that asks), not whenever a record is there;
	 * else the consumer would chase the producer one record at a time */
	struct epoll_event ev = { .events = EPOLLIN | EPOLLET };
	void *cons, *prod;
	int err;

	memset(r, 0, sizeof(*r));
	r->epoll_fd = -1;
	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(map_fd, &info, &len))
		return -errno;
	r->page_size = sysconf(_SC_PAGESIZE);
	r->mask = info.max_entries - 1;
	cons = mmap(NULL, r->page_size, PROT_READ | PROT_WRITE, MAP_SHARED, map_fd, 0);
	if (cons == MAP_FAILED)
		return -errno;
	r->consumer_pos = cons;
	prod = mmap(NULL, r->page_size + 2 * (size_t)info.max_entries, PROT_READ, MAP_SHARED,
		    map_fd, r->page_size);
	if (prod == MAP_FAILED)
		goto fail;
	r->producer_pos = prod;
	r->data = (const uint8_t *)prod + r->page_size;
	r->publish_bytes = info.max_entries / 16 < PUBLISH_MAX ? info.max_entries / 16 : PUBLISH_MAX;
	r->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (r->epoll_fd < 0 || epoll_ctl(r->epoll_fd, EPOLL_CTL_ADD, map_fd, &ev))
		goto fail;
	return 0;
fail:
	err = -errno;
	ring_close(r);
	return err;
}

void ring_close(struct ring *r)
{
	if (!r->consumer_pos) /* never opened: all zero */
		return;
	munmap(r->consumer_pos, r->page_size);
	if (r->producer_pos)
		munmap((void *)r->producer_pos, r->page_size + 2 * (r->mask + 1));
	if (r->epoll_fd >= 0)
		close(r->epoll_fd);
	memset(r, 0, sizeof(*r));
	r->epoll_fd = -1;
}

int ring_wait(struct ring *r, int timeout_ms)
{
	struct epoll_event ev;

	return epoll_wait(r->epoll_fd, &ev, 1, timeout_ms) < 0 ? -errno : 0;
}

static inline uint64_t record_bytes(uint32_t len)
{
	len &= ~(BPF_RINGBUF_BUSY_BIT | BPF_RINGBUF_DISCARD_BIT);
	return (len + BPF_RINGBUF_HDR_SZ + 7) / 8 * 8;
}

int ring_consume(struct ring *r, int (*fn)(void *ctx, void *data, size_t size), void *ctx)
{
	unsigned long cons = *r->consumer_pos, published = cons;
	/* what is there now, not what comes meanwhile: chasing the producer
	 * record by record would read each line as it is being written */
	unsigned long prod = __atomic_load_n(r->producer_pos, __ATOMIC_ACQUIRE);
	int err = 0;

	while (cons < prod && !err) {
		uint32_t *hdr = (uint32_t *)(r->data + (cons & r->mask));
		uint32_t len = __atomic_load_n(hdr, __ATOMIC_ACQUIRE);

		if (len & BPF_RINGBUF_BUSY_BIT) /* still being written */
			break;
		cons += record_bytes(len);
		if (!(len & BPF_RINGBUF_DISCARD_BIT))
			err = fn(ctx, (uint8_t *)hdr + BPF_RINGBUF_HDR_SZ,
				 len & ~BPF_RINGBUF_DISCARD_BIT);
		if (cons - published >= r->publish_bytes) {
			__atomic_store_n(r->consumer_pos, cons, __ATOMIC_RELEASE);
			published = cons;
		}
	}
	if (cons != published)
		__atomic_store_n(r->consumer_pos, cons, __ATOMIC_RELEASE);
	return err;
}

uint64_t ring_mark(const struct ring *r)
{
	return __atomic_load_n(r->producer_pos, __ATOMIC_ACQUIRE);
}

bool ring_reached(const struct ring *r, uint64_t mark)
{
	return *r->consumer_pos >= mark;
}

uint64_t ring_pending(const struct ring *r)
{
	return __atomic_load_n(r->producer_pos, __ATOMIC_ACQUIRE) - *r->consumer_pos;
}
