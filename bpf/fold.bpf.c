// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Totals of folded calls, sent out (see fold.bpf.h for when). A global
 * function: the verifier checks it once for each program that calls it,
 * on its own, not at each call site.
 */
#include "fold.bpf.h"

/* A record costs less than a hash map update (a new key is a lookup,
 * an insert and a lookup again): the map only when the ring has no room
 * for calls. */
__noinline int flush_acc(struct dft_task *st)
{
	struct dft_fold_acc *a;
	struct dft_fold_rec *r;
	struct dft_fold_key k;
	struct dft_fold *v;

	if (!st)
		return 1;
	a = &st->acc;
	if (!a->used)
		return 1;
	a->used = 0;
	r = ring_for_calls() ? bpf_ringbuf_reserve(&events, sizeof(*r), 0) : NULL;
	if (r) {
		fill_header(&r->h, DFT_EV_FOLD, bpf_get_current_task_btf());
		r->key = a->key;
		r->fold = a->fold;
		bpf_ringbuf_submit(r, wakeup_flag());
		return 1;
	}
	/* into the map being filled: one begun before a flip lands in the
	 * next interval, never in a map user space has drained already. The
	 * key from the stack: before 6.2 no other memory is a map key. */
	k = a->key;
	v = total_of(&k, a->fold.first_ns);
	if (!v)
		return 0;
	v->calls += a->fold.calls;
	v->bytes += a->fold.bytes;
	v->errors += a->fold.errors;
	v->dur_ns += a->fold.dur_ns;
	v->last_ns = a->fold.last_ns;
	v->fd = a->fold.fd;
	for (int i = 0; i < DFT_FOLD_BUCKETS; i++)
		v->hist[i] += a->fold.hist[i];
	return 1;
}
