// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdlib.h>
#include <string.h>
#include "analyze/fhash.h"
#include "lib/hash.h"

/* A hash's text: a string's contents, or a number as written, so that
 * "3e8" in an FH line and in an event match however each is quoted. */
static uint64_t token_key(struct span v)
{
	struct span s;

	if (js_string(v, &s))
		v = s;
	return dft_hash64(v.p, v.len);
}

void fh_table_add(struct fh_table *t, const struct rec *e)
{
	struct span name, value;
	struct fh_path *p;

	if (!e->args.len || !js_get(e->args, "name", &name) ||
	    !js_get(e->args, "value", &value) || !js_string(name, &name))
		return;
	p = malloc(sizeof(*p) + name.len);
	if (!p)
		return;
	p->len = name.len;
	memcpy(p->text, name.p, name.len);
	if (hmap_add(&t->paths, token_key(value), (uintptr_t)p) != 1)
		free(p);
}

const struct fh_path *fh_table_get(const struct fh_table *t, struct span fhash)
{
	return hmap_get_ptr(&t->paths, token_key(fhash));
}

void fh_table_free(struct fh_table *t)
{
	hmap_free_ptrs(&t->paths);
}
