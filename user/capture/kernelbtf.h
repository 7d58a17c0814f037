/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The kernel's BTF, parsed once for all of start-up. libbpf parses
 * /sys/kernel/btf/vmlinux (5.5 MB on Debian's 6.x) for each object it
 * loads and frees it after; at start the tracer loads three (the main
 * instance and the halves) after its own feature probe, four parses,
 * each a copy of the file into fresh pages twice over. Between share and
 * unshare every btf__load_vmlinux_btf() in the program, libbpf's own
 * included (the link wraps it: Makefile, BTF_ONCE), returns one parse,
 * and btf__free() of it waits for unshare. libbpf only reads it, so the
 * halves' threads may use it at once. The one parse reads the file into
 * huge pages where the kernel gives them.
 */
#ifndef CAPTURE_KERNELBTF_H
#define CAPTURE_KERNELBTF_H

#include <stdint.h>

/* Since the last share: the loads asked, the parses made for them and
 * their time (-v; tests). */
struct kernel_btf_use {
	unsigned int loads, parses;
	uint64_t parse_ns;
};

struct btf;

/* libbpf's own, under the link's --wrap: the parse and free sharing
 * stands in front of */
struct btf *__real_btf__load_vmlinux_btf(void);
void __real_btf__free(struct btf *btf);

void kernel_btf_share(void);
struct kernel_btf_use kernel_btf_used(void);
/* Frees the one parse; safe to repeat, and without a share. */
void kernel_btf_unshare(void);

#endif
