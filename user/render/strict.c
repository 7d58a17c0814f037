// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "render/strict.h"

#define STRICT_DEPTH 64	/* as deep as the reader reads */

static int hex(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 :
	       c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

static bool hex4(const char *p, const char *end, unsigned int *u)
{
	*u = 0;
	if (end - p < 4)
		return false;
	for (int i = 0; i < 4; i++) {
		if (hex(p[i]) < 0)
			return false;
		*u = *u << 4 | hex(p[i]);
	}
	return true;
}

/* Printable ASCII and valid escapes only (surrogates in pairs, as a
 * strict parser wants them): the text can stay as it is. */
static bool plain(struct span s)
{
	const char *p = s.p, *end = s.p + s.len;
	unsigned int u;

	while (p < end) {
		unsigned char c = *p;

		if (c < 0x20 || c >= 0x7f || c == '"')
			return false;
		if (c != '\\') {
			p++;
			continue;
		}
		if (p + 1 == end)
			return false;
		if (p[1] == 'u') {
			if (!hex4(p + 2, end, &u))
				return false;
			p += 6;
			if (u >= 0xdc00 && u < 0xe000)
				return false;	/* a second half alone */
			if (u >= 0xd800 && u < 0xdc00) {	/* a first half: its second next */
				if (end - p < 6 || p[0] != '\\' || p[1] != 'u' ||
				    !hex4(p + 2, end, &u) || u < 0xdc00 || u >= 0xe000)
					return false;
				p += 6;
			}
		} else if (strchr("\"\\/bfnrt", p[1]) && p[1]) {
			p += 2;
		} else {
			return false;
		}
	}
	return true;
}

void strict_string(struct jbuf *b, struct span s)
{
	char *raw;

	if (plain(s)) {
		jb_char(b, '"');
		jb_mem(b, s.p, s.len);
		jb_char(b, '"');
		return;
	}
	raw = malloc(s.len + 1);
	if (!raw) {
		b->err = -ENOMEM;
		return;
	}
	/* never longer than the contents; what is not valid comes out as
	 * bytes that jb_str writes validly */
	jb_str(b, raw, js_unescape(s, raw, s.len + 1));
	free(raw);
}

/* -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
static bool json_number(struct span v)
{
	const char *p = v.p, *end = v.p + v.len, *d;

	if (p < end && *p == '-')
		p++;
	if (p < end && *p == '0')
		p++;
	else if (p < end && *p >= '1' && *p <= '9')
		while (p < end && *p >= '0' && *p <= '9')
			p++;
	else
		return false;
	if (p < end && *p == '.') {
		for (d = ++p; p < end && *p >= '0' && *p <= '9'; p++)
			;
		if (p == d)
			return false;
	}
	if (p < end && (*p == 'e' || *p == 'E')) {
		if (++p < end && (*p == '+' || *p == '-'))
			p++;
		for (d = p; p < end && *p >= '0' && *p <= '9'; p++)
			;
		if (p == d)
			return false;
	}
	return p == end;
}

static void value(struct jbuf *b, struct span v, int depth);

static void members(struct jbuf *b, struct span obj, int depth)
{
	const char *p = obj.p, *end = obj.p + obj.len;
	struct span k, v;
	bool first = true;

	while (js_member(&p, end, &k, &v) == JS_OK) {
		if (!first)
			jb_char(b, ',');
		first = false;
		strict_string(b, k);
		jb_char(b, ':');
		value(b, v, depth);
	}
}

static void elements(struct jbuf *b, struct span arr, int depth)
{
	const char *p = arr.p, *end = arr.p + arr.len, *v;
	bool first = true;

	for (;;) {
		while (p < end && (*p == ',' || *p == ' ' || *p == '\n' || *p == '\t' ||
				   *p == '\r'))
			p++;
		v = p;
		if (p == end || *p == ']' || js_skip(&p, end) != JS_OK)
			return;
		if (!first)
			jb_char(b, ',');
		first = false;
		value(b, (struct span){ v, p - v }, depth);
	}
}

static void value(struct jbuf *b, struct span v, int depth)
{
	const char *p = js_ws(v.p, v.p + v.len), *end = v.p + v.len;
	struct span in = { p + 1, 0 }, s;

	while (end > p && (end[-1] == ' ' || end[-1] == '\n' || end[-1] == '\t' ||
			   end[-1] == '\r'))
		end--;
	v = (struct span){ p, end - p };
	if (v.len >= 2 && (*p == '{' || *p == '[') && depth < STRICT_DEPTH &&
	    end[-1] == (*p == '{' ? '}' : ']')) {
		in.len = v.len - 1; /* with its closing bracket: a number last needs an end */
		jb_char(b, *p);
		if (*p == '{')
			members(b, in, depth + 1);
		else
			elements(b, in, depth + 1);
		jb_char(b, end[-1]);
	} else if (js_string(v, &s)) {
		strict_string(b, s);
	} else if (json_number(v) || SPAN_IS(v, "true") || SPAN_IS(v, "false") ||
		   SPAN_IS(v, "null")) {
		jb_mem(b, v.p, v.len);
	} else {
		jb_str(b, v.p, v.len);	/* NaN, 01, or what else: as text */
	}
}

void strict_value(struct jbuf *b, struct span v)
{
	value(b, v, 0);
}

void strict_members(struct jbuf *b, struct span obj)
{
	members(b, obj, 0);
}
