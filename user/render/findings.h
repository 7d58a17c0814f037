/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Findings (analyze/findings.h) for people, and as JSON. */
#ifndef RENDER_FINDINGS_H
#define RENDER_FINDINGS_H

#include <stdio.h>
#include "analyze/findings.h"
#include "lib/json.h"

void findings_text(FILE *out, const struct findings *f);
/* "findings":[...], as a member of an object (a ',' after it). */
void findings_json(struct jbuf *b, const struct findings *f);
/* The report's section: a list, each item's rule, place and ns in data-
 * attributes. */
void findings_html(struct jbuf *b, const struct findings *f);

#endif
