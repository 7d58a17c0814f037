// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "lib/json.h"
#include "lib/termsafe.h"
#include "lib/units.h"
#include "render/findings.h"
#include "render/gpu.h"
#include "render/table.h"

static const char *const sort_names[SORT__COUNT] = {
	"total", "self", "calls", "avg", "min", "max", "p50", "p99", "bytes",
	"bandwidth", "key",
};

int sort_col_parse(const char *name)
{
	for (int i = 0; i < SORT__COUNT; i++)
		if (!strcmp(name, sort_names[i]))
			return i;
	return -1;
}

const char *sort_col_names(void)
{
	return "total, self, calls, avg, min, max, p50, p99, bytes, bandwidth, key";
}

static double bandwidth(const struct row *r)
{
	return r->data_time > 0 ? r->bytes * 1e9 / r->data_time : 0;
}

static double sort_value(const struct row *r, enum sort_col c)
{
	switch (c) {
	case SORT_SELF: return r->self;
	case SORT_CALLS: return r->calls;
	case SORT_AVG: return row_avg(r);
	case SORT_MIN: return r->min;
	case SORT_MAX: return r->max;
	case SORT_P50: return row_quantile(r, 0.5);
	case SORT_P99: return row_quantile(r, 0.99);
	case SORT_BYTES: return r->bytes;
	case SORT_BANDWIDTH: return bandwidth(r);
	default: return r->total;
	}
}

/* qsort has no context argument: the sort runs one at a time */
static const struct grouping *sorting;
static enum sort_col sorting_by;

static int by_key_text(const struct row *a, const struct row *b)
{
	for (int k = 0; k < sorting->nkeys; k++) {
		int c = strcmp(row_part(a, k), row_part(b, k));

		if (c)
			return c;
	}
	return 0;
}

static int compare_rows(const void *x, const void *y)
{
	const struct row *a = &sorting->rows[*(const uint32_t *)x];
	const struct row *b = &sorting->rows[*(const uint32_t *)y];
	double va, vb;

	if (sorting_by == SORT_KEY)
		return by_key_text(a, b);
	va = sort_value(a, sorting_by);
	vb = sort_value(b, sorting_by);
	if (va != vb)
		return va < vb ? 1 : -1; /* largest first */
	return by_key_text(a, b);
}

uint32_t *table_order(const struct grouping *g, const struct table_opts *o, uint32_t *n)
{
	uint32_t *idx = malloc((g->n ? g->n : 1) * sizeof(*idx));

	if (!idx)
		return NULL;
	for (uint32_t i = 0; i < g->n; i++)
		idx[i] = i;
	sorting = g;
	sorting_by = o->sort;
	qsort(idx, g->n, sizeof(*idx), compare_rows);
	*n = o->top && o->top < g->n ? o->top : g->n;
	return idx;
}

static int64_t wall(const struct profile *p)
{
	return p->head.t_max - p->head.t_min;
}

/* ---- for people ---- */

static void headline_text(FILE *out, const struct headline *h)
{
	char w[32], io[32], un[32], rd[32], wr[32], bw[32];

	units_ns(w, sizeof(w), h->t_max - h->t_min);
	units_ns(io, sizeof(io), h->io_time);
	units_ns(un, sizeof(un), h->unoverlapped_io);
	units_bytes(rd, sizeof(rd), h->bytes_read);
	units_bytes(wr, sizeof(wr), h->bytes_written);
	units_rate(bw, sizeof(bw), h->bytes_read + h->bytes_written + h->bytes_copied,
		   h->data_time);
	fprintf(out, "%llu events over %s: %llu processes, %llu ranks, %llu files\n",
		(unsigned long long)h->events, w, (unsigned long long)h->processes,
		(unsigned long long)h->ranks, (unsigned long long)h->files);
	fprintf(out, "I/O time %s, unoverlapped by compute %s\n", io, un);
	fprintf(out, "read %s, written %s", rd, wr);
	if (h->bytes_copied) {
		units_bytes(rd, sizeof(rd), h->bytes_copied);
		fprintf(out, ", copied %s", rd);
	}
	fprintf(out, "; bandwidth %s (bytes over the time of the calls that moved them)\n", bw);
	if (h->late)
		fprintf(out, "note: %llu intervals came beyond the sweep's window; unoverlapped "
			"I/O is approximate\n", (unsigned long long)h->late);
}

#define NCOLS 11
static const char *const col_names[NCOLS] = {
	"Calls", "Total", "Self", "Avg", "Min", "Max", "P50", "P99", "Bytes",
	"Bandwidth", "% wall",
};

/* A time, "~" before it when it comes from log2 buckets. */
static void time_cell(char *cell, int64_t ns, bool log2)
{
	cell[0] = '~';
	units_ns(cell + log2, 32 - log2, ns);
}

static void row_cells(const struct profile *p, const struct row *r, char cells[NCOLS][32])
{
	unsigned int log2 = row_from_log2(r);

	snprintf(cells[0], 32, "%llu", (unsigned long long)r->calls);
	units_ns(cells[1], 32, r->total);
	units_ns(cells[2], 32, r->self);
	units_ns(cells[3], 32, row_avg(r));
	time_cell(cells[4], r->calls ? r->min : 0, log2 & FROM_LOG2_MIN);
	time_cell(cells[5], r->max, log2 & FROM_LOG2_MAX);
	time_cell(cells[6], row_quantile(r, 0.5), log2 & FROM_LOG2_P50);
	time_cell(cells[7], row_quantile(r, 0.99), log2 & FROM_LOG2_P99);
	if (r->data_time) {
		units_bytes(cells[8], 32, r->bytes);
		units_rate(cells[9], 32, r->bytes, r->data_time);
	} else {
		strcpy(cells[8], "-");
		strcpy(cells[9], "-");
	}
	snprintf(cells[10], 32, "%.2f%%", wall(p) ? 100.0 * r->total / wall(p) : 0);
}

/* A key in a column w wide. The end of a long name says more than its
 * start (a path's file, a phase's innermost part): a longer key is cut
 * from the left, and the cut marked by a leading "…". A key too long
 * for the buffer, cut already, is shown by its start. */
static void key_cell(FILE *out, const char *key, size_t size, int len, int w)
{
	const char *s;

	if (len <= w || len >= (int)size) {
		fprintf(out, "%-*.*s  ", w, w, key);
		return;
	}
	s = key + len - (w - 1);
	while ((*s & 0xc0) == 0x80) /* never half a UTF-8 character */
		s++;
	fprintf(out, "\xe2\x80\xa6%-*s  ", w - 1, s);
}

static void grouping_text(FILE *out, const struct profile *p, const struct grouping *g,
			  const struct table_opts *o)
{
	uint32_t n, *idx = table_order(g, o, &n);
	int kw[PROFILE_MAX_KEYS];
	char cells[NCOLS][32], key[4 * PATH_MAX];
	bool log2 = false;

	if (!idx)
		return;
	for (int k = 0; k < g->nkeys; k++) {
		kw[k] = strlen(by_key_name(g->keys[k]));
		for (uint32_t i = 0; i < n; i++) {
			int len = termsafe(NULL, 0, row_part(&g->rows[idx[i]], k));

			kw[k] = len > kw[k] ? (len < 60 ? len : 60) : kw[k];
		}
	}
	fputc('\n', out);
	for (int k = 0; k < g->nkeys; k++)
		fprintf(out, "%-*s  ", kw[k], by_key_name(g->keys[k]));
	for (int c = 0; c < NCOLS; c++)
		fprintf(out, "%12s", col_names[c]);
	fputc('\n', out);
	for (uint32_t i = 0; i < n; i++) {
		const struct row *r = &g->rows[idx[i]];

		for (int k = 0; k < g->nkeys; k++)
			key_cell(out, key, sizeof(key),
				 termsafe(key, sizeof(key), row_part(r, k)), kw[k]);
		row_cells(p, r, cells);
		for (int c = 0; c < NCOLS; c++)
			fprintf(out, "%12s", cells[c]);
		fputc('\n', out);
		log2 |= row_from_log2(r) != 0;
	}
	if (n < g->n)
		fprintf(out, "(%u more rows; --top 0 shows all)\n", g->n - n);
	if (log2)
		fprintf(out, "~: from the log2 buckets of folded totals (args.hist): a min or "
			"max is a bucket's bound, a percentile a bucket's middle\n");
	free(idx);
}

void table_text(FILE *out, const struct profile *p, const struct table_opts *o)
{
	headline_text(out, &p->head);
	if (p->find)
		findings_text(out, &p->findings);
	gpu_text(out, &p->gpu, wall(p));
	for (int i = 0; i < p->nby; i++)
		grouping_text(out, p, &p->by[i], o);
}

/* ---- for programs ---- */

/* The columns of figures from log2 buckets, joined by sep, each
 * quoted by q: "min_ns p50_ns". */
static const char *log2_names(unsigned int log2, const char *sep, const char *q,
			      char buf[64])
{
	static const char *const names[] = { "min_ns", "max_ns", "p50_ns", "p99_ns" };
	size_t n = 0;

	buf[0] = 0;
	for (int i = 0; i < 4; i++)
		if (log2 & 1u << i)
			n += snprintf(buf + n, 64 - n, "%s%s%s%s", n ? sep : "", q, names[i], q);
	return buf;
}

static void csv_field(FILE *out, const char *text)
{
	char safe[4 * PATH_MAX];
	const char *s = safe;

	termsafe(safe, sizeof(safe), text);
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', out);
		fputc(*s, out);
	}
	fputc('"', out);
}

void table_csv(FILE *out, const struct profile *p, const struct table_opts *o)
{
	char buf[64];

	for (int i = 0; i < p->nby; i++) {
		const struct grouping *g = &p->by[i];
		uint32_t n, *idx = table_order(g, o, &n);

		if (!idx)
			return;
		if (i)
			fputc('\n', out);
		for (int k = 0; k < g->nkeys; k++)
			fprintf(out, "%s,", by_key_name(g->keys[k]));
		fprintf(out, "calls,total_ns,self_ns,avg_ns,min_ns,max_ns,p50_ns,p99_ns,"
			"bytes,bandwidth_Bps,wall_pct,from_log2\n");
		for (uint32_t j = 0; j < n; j++) {
			const struct row *r = &g->rows[idx[j]];

			for (int k = 0; k < g->nkeys; k++) {
				csv_field(out, row_part(r, k));
				fputc(',', out);
			}
			fprintf(out, "%llu,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%.0f,%.4f,",
				(unsigned long long)r->calls, (long long)r->total,
				(long long)r->self,
				(long long)row_avg(r),
				(long long)(r->calls ? r->min : 0), (long long)r->max,
				(long long)row_quantile(r, 0.5),
				(long long)row_quantile(r, 0.99),
				(long long)r->bytes, bandwidth(r),
				wall(p) ? 100.0 * r->total / wall(p) : 0);
			fprintf(out, "%s\n", log2_names(row_from_log2(r), " ", "", buf));
		}
		free(idx);
	}
}

static void headline_json(struct jbuf *b, const struct profile *p)
{
	const struct headline *h = &p->head;
	int64_t moved = h->bytes_read + h->bytes_written + h->bytes_copied;

	JB_LIT(b, "{\"headline\":{");
	jb_member_i64(b, "events", h->events);
	jb_member_i64(b, "start_ns", h->t_min);
	jb_member_i64(b, "wall_ns", wall(p));
	jb_member_i64(b, "io_ns", h->io_time);
	jb_member_i64(b, "unoverlapped_io_ns", h->unoverlapped_io);
	jb_member_i64(b, "bytes_read", h->bytes_read);
	jb_member_i64(b, "bytes_written", h->bytes_written);
	jb_member_i64(b, "bytes_copied", h->bytes_copied);
	jb_member_i64(b, "data_ns", h->data_time);
	jb_member_i64(b, "bandwidth_Bps", h->data_time ? (int64_t)(moved * 1e9 / h->data_time) : 0);
	jb_member_i64(b, "files", h->files);
	jb_member_i64(b, "processes", h->processes);
	jb_member_i64(b, "ranks", h->ranks);
	jb_member_i64(b, "late", h->late);
	b->len--; /* the last ',' */
	jb_char(b, '}');
	jb_char(b, ',');
	if (p->find)
		findings_json(b, &p->findings);
	if (gpu_any(&p->gpu))
		gpu_json(b, &p->gpu);
	JB_LIT(b, "\"groupings\":[");
}

static void row_json(struct jbuf *b, const struct profile *p, const struct grouping *g,
		     const struct row *r)
{
	char names[64];

	jb_char(b, '{');
	for (int k = 0; k < g->nkeys; k++) {
		const char *s = row_part(r, k);

		jb_char(b, '"');
		jb_mem(b, by_key_name(g->keys[k]), strlen(by_key_name(g->keys[k])));
		JB_LIT(b, "\":");
		jb_str(b, s, strlen(s));
		jb_char(b, ',');
	}
	jb_member_i64(b, "calls", r->calls);
	jb_member_i64(b, "total_ns", r->total);
	jb_member_i64(b, "self_ns", r->self);
	jb_member_i64(b, "region_self_ns", r->region_self);
	jb_member_i64(b, "avg_ns", row_avg(r));
	jb_member_i64(b, "min_ns", r->calls ? r->min : 0);
	jb_member_i64(b, "max_ns", r->max);
	jb_member_i64(b, "p50_ns", row_quantile(r, 0.5));
	jb_member_i64(b, "p99_ns", row_quantile(r, 0.99));
	jb_member_i64(b, "bytes", r->bytes);
	jb_member_i64(b, "data_ns", r->data_time);
	jb_member_i64(b, "bandwidth_Bps", (int64_t)bandwidth(r));
	/* % of wall time, in hundredths of a percent */
	jb_member_i64(b, "wall_bp", wall(p) ? (int64_t)(10000.0 * r->total / wall(p)) : 0);
	jb_member_i64(b, "log2_calls", r->log2_calls);
	JB_LIT(b, "\"from_log2\":[");
	log2_names(row_from_log2(r), ",", "\"", names);
	jb_mem(b, names, strlen(names));
	jb_char(b, ']');
	jb_char(b, '}');
}

int table_json(FILE *out, const struct profile *p, const struct table_opts *o)
{
	struct jbuf b;
	int rc = jb_init(&b, 1 << 16);

	if (rc)
		return rc;
	headline_json(&b, p);
	for (int i = 0; i < p->nby; i++) {
		const struct grouping *g = &p->by[i];
		uint32_t n, *idx = table_order(g, o, &n);

		if (!idx) {
			jb_free(&b);
			return -ENOMEM;
		}
		JB_LIT(&b, "{\"by\":[");
		for (int k = 0; k < g->nkeys; k++) {
			if (k)
				jb_char(&b, ',');
			jb_char(&b, '"');
			jb_mem(&b, by_key_name(g->keys[k]), strlen(by_key_name(g->keys[k])));
			jb_char(&b, '"');
		}
		JB_LIT(&b, "],\"rows\":[");
		for (uint32_t j = 0; j < n; j++) {
			if (j)
				JB_LIT(&b, ",\n");
			row_json(&b, p, g, &g->rows[idx[j]]);
		}
		JB_LIT(&b, "]}");
		if (i + 1 < p->nby)
			jb_char(&b, ',');
		free(idx);
	}
	JB_LIT(&b, "]}\n");
	rc = b.err;
	if (!rc && fwrite(b.p, 1, b.len, out) != b.len)
		rc = -EIO;
	jb_free(&b);
	return rc;
}
