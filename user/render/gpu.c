// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdlib.h>
#include <string.h>
#include "lib/termsafe.h"
#include "lib/units.h"
#include "render/gpu.h"

bool gpu_any(const struct gpu_profile *g)
{
	return g->all.calls || g->all.file_calls;
}

static void totals_line(FILE *out, const struct gpu_totals *t, int64_t wall_ns)
{
	char w[32], to[32], from[32], on[32], coll[32], file[32];

	units_ns(w, sizeof(w), t->wait_ns);
	units_bytes(to, sizeof(to), t->to_device);
	units_bytes(from, sizeof(from), t->from_device);
	units_bytes(on, sizeof(on), t->on_device);
	units_bytes(coll, sizeof(coll), t->collective_bytes);
	units_bytes(file, sizeof(file), t->file_bytes);
	fprintf(out, "\nGPU, as the host saw it: %llu calls; waited for the device %s in %llu "
		"waits (%.2f%% of wall)\n", (unsigned long long)t->calls, w,
		(unsigned long long)t->waits, wall_ns ? 100.0 * t->wait_ns / wall_ns : 0.0);
	fprintf(out, "copied %s to the device, %s from it, %s on it, in %llu copies; "
		"%llu launches; %llu collectives moved %s; cuFile moved %s in %llu calls\n",
		to, from, on, (unsigned long long)t->copies, (unsigned long long)t->launches,
		(unsigned long long)t->collectives, coll, file,
		(unsigned long long)t->file_calls);
	fprintf(out, "(when kernels and copies ran on the device is not seen: they are "
		"shown as the host issued them)\n");
}

static int by_phase_step(const void *a, const void *b)
{
	const struct gpu_phase_row *x = a, *y = b;
	int c = strcmp(x->phase, y->phase);

	return c ? c : (x->step > y->step) - (x->step < y->step);
}

static void phase_table(FILE *out, const struct gpu_profile *g)
{
	struct gpu_phase_row *rows = malloc(g->n * sizeof(*rows));
	char key[1024], c[6][32], step[24];

	if (!rows)
		return;
	memcpy(rows, g->rows, g->n * sizeof(*rows));
	qsort(rows, g->n, sizeof(*rows), by_phase_step);
	fprintf(out, "\n%-32s %6s %8s %8s %12s %12s %12s %12s %9s %12s %12s\n", "phase", "step",
		"Calls", "Waits", "Wait time", "To device", "From device", "On device",
		"Launches", "Collective", "cuFile");
	for (uint32_t i = 0; i < g->n; i++) {
		const struct gpu_totals *t = &rows[i].t;

		termsafe(key, sizeof(key), rows[i].phase);
		units_ns(c[0], sizeof(c[0]), t->wait_ns);
		units_bytes(c[1], sizeof(c[1]), t->to_device);
		units_bytes(c[2], sizeof(c[2]), t->from_device);
		units_bytes(c[3], sizeof(c[3]), t->on_device);
		units_bytes(c[4], sizeof(c[4]), t->collective_bytes);
		units_bytes(c[5], sizeof(c[5]), t->file_bytes);
		snprintf(step, sizeof(step), "%lld", (long long)rows[i].step);
		fprintf(out, "%-32.60s %6s %8llu %8llu %12s %12s %12s %12s %9llu %12s %12s\n",
			key, rows[i].step >= 0 ? step : "-",
			(unsigned long long)t->calls, (unsigned long long)t->waits, c[0], c[1],
			c[2], c[3], (unsigned long long)t->launches, c[4], c[5]);
	}
	free(rows);
}

static void rank_table(FILE *out, const struct gpu_profile *g)
{
	char b[32];

	if (!g->nranks)
		return;
	fprintf(out, "\n%-10s %8s %12s\n", "rank", "Colls", "Bytes");
	for (uint32_t i = 0; i < g->nranks; i++) {
		units_bytes(b, sizeof(b), g->ranks[i].bytes);
		if (g->ranks[i].rank >= 0)
			fprintf(out, "%-10lld", (long long)g->ranks[i].rank);
		else
			fprintf(out, "%-10s", "-");
		fprintf(out, " %8llu %12s\n", (unsigned long long)g->ranks[i].calls, b);
	}
}

void gpu_text(FILE *out, const struct gpu_profile *g, int64_t wall_ns)
{
	if (!gpu_any(g))
		return;
	totals_line(out, &g->all, wall_ns);
	phase_table(out, g);
	rank_table(out, g);
}

static void totals_json(struct jbuf *b, const struct gpu_totals *t)
{
	jb_member_i64(b, "calls", t->calls);
	jb_member_i64(b, "waits", t->waits);
	jb_member_i64(b, "wait_ns", t->wait_ns);
	jb_member_i64(b, "copies", t->copies);
	jb_member_i64(b, "to_device_bytes", t->to_device);
	jb_member_i64(b, "from_device_bytes", t->from_device);
	jb_member_i64(b, "on_device_bytes", t->on_device);
	jb_member_i64(b, "launches", t->launches);
	jb_member_i64(b, "collectives", t->collectives);
	jb_member_i64(b, "collective_bytes", t->collective_bytes);
	jb_member_i64(b, "cufile_calls", t->file_calls);
	jb_member_i64(b, "cufile_bytes", t->file_bytes);
}

void gpu_json(struct jbuf *b, const struct gpu_profile *g)
{
	JB_LIT(b, "\"gpu\":{");
	totals_json(b, &g->all);
	JB_LIT(b, "\"by_phase_step\":[");
	for (uint32_t i = 0; i < g->n; i++) {
		if (i)
			jb_char(b, ',');
		JB_LIT(b, "{\"phase\":");
		jb_str(b, g->rows[i].phase, strlen(g->rows[i].phase));
		jb_char(b, ',');
		jb_member_i64(b, "step", g->rows[i].step);
		totals_json(b, &g->rows[i].t);
		b->len--;
		jb_char(b, '}');
	}
	JB_LIT(b, "],\"by_rank\":[");
	for (uint32_t i = 0; i < g->nranks; i++) {
		if (i)
			jb_char(b, ',');
		jb_char(b, '{');
		jb_member_i64(b, "rank", g->ranks[i].rank);
		jb_member_i64(b, "collectives", g->ranks[i].calls);
		jb_member_i64(b, "bytes", g->ranks[i].bytes);
		b->len--;
		jb_char(b, '}');
	}
	JB_LIT(b, "]},");
}
