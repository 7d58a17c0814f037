// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
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

/* A slot's per-CPU counts, added to *into. */
static void add_cpus(const struct lost *l, uint64_t *into, const uint64_t *per_cpu)
{
	for (int c = 0; c < l->ncpus; c++)
		*into += per_cpu[c];
}

/* Slot by slot: a kernel without batched lookups (before 5.6). */
static void read_each(const struct lost *l, uint64_t *lost, uint64_t *vals)
{
	for (uint32_t k = 0; k < DFT_LOST_SLOTS; k++)
		if (!bpf_map_lookup_elem(l->total_fd, &k, vals))
			add_cpus(l, &lost[k], vals);
}

/* Every slot in one call, not one each (531: a tick's worth of
 * syscalls, each through the tracer's own hooks). */
void lost_read(const struct lost *l, uint64_t *lost)
{
	uint64_t *vals = calloc((size_t)l->ncpus * DFT_LOST_SLOTS, sizeof(*vals));
	uint32_t keys[DFT_LOST_SLOTS], count = DFT_LOST_SLOTS, next;
	LIBBPF_OPTS(bpf_map_batch_opts, o);

	memset(lost, 0, DFT_LOST_SLOTS * sizeof(*lost));
	if (!vals)
		return;
	/* ENOENT: all read, the array's end reached */
	if (bpf_map_lookup_batch(l->total_fd, NULL, &next, keys, vals, &count, &o) &&
	    errno != ENOENT)
		read_each(l, lost, vals);
	else
		for (uint32_t i = 0; i < count && i < DFT_LOST_SLOTS; i++)
			if (keys[i] < DFT_LOST_SLOTS)
				add_cpus(l, &lost[keys[i]], vals + (size_t)i * l->ncpus);
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
