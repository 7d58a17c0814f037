/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The kernel's types that CO-RE can match ours to, as a BTF of their
 * own. For each type a relocation names, libbpf walks all of the BTF it
 * relocates against for the types of the same name (~130k types in
 * Debian's 6.x, ~0.8 ms a walk here), once for each object: at start
 * 57 walks for the three instances, ~45 ms of CPU, 11 ms of it before
 * the halves can begin. Given to libbpf in the kernel's stead
 * (capture/kernelbtf.h), this BTF of a few thousand types makes each
 * walk short and the relocations the same:
 * - it holds every kernel type whose name, its flavour ("___x") left
 *   off, is one of our types' names: every candidate libbpf would find;
 * - and everything those hold in place (members, array elements,
 *   typedefs, modifiers), which a relocation's access walks through;
 * - but a pointer in it points at void: a field's relocation never looks
 *   through one, it only asks that both sides be pointers.
 * A relocation by type would look through pointers and would get these
 * types' numbers, not the kernel's: the objects have none (the kfuncs'
 * type ids come in kshape, bpf/dftrace.h; tests/corebtf.bats compares
 * every relocation against the kernel's whole BTF).
 */
#ifndef CAPTURE_COREBTF_H
#define CAPTURE_COREBTF_H

#include <stdint.h>

struct btf;
struct hmap;

/* The names CO-RE matches local's types by, flavours left off, added
 * to names (keyed by their hash). 0, or -ENOMEM. */
int core_btf_names(struct hmap *names, const struct btf *local);

/* A new BTF of kernel's types whose names are in names, with what they
 * hold in place; NULL (errno set) where it can't be made. */
struct btf *core_btf_new(const struct btf *kernel, const struct hmap *names);

#endif
