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
 * their time; the kernel's types for CO-RE, made for them, of how many
 * (-v; tests). */
struct kernel_btf_use {
	unsigned int loads, parses;
	uint64_t parse_ns;
	unsigned int core_types, kernel_types;
	uint64_t core_ns;
};

struct btf;
struct btf_ext;

/* libbpf's own, under the link's --wrap: the parse and free sharing
 * stands in front of */
struct btf *__real_btf__load_vmlinux_btf(void);
void __real_btf__free(struct btf *btf);
struct btf *__real_btf__parse(const char *path, struct btf_ext **ext);

/*
 * The kernel's types that CO-RE can match ours to (capture/corebtf.h),
 * as the BTF an object relocates against: an object opened with this as
 * its btf_custom_path gets them from btf__parse() (wrapped too), made at
 * the first such parse from the kernel's BTF (shared, where it is) and
 * kept for the loads after start-up, until kernel_btf_core_free(). The
 * names come from kernel_btf_core_names(), given the object's BTF after
 * its open. Where they can't be made, libbpf gets the kernel's BTF.
 */
#define KERNEL_BTF_CORE "dftrace-bpf: the kernel's types for CO-RE"
void kernel_btf_core_names(const struct btf *local);
/* Safe to repeat, and with nothing made. */
void kernel_btf_core_free(void);

void kernel_btf_share(void);
struct kernel_btf_use kernel_btf_used(void);
/* Frees the one parse; safe to repeat, and without a share. */
void kernel_btf_unshare(void);

#endif
