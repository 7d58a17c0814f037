// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "analyze/hostclock.h"
#include "analyze/straggler.h"
#include "lib/hash.h"
#include "lib/termsafe.h"
#include "lib/units.h"
#include "lib/vec.h"

static uint64_t mix(uint64_t a, uint64_t b)
{
	return (a ^ b) * 0x9e3779b97f4a7c15ull + (a >> 17);
}

static uint64_t slot_key(int32_t rank, int64_t step)
{
	return mix((uint64_t)(uint32_t)rank, (uint64_t)step * 0xc2b2ae3d27d4eb4full);
}

/* ---- what the ranks did ---- */

static int note_call(struct straggler *s, int rank, const struct ev *e, uint64_t key)
{
	uint64_t k = mix(slot_key(rank, e->step), key), seq = 0;
	struct strag_call c;

	hmap_get(&s->seq, k, &seq);
	if (hmap_put(&s->seq, k, seq + 1))
		return -ENOMEM;
	if (s->ncalls >= STRAGGLER_CALLS) {
		s->calls_left_out++;
		return 0;
	}
	c = (struct strag_call){ rank, e->step, key, (uint32_t)seq, e->start, e->end };
	return VEC_PUSH(s->calls, s->ncalls, s->capcalls, c) ? -ENOMEM : 0;
}

static struct strag_slot *slot_of(struct straggler *s, int rank, int64_t step)
{
	uint64_t k = slot_key(rank, step);
	struct strag_slot *slot = hmap_get_ptr(&s->slots, k);

	if (slot)
		return slot;
	if (s->slots.n >= STRAGGLER_SLOTS) {
		s->slots_left_out++;
		return NULL;
	}
	slot = calloc(1, sizeof(*slot));
	if (slot && hmap_put_ptr(&s->slots, k, slot)) {
		free(slot);
		slot = NULL;
	}
	return slot;
}

/* ns (and bytes) of the item named by the escaped span, among top; what
 * finds no room goes to *other. */
static void add_item(struct strag_item *top, int64_t *other, struct span name, int64_t ns,
		     int64_t bytes)
{
	uint64_t h = dft_hash64(name.p, name.len);

	for (int i = 0; i < STRAGGLER_TOP; i++) {
		if (top[i].name && top[i].hash != h)
			continue;
		if (!top[i].name) {
			top[i].name = malloc(name.len + 1);
			if (!top[i].name)
				break;
			js_unescape(name, top[i].name, name.len + 1);
			top[i].hash = h;
		}
		units_add(&top[i].ns, ns);
		units_add(&top[i].bytes, bytes);
		return;
	}
	units_add(other, ns);
}

static int note_io(struct straggler *s, int rank, const struct ev *e)
{
	struct strag_slot *slot = slot_of(s, rank, e->step);
	int64_t ns = e->end - e->start, bytes = e->bytes_kind != SC_BYTES_NONE && e->bytes > 0 ?
							    e->bytes : 0;

	if (!slot)
		return s->slots_left_out ? 0 : -ENOMEM;
	units_add(&slot->io_ns, ns);
	units_add(&slot->io_bytes, bytes);
	if (e->file.len)
		add_item(slot->files, &slot->other_file_ns, e->file, ns, bytes);
	if (e->phase.len)
		add_item(slot->phases, &slot->other_phase_ns, e->phase, ns, 0);
	return 0;
}

int straggler_visit(void *ctx, const struct ev_input *in, uint16_t input, const struct ev *e)
{
	struct straggler *s = ctx;
	uint64_t key;
	int rank;

	(void)input;
	/* every event of a report passes here: the cheap test first */
	if (e->step < 0 || (rank = ev_rank(in, e->pid)) < 0)
		return 0;
	/* an NCCL call's start is when the rank came: its collective ends
	 * on the device once the last rank's has (hostclock.h) */
	if (hostclock_collective(e->cat, e->name, e->comm_id, &key) ||
	    (e->kind == EV_GPU && !e->ret && hostclock_nccl(e->cat, e->name, e->comm_id, &key)))
		return note_call(s, rank, e, key);
	return e->kind == EV_IO ? note_io(s, rank, e) : 0;
}

/* ---- who was waited for ---- */

/* A rank's share of a step: the waits its lateness caused. */
struct blame {
	int32_t rank;
	int64_t step;
	int64_t caused_ns;	/* the others' waits for it */
	int64_t late_ns;	/* its start past the next latest rank's */
	uint32_t calls;		/* collectives it came last to */
};

static int cmp_call(const void *a, const void *b)
{
	const struct strag_call *x = a, *y = b;

	if (x->step != y->step)
		return x->step < y->step ? -1 : 1;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return x->rank < y->rank ? -1 : x->rank > y->rank;
}

static int cmp_blame(const void *a, const void *b)
{
	const struct blame *x = a, *y = b;

	return x->caused_ns < y->caused_ns ? 1 : x->caused_ns > y->caused_ns ? -1 :
	       x->step < y->step ? -1 : x->step > y->step;
}

struct blames {
	struct blame *b;
	uint32_t n, cap;
	struct hmap at;		/* slot_key -> 1 + index */
};

static int blame(struct blames *bl, const struct strag_call *last, int64_t caused,
		 int64_t late)
{
	uint64_t k = slot_key(last->rank, last->step), at = 0;
	struct blame *b;

	if (!hmap_get(&bl->at, k, &at)) {
		struct blame nb = { last->rank, last->step, 0, 0, 0 };

		if (VEC_PUSH(bl->b, bl->n, bl->cap, nb) || hmap_put(&bl->at, k, bl->n))
			return -ENOMEM;
		at = bl->n;
	}
	b = &bl->b[at - 1];
	units_add(&b->caused_ns, caused);
	units_add(&b->late_ns, late);
	b->calls++;
	return 0;
}

/* One collective, calls [from, to) (two ranks or more): its last rank
 * blamed for the others' waits. */
static int judge(struct blames *bl, const struct strag_call *c, uint32_t from, uint32_t to)
{
	uint32_t last = from;
	int64_t next = INT64_MIN, caused = 0;

	for (uint32_t i = from; i < to; i++)
		if (c[i].start > c[last].start)
			last = i;
	for (uint32_t i = from; i < to; i++) {
		if (i == last)
			continue;
		units_add(&caused, c[last].start - c[i].start);
		if (c[i].start > next)
			next = c[i].start;
	}
	return blame(bl, &c[last], caused, c[last].start - next);
}

/* Per step, its most blamed rank, into bl (the rest let go). */
static int blame_steps(struct straggler *s, struct blames *bl)
{
	uint32_t kept = 0;
	int rc = 0;

	qsort(s->calls, s->ncalls, sizeof(*s->calls), cmp_call);
	for (uint32_t i = 0, j; i < s->ncalls && !rc; i = j) {
		for (j = i + 1; j < s->ncalls && s->calls[j].step == s->calls[i].step &&
				s->calls[j].key == s->calls[i].key && s->calls[j].seq == s->calls[i].seq;
		     j++)
			;
		if (j - i >= 2)
			rc = judge(bl, s->calls, i, j);
	}
	qsort(bl->b, bl->n, sizeof(*bl->b), cmp_blame);
	/* the first of each step is its most blamed */
	hmap_free(&bl->at);
	for (uint32_t i = 0; i < bl->n && !rc; i++)
		if (hmap_add(&bl->at, (uint64_t)bl->b[i].step, 0) == 1)
			bl->b[kept++] = bl->b[i];
	bl->n = kept;
	return rc;
}

/* ---- saying it ---- */

static int cmp_item(const void *a, const void *b)
{
	const struct strag_item *x = a, *y = b;

	if (!x->name || !y->name)
		return !x->name - !y->name;
	return x->ns < y->ns ? 1 : x->ns > y->ns ? -1 : 0;
}

/* top's items, the longest first (sorted here). */
static void print_items(FILE *out, const char *what, struct strag_item *top, int64_t other)
{
	char t[32], b[32], name[96];

	qsort(top, STRAGGLER_TOP, sizeof(*top), cmp_item);
	fprintf(out, "      %s:", what);
	for (int i = 0; i < STRAGGLER_TOP && top[i].name; i++) {
		units_ns(t, sizeof(t), top[i].ns);
		termsafe(name, sizeof(name), top[i].name);
		if (top[i].bytes) {
			units_bytes(b, sizeof(b), (uint64_t)top[i].bytes);
			fprintf(out, "%s '%s' %s (%s)", i ? "," : "", name, t, b);
		} else {
			fprintf(out, "%s '%s' %s", i ? "," : "", name, t);
		}
	}
	if (other) {
		units_ns(t, sizeof(t), other);
		fprintf(out, ", others %s", t);
	}
	fputc('\n', out);
}

static void print_blame(struct straggler *s, FILE *out, const struct blame *b)
{
	struct strag_slot *slot = hmap_get_ptr(&s->slots, slot_key(b->rank, b->step));
	char late[32], caused[32], io[32], bytes[32];

	units_ns(late, sizeof(late), b->late_ns);
	units_ns(caused, sizeof(caused), b->caused_ns);
	fprintf(out, "  step %lld: rank %d late by %s; the others waited %s in all, in %u "
		"collective%s\n", (long long)b->step, b->rank, late, caused, b->calls,
		b->calls == 1 ? "" : "s");
	if (!slot || !slot->io_ns) {
		fprintf(out, "    rank %d's I/O in step %lld: none\n", b->rank, (long long)b->step);
		return;
	}
	units_ns(io, sizeof(io), slot->io_ns);
	units_bytes(bytes, sizeof(bytes), (uint64_t)slot->io_bytes);
	fprintf(out, "    rank %d's I/O in step %lld: %s, %s\n", b->rank, (long long)b->step, io,
		bytes);
	if (slot->files[0].name)
		print_items(out, "files", slot->files, slot->other_file_ns);
	if (slot->phases[0].name)
		print_items(out, "phases", slot->phases, slot->other_phase_ns);
}

void straggler_print(struct straggler *s, FILE *out, int top)
{
	struct blames bl = { 0 };

	if (!s->ncalls)
		return;
	fprintf(out, "\nstragglers (per step, the rank the others waited for in the step's "
		"collectives; most waited for first):\n");
	if (blame_steps(s, &bl)) {
		fprintf(out, "  out of memory\n");
	} else if (!bl.n) {
		fprintf(out, "  none: no collective of two ranks or more in a step\n");
	}
	for (uint32_t i = 0; i < bl.n && (!top || i < (uint32_t)top); i++)
		print_blame(s, out, &bl.b[i]);
	if (top && bl.n > (uint32_t)top)
		fprintf(out, "  (%u more steps)\n", bl.n - (uint32_t)top);
	if (s->calls_left_out || s->slots_left_out)
		fprintf(out, "  (past the bounds: %llu collectives and %llu (rank, step) slots "
			"left out)\n", (unsigned long long)s->calls_left_out,
			(unsigned long long)s->slots_left_out);
	free(bl.b);
	hmap_free(&bl.at);
}

static void free_slot(struct strag_slot *slot)
{
	for (int i = 0; i < STRAGGLER_TOP; i++) {
		free(slot->files[i].name);
		free(slot->phases[i].name);
	}
	free(slot);
}

void straggler_free(struct straggler *s)
{
	uint64_t k, v;
	size_t it = 0;

	while (hmap_next(&s->slots, &it, &k, &v))
		free_slot((struct strag_slot *)(uintptr_t)v);
	hmap_free(&s->slots);
	hmap_free(&s->seq);
	free(s->calls);
	*s = (struct straggler){ 0 };
}
