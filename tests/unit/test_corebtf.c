// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* capture/corebtf.h: the kernel's types that CO-RE can match ours to.
 * A made-up kernel first, whose every type is known; then this kernel's
 * BTF with the tracer's object, against the kernel's own types. (That
 * the relocations come out the same: tests/corebtf.bats.) Needs
 * /sys/kernel/btf/vmlinux for the second part. */
#include <errno.h>
#include <stdint.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "capture/corebtf.h"
#include "capture/kernelbtf.h"
#include "capture/loader.h"
#include "dftrace.h"
#include "dftrace.skel.h"
#include "lib/clock.h"
#include "lib/hmap.h"
#include "check.h"

static int find(const struct btf *btf, const char *name, int kind)
{
	return btf__find_by_name_kind(btf, name, kind);
}

static const char *name_of(const struct btf *btf, uint32_t id)
{
	return btf__name_by_offset(btf, btf__type_by_id(btf, id)->name_off);
}

/* The made-up kernel:
 *   struct inner { int a; };
 *   struct other { int x; };	only behind a pointer
 *   enum mode { M0, M1 };
 *   typedef struct inner inner_t;
 *   struct outer { inner_t in; struct other *p; int arr[4];
 *                  union { int u1; long u2; }; enum mode m; };
 *   struct thing___v2 { int t; };	flavoured on the kernel's side
 *   struct unrelated { struct other o; };
 *   int spare(void);			a function: never a root */
static struct btf *made_up_kernel(void)
{
	struct btf *k = btf__new_empty();
	int i32 = btf__add_int(k, "int", 4, BTF_INT_SIGNED);
	int i64 = btf__add_int(k, "long", 8, BTF_INT_SIGNED);
	int inner = btf__add_struct(k, "inner", 4);
	int other, mode, tdef, optr, arr, un, outer, thing, unrel, proto;

	btf__add_field(k, "a", i32, 0, 0);
	other = btf__add_struct(k, "other", 4);
	btf__add_field(k, "x", i32, 0, 0);
	mode = btf__add_enum(k, "mode", 4);
	btf__add_enum_value(k, "M0", 0);
	btf__add_enum_value(k, "M1", 1);
	tdef = btf__add_typedef(k, "inner_t", inner);
	optr = btf__add_ptr(k, other);
	arr = btf__add_array(k, i32, i32, 4);
	un = btf__add_union(k, NULL, 8);
	btf__add_field(k, "u1", i32, 0, 0);
	btf__add_field(k, "u2", i64, 0, 0);
	outer = btf__add_struct(k, "outer", 48);
	btf__add_field(k, "in", tdef, 0, 0);
	btf__add_field(k, "p", optr, 64, 0);
	btf__add_field(k, "arr", arr, 128, 0);
	btf__add_field(k, NULL, un, 256, 0);
	btf__add_field(k, "m", mode, 320, 0);
	thing = btf__add_struct(k, "thing___v2", 4);
	btf__add_field(k, "t", i32, 0, 0);
	unrel = btf__add_struct(k, "unrelated", 4);
	btf__add_field(k, "o", other, 0, 0);
	proto = btf__add_func_proto(k, i32);
	btf__add_func(k, "outer", BTF_FUNC_GLOBAL, proto);	/* named as a root is */
	(void)outer, (void)thing, (void)unrel;
	return k;
}

/* Ours: struct outer___mine { int m; }; struct thing { int t; }; */
static struct btf *made_up_local(void)
{
	struct btf *l = btf__new_empty();
	int i32 = btf__add_int(l, "int", 4, BTF_INT_SIGNED);

	btf__add_struct(l, "outer___mine", 4);
	btf__add_field(l, "m", i32, 0, 0);
	btf__add_struct(l, "thing", 4);
	btf__add_field(l, "t", i32, 0, 0);
	return l;
}

static void test_made_up(void)
{
	struct btf *k = made_up_kernel(), *l = made_up_local(), *c;
	const struct btf_type *outer, *t;
	const struct btf_member *m;
	struct hmap names = { 0 };
	int id;

	CHECK(!core_btf_names(&names, l) && names.n == 3,
	      "our names: int, outer (its flavour left off), thing: %zu", names.n);
	c = core_btf_new(k, &names);
	CHECK(c != NULL, "made");
	if (!c)
		goto out;
	/* int, long, inner, enum, typedef, the pointer, the array, the
	 * union, outer, thing___v2 */
	CHECK(btf__type_cnt(c) - 1 == 10, "10 types: the roots and what they hold (%u)",
	      btf__type_cnt(c) - 1);
	CHECK(find(c, "other", BTF_KIND_STRUCT) < 0, "a type only behind a pointer is left out");
	CHECK(find(c, "unrelated", BTF_KIND_STRUCT) < 0, "a type no name of ours asks for, out");
	CHECK(find(c, "outer", BTF_KIND_FUNC) < 0, "a function is no root");
	CHECK(find(c, "thing___v2", BTF_KIND_STRUCT) > 0, "a kernel type's flavour counts too");
	id = find(c, "outer", BTF_KIND_STRUCT);
	outer = id > 0 ? btf__type_by_id(c, id) : NULL;
	CHECK(outer && btf_vlen(outer) == 5 && outer->size == 48, "outer: its 5 members, its size");
	if (!outer)
		goto out;
	m = btf_members(outer);
	t = btf__type_by_id(c, m[0].type);
	CHECK(btf_is_typedef(t) && !strcmp(name_of(c, t->type), "inner"),
	      "a member through a typedef: the struct it names, renumbered");
	t = btf__type_by_id(c, m[1].type);
	CHECK(btf_is_ptr(t) && t->type == 0, "a pointer points at void");
	t = btf__type_by_id(c, m[2].type);
	CHECK(btf_is_array(t) && btf_array(t)->nelems == 4 &&
	      !strcmp(name_of(c, btf_array(t)->type), "int"), "an array: its length, its element");
	t = btf__type_by_id(c, m[3].type);
	CHECK(btf_is_union(t) && btf_vlen(t) == 2 && m[3].name_off == 0 &&
	      btf_member_bit_offset(outer, 3) == 256, "an anonymous union, in place");
	t = btf__type_by_id(c, m[4].type);
	CHECK(btf_is_enum(t) && btf_vlen(t) == 2 && btf_member_bit_offset(outer, 4) == 320,
	      "an enum member, its values");
	CHECK(btf__pointer_size(c) == btf__pointer_size(k), "the kernel's pointer size");
out:
	btf__free(c);
	btf__free(k);
	btf__free(l);
	hmap_free(&names);
}

/* Members of kernel type name, the same in c: names, offsets, and
 * kinds, pointers to void. */
static int same_members(const struct btf *k, const struct btf *c, const char *name)
{
	int ki = find(k, name, BTF_KIND_STRUCT), ci = find(c, name, BTF_KIND_STRUCT);
	const struct btf_type *kt, *ct;

	if (ki <= 0 || ci <= 0)
		return 0;
	kt = btf__type_by_id(k, ki);
	ct = btf__type_by_id(c, ci);
	if (btf_vlen(kt) != btf_vlen(ct) || kt->size != ct->size)
		return 0;
	for (int i = 0; i < btf_vlen(kt); i++) {
		const struct btf_type *km = btf__type_by_id(k, btf_members(kt)[i].type);
		const struct btf_type *cm = btf__type_by_id(c, btf_members(ct)[i].type);

		if (strcmp(btf__name_by_offset(k, btf_members(kt)[i].name_off),
			   btf__name_by_offset(c, btf_members(ct)[i].name_off)) ||
		    btf_member_bit_offset(kt, i) != btf_member_bit_offset(ct, i) ||
		    btf_member_bitfield_size(kt, i) != btf_member_bitfield_size(ct, i) ||
		    btf_kind(km) != btf_kind(cm) || (btf_is_ptr(cm) && cm->type))
			return 0;
	}
	return 1;
}

static void test_this_kernel(void)
{
	struct btf *k = btf__load_vmlinux_btf(), *c = NULL;
	struct dftrace_bpf *skel = loader_open();
	struct hmap names = { 0 };
	uint64_t t0;

	CHECK(k && skel, "this kernel's BTF, the tracer's object");
	if (!k || !skel)
		goto out;
	CHECK(!core_btf_names(&names, bpf_object__btf(skel->obj)) && names.n > 50,
	      "the object's names: %zu", names.n);
	t0 = clock_mono_ns();
	c = core_btf_new(k, &names);
	CHECK(c && btf__type_cnt(c) < btf__type_cnt(k) / 20,
	      "made: %u of the kernel's %u types", c ? btf__type_cnt(c) : 0, btf__type_cnt(k));
	printf("# made in %.2f ms\n", (clock_mono_ns() - t0) / 1e6);
	if (!c)
		goto out;
	CHECK(same_members(k, c, "task_struct") && same_members(k, c, "file") &&
	      same_members(k, c, "fdtable"), "task_struct, file, fdtable: as the kernel's");
out:
	btf__free(c);
	btf__free(k);
	dftrace_bpf__destroy(skel);
	hmap_free(&names);
}

/* capture/kernelbtf.h: the objects' btf_custom_path, through the
 * wrapped btf__parse(). */
static void test_parse_wrap(void)
{
	struct dftrace_bpf *skel;
	struct btf *whole, *a, *b, *c;
	struct kernel_btf_use u;
	uint32_t all;

	kernel_btf_core_free();
	whole = btf__parse(KERNEL_BTF_CORE, NULL);
	all = whole ? btf__type_cnt(whole) : 0;
	CHECK(all > 1000, "no names yet: the kernel's whole BTF (%u types)", all);
	btf__free(whole);
	skel = loader_open();	/* says its names */
	kernel_btf_share();
	a = btf__parse(KERNEL_BTF_CORE, NULL);
	b = btf__parse(KERNEL_BTF_CORE, NULL);
	CHECK(a && a == b && btf__type_cnt(a) < all / 20, "the names said: one made, for both (%u)",
	      a ? btf__type_cnt(a) : 0);
	btf__free(a);
	CHECK(find(b, "task_struct", BTF_KIND_STRUCT) > 0, "freed by its users, it stays");
	u = kernel_btf_used();
	CHECK(u.core_types == btf__type_cnt(a) - 1 && u.kernel_types == all - 1 && u.parses == 1,
	      "-v's counts: %u of %u types, from the one shared parse", u.core_types, u.kernel_types);
	kernel_btf_unshare();
	c = btf__parse(KERNEL_BTF_CORE, NULL);
	CHECK(c == a, "after start-up, kept for the loads at first use");
	kernel_btf_core_free();
	kernel_btf_core_free();
	whole = btf__parse(KERNEL_BTF_CORE, NULL);
	CHECK(whole && btf__type_cnt(whole) == all, "freed twice: safe; the names gone with it");
	btf__free(whole);
	whole = btf__parse("/sys/kernel/btf/vmlinux", NULL);
	CHECK(whole && btf__type_cnt(whole) == all, "any other path: libbpf's own parse");
	btf__free(whole);
	dftrace_bpf__destroy(skel);
}

int main(void)
{
	test_made_up();
	test_this_kernel();
	test_parse_wrap();
	kernel_btf_core_free();
	return check_failed ? 1 : 0;
}
