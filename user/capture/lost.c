// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "capture/lost.h"
#include "dftrace.h"

void lost_init(struct lost *l, int total_fd, int by_proc_fd)
{
	int n = libbpf_num_possible_cpus();

	l->total_fd = total_fd;
	l->by_proc_fd = by_proc_fd;
	l->ncpus = n > 0 ? n : 1;
}

void lost_read(const struct lost *l, uint64_t *lost)
{
	uint64_t *vals = calloc(l->ncpus, sizeof(*vals));

	for (uint32_t k = 0; k < DFT_LOST_SLOTS; k++) {
		lost[k] = 0;
		if (!vals || bpf_map_lookup_elem(l->total_fd, &k, vals))
			continue;
		for (int c = 0; c < l->ncpus; c++)
			lost[k] += vals[c];
	}
	free(vals);
}

void lost_read_process(const struct lost *l, uint32_t pid, uint64_t *lost,
		       size_t nslots, bool consume)
{
	struct dft_lost_key key, next, mine[DFT_LOST_SLOTS];
	size_t nmine = 0;
	uint64_t n;
	bool first = true;

	memset(lost, 0, nslots * sizeof(*lost));
	if (l->by_proc_fd < 0)
		return;
	while (!bpf_map_get_next_key(l->by_proc_fd, first ? NULL : &key, &next)) {
		first = false;
		key = next;
		if (key.tgid != pid || key.slot >= nslots || nmine == DFT_LOST_SLOTS)
			continue;
		if (!bpf_map_lookup_elem(l->by_proc_fd, &key, &n))
			lost[key.slot] += n;
		mine[nmine++] = key;
	}
	for (size_t i = 0; consume && i < nmine; i++)
		bpf_map_delete_elem(l->by_proc_fd, &mine[i]);
}

void lost_add(const struct lost *l, uint32_t pid, uint32_t slot, uint64_t n)
{
	uint64_t *vals = calloc(l->ncpus, sizeof(*vals)), mine = 0;
	struct dft_lost_key key = { .tgid = pid, .slot = slot };

	if (!n || !vals)
		goto done;
	/* the first CPU's share: the sum is what is read */
	if (!bpf_map_lookup_elem(l->total_fd, &slot, vals)) {
		vals[0] += n;
		bpf_map_update_elem(l->total_fd, &slot, vals, BPF_ANY);
	}
	if (l->by_proc_fd < 0)
		goto done;
	bpf_map_lookup_elem(l->by_proc_fd, &key, &mine);
	mine += n;
	bpf_map_update_elem(l->by_proc_fd, &key, &mine, BPF_ANY);
done:
	free(vals);
}

static void read_for_files(void *ctx, uint32_t pid, uint64_t *lost,
			   size_t nslots, bool consume)
{
	lost_read_process(ctx, pid, lost, nslots, consume);
}

struct loss_reader lost_reader(struct lost *l)
{
	return (struct loss_reader){ read_for_files, l };
}
