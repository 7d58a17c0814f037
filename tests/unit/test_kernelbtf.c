// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* capture/kernelbtf.h: while shared, every load of the kernel's BTF,
 * libbpf's own (through the link's --wrap) and from threads at once,
 * is one parse, whose frees wait for unshare; outside, each load is a
 * parse of its own. Needs /sys/kernel/btf/vmlinux. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "capture/kernelbtf.h"
#include "check.h"

#define THREADS 4

static void *load_one(void *out)
{
	*(struct btf **)out = btf__load_vmlinux_btf();
	return NULL;
}

/* a type every kernel with BTF has, looked up in btf */
static int task_struct_in(const struct btf *btf)
{
	return btf__find_by_name_kind(btf, "task_struct", BTF_KIND_STRUCT);
}

static void test_shared(void)
{
	struct btf *got[THREADS] = { 0 }, *again;
	pthread_t t[THREADS];
	struct kernel_btf_use u;
	int same = 1, id;

	kernel_btf_share();
	for (int i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, load_one, &got[i]);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < THREADS; i++)
		same &= got[i] && got[i] == got[0];
	CHECK(same, "%d threads loading at once get one parse", THREADS);
	/* libbpf's own load, in libbpf.c, is wrapped too */
	id = libbpf_find_vmlinux_btf_id("sched_switch", BPF_TRACE_RAW_TP);
	CHECK(id > 0, "libbpf's own lookup works on the shared parse (id %d)", id);
	btf__free(got[0]);
	btf__free(got[1]);
	again = btf__load_vmlinux_btf();
	CHECK(again == got[0] && task_struct_in(again) > 0,
	      "freed by its users, the parse stays for the next load");
	u = kernel_btf_used();
	CHECK(u.loads == THREADS + 2 && u.parses == 1 && u.parse_ns > 0,
	      "%u loads (libbpf's among them), one parse (%.1f ms)", u.loads, u.parse_ns / 1e6);
	kernel_btf_unshare();
	kernel_btf_unshare();
	u = kernel_btf_used();
	CHECK(u.loads == THREADS + 2 && u.parses == 1, "unshare twice: safe, the counts kept for -v");
}

static int same_bytes(const struct btf *a, const struct btf *b)
{
	__u32 na, nb;
	const void *ra = btf__raw_data(a, &na), *rb = btf__raw_data(b, &nb);

	return ra && rb && na == nb && !memcmp(ra, rb, na);
}

static void test_unshared(void)
{
	struct btf *a = btf__load_vmlinux_btf(), *b = btf__load_vmlinux_btf();
	struct kernel_btf_use u;

	CHECK(a && b && a != b && task_struct_in(a) > 0 && task_struct_in(b) > 0,
	      "unshared, each load is a parse of its own");
	btf__free(a);
	btf__free(b);
	kernel_btf_share();
	u = kernel_btf_used();
	CHECK(!u.loads && !u.parses && !u.parse_ns, "a new share counts from none");
	a = btf__load_vmlinux_btf();
	b = __real_btf__load_vmlinux_btf();
	CHECK(a && b && btf__type_cnt(a) == btf__type_cnt(b) && same_bytes(a, b),
	      "the shared parse (read into huge pages) is libbpf's own, byte for byte (%u types)",
	      a ? btf__type_cnt(a) : 0);
	__real_btf__free(b);
	kernel_btf_unshare();
	b = btf__load_vmlinux_btf();
	u = kernel_btf_used();
	CHECK(a && b && a != b && u.loads == 1 && u.parses == 1,
	      "after unshare, a load parses again (the shared one freed), uncounted");
	btf__free(b);
}

/* Resident KiB of this process. */
static long rss_kib(void)
{
	long pages = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "re");

	if (f && fscanf(f, "%ld %ld", &pages, &resident) != 2)
		resident = 0;
	if (f)
		fclose(f);
	return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

/* The shared parse's copy is cut from a heap top glibc then keeps
 * (kernelbtf.c, heap_in_huge_pages()): unshare gives it back. */
static void test_memory_back(void)
{
	long before = rss_kib(), parsed, after;
	struct btf *btf;

	kernel_btf_share();
	btf = btf__load_vmlinux_btf();
	parsed = rss_kib();
	btf__free(btf);
	kernel_btf_unshare();
	after = rss_kib();
	CHECK(parsed - before > 4096 && after - before < 1024,
	      "the parse's memory back at unshare: %ld KiB, %ld parsed, %ld after", before,
	      parsed, after);
}

int main(void)
{
	test_memory_back();	/* first: the heap as at a start */
	test_shared();
	test_unshared();
	printf("1..%d\n", check_n);
	return check_failed ? 1 : 0;
}
