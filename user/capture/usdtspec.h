/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A USDT probe's argument specs ("8@%rdi -4@-20(%rbp) 8@$5", from its
 * stapsdt note) as the kernel side reads them: libbpf's struct
 * __bpf_usdt_spec in its map __bpf_usdt_specs (bpf/usdt.bpf.h, which
 * bpf/usdtargs.bpf.h reads too), with the probe's cookie in it. A uprobe
 * carries its spec's index in the map as its cookie.
 *
 * The specs are ours to fill, not libbpf's USDT manager's: it keeps the
 * indexes of a file's specs until its links are destroyed one by one,
 * and this tracer releases links from other threads (capture/uprobes.h).
 * Identical specs (every copy of a library's) share an index, counted.
 */
#ifndef CAPTURE_USDTSPEC_H
#define CAPTURE_USDTSPEC_H

#include <stdbool.h>
#include <stdint.h>
#include "lib/hmap.h"

#define USDT_SPEC_ARGS 12

/* struct __bpf_usdt_arg_spec and struct __bpf_usdt_spec, libbpf 1.1's
 * (the size is checked against the map's at start). */
struct usdt_arg {
	uint64_t val_off;	/* a constant, or a dereference's offset */
	int type;		/* enum usdt_arg_type */
	short reg_off;		/* the register's offset in struct pt_regs */
	bool is_signed;
	char bitshift;		/* 64 less the argument's bits */
};

struct usdt_spec {
	struct usdt_arg args[USDT_SPEC_ARGS];
	uint64_t cookie;
	short nargs;
};

enum usdt_arg_type { USDT_ARG_CONST, USDT_ARG_REG, USDT_ARG_REG_DEREF };

/* A note's arguments (specs, space-separated) with the probe's cookie:
 * false for a form not known here (a symbol, an indexed address, a
 * register of another architecture), or more than USDT_SPEC_ARGS. */
bool usdt_spec_parse(const char *specs, uint64_t cookie, struct usdt_spec *out);

/* The specs in the map, by content. */
struct usdt_specs {
	int map_fd;
	uint32_t max;		/* the map's entries */
	struct hmap by_content;	/* hash of a spec -> its index */
	uint32_t *refs;		/* by index: its users */
	uint64_t *hashes;	/* by index: its spec's hash */
	uint32_t *free_ids;	/* indexes released, to use again */
	uint32_t nfree, next;	/* next: the first never used */
};

/* Over the map: false if its values are not struct usdt_spec. */
bool usdt_specs_init(struct usdt_specs *p, int map_fd, uint32_t max, uint32_t value_size);
/* The index of s, written to the map where it is new: 0, -ENOSPC when
 * every index is taken, or -errno. */
int usdt_specs_get(struct usdt_specs *p, const struct usdt_spec *s, uint32_t *id);
/* One user of id fewer: at none, the index is free again. Only once no
 * uprobe carrying it is left (its links closed). */
void usdt_specs_put(struct usdt_specs *p, uint32_t id);
/* How many indexes are taken. */
uint32_t usdt_specs_used(const struct usdt_specs *p);
void usdt_specs_free(struct usdt_specs *p);

#endif
