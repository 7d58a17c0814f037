/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The GPU part of summary and report (analyze/gpu.h): a line of totals,
 * a table by phase and step, collective bytes by rank. Nothing when the
 * trace has no GPU or collective calls.
 */
#ifndef RENDER_GPU_H
#define RENDER_GPU_H

#include <stdio.h>
#include "analyze/gpu.h"
#include "lib/json.h"

/* Whether there is anything to show. */
bool gpu_any(const struct gpu_profile *g);
void gpu_text(FILE *out, const struct gpu_profile *g, int64_t wall_ns);
/* "gpu":{...}, as a member of an object (a ',' after it). */
void gpu_json(struct jbuf *b, const struct gpu_profile *g);

#endif
