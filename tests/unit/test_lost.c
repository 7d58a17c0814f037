// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The kernel's loss counters as user space sums them (capture/lost.c),
 * over a real per-CPU array: each CPU's share planted, the sums known. */
#include <errno.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "capture/lost.h"
#include "check.h"
#include "dftrace.h"

/* CPU c's count in slot k */
static uint64_t planted(uint32_t k, int c)
{
	return (k + 1) * 1000ull + (uint64_t)c * 7;
}

static const uint32_t slots[] = { 0, 7, DFT_NR_MAX, DFT_LOST_SLOTS - 1 };

static int plant(int fd, int ncpus)
{
	uint64_t vals[ncpus];

	for (size_t i = 0; i < sizeof(slots) / sizeof(slots[0]); i++) {
		for (int c = 0; c < ncpus; c++)
			vals[c] = planted(slots[i], c);
		if (bpf_map_update_elem(fd, &slots[i], vals, BPF_ANY))
			return -errno;
	}
	return 0;
}

static uint64_t want(uint32_t k, int ncpus)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < sizeof(slots) / sizeof(slots[0]); i++)
		for (int c = 0; slots[i] == k && c < ncpus; c++)
			sum += planted(k, c);
	return sum;
}

static void test_sums(void)
{
	int fd = bpf_map_create(BPF_MAP_TYPE_PERCPU_ARRAY, NULL, 4, 8, DFT_LOST_SLOTS, NULL);
	int ncpus = libbpf_num_possible_cpus();
	uint64_t lost[DFT_LOST_SLOTS];
	struct lost l;
	uint32_t wrong = 0;

	if (fd < 0 || ncpus <= 0) {
		CHECK(1, "# skip: no BPF map here (%s)", strerror(errno));
		return;
	}
	CHECK(!plant(fd, ncpus), "counts planted on %d CPUs", ncpus);
	lost_init(&l, fd, -1);
	lost_read(&l, lost);
	for (uint32_t k = 0; k < DFT_LOST_SLOTS; k++)
		wrong += lost[k] != want(k, ncpus);
	CHECK(!wrong, "every slot the sum of its CPUs' counts (%u wrong; slot 7: %llu, want %llu)",
	      wrong, (unsigned long long)lost[7], (unsigned long long)want(7, ncpus));
	/* a loss user space made itself: on the first CPU's share */
	lost_add(&l, 42, 7, 5);
	lost_read(&l, lost);
	CHECK(lost[7] == want(7, ncpus) + 5 && lost[0] == want(0, ncpus), "lost_add's 5 in slot 7 alone");
	close(fd);
}

/* A descriptor that is no map: every count 0, as before any loss. */
static void test_no_map(void)
{
	uint64_t lost[DFT_LOST_SLOTS];
	struct lost l;
	uint64_t sum = 0;

	lost_init(&l, -1, -1);
	memset(lost, 0xff, sizeof(lost));
	lost_read(&l, lost);
	for (uint32_t k = 0; k < DFT_LOST_SLOTS; k++)
		sum += lost[k];
	CHECK(sum == 0, "no map: every slot 0");
}

int main(void)
{
	test_sums();
	test_no_map();
	return check_done();
}
