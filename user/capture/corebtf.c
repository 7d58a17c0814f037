// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/btf.h>
#include "capture/corebtf.h"
#include "lib/hash.h"
#include "lib/hmap.h"
#include "lib/vec.h"

/* libbpf's flavour rule: a name's essential part ends before its last
 * "___" that has a character other than '_' on each side ("X___Y"). One
 * pass, as this is asked of ~40k kernel names. */
static size_t essential_len(const char *name)
{
	size_t i, ess = 0;

	for (i = 0; name[i]; i++)
		if (name[i + 1] == '_' && name[i] != '_' && name[i + 2] == '_' &&
		    name[i + 3] == '_' && name[i + 4] && name[i + 4] != '_')
			ess = i + 1;
	return ess ? ess : i;
}

/* The kinds a relocation is rooted in: a struct's or union's field, an
 * enumerator, a type; named. */
static bool may_be_root(const struct btf_type *t)
{
	switch (btf_kind(t)) {
	case BTF_KIND_INT:
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
	case BTF_KIND_ENUM:
	case BTF_KIND_ENUM64:
	case BTF_KIND_FWD:
	case BTF_KIND_TYPEDEF:
	case BTF_KIND_FLOAT:
		return t->name_off != 0;
	default:
		return false;
	}
}

/* Its name's key in names, or 0 where it has none that CO-RE matches. */
static uint64_t root_key(const struct btf *btf, const struct btf_type *t)
{
	const char *name;

	if (!may_be_root(t) || !(name = btf__name_by_offset(btf, t->name_off)) || !name[0])
		return 0;
	return dft_hash64(name, essential_len(name)) | 1; /* never 0 */
}

int core_btf_names(struct hmap *names, const struct btf *local)
{
	uint32_t n = btf__type_cnt(local);

	for (uint32_t id = 1; id < n; id++) {
		uint64_t key = root_key(local, btf__type_by_id(local, id));

		if (key && hmap_put(names, key, 1))
			return -ENOMEM;
	}
	return 0;
}

/* Bytes of t with what follows it; 0 for a kind this code does not
 * know (a newer kernel's), which is then not copied. */
static size_t type_bytes(const struct btf_type *t)
{
	size_t vlen = btf_vlen(t);

	switch (btf_kind(t)) {
	case BTF_KIND_FWD:
	case BTF_KIND_CONST:
	case BTF_KIND_VOLATILE:
	case BTF_KIND_RESTRICT:
	case BTF_KIND_PTR:
	case BTF_KIND_TYPEDEF:
	case BTF_KIND_FUNC:
	case BTF_KIND_FLOAT:
	case BTF_KIND_TYPE_TAG:
		return sizeof(*t);
	case BTF_KIND_INT:
		return sizeof(*t) + sizeof(__u32);
	case BTF_KIND_ENUM:
		return sizeof(*t) + vlen * sizeof(struct btf_enum);
	case BTF_KIND_ENUM64:
		return sizeof(*t) + vlen * sizeof(struct btf_enum64);
	case BTF_KIND_ARRAY:
		return sizeof(*t) + sizeof(struct btf_array);
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
		return sizeof(*t) + vlen * sizeof(struct btf_member);
	case BTF_KIND_FUNC_PROTO:
		return sizeof(*t) + vlen * sizeof(struct btf_param);
	case BTF_KIND_VAR:
		return sizeof(*t) + sizeof(struct btf_var);
	case BTF_KIND_DATASEC:
		return sizeof(*t) + vlen * sizeof(struct btf_var_secinfo);
	case BTF_KIND_DECL_TAG:
		return sizeof(*t) + sizeof(struct btf_decl_tag);
	default:
		return 0;
	}
}

struct reduce {
	const struct btf *kernel;
	uint32_t n;		/* the kernel's type count, void included */
	uint32_t *new_id;	/* by kernel id: its id here; 0: not here */
	uint32_t *todo, ntodo, todo_cap;
	struct btf_type *copy;	/* a type being read or rewritten */
	uint32_t copy_cap;
	int err;
};

/* Calls fn on each type id t holds in place. A pointer's is not one. */
static void each_held(struct btf_type *t, void (*fn)(struct reduce *, __u32 *),
		      struct reduce *r)
{
	uint32_t vlen = btf_vlen(t);

	switch (btf_kind(t)) {
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
		for (uint32_t i = 0; i < vlen; i++)
			fn(r, &btf_members(t)[i].type);
		break;
	case BTF_KIND_ARRAY:
		fn(r, &btf_array(t)->type);
		fn(r, &btf_array(t)->index_type);
		break;
	case BTF_KIND_FUNC_PROTO:
		fn(r, &t->type);
		for (uint32_t i = 0; i < vlen; i++)
			fn(r, &btf_params(t)[i].type);
		break;
	case BTF_KIND_DATASEC:
		for (uint32_t i = 0; i < vlen; i++)
			fn(r, &btf_var_secinfos(t)[i].type);
		break;
	case BTF_KIND_TYPEDEF:
	case BTF_KIND_CONST:
	case BTF_KIND_VOLATILE:
	case BTF_KIND_RESTRICT:
	case BTF_KIND_TYPE_TAG:
	case BTF_KIND_FUNC:
	case BTF_KIND_VAR:
	case BTF_KIND_DECL_TAG:
		fn(r, &t->type);
		break;
	default:	/* a pointer; INT, ENUM, FWD, FLOAT hold none */
		break;
	}
}

/* The kernel's type id, copied where each_held may rewrite it; NULL
 * (r->err set) where it can't be. */
static struct btf_type *copy_of(struct reduce *r, uint32_t id)
{
	const struct btf_type *t = btf__type_by_id(r->kernel, id);
	size_t bytes = t ? type_bytes(t) : 0;

	if (!bytes) {
		r->err = -EINVAL;
		return NULL;
	}
	if (vec_reserve((void **)&r->copy, &r->copy_cap, bytes, 1)) {
		r->err = -ENOMEM;
		return NULL;
	}
	memcpy(r->copy, t, bytes);
	return r->copy;
}

static void want(struct reduce *r, __u32 *id)
{
	if (*id >= r->n) {	/* before new_id is read at it */
		r->err = -EINVAL;
		return;
	}
	if (!*id || r->new_id[*id])
		return;
	r->new_id[*id] = 1;	/* wanted; numbered once all are known */
	if (VEC_PUSH(r->todo, r->ntodo, r->todo_cap, *id))
		r->err = -ENOMEM;
}

/* Marks the roots names asks for and all they hold in place. */
static void mark(struct reduce *r, const struct hmap *names)
{
	uint64_t dummy;

	for (__u32 id = 1; id < r->n && !r->err; id++) {
		uint64_t key = root_key(r->kernel, btf__type_by_id(r->kernel, id));

		if (key && hmap_get(names, key, &dummy))
			want(r, &id);
	}
	while (r->ntodo && !r->err) {
		struct btf_type *t = copy_of(r, r->todo[--r->ntodo]);

		if (t)
			each_held(t, want, r);
	}
}

static void renumber(struct reduce *r, __u32 *id)
{
	*id = r->new_id[*id];
}

/* Copies the marked types in the kernel's order, renumbered. */
static struct btf *emit(struct reduce *r)
{
	struct btf *out = btf__new_empty();
	uint32_t next = 1;

	if (!out) {
		r->err = -errno;
		return NULL;
	}
	for (uint32_t id = 1; id < r->n; id++)
		if (r->new_id[id])
			r->new_id[id] = next++;
	for (uint32_t id = 1; id < r->n && !r->err; id++) {
		struct btf_type *t;

		if (!r->new_id[id] || !(t = copy_of(r, id)))
			continue;
		each_held(t, renumber, r);
		if (btf_is_ptr(t))
			t->type = 0;
		if (btf__add_type(out, r->kernel, t) != (int)r->new_id[id])
			r->err = -EINVAL;
	}
	/* libbpf would guess it from a type named "long"; there may be none */
	if (!r->err && btf__pointer_size(r->kernel) &&
	    btf__set_pointer_size(out, btf__pointer_size(r->kernel)))
		r->err = -EINVAL;
	if (r->err) {
		btf__free(out);
		return NULL;
	}
	return out;
}

struct btf *core_btf_new(const struct btf *kernel, const struct hmap *names)
{
	struct reduce r = { .kernel = kernel, .n = btf__type_cnt(kernel) };
	struct btf *out = NULL;

	r.new_id = calloc(r.n, sizeof(*r.new_id));
	if (!r.new_id)
		r.err = -ENOMEM;
	if (!r.err)
		mark(&r, names);
	if (!r.err)
		out = emit(&r);
	free(r.new_id);
	free(r.todo);
	free(r.copy);
	if (!out)
		errno = -r.err;
	return out;
}
