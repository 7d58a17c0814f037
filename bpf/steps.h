/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * torch.profiler.schedule's cycle, counted in steps (--steps
 * WAIT:WARMUP:ACTIVE[:REPEAT[:SKIP_FIRST]]): skip the first steps, then
 * wait, warm up, and record ACTIVE steps, REPEAT times (0: forever).
 * One definition for the kernel side, which drops I/O outside the active
 * windows, and for user space, which says which steps a trace covers.
 */
#ifndef DFT_STEPS_H
#define DFT_STEPS_H

struct dft_steps {
	unsigned long long wait, warmup, active, repeat, skip_first;
};

/* Whether step n is recorded (torch's RECORD and RECORD_AND_SAVE);
 * warm-up steps are not. A negative step is before the first. */
static inline __attribute__((always_inline)) int
dft_step_active(const volatile struct dft_steps *s, long long n)
{
	unsigned long long cycle = s->wait + s->warmup + s->active, k;

	if (n < 0 || (unsigned long long)n < s->skip_first || !cycle)
		return 0;
	k = (unsigned long long)n - s->skip_first;
	if (s->repeat && k / cycle >= s->repeat)
		return 0;
	return k % cycle >= s->wait + s->warmup;
}

#endif
