/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * --steps' window as the records tell it: the step last set (by any
 * traced process: one window for the whole trace, as in the kernel), its
 * openings, and the active steps seen, for the end event to say what the
 * trace covers. Syscalls outside the window are dropped in the kernel;
 * here a region is written if it overlapped an open window, a CM mark if
 * it falls in one.
 */
#ifndef MODEL_WINDOW_H
#define MODEL_WINDOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "dftrace.h"

#define WINDOW_RANGES 32

struct step_window {
	bool on;
	struct dft_steps spec;
	bool active;
	uint64_t openings;	/* times the window opened */
	int64_t ranges[WINDOW_RANGES][2];	/* active steps seen, first to last */
	uint32_t nranges;
	bool more;		/* more ranges than were kept */
};

/* spec NULL: no --steps, always open. */
void window_init(struct step_window *w, const struct dft_steps *spec);
/* A step annotation. */
void window_step(struct step_window *w, int64_t step);
/* "1:1:3:0:0", the schedule. */
void window_spec_text(const struct step_window *w, char *buf, size_t len);
/* "2-4,8-10": the active steps seen (", ..." when more were). */
void window_seen_text(const struct step_window *w, char *buf, size_t len);

#endif
