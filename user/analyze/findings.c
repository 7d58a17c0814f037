// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The rules of analyze/findings.h, fed event by event. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "analyze/events.h"
#include "analyze/findings.h"
#include "analyze/overlap.h"
#include "lib/hash.h"
#include "lib/units.h"
#include "lib/vec.h"
#include "read/jscan.h"

static const char *const rule_names[RULE__COUNT] = {
	[RULE_SMALL_IO] = "small_io",
	[RULE_RANDOM_ACCESS] = "random_access",
	[RULE_METADATA_HEAVY] = "metadata_heavy",
	[RULE_CHECKPOINT_BLOCKING] = "checkpoint_blocking",
	[RULE_UNOVERLAPPED_IO] = "unoverlapped_io",
	[RULE_REPEATED_READS] = "repeated_reads",
	[RULE_INPUT_BOUND] = "input_bound",
	[RULE_RANK_IMBALANCE] = "rank_imbalance",
	[RULE_PAGE_CACHE_MISSES] = "page_cache_misses",
	[RULE_GPU_WAITS_ON_IO] = "gpu_waits_on_io",
};

static const char *const advice[RULE__COUNT] = {
	[RULE_SMALL_IO] = "read and write in larger blocks (1 MiB or more: a bigger "
			  "buffer, batched samples), or pack small files into one",
	[RULE_RANDOM_ACCESS] = "read in file order (sort the sample indices within a "
			       "shuffle buffer), or keep the data in a format made for "
			       "random reads (a record file with an index)",
	[RULE_METADATA_HEAVY] = "open each file once and keep it open, list directories "
				"once, or pack many small files into a few large ones",
	[RULE_CHECKPOINT_BLOCKING] = "sync less often (once for many files, not each), "
				     "or write and sync from another thread or process "
				     "(checkpoints: torch.distributed.checkpoint's async_save)",
	[RULE_UNOVERLAPPED_IO] = "load ahead while computing (more data-loader workers, "
				 "prefetching, pinned-memory copies on a side stream) so that "
				 "I/O runs under compute",
	[RULE_REPEATED_READS] = "keep what is read again in memory (a cache of decoded "
				"samples, a larger page cache share), or read each range once",
	[RULE_INPUT_BOUND] = "feed the steps faster: more data-loader workers and "
			     "prefetching, lighter decoding, faster storage for the data",
	[RULE_RANK_IMBALANCE] = "see what the rank did in each step (summary --by rank,step); "
				"give its data a fair share (shard sizes, a file system's hot "
				"spot, its node's storage), or check what else that node runs",
	[RULE_GPU_WAITS_ON_IO] = "load the next batch while the GPU runs this one (data-loader "
				 "workers, prefetching, pinned-memory copies on a side stream), "
				 "and synchronize only when the result is needed",
	[RULE_PAGE_CACHE_MISSES] = "let the kernel read ahead (no MADV_RANDOM; MADV_SEQUENTIAL "
				   "or MADV_WILLNEED before the pass), read the file in large "
				   "blocks instead of faulting it in, or keep it cached",
};

const char *finding_rule_name(enum finding_rule r)
{
	return r < RULE__COUNT ? rule_names[r] : "?";
}

const char *finding_advice(enum finding_rule r)
{
	return r < RULE__COUNT ? advice[r] : "";
}

/* Calls on names and directories, not on data: ours and DFTracer's. */
static bool is_metadata(struct span name)
{
	static const char *const names[] = {
		"open", "open64", "openat", "creat", "close", "close_range", "stat",
		"lstat", "fstat", "fstatat", "statx", "xstat", "xstat64", "lxstat",
		"lxstat64", "fxstat", "fxstat64", "access", "faccessat", "getdents",
		"opendir", "readdir", "closedir", "mkdir", "mkdirat", "rmdir", "unlink",
		"unlinkat", "rename", "renameat", "readlink", "truncate",
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (span_eq(name, names[i], strlen(names[i])))
			return true;
	return false;
}

/* Calls that wait for written data to reach the device. */
static bool is_sync(struct span name)
{
	return SPAN_IS(name, "fsync") || SPAN_IS(name, "fdatasync") || SPAN_IS(name, "msync") ||
	       SPAN_IS(name, "sync_file_range") || SPAN_IS(name, "syncfs") || SPAN_IS(name, "sync");
}

void findings_init(struct findings *f, double min_share)
{
	*f = (struct findings){ .min_share = min_share };
}

/* The key of name (n bytes, unescaped) in m, made if new; NULL past the
 * bound or out of memory. Equal hashes of different names try the next
 * hash. */
static struct finding_key *key_of(struct findings *f, struct hmap *m, const char *buf,
				  size_t n)
{
	uint64_t h = dft_hash64(buf, n);
	struct finding_key *k;

	for (; (k = hmap_get_ptr(m, h)); h++)
		if (strlen(k->name) == n && !memcmp(k->name, buf, n))
			return k;
	if (m->n >= FINDINGS_KEYS) {
		f->dropped++;
		return NULL;
	}
	k = calloc(1, sizeof(*k));
	if (!k || !(k->name = strndup(buf, n)) || hmap_put_ptr(m, h, k)) {
		if (k)
			free(k->name);
		free(k);
		f->err = -ENOMEM;
		return NULL;
	}
	k->id = ++f->keys;
	return k;
}

/* A positioned call that does not start where the process's previous
 * one on the file ended. */
static bool jumps(struct findings *f, uint16_t input, const struct ev *e, int64_t bytes)
{
	uint64_t k = dft_hash64(e->file.p, e->file.len) ^
		     ((uint64_t)input << 48 | (uint64_t)e->pid) * 0x9e3779b97f4a7c15ull;
	uint64_t was;
	bool seen = hmap_get(&f->next_off, k, &was);

	if (hmap_put(&f->next_off, k, (uint64_t)(e->offset + (bytes > 0 ? bytes : 0)) + 1))
		f->err = -ENOMEM;
	return seen && was - 1 != (uint64_t)e->offset;
}

static void add_data(struct findings *f, uint16_t input, const struct ev *e,
		     struct finding_key *file, struct finding_key *phase, int64_t dur)
{
	int64_t each = e->bytes / e->calls;

	phase->data_calls += e->calls;
	units_add(&phase->data_ns, dur);
	if (e->bytes_kind == SC_BYTES_WRITE) {
		phase->write_calls += e->calls;
		units_add(&phase->write_ns, dur);
	}
	if (!file)
		return;
	file->data_calls += e->calls;
	units_add(&file->data_ns, dur);
	if (each < FINDINGS_SMALL_BYTES) {
		file->small_calls += e->calls;
		units_add(&file->small_ns, dur);
		units_add(&file->small_bytes, e->bytes);
	}
	if (SPAN_IS(e->name, "mmap_read")) {
		file->map_runs += e->calls;
		if (e->misses > 0) {
			file->miss_runs += e->calls;
			units_add(&file->miss_ns, dur);
			units_add(&file->miss_bytes, e->bytes);
			units_add(&file->misses, e->misses);
		}
	}
	if (e->offset < 0 || e->calls != 1)
		return;
	file->pos_calls++;
	if (jumps(f, input, e, e->bytes)) {
		file->jumps++;
		units_add(&file->jump_ns, dur);
		units_add(&file->jump_bytes, e->bytes);
	}
}

/* A process with compute regions, named for its findings once. */
static void name_process(struct findings *f, const struct ev_input *in, uint16_t input,
			 uint32_t pid)
{
	uint64_t key = (uint64_t)input << 32 | pid;
	const char *comm;
	char *name;

	if (hmap_get_ptr(&f->proc_names, key))
		return;
	comm = ev_comm(in, pid);
	if (asprintf(&name, "%s [%u]", comm ? comm : "?", pid) < 0)
		name = NULL;
	if (!name || hmap_put_ptr(&f->proc_names, key, name)) {
		free(name);
		f->err = -ENOMEM;
	}
}

/* The GPU's gaps as a thread sees them: from the end of its wait for the
 * device (nothing left queued) to its next launch, copy or collective;
 * each gap goes into the overlap as the cover the process's data reads
 * are measured against. */
static void gpu_gap(struct findings *f, uint16_t input, const struct ev *e, uint64_t proc)
{
	uint64_t key = (uint64_t)input << 32 | e->tid, open;
	int rc = 0;

	if (e->gpu == GPU_WAIT) {
		rc = hmap_put(&f->gpu_gap, key, (uint64_t)e->end + 1);
	} else if (e->gpu != GPU_CALL && e->gpu != GPU_NONE && hmap_del(&f->gpu_gap, key, &open)) {
		if ((int64_t)open - 1 < e->start)
			rc = overlap_add_compute(&f->gpu_idle, proc, (int64_t)open - 1, e->start);
	}
	if (rc)
		f->err = rc;
}

/* e's phase, "cat/name" or "-", unescaped into buf: its length. */
static size_t phase_name(const struct ev *e, char *buf, size_t size)
{
	size_t n;

	if (!e->phase.len) {
		buf[0] = '-';
		return 1;
	}
	n = js_unescape(e->phase_cat, buf, size - 1);
	buf[n++] = '/';
	return n + js_unescape(e->phase, buf + n, size - n);
}

void findings_add(struct findings *f, const struct ev_input *in, uint16_t input,
		  const struct ev *e)
{
	struct finding_key *phase, *file = NULL;
	int64_t dur = e->end - e->start;
	char name[4096];

	f->tag = 0;
	if (e->kind == EV_COMPUTE)
		name_process(f, in, input, e->pid);
	if (e->kind == EV_GPU) {
		name_process(f, in, input, e->pid);
		gpu_gap(f, input, e, ev_process(in, input, e->pid));
	}
	loader_add(&f->loader, input, e);
	rank_work_add(&f->ranks, in, e);
	if (e->kind == EV_REGION && SPAN_IS(e->cat, "dataloader"))
		name_process(f, in, input, e->pid);
	if (e->kind != EV_IO)
		return;
	if (e->step >= 0 && e->bytes_kind == SC_BYTES_READ)
		name_process(f, in, input, e->pid);
	if (e->bytes_kind == SC_BYTES_READ &&
	    overlap_add_io(&f->gpu_idle, ev_process(in, input, e->pid), e->start, e->end, 0))
		f->err = -ENOMEM;
	phase = key_of(f, &f->phases, name, phase_name(e, name, sizeof(name)));
	if (e->file.len)
		file = key_of(f, &f->files, name, js_unescape(e->file, name, sizeof(name)));
	if (file)
		rereads_add(&f->rereads, input, e, file->name);
	if (!phase)
		return;
	if (e->bytes_kind != SC_BYTES_NONE) {
		add_data(f, input, e, file, phase, dur);
		if (e->bytes_kind == SC_BYTES_WRITE)
			f->tag = phase->id;
	} else if (is_metadata(e->name)) {
		phase->meta_calls += e->calls;
		units_add(&phase->meta_ns, dur);
	} else if (is_sync(e->name)) {
		phase->sync_calls += e->calls;
		units_add(&phase->sync_ns, dur);
		f->tag = phase->id;
	}
}

enum where { AT_FILE, AT_PHASE, AT_PROCESS, AT_RANK };

/* Where a finding is: a file, phase or process by name, or a rank. */
struct place {
	enum where at;
	const char *name;	/* AT_FILE, AT_PHASE, AT_PROCESS */
	int64_t rank;		/* AT_RANK */
};

static struct place named(enum where at, const char *name)
{
	return (struct place){ .at = at, .name = name };
}

/* A finding at place if its cost reaches the share. */
static int judge(struct findings *f, enum finding_rule rule, struct place at, int64_t ns,
		 struct finding_evidence ev, int64_t wall_ns)
{
	struct finding x = { .rule = rule, .ns = ns, .ev = ev, .rank = -1,
			     .share = wall_ns > 0 ? (double)ns / wall_ns : 0 };
	char *copy = NULL;

	if (!wall_ns || x.share < f->min_share)
		return 0;
	if (at.at == AT_RANK)
		x.rank = at.rank;
	else if (!(copy = strdup(at.name)))
		return -ENOMEM;
	if (copy)
		*(at.at == AT_FILE ? &x.file : at.at == AT_PHASE ? &x.phase : &x.process) = copy;
	if (VEC_PUSH(f->list, f->n, f->cap, x)) {
		free(copy);
		return -ENOMEM;
	}
	return 0;
}

/* More than half of at least FINDINGS_MIN_CALLS. */
static bool mostly(int64_t hits, int64_t calls)
{
	return calls >= FINDINGS_MIN_CALLS && 2 * hits > calls;
}

static int judge_file(struct findings *f, const struct finding_key *k, int64_t wall_ns)
{
	int rc = 0;

	if (mostly(k->small_calls, k->data_calls))
		rc = judge(f, RULE_SMALL_IO, named(AT_FILE, k->name), k->small_ns,
			   (struct finding_evidence){ .calls = k->data_calls, .hits = k->small_calls,
						      .hit_bytes = k->small_bytes }, wall_ns);
	if (!rc && mostly(k->jumps, k->pos_calls))
		rc = judge(f, RULE_RANDOM_ACCESS, named(AT_FILE, k->name), k->jump_ns,
			   (struct finding_evidence){ .calls = k->pos_calls, .hits = k->jumps,
						      .hit_bytes = k->jump_bytes }, wall_ns);
	if (!rc && k->misses >= FINDINGS_MIN_CALLS)
		rc = judge(f, RULE_PAGE_CACHE_MISSES, named(AT_FILE, k->name), k->miss_ns,
			   (struct finding_evidence){ .calls = k->map_runs, .hits = k->miss_runs,
						      .hit_bytes = k->miss_bytes,
						      .misses = k->misses }, wall_ns);
	return rc;
}

static int judge_phase(struct findings *f, const struct finding_key *k, int64_t wall_ns,
		       const struct overlap *o)
{
	/* its writes' and syncs' time while no compute of their process ran
	 * (all of it where the process has none) */
	int64_t blocked = overlap_tag_ns(o, k->id);
	int rc = 0;

	/* (a few, as a program's loader makes outside any phase, are none) */
	if (k->meta_calls >= FINDINGS_MIN_CALLS && k->meta_ns > k->data_ns)
		rc = judge(f, RULE_METADATA_HEAVY, named(AT_PHASE, k->name), k->meta_ns,
			   (struct finding_evidence){ .calls = k->meta_calls + k->data_calls,
						      .hits = k->meta_calls, .other_ns = k->data_ns },
			   wall_ns);
	if (!rc && k->sync_calls)
		rc = judge(f, RULE_CHECKPOINT_BLOCKING, named(AT_PHASE, k->name), blocked,
			   (struct finding_evidence){ .calls = k->write_calls + k->sync_calls,
						      .hits = k->sync_calls, .other_ns = k->sync_ns },
			   wall_ns);
	return rc;
}

static int by_ns_desc(const void *a, const void *b)
{
	const struct finding *x = a, *y = b;

	if (x->ns != y->ns)
		return x->ns < y->ns ? 1 : -1;
	return x->rule - y->rule;
}

/* A process with compute whose I/O runs while none of it does. */
static int judge_process(struct findings *f, const struct overlap_figures *x, int64_t wall_ns)
{
	const char *name = hmap_get_ptr(&f->proc_names, x->proc);

	if (!x->compute_ns || !x->unoverlapped_ns || !name)
		return 0;
	return judge(f, RULE_UNOVERLAPPED_IO, named(AT_PROCESS, name), x->unoverlapped_ns,
		     (struct finding_evidence){ .other_ns = x->io_ns,
						.compute_ns = x->compute_ns }, wall_ns);
}

static int judge_rereads(struct findings *f, const struct reread_key *k, int64_t wall_ns)
{
	if (k->full || !mostly(k->rereads, k->reads))
		return 0;
	return judge(f, RULE_REPEATED_READS, named(AT_FILE, k->file), k->reread_ns,
		     (struct finding_evidence){ .calls = k->reads, .hits = k->rereads,
						.hit_bytes = k->reread_bytes,
						.distinct = k->distinct, .epoch = k->epoch },
		     wall_ns);
}

/* A process's data reads during its GPU's gaps: the overlap's I/O that
 * the gaps covered. */
static int judge_gpu_idle(struct findings *f, const struct overlap_figures *x, int64_t wall_ns)
{
	const char *name = hmap_get_ptr(&f->proc_names, x->proc);
	int64_t in_gaps = x->io_ns - x->unoverlapped_ns;

	if (!x->compute_ns || in_gaps <= 0 || !name)
		return 0;
	return judge(f, RULE_GPU_WAITS_ON_IO, named(AT_PROCESS, name), in_gaps,
		     (struct finding_evidence){ .other_ns = x->io_ns, .idle_ns = x->compute_ns },
		     wall_ns);
}

static int judge_loader(struct findings *f, const struct loader_proc *p, int64_t wall_ns)
{
	const char *name = hmap_get_ptr(&f->proc_names, p->proc);
	const struct loader_steps *s = loader_judged(p);

	if (s->steps < 3 || 2 * s->bound <= s->steps || !name)
		return 0;
	return judge(f, RULE_INPUT_BOUND, named(AT_PROCESS, name), s->bound_wait_ns,
		     (struct finding_evidence){ .calls = s->steps, .hits = s->bound,
						.other_ns = s->wait_ns, .step_ns = s->step_ns },
		     wall_ns);
}

static int by_value(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* The lower middle of n values (sorted in place). */
static int64_t median_of(int64_t *v, uint32_t n)
{
	qsort(v, n, sizeof(*v), by_value);
	return v[(n - 1) / 2];
}

/* Of 3 ranks or more, those slower than the median rank (the lower
 * middle of an even count): by their own time between collectives,
 * more than RANK_OWN_FACTOR times the median's, where 3 ranks or more
 * have 2 collectives or more; else by their I/O time, more than twice
 * the median's. The cost: the time past the median. */
#define RANK_OWN_FACTOR 1.25

/* Whether rank r is weighed: every rank by I/O; by own time, those with
 * two collectives or more. */
static bool weighed(const struct rank_figures *r, bool by_own)
{
	return !by_own || r->collectives >= 2;
}

static int judge_ranks(struct findings *f, int64_t wall_ns)
{
	struct rank_figures *r = NULL;
	uint32_t n = 0, m = 0, with_calls = 0;
	int64_t *v = NULL, median;
	bool by_own;
	int rc = rank_work_figures(&f->ranks, &r, &n);

	for (uint32_t i = 0; i < n; i++)
		with_calls += weighed(&r[i], true);
	by_own = with_calls >= 3;
	if (rc || (by_own ? with_calls : n) < 3)
		goto out;
	if (!(v = malloc(n * sizeof(*v)))) {
		rc = -ENOMEM;
		goto out;
	}
	for (uint32_t i = 0; i < n; i++)
		if (weighed(&r[i], by_own))
			v[m++] = by_own ? r[i].own_ns : r[i].io_ns;
	median = median_of(v, m);
	for (uint32_t i = 0; !rc && i < n; i++) {
		int64_t x = by_own ? r[i].own_ns : r[i].io_ns;
		bool slow = by_own ? x > RANK_OWN_FACTOR * median : x / 2 > median;

		if (!weighed(&r[i], by_own) || !slow)
			continue;
		rc = judge(f, RULE_RANK_IMBALANCE, (struct place){ .at = AT_RANK, .rank = r[i].rank },
			   x - median,
			   (struct finding_evidence){ .calls = m, .other_ns = median, .rank_ns = x,
						      .collectives = by_own ? r[i].collectives : 0 },
			   wall_ns);
	}
out:
	free(v);
	free(r);
	return rc;
}

int findings_finish(struct findings *f, int64_t wall_ns, const struct overlap *o)
{
	uint64_t key, v;
	size_t it = 0;
	int rc = f->err ? f->err : f->rereads.err ? f->rereads.err : f->loader.err;

	for (uint32_t i = 0; !rc && i < o->nprocs; i++) {
		struct overlap_figures x = overlap_proc_figures(o, i);

		rc = judge_process(f, &x, wall_ns);
	}
	if (!rc)
		rc = overlap_finish(&f->gpu_idle);
	for (uint32_t i = 0; !rc && i < f->gpu_idle.nprocs; i++) {
		struct overlap_figures x = overlap_proc_figures(&f->gpu_idle, i);

		rc = judge_gpu_idle(f, &x, wall_ns);
	}
	while (!rc && hmap_next(&f->files, &it, &key, &v))
		rc = judge_file(f, (void *)(uintptr_t)v, wall_ns);
	it = 0;
	while (!rc && hmap_next(&f->phases, &it, &key, &v))
		rc = judge_phase(f, (void *)(uintptr_t)v, wall_ns, o);
	it = 0;
	while (!rc && hmap_next(&f->rereads.keys, &it, &key, &v))
		rc = judge_rereads(f, (void *)(uintptr_t)v, wall_ns);
	it = 0;
	while (!rc && hmap_next(&f->loader.procs, &it, &key, &v))
		rc = judge_loader(f, (void *)(uintptr_t)v, wall_ns);
	if (!rc)
		rc = judge_ranks(f, wall_ns);
	if (f->n)
		qsort(f->list, f->n, sizeof(*f->list), by_ns_desc);
	return rc;
}

static void free_keys(struct hmap *m)
{
	uint64_t key, v;
	size_t it = 0;

	while (hmap_next(m, &it, &key, &v))
		free(((struct finding_key *)(uintptr_t)v)->name);
	hmap_free_ptrs(m);
}

void findings_free(struct findings *f)
{
	free_keys(&f->files);
	free_keys(&f->phases);
	hmap_free(&f->next_off);
	hmap_free_ptrs(&f->proc_names);
	rereads_free(&f->rereads);
	loader_free(&f->loader);
	rank_work_free(&f->ranks);
	hmap_free(&f->gpu_gap);
	overlap_free(&f->gpu_idle);
	for (uint32_t i = 0; i < f->n; i++) {
		free(f->list[i].file);
		free(f->list[i].phase);
		free(f->list[i].process);
	}
	free(f->list);
}
