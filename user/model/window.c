// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdio.h>
#include "model/window.h"

static void note_active(struct step_window *w, int64_t step);

void window_init(struct step_window *w, const struct dft_steps *spec)
{
	*w = (struct step_window){ .on = spec != NULL, .active = true };
	if (spec) {
		w->spec = *spec;
		/* before any step annotation it is step 0, as in torch:
		 * recorded, so covered, even if no step is ever set */
		w->active = dft_step_active(spec, 0);
		w->openings = w->active;
		if (w->active)
			note_active(w, 0);
	}
}

static void note_active(struct step_window *w, int64_t step)
{
	for (uint32_t i = 0; i < w->nranges; i++) {
		int64_t *r = w->ranges[i];

		if (step >= r[0] && step <= r[1])
			return;
		if (step == r[1] + 1 || step == r[0] - 1) {
			r[0] = step < r[0] ? step : r[0];
			r[1] = step > r[1] ? step : r[1];
			return;
		}
	}
	if (w->nranges == WINDOW_RANGES) {
		w->more = true;
		return;
	}
	w->ranges[w->nranges][0] = w->ranges[w->nranges][1] = step;
	w->nranges++;
}

void window_step(struct step_window *w, int64_t step)
{
	bool active;

	if (!w->on)
		return;
	active = dft_step_active(&w->spec, step);
	if (active && !w->active)
		w->openings++;
	w->active = active;
	if (active)
		note_active(w, step);
}

void window_spec_text(const struct step_window *w, char *buf, size_t len)
{
	snprintf(buf, len, "%llu:%llu:%llu:%llu:%llu", w->spec.wait, w->spec.warmup,
		 w->spec.active, w->spec.repeat, w->spec.skip_first);
}

void window_seen_text(const struct step_window *w, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = 0;
	for (uint32_t i = 0; i < w->nranges && n < len; i++) {
		const int64_t *r = w->ranges[i];

		n += r[0] == r[1] ?
			     snprintf(buf + n, len - n, "%s%lld", i ? "," : "", (long long)r[0]) :
			     snprintf(buf + n, len - n, "%s%lld-%lld", i ? "," : "",
				      (long long)r[0], (long long)r[1]);
	}
	if (w->more && n < len)
		snprintf(buf + n, len - n, ",...");
}
