// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Annotations: the dftrace USDT probes of include/dftrace/usdt.h
 * (provider "dftrace") and CPython's own (provider "python"), attached
 * by user space (user/capture/usdt.c) to each file that has them. Each
 * hit is a record; a region's begin and end also move the thread's
 * region stack, which keys folded totals (fold.bpf.h).
 */
#include "core.bpf.h"
#define BPF_USDT_MAX_SPEC_CNT 1024
#include <bpf/usdt.bpf.h>
#include "usdtargs.bpf.h"
#include "fold.bpf.h"
#include "iobatch.bpf.h"
#include "mmapio.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct dft_annot);
} annot_scratch SEC(".maps");

#define FROM_BPF_A 1 /* string a is this program's own, not the user's */
#define FROM_BPF_B 2

/* A string of the probe's into dst (zero after it, for the phase id);
 * false if it could not be read. */
static __always_inline bool read_str(char *dst, __u32 size, const char *src, bool ours)
{
	if (ours)
		return bpf_probe_read_kernel_str(dst, size, src) >= 0;
	return !src || bpf_probe_read_user_str(dst, size, src) >= 0;
}

static __always_inline int emit_annot_from(int op, const char *a,
					   const char *b, long long value,
					   int from_bpf)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct dft_task *st = tracked(t);
	struct dft_annot *e;
	dft_word *w;
	__u32 zero = 0;

	if (!st)
		return 0;
	flush_batch(st);
	/* pages mapped so far belong to the phase that is ending or enclosing */
	flush_run(st);
	e = bpf_map_lookup_elem(&annot_scratch, &zero);
	if (!e)
		return 0;
	fill_header(&e->h, DFT_EV_ANNOT, t);
	e->h.nr = op;
	e->value = value;
	/* user-space fallback addresses: only for the user's strings */
	e->cat_ptr = from_bpf & FROM_BPF_A ? 0 : (unsigned long)a;
	e->name_ptr = from_bpf & FROM_BPF_B ? 0 : (unsigned long)b;
	w = (dft_word *)e->cat;
	for (int i = 0; i < DFT_PHASE_WORDS; i++)
		w[i] = 0;
	if (!read_str(e->cat, sizeof(e->cat), a, from_bpf & FROM_BPF_A))
		e->h.flags |= DFT_ANNOT_FAULT_CAT;
	if (!read_str(e->name, sizeof(e->name), b, from_bpf & FROM_BPF_B))
		e->h.flags |= DFT_ANNOT_FAULT_NAME;
	/* with no room the strings are still read: the region stack needs them */
	if (op == DFT_ANNOT_BEGIN || op == DFT_ANNOT_END)
		track_phase(st, op, e);
	send(e, sizeof(*e), DFT_NR_MAX + DFT_EV_ANNOT);
	return 0;
}

static __always_inline int emit_annot(int op, const char *a, const char *b,
				      long long value)
{
	return emit_annot_from(op, a, b, value, 0);
}

SEC("usdt")
int DFT_USDT(region_begin, const char *cat, const char *name, long long count)
{
	return emit_annot(DFT_ANNOT_BEGIN, cat, name, count);
}

SEC("usdt")
int DFT_USDT(region_end, const char *cat, const char *name, long long count)
{
	return emit_annot(DFT_ANNOT_END, cat, name, count);
}

SEC("usdt")
int DFT_USDT(meta, const char *cat, const char *name, long long is_end)
{
	return emit_annot(DFT_ANNOT_META, cat, name, is_end);
}

/* The step annotation moves --steps' window. */
static __always_inline void set_step(const char *key, long long value)
{
	char k[8] = {};

	if (bpf_probe_read_user_str(k, sizeof(k), key) == 5 && k[0] == 's' &&
	    k[1] == 't' && k[2] == 'e' && k[3] == 'p')
		step_active = dft_step_active(&steps, value);
}

SEC("usdt")
int DFT_USDT(ctx_int, const char *key, long long value)
{
	if (steps_on && tracked(bpf_get_current_task_btf()))
		set_step(key, value);
	return emit_annot(DFT_ANNOT_CTX_INT, key, NULL, value);
}

SEC("usdt")
int DFT_USDT(ctx_str, const char *key, const char *value)
{
	return emit_annot(DFT_ANNOT_CTX_STR, key, value, 0);
}

SEC("usdt")
int DFT_USDT(ctx_clear, const char *key)
{
	return emit_annot(DFT_ANNOT_CTX_CLEAR, key, NULL, 0);
}

SEC("usdt")
int DFT_USDT(arg_int, const char *key, long long value)
{
	return emit_annot(DFT_ANNOT_ARG_INT, key, NULL, value);
}

SEC("usdt")
int DFT_USDT(arg_str, const char *key, const char *value)
{
	return emit_annot(DFT_ANNOT_ARG_STR, key, value, 0);
}

/* ---- CPython's own probes (provider "python"): regions in cat "python" ---- */

/* Both strings are ours: cat "python" and the region's name. */
static __always_inline int python_region(int op, const char *name)
{
	return emit_annot_from(op, "python", name, 0, FROM_BPF_A | FROM_BPF_B);
}

SEC("usdt")
int DFT_USDT(py_gc_start, int generation)
{
	python_region(DFT_ANNOT_BEGIN, "gc");
	return emit_annot_from(DFT_ANNOT_ARG_INT, "generation", NULL, generation,
			       FROM_BPF_A);
}

SEC("usdt")
int DFT_USDT(py_gc_done, long long collected)
{
	emit_annot_from(DFT_ANNOT_ARG_INT, "collected", NULL, collected, FROM_BPF_A);
	return python_region(DFT_ANNOT_END, "gc");
}

SEC("usdt")
int DFT_USDT(py_import_start, const char *module)
{
	python_region(DFT_ANNOT_BEGIN, "import");
	return emit_annot_from(DFT_ANNOT_ARG_STR, "module", module, 0, FROM_BPF_A);
}

SEC("usdt")
int DFT_USDT(py_import_done, const char *module, int found)
{
	emit_annot_from(DFT_ANNOT_ARG_INT, "found", NULL, found, FROM_BPF_A);
	return python_region(DFT_ANNOT_END, "import");
}
