// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdio.h>
#include "cmd/progress.h"
#include "lib/clock.h"

#define EVERY_NS 500000000ull
/* the clock is read once per this many calls: calls come per event */
#define CALLS_PER_LOOK 4096

static void draw(const struct progress *p, uint64_t done, uint64_t total, uint64_t now,
		 bool last)
{
	double s = (now - p->start_ns) / 1e9;

	fprintf(stderr, "\r\033[K%s: ", p->who);
	if (p->files)
		fprintf(stderr, "%u of %u files, ", p->files_done, p->files);
	fprintf(stderr, "%llu", (unsigned long long)done);
	if (total)
		fprintf(stderr, " of %llu events (%.0f%%)", (unsigned long long)total,
			100.0 * done / total);
	else
		fprintf(stderr, " events");
	if (s > 0)
		fprintf(stderr, ", %.2f M events/s", done / s / 1e6);
	fprintf(stderr, "%s", last ? "\n" : "");
}

void progress_show(struct progress *p, uint64_t done, uint64_t total)
{
	if (p->on && !(++p->calls % CALLS_PER_LOOK))
		progress_look(p, done, total);
}

void progress_look(struct progress *p, uint64_t done, uint64_t total)
{
	uint64_t now;

	if (!p->on)
		return;
	now = clock_mono_ns();
	if (!p->start_ns) { /* the first look: a line half a second on */
		p->start_ns = now;
		p->next_ns = now + EVERY_NS;
	}
	if (now < p->next_ns)
		return;
	p->next_ns = now + EVERY_NS;
	draw(p, done, total, now, false);
}

void progress_done(struct progress *p, uint64_t done, uint64_t total)
{
	/* only if a line was drawn */
	if (p->on && p->start_ns && p->next_ns != p->start_ns + EVERY_NS)
		draw(p, done, total, clock_mono_ns(), true);
}
