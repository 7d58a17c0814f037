// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Findings for people, and as JSON. */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include "lib/termsafe.h"
#include "lib/units.h"
#include "render/findings.h"
#include "render/svg.h"

/* Where x is: "file", "phase", "process" or "rank"; its name in buf. */
static const char *where_kind(const struct finding *x, char *buf, size_t size)
{
	if (x->rank >= 0) {
		snprintf(buf, size, "%lld", (long long)x->rank);
		return "rank";
	}
	snprintf(buf, size, "%s", x->file ? x->file : x->phase ? x->phase : x->process);
	return x->file ? "file" : x->phase ? "phase" : "process";
}

/* The numbers that show it, in words. */
static void evidence_text(char *s, size_t n, const struct finding *x)
{
	const struct finding_evidence *e = &x->ev;
	double part = e->calls ? 100.0 * e->hits / e->calls : 0;
	char b[32], t[32], c[32];

	units_bytes(b, sizeof(b), e->hits ? e->hit_bytes / e->hits : 0);
	units_ns(t, sizeof(t), e->other_ns);
	switch (x->rule) {
	case RULE_SMALL_IO:
		snprintf(s, n, "%lld of %lld data calls (%.0f%%) under 64 KiB, %s on average",
			 (long long)e->hits, (long long)e->calls, part, b);
		break;
	case RULE_RANDOM_ACCESS:
		snprintf(s, n, "%lld of %lld positioned calls (%.0f%%) not where the last "
			 "ended, %s on average", (long long)e->hits, (long long)e->calls, part, b);
		break;
	case RULE_METADATA_HEAVY:
		snprintf(s, n, "%lld metadata calls against %lld data calls taking %s",
			 (long long)e->hits, (long long)(e->calls - e->hits), t);
		break;
	case RULE_CHECKPOINT_BLOCKING:
		snprintf(s, n, "%lld writes and %lld syncs, the syncs taking %s",
			 (long long)(e->calls - e->hits), (long long)e->hits, t);
		break;
	case RULE_REPEATED_READS:
		units_bytes(c, sizeof(c), e->distinct);
		units_bytes(t, sizeof(t), e->hit_bytes);
		snprintf(s, n, "%lld of %lld reads (%.0f%%) of bytes read before, %s again of "
			 "%s%s", (long long)e->hits, (long long)e->calls, part, t, c,
			 e->epoch >= 0 ? " in its epoch" : "");
		break;
	case RULE_RANK_IMBALANCE:
		units_ns(b, sizeof(b), e->rank_ns);
		if (e->collectives)
			snprintf(s, n, "its own time between its %lld collectives %s, the median "
				 "of %lld ranks %s", (long long)e->collectives, b,
				 (long long)e->calls, t);
		else
			snprintf(s, n, "its I/O took %s, the median of %lld ranks %s", b,
				 (long long)e->calls, t);
		break;
	case RULE_INPUT_BOUND:
		units_ns(b, sizeof(b), e->step_ns);
		snprintf(s, n, "%lld of %lld steps (%.0f%%) more than half waiting for data; "
			 "the waits %s of the steps' %s", (long long)e->hits, (long long)e->calls,
			 part, t, b);
		break;
	case RULE_GPU_WAITS_ON_IO:
		units_ns(b, sizeof(b), x->ns);
		units_ns(c, sizeof(c), e->idle_ns);
		snprintf(s, n, "%s of its %s of data reads ran in %s of gaps with nothing "
			 "queued on its GPU", b, t, c);
		break;
	case RULE_PAGE_CACHE_MISSES:
		units_bytes(c, sizeof(c), e->misses > INT64_MAX / 4096 ? INT64_MAX : e->misses * 4096);
		snprintf(s, n, "%lld of %lld runs of mapped reads (%.0f%%) read %lld pages (%s) "
			 "from storage", (long long)e->hits, (long long)e->calls, part,
			 (long long)e->misses, c);
		break;
	case RULE_UNOVERLAPPED_IO:
		units_ns(b, sizeof(b), x->ns);
		units_ns(c, sizeof(c), e->compute_ns);
		snprintf(s, n, "%s of its %s of I/O ran while none of its %s of compute did",
			 b, t, c);
		break;
	default:
		s[0] = 0;
	}
}

/* What none found says. */
static void none_text(char *s, size_t n, const struct findings *f)
{
	snprintf(s, n, "none (no rule found a problem costing %.0f%% of the wall time or "
		 "more)", 100 * f->min_share);
}

void findings_text(FILE *out, const struct findings *f)
{
	char where[512], ev[256], t[32], name[PATH_MAX];

	if (!f->n) {
		none_text(ev, sizeof(ev), f);
		fprintf(out, "\nFindings: %s\n", ev);
		return;
	}
	fprintf(out, "\nFindings (each costs %.0f%% of the wall time or more):\n",
		100 * f->min_share);
	for (uint32_t i = 0; i < f->n; i++) {
		const struct finding *x = &f->list[i];
		const char *kind = where_kind(x, name, sizeof(name));

		termsafe(where, sizeof(where), name);
		units_ns(t, sizeof(t), x->ns);
		evidence_text(ev, sizeof(ev), x);
		fprintf(out, "%2u. %-15s %s %s: %s (%.1f%% of wall)\n    %s\n    try: %s\n",
			i + 1, finding_rule_name(x->rule), kind, where, t, 100 * x->share, ev,
			finding_advice(x->rule));
	}
}

static void member_str(struct jbuf *b, const char *key, const char *s)
{
	jb_char(b, '"');
	jb_mem(b, key, strlen(key));
	JB_LIT(b, "\":");
	jb_str(b, s, strlen(s));
	jb_char(b, ',');
}

static void finding_json(struct jbuf *b, const struct finding *x)
{
	char num[64], name[PATH_MAX];
	const char *kind = where_kind(x, name, sizeof(name));
	int n;

	JB_LIT(b, "{");
	member_str(b, "rule", finding_rule_name(x->rule));
	JB_LIT(b, "\"where\":{");
	if (x->rank >= 0)
		jb_member_i64(b, kind, x->rank);
	else
		member_str(b, kind, name);
	b->len--;
	JB_LIT(b, "},");
	n = snprintf(num, sizeof(num), "\"seconds\":%.9f,\"share\":%.6f,", x->ns / 1e9, x->share);
	jb_mem(b, num, n);
	jb_member_i64(b, "ns", x->ns);
	JB_LIT(b, "\"evidence\":{");
	jb_member_i64(b, "calls", x->ev.calls);
	jb_member_i64(b, "hits", x->ev.hits);
	switch (x->rule) {
	case RULE_METADATA_HEAVY:
		jb_member_i64(b, "data_ns", x->ev.other_ns);
		break;
	case RULE_CHECKPOINT_BLOCKING:
		jb_member_i64(b, "sync_ns", x->ev.other_ns);
		break;
	case RULE_UNOVERLAPPED_IO:
		jb_member_i64(b, "io_ns", x->ev.other_ns);
		jb_member_i64(b, "compute_ns", x->ev.compute_ns);
		break;
	case RULE_RANK_IMBALANCE:
		jb_member_i64(b, x->ev.collectives ? "own_ns" : "io_ns", x->ev.rank_ns);
		jb_member_i64(b, x->ev.collectives ? "median_own_ns" : "median_io_ns", x->ev.other_ns);
		if (x->ev.collectives)
			jb_member_i64(b, "collectives", x->ev.collectives);
		break;
	case RULE_INPUT_BOUND:
		jb_member_i64(b, "wait_ns", x->ev.other_ns);
		jb_member_i64(b, "step_ns", x->ev.step_ns);
		break;
	case RULE_PAGE_CACHE_MISSES:
		jb_member_i64(b, "hit_bytes", x->ev.hit_bytes);
		jb_member_i64(b, "misses", x->ev.misses);
		break;
	case RULE_GPU_WAITS_ON_IO:
		jb_member_i64(b, "read_ns", x->ev.other_ns);
		jb_member_i64(b, "gap_ns", x->ev.idle_ns);
		break;
	case RULE_REPEATED_READS:
		jb_member_i64(b, "hit_bytes", x->ev.hit_bytes);
		jb_member_i64(b, "distinct_bytes", x->ev.distinct);
		jb_member_i64(b, "epoch", x->ev.epoch);
		break;
	default:
		jb_member_i64(b, "hit_bytes", x->ev.hit_bytes);
	}
	b->len--;
	JB_LIT(b, "},");
	member_str(b, "advice", finding_advice(x->rule));
	b->len--;
	jb_char(b, '}');
}

void findings_json(struct jbuf *b, const struct findings *f)
{
	char num[64];
	int n = snprintf(num, sizeof(num), "\"findings_min_share\":%.6f,", f->min_share);

	jb_mem(b, num, n);
	JB_LIT(b, "\"findings\":[");
	for (uint32_t i = 0; i < f->n; i++) {
		if (i)
			jb_char(b, ',');
		finding_json(b, &f->list[i]);
	}
	JB_LIT(b, "],");
}

static void html_out(struct jbuf *b, const char *s)
{
	jb_mem(b, s, strlen(s));
}

void findings_html(struct jbuf *b, const struct findings *f)
{
	char s[256], t[32], where[PATH_MAX];

	html_out(b, "<h2>Findings</h2>");
	if (!f->n) {
		none_text(s, sizeof(s), f);
		html_out(b, "<p class=\"note findings-none\">");
		html_text(b, s);
		html_out(b, "</p>\n");
		return;
	}
	html_out(b, "<ol class=\"findings\">");
	for (uint32_t i = 0; i < f->n; i++) {
		const struct finding *x = &f->list[i];
		const char *kind = where_kind(x, where, sizeof(where));

		html_out(b, "<li data-rule=\"");
		html_out(b, finding_rule_name(x->rule));
		html_out(b, "\" data-");
		html_out(b, kind);
		html_out(b, "=\"");
		html_text(b, where);
		html_out(b, "\" data-ns=\"");
		jb_i64(b, x->ns);
		html_out(b, "\"><b>");
		html_out(b, finding_rule_name(x->rule));
		html_out(b, "</b> ");
		html_out(b, kind);
		html_out(b, " <code>");
		html_text(b, where);
		units_ns(t, sizeof(t), x->ns);
		snprintf(s, sizeof(s), "</code>: %s (%.1f%% of wall)<br>", t, 100 * x->share);
		html_out(b, s);
		evidence_text(s, sizeof(s), x);
		html_text(b, s);
		html_out(b, "<br>try: ");
		html_text(b, finding_advice(x->rule));
		html_out(b, "</li>");
	}
	html_out(b, "</ol>\n");
}
