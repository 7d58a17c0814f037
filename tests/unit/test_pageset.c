// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The pages of a mapped file counted once: a fault-around window that
 * covers pages already counted adds only the new ones. Checked against a
 * plain bitmap over random windows. */
#include <stdint.h>
#include <stdlib.h>
#include "check.h"
#include "model/pageset.h"
#include "model/procs.h"

#define SPAN 4096

static void test_windows(void)
{
	struct pageset s = { 0 };

	CHECK(pageset_add(&s, 16, 32) == 16, "a first window counts whole");
	CHECK(pageset_add(&s, 16, 32) == 0, "the same window again counts nothing");
	CHECK(pageset_add(&s, 24, 40) == 8, "an overlapping window counts its new pages");
	CHECK(pageset_add(&s, 0, 8) == 8 && s.n == 2, "a disjoint one is a range of its own");
	CHECK(pageset_add(&s, 8, 16) == 8 && s.n == 1, "filling the gap joins them: one range");
	CHECK(pageset_add(&s, 50, 50) == 0, "an empty window counts nothing");
	pageset_free(&s);
}

static void test_against_bitmap(void)
{
	static unsigned char seen[SPAN];
	struct pageset s = { 0 };
	uint64_t want = 0, got = 0, ranges = 0;
	int sorted = 1;

	srand(7);
	for (int i = 0; i < 300; i++) {
		uint64_t lo = rand() % SPAN, hi = lo + rand() % 17;

		hi = hi > SPAN ? SPAN : hi;
		for (uint64_t p = lo; p < hi; p++)
			want += !seen[p], seen[p] = 1;
		got += pageset_add(&s, lo, hi);
	}
	for (uint32_t i = 0; i < s.n; i++) {
		sorted &= s.lo[i] < s.hi[i] && (i == 0 || s.hi[i - 1] < s.lo[i]);
		ranges += s.hi[i] - s.lo[i];
	}
	CHECK(got == want, "random windows: %llu new pages counted, a bitmap says %llu",
	      (unsigned long long)got, (unsigned long long)want);
	CHECK(sorted && ranges == want, "ranges stay sorted, disjoint, not touching");
	pageset_free(&s);
}

/* A file's count starts again once its last mapping goes. */
static void test_unmap_forgets(void)
{
	struct proc p = { .pid = 1 };
	struct pageset *s;

	map_add(&p, 0x10000, 0x8000, NULL);
	map_set_file(&p, 0x10000, 8, 77);
	s = proc_pageset(&p, 8, 77);
	CHECK(s && pageset_add(s, 0, 8) == 8, "pages counted while mapped");
	map_add(&p, 0x40000, 0x8000, NULL);
	map_set_file(&p, 0x40000, 8, 77);
	map_remove(&p, 0x10000, 0x8000);
	CHECK(pageset_add(proc_pageset(&p, 8, 77), 0, 8) == 0,
	      "still mapped elsewhere: still counted");
	map_remove(&p, 0x40000, 0x8000);
	CHECK(pageset_add(proc_pageset(&p, 8, 77), 0, 8) == 8,
	      "unmapped, then mapped again: counted again");
	fd_exec(&p);
	CHECK(p.npagesets == 0, "exec forgets them all");
	free(p.maps);
	free(p.pagesets);
}

int main(void)
{
	test_windows();
	test_against_bitmap();
	test_unmap_forgets();
	return check_done();
}
