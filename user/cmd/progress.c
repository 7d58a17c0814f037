// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdio.h>
#include "cmd/progress.h"
#include "lib/clock.h"

#define EVERY_NS 500000000ull
/* the clock is read once per this many calls: calls come per event */
#define CALLS_PER_LOOK 4096

static void draw(const struct progress *p, uint64_t done, uint64_t total,
		 const char *what, bool last)
{
	if (total)
		fprintf(stderr, "\r\033[K%s: %llu of %llu %s (%.0f%%)%s", p->who,
			(unsigned long long)done, (unsigned long long)total, what,
			100.0 * done / total, last ? "\n" : "");
	else
		fprintf(stderr, "\r\033[K%s: %llu %s%s", p->who, (unsigned long long)done,
			what, last ? "\n" : "");
}

void progress_show(struct progress *p, uint64_t done, uint64_t total, const char *what)
{
	uint64_t now;

	if (!p->on || ++p->calls % CALLS_PER_LOOK)
		return;
	now = clock_mono_ns();
	if (now < p->next_ns)
		return;
	p->next_ns = now + EVERY_NS;
	draw(p, done, total, what, false);
}

void progress_done(struct progress *p, uint64_t done, uint64_t total, const char *what)
{
	if (p->on && p->next_ns) /* only if a line was drawn */
		draw(p, done, total, what, true);
}
