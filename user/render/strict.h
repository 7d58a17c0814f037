/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Input text written again as strict JSON (RFC 8259): the readers accept
 * more than that (control bytes, invalid UTF-8 and unknown escapes in
 * strings, loose separators and numbers), and what merge copies from its
 * inputs must still parse. Text that is already strict is copied as it is.
 */
#ifndef RENDER_STRICT_H
#define RENDER_STRICT_H

#include "lib/json.h"
#include "read/jscan.h"

/* A string from its contents as read (between the quotes, escaped): as
 * it is if strict, else unescaped (js_unescape) and written by jb_str. */
void strict_string(struct jbuf *b, struct span s);
/* A value: strings as above, objects and arrays member by member, a
 * number or literal as it is if valid, else as a string of its text. */
void strict_value(struct jbuf *b, struct span v);
/* The members of an object's text, without its braces (ws allowed). */
void strict_members(struct jbuf *b, struct span obj);

#endif
