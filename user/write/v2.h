/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What only format v2 has: the layer ("type") of each category we write,
 * and the objects of the "end" record (cfg, build, used, app). Which
 * layer each category is, and why, is in doc/trace-format.md.
 */
#ifndef WRITE_V2_H
#define WRITE_V2_H

#include <stddef.h>
#include <stdint.h>
#include "lib/json.h"
#include "lib/traceformat.h"

/* The layer of an event of category cat. */
enum v2_type v2_type_of_cat(const char *cat, size_t len);
/* The same, of a "name":"...","cat":"...", fragment. */
enum v2_type v2_type_of_name_cat(const char *name_cat, size_t len);
/* "LIBC_IO", ...; NULL for a value not DFTracer's. */
const char *v2_type_name(enum v2_type t);

/* The end record's args after num_events: ,"cfg":{cfg},"build":{...},
 * "used":{one key a layer of mask (bit 1 << type), the tracer's own
 * records not among them},"app":{}. cfg is the inside of an object, or
 * NULL. */
void v2_end_objects(struct jbuf *b, const char *cfg, uint32_t used_mask);

#endif
