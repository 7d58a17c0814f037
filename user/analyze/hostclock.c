// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "analyze/hostclock.h"
#include "analyze/sources.h"
#include "lib/hash.h"
#include "lib/vec.h"

/* The calls every rank of the group leaves only once all have come
 * (bcast, reduce, gather, scatter and point-to-point calls need not). */
static const char *const synchronising[] = {
	"all_reduce", "all_gather", "reduce_scatter", "all_to_all", "barrier",
};

static bool name_in(struct span name, const char *const *names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (span_eq(name, names[i], strlen(names[i])))
			return true;
	return false;
}

/* A collective's key: its name, on its communicator if said (else one
 * key for every communicator: the world's, most often). */
static uint64_t collective_key(struct span name, struct span comm_id)
{
	uint64_t key = dft_hash64(name.p, name.len);

	if (comm_id.len)
		key ^= dft_hash64(comm_id.p, comm_id.len) * 0xff51afd7ed558ccdull;
	return key;
}

bool hostclock_collective(struct span cat, struct span name, struct span comm_id,
			  uint64_t *key)
{
	if (!SPAN_IS(cat, "comm") ||
	    !name_in(name, synchronising, sizeof(synchronising) / sizeof(synchronising[0])))
		return false;
	*key = collective_key(name, comm_id);
	return true;
}

static uint64_t seq_key(uint32_t pid, uint64_t key)
{
	return key ^ (uint64_t)pid * 0x9e3779b97f4a7c15ull;
}

void hostclock_note(struct coll_list *l, uint64_t key, uint32_t pid, int64_t start,
		    int64_t end)
{
	uint64_t k = seq_key(pid, key), seq = 0;
	struct collective c;

	hmap_get(&l->seq, k, &seq);
	if (hmap_put(&l->seq, k, seq + 1))
		return;
	if (l->n >= HOSTCLOCK_KEEP) {
		l->left_out++;
		return;
	}
	c = (struct collective){ key, pid, (uint32_t)seq, start, end };
	if (VEC_PUSH(l->c, l->n, l->cap, c))
		l->left_out++;
}

/* NCCL's calls that every rank of the communicator leaves only once all
 * have come (broadcast, reduce and point-to-point calls need not). */
static const char *const nccl_synchronising[] = {
	"ncclAllReduce", "ncclAllGather", "ncclReduceScatter",
};

bool hostclock_nccl(struct span cat, struct span name, struct span comm_id, uint64_t *key)
{
	if (!SPAN_IS(cat, "NCCL") || !comm_id.len ||
	    !name_in(name, nccl_synchronising,
		     sizeof(nccl_synchronising) / sizeof(nccl_synchronising[0])))
		return false;
	*key = collective_key(name, comm_id);
	return true;
}

void hostclock_nccl_call(struct coll_list *l, uint64_t key, uint32_t pid, uint32_t tid,
			 int64_t stream, int64_t start)
{
	if (l->npend == HOSTCLOCK_PENDING) {
		memmove(l->pend, l->pend + 1, sizeof(l->pend[0]) * --l->npend);
		l->left_out++;
	}
	l->pend[l->npend++] = (struct nccl_pending){ key, pid, tid, stream, start };
}

bool hostclock_nccl_sync(struct span cat, struct span name, bool *all)
{
	static const char *const streams[] = { "cuStreamSynchronize", "cuStreamSynchronize_ptsz" };

	if (!SPAN_IS(cat, "CUDA_DRIVER_API"))
		return false;
	*all = SPAN_IS(name, "cuCtxSynchronize");
	return *all || name_in(name, streams, sizeof(streams) / sizeof(streams[0]));
}

void hostclock_nccl_synced(struct coll_list *l, uint32_t pid, uint32_t tid, int64_t stream,
			   bool all, int64_t end)
{
	uint32_t kept = 0;

	/* in the order they were made: the n-th call of a communicator is
	 * its n-th note */
	for (uint32_t i = 0; i < l->npend; i++) {
		const struct nccl_pending *p = &l->pend[i];

		if (p->pid == pid && p->tid == tid && (all || p->stream == stream))
			hostclock_note(l, p->key, pid, p->start, end);
		else
			l->pend[kept++] = *p;
	}
	l->npend = kept;
}

void hostclock_free(struct coll_list *l)
{
	free(l->c);
	hmap_free(&l->seq);
	*l = (struct coll_list){ 0 };
}

/* ---- the fit ---- */

/* The reference host's calls by (name, seq): a chain of them each. */
struct ref_index {
	struct hmap head;	/* pair key -> 1 + index into at */
	const struct collective **at;
	uint32_t *next;		/* 1 + the next with the same key; 0 none */
	uint32_t n, cap, capnext;
};

static uint64_t pair_key(const struct collective *c)
{
	return c->key ^ ((uint64_t)c->seq + 1) * 0xc2b2ae3d27d4eb4full;
}

static int index_add(struct ref_index *x, const struct collective *c)
{
	uint64_t k = pair_key(c), head = 0;
	uint32_t n = x->n;

	hmap_get(&x->head, k, &head);
	if (VEC_PUSH(x->at, x->n, x->cap, c))
		return -ENOMEM;
	if (VEC_PUSH(x->next, n, x->capnext, (uint32_t)head) ||
	    hmap_put(&x->head, k, x->n))
		return -ENOMEM;
	return 0;
}

static void index_free(struct ref_index *x)
{
	hmap_free(&x->head);
	free(x->at);
	free(x->next);
}


/* A pair: its time (the host's raw end), its ends' difference and its
 * bounds. */
struct pair {
	int64_t t, d, lo, hi;
};

struct diffs {
	struct pair *p;
	uint32_t np, capp;
};

static int cmp_diff(const void *a, const void *b)
{
	int64_t x = ((const struct pair *)a)->d, y = ((const struct pair *)b)->d;

	return (x > y) - (x < y);
}

/* Every pair of one of group g's calls with the reference's. */
static int pair_group(const struct source_set *set, uint32_t g, const struct ref_index *x,
		      struct host_fit *f, struct diffs *d)
{
	for (uint32_t i = 0; i < set->n; i++) {
		const struct source *s = &set->src[i];

		if (s->kind != SRC_DFTRACE || s->group != g)
			continue;
		for (uint32_t j = 0; j < s->colls.n; j++) {
			const struct collective *q = &s->colls.c[j];
			uint64_t at = 0;

			hmap_get(&x->head, pair_key(q), &at);
			for (; at; at = x->next[at - 1]) {
				const struct collective *p = x->at[at - 1];

				if (p->key != q->key || p->seq != q->seq)
					continue;
				if (p->start - q->end > f->lo_ns)
					f->lo_ns = p->start - q->end;
				if (p->end - q->start < f->hi_ns)
					f->hi_ns = p->end - q->start;
				if (VEC_PUSH(d->p, d->np, d->capp, ((struct pair){
						     q->end, p->end - q->end, p->start - q->end,
						     p->end - q->start })))
					return -ENOMEM;
				f->pairs++;
			}
		}
	}
	return 0;
}

/* The least squares line of the differences against time, where its
 * slope is four standard errors or more and it stays inside every
 * pair's bounds: into f. */
static void fit_drift(struct host_fit *f, const struct diffs *d)
{
	double n = d->np, mt = 0, md = 0, stt = 0, std = 0, sse = 0, b, a, se;

	if (d->np < 8)
		return;
	for (uint32_t i = 0; i < d->np; i++) {
		mt += (double)(d->p[i].t - d->p[0].t) / n;
		md += (double)d->p[i].d / n;
	}
	for (uint32_t i = 0; i < d->np; i++) {
		double x = (double)(d->p[i].t - d->p[0].t) - mt;

		stt += x * x;
		std += x * ((double)d->p[i].d - md);
	}
	if (stt <= 0)
		return;
	b = std / stt;
	a = md - b * mt;
	for (uint32_t i = 0; i < d->np; i++) {
		double r = (double)d->p[i].d - (a + b * (double)(d->p[i].t - d->p[0].t));

		sse += r * r;
	}
	se = sqrt(sse / (n - 2) / stt);
	for (uint32_t i = 0; i < d->np; i++) {
		int64_t c = (int64_t)(a + b * (double)(d->p[i].t - d->p[0].t));

		if (c < d->p[i].lo || c > d->p[i].hi)
			f->outside++;
	}
	/* a slope the noise cannot make; or, where no constant fits every
	 * pair's bounds (a drift makes them disagree), a line that does */
	if (!b || (f->outside ? f->lo_ns <= f->hi_ns || fabs(b) < 4 * se :
				fabs(b) < 4 * se && f->lo_ns <= f->hi_ns))
		return;
	f->rate = b;
	f->t0_ns = d->p[0].t;
	f->corr_ns = (int64_t)a;
}

static void estimate(struct host_fit *f, struct diffs *d)
{
	if (!f->pairs)
		return;
	fit_drift(f, d);
	if (f->rate)
		return;
	f->outside = 0;
	/* reordered: fit_drift(), whose t0 was the first pair's, is done */
	qsort(d->p, d->np, sizeof(*d->p), cmp_diff);
	f->corr_ns = d->p[d->np / 2].d;
	if (f->lo_ns <= f->hi_ns) { /* inside the bounds */
		if (f->corr_ns < f->lo_ns)
			f->corr_ns = f->lo_ns;
		if (f->corr_ns > f->hi_ns)
			f->corr_ns = f->hi_ns;
	}
}

/* One fit per host (group of dftrace inputs that named one). */
static int fits_of(const struct source_set *set, struct host_fit **fits, uint32_t *n,
		   uint32_t *cap)
{
	for (uint32_t i = 0; i < set->n; i++) {
		const struct source *s = &set->src[i];
		bool seen = false;

		if (s->kind != SRC_DFTRACE || !s->host[0])
			continue;
		for (uint32_t k = 0; k < *n && !seen; k++)
			seen = (*fits)[k].group == s->group;
		if (!seen && VEC_PUSH(*fits, *n, *cap, ((struct host_fit){
					      .host = s->host, .group = s->group,
					      .lo_ns = INT64_MIN, .hi_ns = INT64_MAX })))
			return -ENOMEM;
	}
	return 0;
}

/* The first host whose inputs hold collectives: its calls indexed. */
static int reference(const struct source_set *set, struct host_fit *fits, uint32_t n,
		     struct ref_index *x)
{
	for (uint32_t k = 0; k < n; k++) {
		for (uint32_t i = 0; i < set->n; i++) {
			const struct source *s = &set->src[i];

			if (s->kind != SRC_DFTRACE || s->group != fits[k].group)
				continue;
			for (uint32_t j = 0; j < s->colls.n; j++)
				if (index_add(x, &s->colls.c[j]))
					return -ENOMEM;
		}
		if (x->n) {
			fits[k].reference = true;
			return 0;
		}
	}
	return 0;
}

int hostclock_fit(const struct source_set *set, struct host_fit **fits, uint32_t *n)
{
	struct ref_index x = { 0 };
	struct diffs d = { 0 };
	uint32_t cap = 0;
	int rc;

	*fits = NULL;
	*n = 0;
	rc = fits_of(set, fits, n, &cap);
	if (!rc)
		rc = reference(set, *fits, *n, &x);
	for (uint32_t k = 0; !rc && x.n && k < *n; k++) {
		if ((*fits)[k].reference)
			continue;
		d.np = 0;
		rc = pair_group(set, (*fits)[k].group, &x, &(*fits)[k], &d);
		estimate(&(*fits)[k], &d);
	}
	index_free(&x);
	free(d.p);
	if (rc) {
		free(*fits);
		*fits = NULL;
		*n = 0;
	}
	return rc;
}
