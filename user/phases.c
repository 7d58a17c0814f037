// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdlib.h>
#include <string.h>
#include "phases.h"

#define MAX_TOTALS 256

static struct phase_total totals[MAX_TOTALS];
static int ntotals;

static bool grow(void **arr, uint32_t *cap, uint32_t need, size_t size)
{
	uint32_t c;
	void *a;

	if (need <= *cap)
		return true;
	c = *cap ? *cap * 2 : 8;
	a = realloc(*arr, (size_t)c * size);
	if (!a)
		return false;
	*arr = a;
	*cap = c;
	return true;
}

struct phase_frame *phase_push(struct phase_stack *s)
{
	struct phase_frame *f;

	if (!grow((void **)&s->f, &s->cap, s->depth + 1, sizeof(*s->f)))
		return NULL;
	f = &s->f[s->depth++];
	memset(f, 0, sizeof(*f));
	return f;
}

int phase_find(const struct phase_stack *s, const struct path *cat,
	       const struct path *name)
{
	for (int i = (int)s->depth - 1; i >= 0; i--)
		if (s->f[i].cat == cat && s->f[i].name == name)
			return i;
	return -1;
}

void phase_pop(struct phase_stack *s)
{
	if (s->depth)
		ctx_free(&s->f[--s->depth].args);
}

void phase_stack_free(struct phase_stack *s)
{
	while (s->depth)
		phase_pop(s);
	free(s->f);
	s->f = NULL;
	s->depth = s->cap = 0;
}

struct ctx_entry *ctx_find(const struct phase_ctx *c, const struct path *key)
{
	for (uint32_t i = 0; c && i < c->n; i++)
		if (c->e[i].key == key)
			return &c->e[i];
	return NULL;
}

void ctx_set(struct phase_ctx *c, const struct path *key,
	     const struct path *str, int64_t num)
{
	struct ctx_entry *e = ctx_find(c, key);

	if (!e) {
		if (!grow((void **)&c->e, &c->cap, c->n + 1, sizeof(*c->e)))
			return;
		e = &c->e[c->n++];
	}
	*e = (struct ctx_entry){ key, str, num };
}

static bool is_position(const struct path *key)
{
	return !strcmp(key->str, "epoch") || !strcmp(key->str, "step");
}

void ctx_clear(struct phase_ctx *c, const struct path *key)
{
	uint32_t out = 0;

	for (uint32_t i = 0; i < c->n; i++) {
		bool drop = key ? c->e[i].key == key : !is_position(c->e[i].key);

		if (!drop)
			c->e[out++] = c->e[i];
	}
	c->n = out;
}

int ctx_copy(struct phase_ctx *dst, const struct phase_ctx *src)
{
	if (!grow((void **)&dst->e, &dst->cap, src->n, sizeof(*dst->e)))
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

static struct phase_total *total_of(const struct path *cat,
				    const struct path *name)
{
	for (int i = 0; i < ntotals; i++)
		if (totals[i].cat == cat && totals[i].name == name)
			return &totals[i];
	if (ntotals == MAX_TOTALS)
		return NULL;
	totals[ntotals] = (struct phase_total){ .cat = cat, .name = name };
	return &totals[ntotals++];
}

void phase_add_time(const struct path *cat, const struct path *name,
		    uint64_t ns)
{
	struct phase_total *t = total_of(cat, name);

	if (t) {
		t->ns += ns;
		t->count++;
	}
}

void phase_add_bytes(const struct path *cat, const struct path *name,
		     uint64_t bytes)
{
	struct phase_total *t = total_of(cat, name);

	if (t)
		t->bytes += bytes;
}

const struct phase_total *phase_totals(int *n)
{
	*n = ntotals;
	return totals;
}
