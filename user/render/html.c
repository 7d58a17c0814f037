// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "lib/units.h"
#include "render/gpu.h"
#include "render/findings.h"
#include "render/html.h"
#include "render/svg.h"
#include "render/table.h"
#include "version.h"

char *const report_specs[RG__COUNT] = {
	[RG_OP] = "op", [RG_PHASE] = "phase", [RG_FILE] = "file",
	[RG_PROCESS] = "process", [RG_EPOCH_PHASE] = "epoch,phase",
	[RG_STEP_PHASE] = "step,phase",
};

#define MAX_SERIES 8	/* lines or stacks in a chart; the rest is "other" */
#define MAX_BARS 120	/* epochs or steps in a chart */
#define TOP_FILES 10
#define LATENCY_OPS 4
#define LATENCY_MIN_CALLS 20
#define TABLE_FILES 50
/* Rows of the other tables: their keys come from the traced programs
 * (400,000 processes made a 102 MB page); summary gives the rest. */
#define TABLE_ROWS 100

static const char style[] =
"body{font:14px/1.4 system-ui,sans-serif;margin:24px auto;max-width:1100px;color:#222}"
"h1{font-size:22px}h2{font-size:17px;margin-top:32px;border-bottom:1px solid #ddd}"
"figure{margin:12px 0}figcaption{font-weight:600;margin-bottom:4px}"
".grid{stroke:#eee}.tick,.legend{font-size:11px;fill:#444}"
"table{border-collapse:collapse;font-size:12px;margin:8px 0}"
"td,th{padding:2px 8px;border-bottom:1px solid #eee;text-align:right}"
"td.k,th.k{text-align:left;max-width:420px;overflow-wrap:anywhere}"
".cards{display:flex;flex-wrap:wrap;gap:12px}.card{border:1px solid #ddd;"
"border-radius:6px;padding:8px 12px;min-width:150px}.card b{display:block;"
"font-size:18px}.note{color:#666}";

static void out(struct jbuf *b, const char *s)
{
	jb_mem(b, s, strlen(s));
}

/* ---- the headline ---- */

static void card(struct jbuf *b, const char *key, const char *label, int64_t raw,
		 const char *shown)
{
	out(b, "<div class=\"card\"><b data-key=\"");
	out(b, key);
	out(b, "\" data-v=\"");
	jb_i64(b, raw);
	out(b, "\">");
	html_text(b, shown);
	out(b, "</b>");
	html_text(b, label);
	out(b, "</div>");
}

static void headline(struct jbuf *b, const struct profile *p)
{
	const struct headline *h = &p->head;
	int64_t moved = h->bytes_read + h->bytes_written + h->bytes_copied;
	char s[48];

	out(b, "<div class=\"cards\">");
	units_ns(s, sizeof(s), h->t_max - h->t_min);
	card(b, "wall_ns", "wall time", h->t_max - h->t_min, s);
	units_ns(s, sizeof(s), h->io_time);
	card(b, "io_ns", "I/O time", h->io_time, s);
	units_ns(s, sizeof(s), h->unoverlapped_io);
	card(b, "unoverlapped_io_ns", "I/O not overlapped by compute", h->unoverlapped_io, s);
	units_bytes(s, sizeof(s), h->bytes_read);
	card(b, "bytes_read", "read", h->bytes_read, s);
	units_bytes(s, sizeof(s), h->bytes_written);
	card(b, "bytes_written", "written", h->bytes_written, s);
	units_rate(s, sizeof(s), moved, h->data_time);
	card(b, "bandwidth_Bps", "bandwidth of the data calls",
	     h->data_time ? (int64_t)(moved * 1e9 / h->data_time) : 0, s);
	snprintf(s, sizeof(s), "%llu", (unsigned long long)h->events);
	card(b, "events", "events", h->events, s);
	snprintf(s, sizeof(s), "%llu", (unsigned long long)h->files);
	card(b, "files", "files", h->files, s);
	snprintf(s, sizeof(s), "%llu", (unsigned long long)h->processes);
	card(b, "processes", "processes", h->processes, s);
	snprintf(s, sizeof(s), "%llu", (unsigned long long)h->ranks);
	card(b, "ranks", "ranks", h->ranks, s);
	out(b, "</div>");
}

/* ---- bandwidth over time ---- */

/* "python3 [1234]": the process grouping's row for ev_process()'s
 * input:pid. */
static const char *process_label(const struct profile *p, uint64_t proc)
{
	const struct grouping *g = &p->by[RG_PROCESS];
	char material[48];
	size_t n = snprintf(material, sizeof(material), "%u:%u\x1f", (unsigned)(proc >> 32),
			    (unsigned)proc);

	for (uint32_t i = 0; i < g->n; i++)
		if (g->rows[i].material_len == n && !memcmp(g->rows[i].material, material, n))
			return row_part(&g->rows[i], 0);
	return "?";
}

static int by_total_desc(const void *a, const void *b)
{
	const struct timeline_series *x = *(const struct timeline_series *const *)a;
	const struct timeline_series *y = *(const struct timeline_series *const *)b;

	return x->total < y->total ? 1 : x->total > y->total ? -1 : 0;
}

static void used_bins(double *const *ys, uint32_t nseries, uint32_t *first,
		      uint32_t *last)
{
	*first = TIMELINE_BINS - 1;
	*last = 0;
	for (uint32_t i = 0; i < nseries; i++) {
		for (uint32_t j = 0; j < TIMELINE_BINS; j++) {
			if (ys[i][j] > 0) {
				*first = j < *first ? j : *first;
				*last = j > *last ? j : *last;
			}
		}
	}
	if (*first > *last)
		*first = *last = 0;
}

static int bandwidth_chart(struct jbuf *b, const struct report_data *d)
{
	const struct timeline *t = d->t;
	uint32_t n = 0, shown;
	struct timeline_series **order;
	double *ys[MAX_SERIES + 1] = { 0 };
	const char *names[MAX_SERIES + 1];
	int rc = 0;

	for (uint32_t i = 0; i < t->n; i++)
		n += t->series[i]->total > 0;
	if (!n) {
		out(b, "<p class=\"note\">No bytes were read or written.</p>");
		return 0;
	}
	order = malloc(t->n * sizeof(*order));
	if (!order)
		return -ENOMEM;
	memcpy(order, t->series, t->n * sizeof(*order));
	qsort(order, t->n, sizeof(*order), by_total_desc);
	shown = n > MAX_SERIES ? MAX_SERIES : n;
	for (uint32_t i = 0; i <= shown && !rc; i++)
		rc = !(ys[i] = calloc(TIMELINE_BINS, sizeof(double))) ? -ENOMEM : 0;
	for (uint32_t i = 0; i < n && !rc; i++) {
		uint32_t s = i < shown ? i : shown;

		for (int j = 0; j < TIMELINE_BINS; j++)
			ys[s][j] += order[i]->bytes[j] * 1e9 / t->width;
		names[s] = i < shown ? process_label(d->p, order[i]->proc) : "other processes";
	}
	if (!rc) {
		uint32_t first, last;
		const double *from[MAX_SERIES + 1];
		struct svg_lines c;

		/* the bins that hold anything, and none of the empty rest */
		used_bins(ys, shown + (n > shown), &first, &last);
		for (uint32_t i = 0; i <= shown; i++)
			from[i] = ys[i] + first;
		c = (struct svg_lines){ "bandwidth", "I/O bandwidth over time, per process",
					first * (t->width / 1e9), t->width / 1e9, last - first + 1,
					shown + (n > shown), names, from, svg_fmt_rate };
		svg_line_chart(b, &c);
	}
	for (uint32_t i = 0; i <= shown; i++)
		free(ys[i]);
	free(order);
	return rc;
}

/* ---- time by phase per epoch, per step ---- */

struct bars {
	char **labels;		/* epochs or steps, by number */
	long *numbers;
	uint32_t n;
};

static int by_number(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return x < y ? -1 : x > y;
}

/* The distinct epochs (or steps) of grouping g's first part. */
static int collect_bars(const struct grouping *g, struct bars *bars)
{
	bars->numbers = malloc((g->n ? g->n : 1) * sizeof(long));
	if (!bars->numbers)
		return -ENOMEM;
	for (uint32_t i = 0; i < g->n; i++) {
		const char *s = row_part(&g->rows[i], 0);
		long v;
		uint32_t k;

		if (!strcmp(s, "-") || g->rows[i].region_self <= 0)
			continue;
		v = atol(s);
		for (k = 0; k < bars->n && bars->numbers[k] != v; k++)
			;
		if (k == bars->n)
			bars->numbers[bars->n++] = v;
	}
	qsort(bars->numbers, bars->n, sizeof(long), by_number);
	if (bars->n > MAX_BARS)
		bars->n = MAX_BARS;
	bars->labels = calloc(bars->n ? bars->n : 1, sizeof(char *));
	for (uint32_t k = 0; bars->labels && k < bars->n; k++)
		if (asprintf(&bars->labels[k], "%ld", bars->numbers[k]) < 0)
			bars->labels[k] = NULL;
	return bars->labels ? 0 : -ENOMEM;
}

static int bar_of(const struct bars *bars, const char *s)
{
	long v = atol(s);

	for (uint32_t k = 0; k < bars->n; k++)
		if (bars->numbers[k] == v && strcmp(s, "-"))
			return k;
	return -1;
}

/* The phases with the most time over all bars: the chart's series. */
static uint32_t top_phases(const struct profile *p, const char **names, uint32_t max)
{
	struct table_opts o = { SORT_TOTAL, 0 };
	const struct grouping *g = &p->by[RG_PHASE];
	uint32_t n, k = 0, *idx = table_order(g, &o, &n);

	for (uint32_t i = 0; idx && i < n && k < max; i++)
		if (g->rows[idx[i]].region_self > 0)
			names[k++] = row_part(&g->rows[idx[i]], 0);
	free(idx);
	return k;
}

static int phase_chart(struct jbuf *b, const struct profile *p, enum report_grouping rg,
		       const char *what)
{
	const struct grouping *g = &p->by[rg];
	struct bars bars = { 0 };
	const char *names[MAX_SERIES + 1];
	double *values[MAX_SERIES + 1] = { 0 };
	uint32_t ns = top_phases(p, names, MAX_SERIES);
	char id[32], title[80];
	int rc = collect_bars(g, &bars);

	names[ns] = "other phases";
	for (uint32_t i = 0; i <= ns && !rc; i++)
		rc = !(values[i] = calloc(bars.n ? bars.n : 1, sizeof(double))) ? -ENOMEM : 0;
	for (uint32_t r = 0; r < g->n && !rc; r++) {
		const struct row *row = &g->rows[r];
		int bar = bar_of(&bars, row_part(row, 0));
		uint32_t s;

		if (bar < 0 || row->region_self <= 0)
			continue;
		for (s = 0; s < ns && strcmp(names[s], row_part(row, 1)); s++)
			;
		values[s][bar] += row->region_self;
	}
	snprintf(id, sizeof(id), "phases-by-%s", what);
	snprintf(title, sizeof(title), "Time by phase per %s (each phase's own time)", what);
	if (!rc && bars.n) {
		struct svg_stacks c = { id, title, bars.n, ns + 1,
					(const char *const *)bars.labels, names,
					(const double *const *)values, svg_fmt_ns };

		svg_stacked_bars(b, &c);
	} else if (!rc) {
		out(b, "<p class=\"note\">No annotated phases carry a ");
		out(b, what);
		out(b, ".</p>");
	}
	for (uint32_t i = 0; i <= ns; i++)
		free(values[i]);
	for (uint32_t k = 0; bars.labels && k < bars.n; k++)
		free(bars.labels[k]);
	free(bars.labels);
	free(bars.numbers);
	return rc;
}

/* ---- top files ---- */

static int files_chart(struct jbuf *b, const struct profile *p, enum sort_col by,
		       const char *id, const char *title)
{
	struct table_opts o = { by, 0 };
	const struct grouping *g = &p->by[RG_FILE];
	uint32_t n, k = 0, *idx = table_order(g, &o, &n);
	const char *labels[TOP_FILES];
	double values[TOP_FILES];

	if (!idx)
		return -ENOMEM;
	for (uint32_t i = 0; i < n && k < TOP_FILES; i++) {
		const struct row *r = &g->rows[idx[i]];
		double v = by == SORT_BYTES ? r->bytes : r->total;

		if (strcmp(row_part(r, 0), "-") && v > 0) {
			labels[k] = row_part(r, 0);
			values[k++] = v;
		}
	}
	if (k) {
		struct svg_hbars c = { id, title, k, labels, values,
				       by == SORT_BYTES ? svg_fmt_bytes : svg_fmt_ns };

		svg_hbar_chart(b, &c);
	}
	free(idx);
	return 0;
}

/* ---- latency histograms ---- */

/* One bar per power of two: the sketch's 64 buckets of each summed. */
static void latency_chart(struct jbuf *b, const struct row *r, int nth)
{
	double from[64], to[64], counts[64];
	uint32_t n = 0;
	char id[32], title[200];

	for (int32_t i = 0; i < r->durations.n; i++) {
		int64_t lo, hi;
		double octave;

		if (!r->durations.counts[i])
			continue;
		sketch_bucket(r->durations.lo + i, &lo, &hi);
		octave = lo < 1 ? 0 : 1ll << (63 - __builtin_clzll(lo));
		if (!n || from[n - 1] != octave) {
			if (n == 64)
				break;
			from[n] = octave;
			to[n] = octave ? 2 * octave : 1;
			counts[n++] = 0;
		}
		counts[n - 1] += r->durations.counts[i];
	}
	snprintf(id, sizeof(id), "latency-%d", nth);
	snprintf(title, sizeof(title), "Latency of %s (%llu calls)", row_part(r, 0),
		 (unsigned long long)r->calls);
	{
		struct svg_hist c = { id, title, n, from, to, counts, svg_fmt_ns };

		svg_histogram(b, &c);
	}
}

/* The operations with the most time, among those called often enough
 * for a distribution to say something. */
static int latency_charts(struct jbuf *b, const struct profile *p)
{
	struct table_opts o = { SORT_TOTAL, 0 };
	const struct grouping *g = &p->by[RG_OP];
	uint32_t n, shown = 0, *idx = table_order(g, &o, &n);

	if (!idx)
		return -ENOMEM;
	for (uint32_t i = 0; i < n && shown < LATENCY_OPS; i++)
		if (g->rows[idx[i]].calls >= LATENCY_MIN_CALLS)
			latency_chart(b, &g->rows[idx[i]], shown++);
	if (!shown)
		out(b, "<p class=\"note\">No operation was called often enough for a "
		       "histogram.</p>");
	free(idx);
	return 0;
}

/* ---- tables ---- */

static void cell(struct jbuf *b, int64_t raw, const char *shown)
{
	out(b, "<td data-v=\"");
	jb_i64(b, raw);
	out(b, "\">");
	html_text(b, shown);
	out(b, "</td>");
}

/* A time, "~" before it when it comes from log2 buckets (folded totals). */
static void time_cell(struct jbuf *b, int64_t ns, bool log2)
{
	char s[48] = "~";

	units_ns(s + log2, sizeof(s) - log2, ns);
	cell(b, ns, s);
}

static void table_row(struct jbuf *b, const struct grouping *g, const struct row *r)
{
	unsigned int log2 = row_from_log2(r);
	char s[48];

	out(b, "<tr>");
	for (int k = 0; k < g->nkeys; k++) {
		out(b, "<td class=\"k\">");
		html_text(b, row_part(r, k));
		out(b, "</td>");
	}
	snprintf(s, sizeof(s), "%llu", (unsigned long long)r->calls);
	cell(b, r->calls, s);
	units_ns(s, sizeof(s), r->total);
	cell(b, r->total, s);
	units_ns(s, sizeof(s), r->self);
	cell(b, r->self, s);
	time_cell(b, r->min, log2 & FROM_LOG2_MIN);
	time_cell(b, row_quantile(r, 0.5), log2 & FROM_LOG2_P50);
	time_cell(b, row_quantile(r, 0.99), log2 & FROM_LOG2_P99);
	time_cell(b, r->max, log2 & FROM_LOG2_MAX);
	units_bytes(s, sizeof(s), r->bytes);
	cell(b, r->bytes, s);
	out(b, "</tr>\n");
}

static int table(struct jbuf *b, const struct profile *p, enum report_grouping rg,
		 uint32_t top, const char *title)
{
	static const char *const cols[] = { "calls", "total", "self", "min", "p50",
					    "p99", "max", "bytes" };
	struct table_opts o = { SORT_TOTAL, top };
	const struct grouping *g = &p->by[rg];
	uint32_t n, *idx = table_order(g, &o, &n);

	if (!idx)
		return -ENOMEM;
	out(b, "<h3>");
	html_text(b, title);
	out(b, "</h3><table class=\"rows\" data-by=\"");
	out(b, report_specs[rg]);
	out(b, "\"><tr>");
	for (int k = 0; k < g->nkeys; k++) {
		out(b, "<th class=\"k\">");
		out(b, by_key_name(g->keys[k]));
		out(b, "</th>");
	}
	for (size_t c = 0; c < sizeof(cols) / sizeof(cols[0]); c++) {
		out(b, "<th>");
		out(b, cols[c]);
		out(b, "</th>");
	}
	out(b, "</tr>\n");
	for (uint32_t i = 0; i < n; i++)
		table_row(b, g, &g->rows[idx[i]]);
	out(b, "</table>");
	if (n < g->n) {
		char more[160];

		snprintf(more, sizeof(more), "<p class=\"note\">%u more rows: dftrace-bpf "
			 "summary --by %s shows them.</p>", g->n - n, report_specs[rg]);
		out(b, more);
	}
	free(idx);
	return 0;
}

/* ---- the GPU, as the host saw it ---- */

static void gpu_row(struct jbuf *b, const char *phase, int64_t step, const struct gpu_totals *t)
{
	char s[48];

	out(b, "<tr><td class=\"k\">");
	html_text(b, phase);
	out(b, "</td>");
	snprintf(s, sizeof(s), step >= 0 ? "%lld" : "-", (long long)step);
	cell(b, step, s);
	snprintf(s, sizeof(s), "%llu", (unsigned long long)t->calls);
	cell(b, t->calls, s);
	units_ns(s, sizeof(s), t->wait_ns);
	cell(b, t->wait_ns, s);
	units_bytes(s, sizeof(s), t->to_device);
	cell(b, t->to_device, s);
	units_bytes(s, sizeof(s), t->from_device);
	cell(b, t->from_device, s);
	snprintf(s, sizeof(s), "%llu", (unsigned long long)t->launches);
	cell(b, t->launches, s);
	units_bytes(s, sizeof(s), t->collective_bytes);
	cell(b, t->collective_bytes, s);
	units_bytes(s, sizeof(s), t->file_bytes);
	cell(b, t->file_bytes, s);
	out(b, "</tr>\n");
}

static void gpu_section(struct jbuf *b, const struct gpu_profile *g)
{
	char s[48];

	if (!gpu_any(g))
		return;
	out(b, "<h2>GPU</h2><div class=\"cards\">");
	units_ns(s, sizeof(s), g->all.wait_ns);
	card(b, "gpu_wait_ns", "waiting for the device", g->all.wait_ns, s);
	units_bytes(s, sizeof(s), g->all.to_device);
	card(b, "to_device_bytes", "copied to the device", g->all.to_device, s);
	units_bytes(s, sizeof(s), g->all.from_device);
	card(b, "from_device_bytes", "copied from the device", g->all.from_device, s);
	snprintf(s, sizeof(s), "%llu", (unsigned long long)g->all.launches);
	card(b, "launches", "kernel launches", g->all.launches, s);
	units_bytes(s, sizeof(s), g->all.collective_bytes);
	card(b, "collective_bytes", "collective bytes", g->all.collective_bytes, s);
	units_bytes(s, sizeof(s), g->all.file_bytes);
	card(b, "cufile_bytes", "cuFile I/O", g->all.file_bytes, s);
	out(b, "</div><p class=\"note\">As the host issued and waited for them: when "
	       "kernels and copies ran on the device is not seen.</p>");
	out(b, "<table class=\"rows\" data-by=\"gpu-phase-step\"><tr><th class=\"k\">phase"
	       "</th><th>step</th><th>calls</th><th>wait</th><th>to device</th><th>from device"
	       "</th><th>launches</th><th>collective</th><th>cuFile</th></tr>\n");
	for (uint32_t i = 0; i < g->n; i++)
		gpu_row(b, g->rows[i].phase, g->rows[i].step, &g->rows[i].t);
	out(b, "</table><table class=\"rows\" data-by=\"gpu-rank\"><tr><th class=\"k\">rank"
	       "</th><th>collectives</th><th>bytes</th></tr>\n");
	for (uint32_t i = 0; i < g->nranks; i++) {
		snprintf(s, sizeof(s), g->ranks[i].rank >= 0 ? "%lld" : "-",
			 (long long)g->ranks[i].rank);
		out(b, "<tr><td class=\"k\">");
		html_text(b, s);
		out(b, "</td>");
		snprintf(s, sizeof(s), "%llu", (unsigned long long)g->ranks[i].calls);
		cell(b, g->ranks[i].calls, s);
		units_bytes(s, sizeof(s), g->ranks[i].bytes);
		cell(b, g->ranks[i].bytes, s);
		out(b, "</tr>\n");
	}
	out(b, "</table>");
}

/* ---- the page ---- */

static void page_head(struct jbuf *b, const struct report_data *d)
{
	char date[64];
	time_t now = time(NULL);

	strftime(date, sizeof(date), "%Y-%m-%d %H:%M UTC", gmtime(&now));
	out(b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
	       "<title>dftrace-bpf report</title><style>");
	out(b, style);
	out(b, "</style></head><body>\n<h1>dftrace-bpf report</h1><p class=\"note\">");
	for (uint32_t i = 0; i < d->ninputs; i++) {
		html_text(b, d->inputs[i]);
		out(b, i + 1 < d->ninputs ? ", " : "");
	}
	out(b, " \xc2\xb7 made ");
	out(b, date);
	out(b, " by dftrace-bpf " DFTRACE_VERSION "</p>\n");
}

/* The steps' stragglers, as summary --by rank,step says them. */
static int stragglers(struct jbuf *b, const struct report_data *d)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	if (!d->strag || !d->strag->ncalls)
		return 0;
	f = open_memstream(&text, &len);
	if (!f)
		return -ENOMEM;
	straggler_print(d->strag, f, 10);
	if (fclose(f)) {
		free(text);
		return -ENOMEM;
	}
	out(b, "<h2>Stragglers</h2>\n<pre class=\"stragglers\">");
	html_text(b, text + (len && text[0] == '\n'));
	out(b, "</pre>\n");
	free(text);
	return 0;
}

int html_report(struct jbuf *b, const struct report_data *d)
{
	const struct profile *p = d->p;
	int rc;

	page_head(b, d);
	headline(b, p);
	findings_html(b, &p->findings);
	out(b, "<h2>I/O over time</h2>");
	rc = bandwidth_chart(b, d);
	out(b, "<h2>Phases</h2>");
	rc = rc ? rc : phase_chart(b, p, RG_EPOCH_PHASE, "epoch");
	rc = rc ? rc : phase_chart(b, p, RG_STEP_PHASE, "step");
	out(b, "<h2>Files</h2>");
	rc = rc ? rc : files_chart(b, p, SORT_BYTES, "files-by-bytes", "Top files by bytes");
	rc = rc ? rc : files_chart(b, p, SORT_TOTAL, "files-by-time", "Top files by time");
	gpu_section(b, &p->gpu);
	rc = rc ? rc : stragglers(b, d);
	out(b, "<h2>Latency</h2>");
	rc = rc ? rc : latency_charts(b, p);
	out(b, "<h2>Tables</h2>");
	rc = rc ? rc : table(b, p, RG_OP, TABLE_ROWS, "By operation");
	rc = rc ? rc : table(b, p, RG_PHASE, TABLE_ROWS, "By phase");
	rc = rc ? rc : table(b, p, RG_PROCESS, TABLE_ROWS, "By process");
	rc = rc ? rc : table(b, p, RG_FILE, TABLE_FILES, "By file");
	out(b, "</body></html>\n");
	return rc ? rc : b->err;
}
