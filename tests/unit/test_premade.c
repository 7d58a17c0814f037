// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* capture/premade.h: the object's large preallocated maps made on a
 * thread, each as libbpf would make it; the ring, task storage,
 * libbpf's own maps and the small ones left to libbpf. Needs root. */
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "capture/premade.h"
#include "dftrace.h"
#include "dftrace.skel.h"
#include "check.h"

/* what the kernel says of m's map: its definition as the object has it */
static int as_defined(const struct bpf_map *m)
{
	struct bpf_map_info info = { 0 };
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(bpf_map__fd(m), &info, &len))
		return 0;
	return info.type == bpf_map__type(m) && info.max_entries == bpf_map__max_entries(m) &&
	       info.key_size == bpf_map__key_size(m) && info.value_size == bpf_map__value_size(m) &&
	       info.map_flags == bpf_map__map_flags(m) && !strcmp(info.name, bpf_map__name(m));
}

static void test_made(void)
{
	struct premade p;
	struct dftrace_bpf *skel;
	struct bpf_map *m;
	unsigned int made = 0, right = 0;

	premade_start(&p);
	skel = premade_take(&p);
	CHECK(skel != NULL, "the skeleton comes opened");
	if (!skel)
		return;
	bpf_object__for_each_map(m, skel->obj) {
		if (bpf_map__fd(m) < 0)
			continue;
		made++;
		right += as_defined(m);
	}
	CHECK(made == p.maps && made == right, "%u maps made, each as the object defines it", made);
	CHECK(bpf_map__fd(skel->maps.inflight) >= 0 && bpf_map__fd(skel->maps.fold0) >= 0 &&
	      bpf_map__fd(skel->maps.fold1) >= 0 && bpf_map__fd(skel->maps.lost_names) >= 0 &&
	      bpf_map__fd(skel->maps.positions) >= 0 && bpf_map__fd(skel->maps.lost_by_proc) >= 0,
	      "the large hash maps are made (AIO's in flight, the totals, the lost names)");
	CHECK(bpf_map__fd(skel->maps.events) < 0 && bpf_map__fd(skel->maps.tasks) < 0 &&
	      bpf_map__fd(skel->maps.lost) < 0 && bpf_map__fd(skel->maps.rodata) < 0,
	      "left to libbpf: the ring (sized later), task storage (BTF), a small map, .rodata");
	CHECK(premade_take(&p) == NULL, "taken once");
	premade_free(&p);
	dftrace_bpf__destroy(skel);
}

static void test_untaken(void)
{
	struct premade p, never = { 0 };

	premade_start(&p);
	premade_free(&p);
	premade_free(&p);
	CHECK(p.skel == NULL && !p.started, "an untaken skeleton is destroyed; free twice is safe");
	premade_free(&never);
	CHECK(never.skel == NULL, "free of one never started is safe");
}

int main(void)
{
	test_made();
	test_untaken();
	printf("1..%d\n", check_n);
	return check_failed ? 1 : 0;
}
