// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <time.h>
#include <bpf/bpf.h>
#include "capture/attach.h"
#include "capture/folds.h"
#include "dftrace.skel.h"

void folds_init(struct folds *f, struct dftrace_bpf *skel, uint64_t interval_ns)
{
	f->map_fd[0] = bpf_map__fd(skel->maps.fold0);
	f->map_fd[1] = bpf_map__fd(skel->maps.fold1);
	f->names_fd = bpf_map__fd(skel->maps.lost_names);
	f->tasks_fd = bpf_map__fd(skel->maps.tasks);
	f->gen = &skel->bss->fold_gen;
	f->made = &skel->bss->fold_made;
	f->interval_ns = interval_ns;
	f->next_ns = 0;
}

union drain_key {
	struct dft_fold_key fold;
	struct dft_name_key name;
};

union drain_val {
	struct dft_fold fold;
	char path[DFT_PATH_MAX];
};

/* Every entry of a map, taken out of it and handed to take. */
static void drain(int fd, struct trace *t,
		  void (*take)(struct trace *t, const union drain_key *k, const union drain_val *v))
{
	union drain_key key, next;
	union drain_val val;
	int more = bpf_map_get_next_key(fd, NULL, &next) == 0;

	while (more) {
		key = next;
		more = bpf_map_get_next_key(fd, &key, &next) == 0;
		if (bpf_map_lookup_and_delete_elem(fd, &key, &val) == 0)
			take(t, &key, &val);
	}
}

static void take_fold(struct trace *t, const union drain_key *k, const union drain_val *v)
{
	trace_fold(t, &k->fold, &v->fold);
}

static void take_name(struct trace *t, const union drain_key *k, const union drain_val *v)
{
	trace_name_file(t, k->name.tgid, k->name.dev, k->name.ino, v->path, sizeof(v->path));
}

void folds_tick(struct folds *f, struct trace *t, uint64_t now_ns)
{
	uint32_t old = *f->gen & 1;
	struct timespec grace = { 0, 1000000 };

	if (now_ns < f->next_ns)
		return;
	f->next_ns = now_ns + f->interval_ns;
	/* cleared first: a total made meanwhile sets it again */
	*(volatile uint32_t *)f->made = 0;
	*(volatile uint32_t *)f->gen = old ^ 1;
	/* a hook that read the old number is done within microseconds */
	nanosleep(&grace, NULL);
	/* names first: the totals may charge those files */
	drain(f->names_fd, t, take_name);
	drain(f->map_fd[old], t, take_fold);
	trace_write_folds(t);
}

bool folds_lost_name(void *ctx, const struct dft_name_key *k, char *path, size_t size)
{
	struct folds *f = ctx;

	return size >= DFT_PATH_MAX &&
	       bpf_map_lookup_and_delete_elem(f->names_fd, k, path) == 0;
}

void folds_finish(struct folds *f, struct trace *t)
{
	const struct model *m = trace_model(t);
	struct dft_task st;
	size_t it = 0;
	uint64_t tid, v;

	drain(f->names_fd, t, take_name);
	drain(f->map_fd[0], t, take_fold);
	drain(f->map_fd[1], t, take_fold);
	/* live threads: the calls they kept to send in a batch (their last
	 * records), and what they added to a total since its last flush */
	while (hmap_next(&m->threads, &it, &tid, &v)) {
		if (attach_read_task(f->tasks_fd, tid, &st))
			continue;
		if (st.nbatch)
			trace_handle_record(t, st.batch, (st.nbatch < DFT_IO_BATCH ?
							  st.nbatch : DFT_IO_BATCH) * sizeof(struct dft_io));
		if (st.acc.used)
			trace_fold(t, &st.acc.key, &st.acc.fold);
	}
	trace_write_folds(t);
}
