// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Stand-in libannotated.so: an annotated library whose one function,
 * phase_preprocess() (as usdt/examples/libphase.so's), fires every probe
 * of include/dftrace/usdt.h, each with arguments of its own, and one of
 * another provider: a file of many probes and argument specs, which tests
 * load in many copies (tests/workloads/libcopies.c).
 */
#include <fcntl.h>
#include <unistd.h>
#include <dftrace/usdt.h>

/* A probe of another provider (a library may carry another tool's too),
 * named and argued as dftrace's regions: not ours, never attached. Its
 * site's address in other_probe_site: a uprobe there would show as a
 * breakpoint (x86's int3) in place of its nop. */
#define OTHER_PROBE()                                                         \
	__asm__ __volatile__("990:	nop\n"                                 \
			     "	.pushsection .data.rel.ro,\"aw\"\n"         \
			     "	.balign 8\n"                                  \
			     "other_probe_site:	.8byte 990b\n"              \
			     "	.popsection\n"                                \
			     "	.pushsection .note.stapsdt,\"?\",\"note\"\n" \
			     "	.balign 4\n"                                  \
			     "	.4byte 992f-991f, 994f-993f, 3\n"             \
			     "991:	.asciz \"stapsdt\"\n"                       \
			     "992:	.balign 4\n"                              \
			     "993:	.8byte 990b, 0, 0\n"                      \
			     "	.asciz \"other\"\n"                          \
			     "	.asciz \"regions\"\n"                        \
			     "	.asciz \"8@%rdi 8@%rsi -8@%rdx\"\n"          \
			     "994:	.balign 4\n"                              \
			     "	.popsection\n")

__attribute__((visibility("default"), noinline)) long phase_preprocess(const char *path);
__attribute__((visibility("default"))) const unsigned char *annotated_other_site(void);
__attribute__((visibility("hidden"))) extern const unsigned char *const other_probe_site;

/* The instruction at the other provider's probe. */
const unsigned char *annotated_other_site(void)
{
	return other_probe_site;
}

long phase_preprocess(const char *path)
{
	char buf[4096];
	long total = 0;
	ssize_t n;
	int fd;

	DFT_USDT_SET_STR("source", path);
	DFT_USDT_START_META("data", "load");
	DFT_USDT_REGION_BEGIN("data", "preprocess");
	DFT_USDT_ARG_STR("path", path);
	OTHER_PROBE();
	fd = open(path, O_RDONLY);
	while (fd >= 0 && (n = read(fd, buf, sizeof(buf))) > 0)
		total += n;
	if (fd >= 0)
		close(fd);
	DFT_USDT_ARG_INT("bytes", total);
	DFT_USDT_REGION_END("data", "preprocess");
	DFT_USDT_STOP_META("data", "load");
	DFT_USDT_SET_INT("files", 1);
	DFT_USDT_CLEAR("source");
	return fd < 0 ? -1 : total;
}
