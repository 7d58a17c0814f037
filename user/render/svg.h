/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Charts as inline SVG, drawn here: no script, no library, nothing
 * fetched. Every mark carries its numbers (data-name, data-value) and a
 * <title> a browser shows on hover, so that a test can read the chart
 * back and a reader can check a bar.
 */
#ifndef RENDER_SVG_H
#define RENDER_SVG_H

#include <stdint.h>
#include "lib/json.h"

/* Text for HTML and SVG: & < > " ' escaped. */
void html_text(struct jbuf *b, const char *s);

/* How a chart prints a value on its axis and in titles. */
typedef void (*svg_format)(char *buf, size_t len, double v);
void svg_fmt_ns(char *buf, size_t len, double v);
void svg_fmt_bytes(char *buf, size_t len, double v);
void svg_fmt_rate(char *buf, size_t len, double v);	/* bytes/s */
void svg_fmt_count(char *buf, size_t len, double v);

/* Lines over a shared x axis (s): series i has n points ys[i][0..n). */
struct svg_lines {
	const char *id, *title;
	double x0, dx;		/* x of point j: x0 + j*dx (seconds) */
	uint32_t n;
	uint32_t nseries;
	const char *const *names;
	const double *const *ys;
	svg_format fmt;
};
void svg_line_chart(struct jbuf *b, const struct svg_lines *c);

/* Stacked bars: bar j (label labels[j]) stacks value[i][j] of series i. */
struct svg_stacks {
	const char *id, *title;
	uint32_t nbars, nseries;
	const char *const *labels, *const *names;
	const double *const *values;
	svg_format fmt;
};
void svg_stacked_bars(struct jbuf *b, const struct svg_stacks *c);

/* Horizontal bars, one per label, longest first as given. */
struct svg_hbars {
	const char *id, *title;
	uint32_t n;
	const char *const *labels;
	const double *values;
	svg_format fmt;
};
void svg_hbar_chart(struct jbuf *b, const struct svg_hbars *c);

/* A histogram: bar j counts[j] values in [from[j], to[j]). */
struct svg_hist {
	const char *id, *title;
	uint32_t n;
	const double *from, *to, *counts;
	svg_format fmt;		/* of the bounds */
};
void svg_histogram(struct jbuf *b, const struct svg_hist *c);

#endif
