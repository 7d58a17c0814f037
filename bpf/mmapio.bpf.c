// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * I/O through file mappings (see mmapio.bpf.h). Three parts, each on
 * where this kernel has its hooks (user/capture/features.c):
 * - mapped reads: mm_filemap_fault and mm_filemap_map_pages (Linux
 *   6.10 on), with page_fault_user to tell a write or an instruction
 *   fetch (x86), and mm_filemap_add_to_page_cache for the pages read
 *   from storage meanwhile;
 * - mapped writes: writeback_dirty_folio.
 */
#include "mmapio.bpf.h"
#include "iobatch.bpf.h"
#include "ring.bpf.h"

/* A run is cut after this long: records reach the trace in bounded time. */
#define RUN_MAX_NS 100000000ull

/* include/linux/fs.h: an inode of the kernel's own, such as the shmem
 * behind anonymous shared memory and SysV segments: memory, not a file */
#define S_PRIVATE 512
/* include/uapi/linux/stat.h */
#define S_IFMT 00170000
#define S_IFREG 0100000

/* The file of a mapping; ino 0 for the kernel's own. m is the hook's
 * BTF pointer: its fields are plain loads, where a BPF_CORE_READ is a
 * helper call (~35 ns each here, five a page fault). */
static __always_inline struct dft_file_id file_of(struct address_space *m)
{
	struct inode *host = m->host;
	struct dft_file_id id = { 0, 0 };

	return host && !(host->i_flags & S_PRIVATE) ? inode_id(host) : id;
}

/* Ranges are sent as the thread touched them: user space merges those
 * that overlap (a loop over pairs here cost the verifier more than the
 * rest of every program that ends a run). */
__noinline int send_run(struct dft_task *st)
{
	struct dft_mmap_run *r;
	struct dft_mmap *e;

	if (!st)
		return 0;
	r = &st->run;
	if (!r->n)
		return 0;
	flush_batch(st);
	e = reserve(sizeof(*e), DFT_NR_MAX + DFT_EV_MMAP);
	if (e) {
		fill_header(&e->h, DFT_EV_MMAP, bpf_get_current_task_btf());
		e->h.ts = r->ts0;
		e->last_ts = r->ts1;
		e->file = r->file;
		__builtin_memcpy(e->lo, r->lo, sizeof(e->lo));
		__builtin_memcpy(e->hi, r->hi, sizeof(e->hi));
		e->n = r->n < DFT_MMAP_RANGES ? r->n : DFT_MMAP_RANGES;
		e->faults = r->faults;
		e->misses = r->misses;
		e->write = r->write;
		e->code = r->code;
		e->pad = 0;
		bpf_ringbuf_submit(e, wakeup_flag());
	}
	r->n = 0;
	return 0;
}

/* The process's own program: loading code, not reading data. */
static __always_inline unsigned int is_program(struct dft_file_id file)
{
	struct dft_file_id exe = { 0, 0 };

	exe_file_id(&exe);
	return exe.ino == file.ino && exe.dev == file.dev;
}

/* Pages [lo, hi) of file, read or dirtied: into the thread's run. */
static __always_inline void add_pages(struct dft_task *st, struct task_struct *t,
				      struct dft_file_id file, unsigned long long lo,
				      unsigned long long hi, unsigned int write,
				      unsigned int faults)
{
	struct dft_mmap_run *r = &st->run;
	__u64 now = bpf_ktime_get_ns();
	int i;

	if (r->n && (r->file.dev != file.dev || r->file.ino != file.ino ||
		     r->write != write || now - r->ts0 > RUN_MAX_NS))
		send_run(st);
	for (i = 0; i < DFT_MMAP_RANGES; i++) {
		if (i >= r->n)
			break;
		if (lo <= r->hi[i] && r->lo[i] <= hi) { /* overlaps or touches */
			r->lo[i] = lo < r->lo[i] ? lo : r->lo[i];
			r->hi[i] = hi > r->hi[i] ? hi : r->hi[i];
			break;
		}
	}
	if (i >= r->n) {
		if (r->n >= DFT_MMAP_RANGES)
			send_run(st);
		if (r->n == 0) {
			r->file = file;
			r->write = write;
			r->ts0 = now;
			r->faults = r->misses = 0;
			r->code = is_program(file);
		}
		i = r->n & (DFT_MMAP_RANGES - 1);
		r->lo[i] = lo;
		r->hi[i] = hi;
		r->n++;
	}
	r->ts1 = now;
	r->faults += faults;
	r->code |= st->fault_exec;
}

/* Only a thread outside any syscall faults for itself: in one (read,
 * write), the page cache is the syscall's; in an execve (no call of the
 * table), the exec loads the program (zeroing the ends of its and its
 * interpreter's data pages), before the exec record says which files
 * those are. Outside --steps' windows, nothing. */
static __always_inline struct dft_task *faulting(struct task_struct *t)
{
	struct dft_task *st = tracked(t);

	return st && st->nr == -1 && !quiet_step() &&
	       !(bpf_core_field_exists(t->in_execve) &&
		 BPF_CORE_READ_BITFIELD(t, in_execve)) ? st : NULL;
}

SEC("tp_btf/page_fault_user")
int BPF_PROG(page_fault_user, unsigned long address, struct pt_regs *regs,
	     unsigned long error_code)
{
	struct dft_task *st = faulting(bpf_get_current_task_btf());

	if (st) {
		/* the pages it maps are those of the regions it is in */
		take_ring(st);
		st->fault_write = !!(error_code & FAULT_WRITE);
		st->fault_exec = !!(error_code & FAULT_INSTR);
	}
	return 0;
}

SEC("tp_btf/mm_filemap_fault")
int BPF_PROG(mm_filemap_fault, struct address_space *mapping, unsigned long index)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct dft_task *st = faulting(t);
	struct dft_file_id file;

	/* a write fault reads the page in to dirty it: the dirtying is
	 * the I/O, counted below */
	if (!st || st->fault_write)
		return 0;
	file = file_of(mapping);
	if (file.ino)
		add_pages(st, t, file, index, index + 1, 0, 1);
	return 0;
}

SEC("tp_btf/mm_filemap_map_pages")
int BPF_PROG(mm_filemap_map_pages, struct address_space *mapping,
	     unsigned long start, unsigned long last)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct dft_task *st = faulting(t);
	struct dft_file_id file;

	if (!st || last < start)
		return 0;
	file = file_of(mapping);
	if (file.ino)
		add_pages(st, t, file, start, last + 1, 0, 1);
	return 0;
}

/* Older kernels name the folio's page count otherwise. */
struct folio___6_1 {
	unsigned int _folio_nr_pages;
} __attribute__((preserve_access_index));

static __always_inline unsigned long long folio_pages(struct folio *f)
{
	/* flags is a folio's first word in every version, whatever its type
	 * (memdesc_flags_t from 6.18, unsigned long before) */
	unsigned long flags = *(unsigned long *)f;

	if (!(flags & (1ul << bpf_core_enum_value(enum pageflags, PG_head))))
		return 1;
	if (bpf_core_field_exists(f->_nr_pages))
		return BPF_CORE_READ(f, _nr_pages);
	if (bpf_core_field_exists(((struct folio___6_1 *)f)->_folio_nr_pages))
		return BPF_CORE_READ((struct folio___6_1 *)f, _folio_nr_pages);
	return 1;
}

/* A page read from storage into the cache for the run's file. */
SEC("tp_btf/mm_filemap_add_to_page_cache")
int BPF_PROG(mm_filemap_add_to_page_cache, struct folio *folio)
{
	struct dft_task *st = faulting(bpf_get_current_task_btf());
	struct dft_file_id f;

	if (!st || !st->run.n)
		return 0;
	f = file_of(folio->mapping);
	if (f.dev == st->run.file.dev && f.ino == st->run.file.ino)
		st->run.misses += folio_pages(folio);
	return 0;
}

SEC("tp_btf/writeback_dirty_folio")
int BPF_PROG(writeback_dirty_folio, struct folio *folio, struct address_space *mapping)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct dft_task *st = faulting(t);
	struct dft_file_id file;
	unsigned long long index;

	if (!st || !mapping)
		return 0;
	file = file_of(mapping);
	/* Only a file's own pages: a filesystem without a journal dirties
	 * its metadata (an inode's atime at exec, which is no call of the
	 * table) in the block device's pages, in the task's own context. */
	if (!file.ino || (mapping->host->i_mode & S_IFMT) != S_IFREG)
		return 0;
	index = folio->index;
	add_pages(st, t, file, index, index + folio_pages(folio), 1, 0);
	return 0;
}
