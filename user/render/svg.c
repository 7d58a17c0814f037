// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "lib/units.h"
#include "render/svg.h"

#define W 880		/* chart size, px */
#define H 300
#define LEFT 90		/* room for the y axis labels */
#define RIGHT 180	/* room for the legend */
#define TOP 30
#define BOTTOM 40
#define PLOT_W (W - LEFT - RIGHT)
#define PLOT_H (H - TOP - BOTTOM)
#define TICKS 5

/* Ten colours apart enough to tell; the eleventh series reuses the first. */
static const char *const palette[] = {
	"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
	"#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac",
};
#define COLOUR(i) palette[(i) % (sizeof(palette) / sizeof(palette[0]))]

void html_text(struct jbuf *b, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': JB_LIT(b, "&amp;"); break;
		case '<': JB_LIT(b, "&lt;"); break;
		case '>': JB_LIT(b, "&gt;"); break;
		case '"': JB_LIT(b, "&quot;"); break;
		case '\'': JB_LIT(b, "&#39;"); break;
		default: jb_char(b, *s);
		}
	}
}

static void printf_to(struct jbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void printf_to(struct jbuf *b, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	jb_mem(b, buf, n < (int)sizeof(buf) ? n : (int)sizeof(buf) - 1);
}

void svg_fmt_ns(char *buf, size_t len, double v)
{
	units_ns(buf, len, (int64_t)v);
}

void svg_fmt_bytes(char *buf, size_t len, double v)
{
	units_bytes(buf, len, (uint64_t)v);
}

void svg_fmt_rate(char *buf, size_t len, double v)
{
	units_rate(buf, len, (uint64_t)v, 1000000000);
}

void svg_fmt_count(char *buf, size_t len, double v)
{
	snprintf(buf, len, "%.0f", v);
}

static void open_chart(struct jbuf *b, const char *id, const char *title)
{
	JB_LIT(b, "<figure><figcaption>");
	html_text(b, title);
	JB_LIT(b, "</figcaption><svg class=\"chart\" id=\"");
	html_text(b, id);
	printf_to(b, "\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		  "xmlns=\"http://www.w3.org/2000/svg\">", W, H, W, H);
}

static void close_chart(struct jbuf *b)
{
	JB_LIT(b, "</svg></figure>\n");
}

/* The y axis from 0 to max, with its labels and grid lines. */
static void y_axis(struct jbuf *b, double max, svg_format fmt)
{
	char label[48];

	for (int i = 0; i <= TICKS; i++) {
		double v = max * i / TICKS;
		int y = TOP + PLOT_H - PLOT_H * i / TICKS;

		fmt(label, sizeof(label), v);
		printf_to(b, "<line class=\"grid\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>"
			  "<text class=\"tick\" x=\"%d\" y=\"%d\" text-anchor=\"end\">", LEFT, y,
			  LEFT + PLOT_W, y, LEFT - 6, y + 4);
		html_text(b, label);
		JB_LIT(b, "</text>");
	}
}

static void legend(struct jbuf *b, uint32_t n, const char *const *names)
{
	for (uint32_t i = 0; i < n; i++) {
		int y = TOP + 16 * i;

		printf_to(b, "<rect class=\"key\" x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" "
			  "fill=\"%s\"/><text class=\"legend\" x=\"%d\" y=\"%d\">", W - RIGHT + 12,
			  y, COLOUR(i), W - RIGHT + 28, y + 9);
		html_text(b, names[i]);
		JB_LIT(b, "</text>");
	}
}

/* A mark's numbers, for people (title) and for programs (data-). */
static void mark_data(struct jbuf *b, const char *name, double v, svg_format fmt)
{
	char shown[48];

	fmt(shown, sizeof(shown), v);
	JB_LIT(b, " data-name=\"");
	html_text(b, name);
	printf_to(b, "\" data-value=\"%.17g\"><title>", v);
	html_text(b, name);
	JB_LIT(b, ": ");
	html_text(b, shown);
	JB_LIT(b, "</title>");
}

static double nice_max(double v)
{
	double p;

	if (v <= 0)
		return 1;
	p = pow(10, floor(log10(v)));
	for (int m = 1; m <= 10; m *= 2)
		if (v <= m * p)
			return m * p;
	return 10 * p;
}

void svg_line_chart(struct jbuf *b, const struct svg_lines *c)
{
	double max = 0;
	char label[48];

	for (uint32_t i = 0; i < c->nseries; i++)
		for (uint32_t j = 0; j < c->n; j++)
			max = c->ys[i][j] > max ? c->ys[i][j] : max;
	max = nice_max(max);
	open_chart(b, c->id, c->title);
	y_axis(b, max, c->fmt);
	for (int t = 0; t <= TICKS; t++) {
		double x = c->x0 + c->dx * c->n * t / TICKS;

		units_ns(label, sizeof(label), (int64_t)(x * 1e9));
		printf_to(b, "<text class=\"tick\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">",
			  LEFT + PLOT_W * t / TICKS, TOP + PLOT_H + 16);
		html_text(b, label);
		JB_LIT(b, "</text>");
	}
	for (uint32_t i = 0; i < c->nseries; i++) {
		double total = 0;

		for (uint32_t j = 0; j < c->n; j++)
			total += c->ys[i][j];
		printf_to(b, "<polyline class=\"series\" fill=\"none\" stroke=\"%s\" "
			  "stroke-width=\"1.5\" points=\"", COLOUR(i));
		for (uint32_t j = 0; j < c->n; j++)
			printf_to(b, "%.1f,%.1f ", LEFT + PLOT_W * (j + 0.5) / c->n,
				  TOP + PLOT_H - PLOT_H * c->ys[i][j] / max);
		jb_char(b, '"');
		/* the mean over the span, on hover */
		mark_data(b, c->names[i], c->n ? total / c->n : 0, c->fmt);
		JB_LIT(b, "</polyline>");
	}
	legend(b, c->nseries, c->names);
	close_chart(b);
}

void svg_stacked_bars(struct jbuf *b, const struct svg_stacks *c)
{
	double max = 0, bw;

	for (uint32_t j = 0; j < c->nbars; j++) {
		double sum = 0;

		for (uint32_t i = 0; i < c->nseries; i++)
			sum += c->values[i][j];
		max = sum > max ? sum : max;
	}
	max = nice_max(max);
	bw = (double)PLOT_W / (c->nbars ? c->nbars : 1);
	open_chart(b, c->id, c->title);
	y_axis(b, max, c->fmt);
	for (uint32_t j = 0; j < c->nbars; j++) {
		double y = TOP + PLOT_H;

		for (uint32_t i = 0; i < c->nseries; i++) {
			double h = PLOT_H * c->values[i][j] / max;

			if (c->values[i][j] <= 0)
				continue;
			y -= h;
			printf_to(b, "<rect class=\"bar\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
				  "height=\"%.1f\" fill=\"%s\" data-bar=\"", LEFT + bw * j + 1, y,
				  bw > 3 ? bw - 2 : bw, h, COLOUR(i));
			html_text(b, c->labels[j]);
			jb_char(b, '"');
			mark_data(b, c->names[i], c->values[i][j], c->fmt);
			JB_LIT(b, "</rect>");
		}
		/* a label under every bar that has room for one */
		if (bw >= 24 || j % (uint32_t)ceil(24 / bw) == 0) {
			printf_to(b, "<text class=\"tick\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">",
				  LEFT + bw * (j + 0.5), TOP + PLOT_H + 16);
			html_text(b, c->labels[j]);
			JB_LIT(b, "</text>");
		}
	}
	legend(b, c->nseries, c->names);
	close_chart(b);
}

void svg_hbar_chart(struct jbuf *b, const struct svg_hbars *c)
{
	double max = 0, bh = (double)PLOT_H / (c->n ? c->n : 1);
	char shown[48];

	for (uint32_t i = 0; i < c->n; i++)
		max = c->values[i] > max ? c->values[i] : max;
	max = nice_max(max);
	open_chart(b, c->id, c->title);
	for (uint32_t i = 0; i < c->n; i++) {
		double y = TOP + bh * i, w = (PLOT_W + RIGHT - 90) * c->values[i] / max;
		const char *label = c->labels[i];
		size_t len = strlen(label);

		printf_to(b, "<rect class=\"bar\" x=\"%d\" y=\"%.1f\" width=\"%.1f\" "
			  "height=\"%.1f\" fill=\"%s\"", LEFT, y + 1, w, bh > 3 ? bh - 2 : bh,
			  COLOUR(0));
		mark_data(b, label, c->values[i], c->fmt);
		JB_LIT(b, "</rect>");
		c->fmt(shown, sizeof(shown), c->values[i]);
		/* a path's end says more than its start */
		printf_to(b, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\">", LEFT + w + 4,
			  y + bh / 2 + 4);
		html_text(b, shown);
		JB_LIT(b, " \xc2\xb7 ");
		html_text(b, len > 70 ? label + len - 70 : label);
		JB_LIT(b, "</text>");
	}
	close_chart(b);
}

void svg_histogram(struct jbuf *b, const struct svg_hist *c)
{
	double max = 0, bw = (double)PLOT_W / (c->n ? c->n : 1);
	char from[48], to[48], name[100];

	for (uint32_t j = 0; j < c->n; j++)
		max = c->counts[j] > max ? c->counts[j] : max;
	max = nice_max(max);
	open_chart(b, c->id, c->title);
	y_axis(b, max, svg_fmt_count);
	for (uint32_t j = 0; j < c->n; j++) {
		double h = PLOT_H * c->counts[j] / max;

		c->fmt(from, sizeof(from), c->from[j]);
		c->fmt(to, sizeof(to), c->to[j]);
		snprintf(name, sizeof(name), "%s to %s", from, to);
		printf_to(b, "<rect class=\"bar\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
			  "height=\"%.1f\" fill=\"%s\"", LEFT + bw * j + 1, TOP + PLOT_H - h,
			  bw > 3 ? bw - 2 : bw, h, COLOUR(0));
		mark_data(b, name, c->counts[j], svg_fmt_count);
		JB_LIT(b, "</rect>");
		if (j % 2 == 0) {
			printf_to(b, "<text class=\"tick\" x=\"%.1f\" y=\"%d\" "
				  "text-anchor=\"middle\">", LEFT + bw * j, TOP + PLOT_H + 16);
			html_text(b, from);
			JB_LIT(b, "</text>");
		}
	}
	close_chart(b);
}
