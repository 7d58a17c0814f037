// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <string.h>
#include <sys/uio.h>
#include "capture/attach.h"
#include "capture/liverings.h"

/* n bytes of pid's memory at addr: all of them, or false. */
static bool read_mem(pid_t pid, uint64_t addr, void *buf, size_t n)
{
	struct iovec local = { buf, n }, remote = { (void *)(uintptr_t)addr, n };

	return process_vm_readv(pid, &local, 1, &remote, 1, 0) == (ssize_t)n;
}

/* A record of the ring, place records after its first, as the kernel
 * side sends one whose strings it could not read: user space reads them
 * (correlate/annot.c). */
static void send(struct trace *t, const struct dft_kept_head *k, const struct dft_ring_rec *r,
		 uint64_t place, uint64_t ts)
{
	struct dft_annot e = {
		.h = { .kind = DFT_EV_ANNOT,
		       .flags = DFT_ANNOT_FAULT_CAT | DFT_ANNOT_FAULT_NAME | DFT_ANNOT_RING,
		       .nr = DFT_ANNOT_BEGIN + (r->ts_end & 1), .tgid = k->tgid, .tid = k->tid,
		       .io_dur = (uint32_t)place, .ts = ts },
		.value = (long long)r->count, .cat_ptr = r->cat, .name_ptr = r->name,
	};

	trace_handle_record(t, &e, sizeof(e));
}

void liverings_take(const struct liverings *lr, struct trace *t, const struct dft_kept_head *k,
		    const struct dft_task *st, bool peek)
{
	struct dft_ring_rec recs[DFT_RING_LEN];
	uint64_t head, again, tail = st->ring_tail, last = st->ring_last, bad = 0, ts, taken = 0;

	if (!st->ring || !read_mem(k->tgid, st->ring, &head, sizeof(head)) || head == tail ||
	    !read_mem(k->tgid, st->ring + DFT_RING_RECS, recs, sizeof(recs)) ||
	    !read_mem(k->tgid, st->ring, &again, sizeof(again)))
		return;
	/* the thread runs on: a record it wrote over meanwhile is lost, as
	 * is one past the ring's length (counted where the kernel counts) */
	if (again - tail > DFT_RING_LEN)
		tail = again - DFT_RING_LEN;
	/* what was read is the process's only if it is still the one */
	if (!attach_proven(lr->tasks_fd, k->tgid, k->ns))
		return;
	/* a process's own mischief: never more than a ring */
	for (int n = 0; tail < head && n < DFT_RING_LEN; tail++, n++) {
		const struct dft_ring_rec *r = &recs[tail & (DFT_RING_LEN - 1)];

		ts = r->ts_end >> 1;
		if (ts < lr->since)
			continue;
		/* in time order, and written before the thread was seen */
		if (ts < last || ts > k->ns) {
			bad++;
			continue;
		}
		last = ts;
		/* after the handler's regions that interrupted it, as the
		 * kernel side sends it (bpf/annot.bpf.c's take_ring_rec) */
		ts = ts < st->probe_last ? st->probe_last : ts;
		send(t, k, r, tail, ts);
		taken = ts;
	}
	if (!peek)
		lost_add(lr->lost, k->tgid, DFT_NR_MAX + DFT_EV_RING_TIME, bad);
	/* the kernel side reads them again, and counts what it drops */
	else if (taken)
		trace_ring_peeked(t, k->tid, (uint32_t)tail, taken);
}
