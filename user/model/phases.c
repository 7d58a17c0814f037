// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdlib.h>
#include <string.h>
#include "lib/hash.h"
#include "lib/vec.h"
#include "model/phases.h"

struct phase_frame *phase_push(struct phase_stack *s)
{
	struct phase_frame *f;

	if (vec_reserve((void **)&s->f, &s->cap, s->depth + 1, sizeof(*s->f)))
		return NULL;
	f = &s->f[s->depth++];
	memset(f, 0, sizeof(*f));
	return f;
}

int phase_find(const struct phase_stack *s, const struct istr *cat,
	       const struct istr *name)
{
	for (int i = (int)s->depth - 1; i >= 0; i--)
		if (istr_same(s->f[i].cat, cat) && istr_same(s->f[i].name, name))
			return i;
	return -1;
}

void phase_pop(struct phase_stack *s)
{
	struct phase_frame *f;

	if (!s->depth)
		return;
	f = &s->f[--s->depth];
	ctx_free(&f->args);
	istr_release(f->cat);
	istr_release(f->name);
}

void phase_stack_free(struct phase_stack *s)
{
	while (s->depth)
		phase_pop(s);
	free(s->f);
	s->f = NULL;
	s->depth = s->cap = 0;
}

struct ctx_entry *ctx_find(const struct phase_ctx *c, const struct istr *key)
{
	for (uint32_t i = 0; c && i < c->n; i++)
		if (c->e[i].key == key)
			return &c->e[i];
	return NULL;
}

void ctx_set(struct phase_ctx *c, const struct istr *key,
	     const struct istr *str, int64_t num)
{
	struct ctx_entry *e = ctx_find(c, key);

	if (!e) {
		if (vec_reserve((void **)&c->e, &c->cap, c->n + 1, sizeof(*c->e)))
			return;
		e = &c->e[c->n++];
	}
	*e = (struct ctx_entry){ key, str, num };
}

void ctx_clear(struct phase_ctx *c, const struct istr *key)
{
	uint32_t out = 0;

	for (uint32_t i = 0; i < c->n; i++)
		if (c->e[i].key != key)
			c->e[out++] = c->e[i];
	c->n = out;
}

void ctx_clear_except(struct phase_ctx *c, const struct istr *keep1,
		      const struct istr *keep2)
{
	uint32_t out = 0;

	for (uint32_t i = 0; i < c->n; i++)
		if (c->e[i].key == keep1 || c->e[i].key == keep2)
			c->e[out++] = c->e[i];
	c->n = out;
}

int ctx_copy(struct phase_ctx *dst, const struct phase_ctx *src)
{
	if (vec_reserve((void **)&dst->e, &dst->cap, src->n, sizeof(*dst->e)))
		return -1;
	if (src->n)
		memcpy(dst->e, src->e, src->n * sizeof(*src->e));
	dst->n = src->n;
	return 0;
}

void ctx_free(struct phase_ctx *c)
{
	free(c->e);
	c->e = NULL;
	c->n = c->cap = 0;
}

static struct phase_total *total_of(struct phase_totals *pt,
				    const struct istr *cat,
				    const struct istr *name)
{
	uintptr_t pair[2] = { (uintptr_t)cat, (uintptr_t)name };
	uint64_t h = dft_hash64(pair, sizeof(pair)), at;

	if (!cat || !name || cat->loose || name->loose)
		return &pt->other;
	if (hmap_get(&pt->index, h, &at))
		return pt->t[at - 1].cat == cat && pt->t[at - 1].name == name ? &pt->t[at - 1] :
										&pt->other;
	if (pt->n >= PHASE_TOTALS_MAX ||
	    VEC_PUSH(pt->t, pt->n, pt->cap, ((struct phase_total){ .cat = cat, .name = name })))
		return &pt->other;
	if (hmap_put(&pt->index, h, pt->n)) {
		pt->n--;
		return &pt->other;
	}
	return &pt->t[pt->n - 1];
}

void phase_add_time(struct phase_totals *pt, const struct istr *cat,
		    const struct istr *name, uint64_t ns)
{
	struct phase_total *t = total_of(pt, cat, name);

	t->ns += ns;
	t->count++;
}

void phase_add_bytes(struct phase_totals *pt, const struct istr *cat,
		     const struct istr *name, uint64_t bytes)
{
	total_of(pt, cat, name)->bytes += bytes;
}

void phase_totals_free(struct phase_totals *pt)
{
	free(pt->t);
	hmap_free(&pt->index);
	*pt = (struct phase_totals){ 0 };
}
