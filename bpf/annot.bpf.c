// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Annotations: the dftrace USDT probes of include/dftrace/usdt.h
 * (provider "dftrace") and CPython's own (provider "python"), attached
 * by user space (user/capture/usdt.c) to each file that has them. Each
 * hit is a record; a region's begin and end also move the thread's
 * region stack, which keys folded totals (fold.bpf.h).
 *
 * One program serves every probe: the cookie of each attachment says
 * which probe it is (enum dft_annot_op, enum dft_python_probe). Twelve
 * programs of the same body took the verifier a third of the start-up.
 * A region's begin and end, the hits that matter, have programs of
 * their own where the header pinned their arguments (pinned_begin,
 * pinned_end): no cookie, no spec, no call on the way to the record.
 */
#include "core.bpf.h"
#define BPF_USDT_MAX_SPEC_CNT 1024
#include <bpf/usdt.bpf.h>
#include "usdtargs.bpf.h"
#include "fold.bpf.h"
#include "iobatch.bpf.h"
#include "mmapio.bpf.h"
#include "ring.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct dft_annot);
} annot_scratch SEC(".maps");

/* Sites whose strings user space read and found in read-only memory
 * (user/correlate/annot.c): their phase ids. A region's begin or
 * end there reads no string and hashes none: most of a hit's cost. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, DFT_ANNOT_SITES);
	__type(key, struct dft_annot_site);
	__type(value, __u32);
} annot_sites SEC(".maps");

/* Bumped by user space after it deletes a site from annot_sites: the
 * threads' own entries (dft_task.sites) made before then are stale. */
__u32 annot_sites_gen;

/* Strings of our own, by number: where a probe's string is not the
 * user's (CPython's regions). */
enum our_str {
	OURS_NONE, OURS_PYTHON, OURS_GC, OURS_IMPORT, OURS_GENERATION, OURS_COLLECTED,
	OURS_MODULE, OURS_FOUND,
};
#define OURS(a, b) ((a) | (b) << 8)

static __always_inline const char *our_str(__u32 id)
{
	switch (id) {
	case OURS_PYTHON: return "python";
	case OURS_GC: return "gc";
	case OURS_IMPORT: return "import";
	case OURS_GENERATION: return "generation";
	case OURS_COLLECTED: return "collected";
	case OURS_MODULE: return "module";
	case OURS_FOUND: return "found";
	default: return "";
	}
}

/* A string of the probe's into dst (zero after it, for the phase id):
 * ours by number, else the user's at uptr; false if it could not be
 * read (its address goes along for user space). */
static __always_inline bool read_str(char *dst, __u32 size, __u64 uptr, __u32 ours)
{
	if (ours)
		return bpf_probe_read_kernel_str(dst, size, our_str(ours)) >= 0;
	return !uptr || bpf_probe_read_user_str(dst, size, (void *)uptr) >= 0;
}

/* Which of a process's position a context key is: DFT_POS_EPOCH,
 * DFT_POS_STEP, or 0 (also for the empty key of a clear of all, which
 * keeps both). */
static __always_inline __u32 pos_key(const char *k)
{
	if (k[0] == 'e' && k[1] == 'p' && k[2] == 'o' && k[3] == 'c' && k[4] == 'h' && !k[5])
		return DFT_POS_EPOCH;
	if (k[0] == 's' && k[1] == 't' && k[2] == 'e' && k[3] == 'p' && !k[4])
		return DFT_POS_STEP;
	return 0;
}

/* A context annotation that moves the process's epoch or step: its new
 * position, for the totals of its calls from here (fold.bpf.h). A key
 * that could not be read may be either: both are then left to user
 * space, as a string's value is. */
static __always_inline void move_pos(__u32 op, const struct dft_annot *e)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	__u32 bit = e->h.flags & DFT_ANNOT_FAULT_CAT ? DFT_POS_EPOCH | DFT_POS_STEP :
						       pos_key(e->cat);
	struct dft_pos none = {}, *p;

	if (!bit)
		return;
	p = bpf_map_lookup_elem(&positions, &tgid);
	if (!p) {
		bpf_map_update_elem(&positions, &tgid, &none, BPF_NOEXIST);
		p = bpf_map_lookup_elem(&positions, &tgid);
		if (!p)
			return;
	}
	p->set &= ~bit;
	p->str &= ~bit;
	if (op == DFT_ANNOT_CTX_STR || e->h.flags & DFT_ANNOT_FAULT_CAT)
		p->str |= bit;
	else if (op == DFT_ANNOT_CTX_INT)
		p->set |= bit;
	if (bit & DFT_POS_EPOCH)
		p->epoch = e->value;
	if (bit & DFT_POS_STEP)
		p->step = e->value;
	__sync_fetch_and_add(&pos_seq, 1);
}

/* The id of the region whose strings are at (cat, name) in tgid, if
 * user space made it a site: from the thread's own entries, else from
 * annot_sites, then kept there. The generation is read before the map:
 * a site deleted after that read leaves an entry already stale. */
static __always_inline bool site_id(struct dft_task *st, __u32 tgid, __u64 cat, __u64 name,
				    __u32 *id)
{
	struct dft_site_slot *s = &st->sites[(cat ^ name ^ (name >> 5)) & (DFT_SITE_SLOTS - 1)];
	__u32 gen = *(volatile __u32 *)&annot_sites_gen;
	struct dft_annot_site key;
	__u32 *v;

	if (s->cat == cat && s->name == name && s->gen == gen) {
		*id = s->id;
		return true;
	}
	key = (struct dft_annot_site){ tgid, 0, cat, name };
	v = bpf_map_lookup_elem(&annot_sites, &key);
	if (!v)
		return false;
	*id = *v;
	s->cat = cat;
	s->name = name;
	s->id = *id;
	s->gen = gen;
	return true;
}

/* A region's begin or end at a site user space knows (the thread's own
 * entries or annot_sites): kept in the thread's batch, no ring of its
 * own. False, and nothing done, where the site is not known. flags and
 * place: as keep_annot()'s. */
static __always_inline bool keep_region(struct dft_task *st, struct task_struct *t, __u32 op,
					__u64 cat, __u64 name, long long count, __u64 ts,
					__u32 flags, __u32 place)
{
	__u32 id;

	if (!site_id(st, t->tgid, cat, name, &id))
		return false;
	/* pages mapped so far belong to the phase that is ending or enclosing */
	flush_run(st);
	track_phase(st, op, id);
	keep_annot(st, op, cat, name, count, ts, flags, place);
	return true;
}

/* An annotation's record with its strings, at ts: op, strings a and b
 * (user addresses, or ours: OURS(a's, b's)), value. ring: a constant,
 * true for a region's begin or end read from the thread's ring at place
 * (so that the verifier walks nothing else there); else place is 0. */
static __always_inline int send_annot(struct dft_task *st, struct task_struct *t, __u32 op,
				      __u64 a, __u64 b, long long value, __u32 ours, __u64 ts,
				      bool ring, __u32 place)
{
	struct dft_annot *e;
	dft_word *w;
	__u32 zero = 0;

	/* pages mapped so far belong to the phase that is ending or enclosing */
	flush_run(st);
	flush_batch(st);
	e = bpf_map_lookup_elem(&annot_scratch, &zero);
	if (!e)
		return 0;
	fill_header(&e->h, DFT_EV_ANNOT, t);
	e->h.ts = ts;
	e->h.nr = op;
	if (ring) {
		e->h.flags |= DFT_ANNOT_RING;
		e->h.io_dur = place;
	}
	e->value = value;
	/* user-space fallback addresses: only for the user's strings */
	e->cat_ptr = ours & 0xff ? 0 : a;
	e->name_ptr = ours >> 8 ? 0 : b;
	w = (dft_word *)e->cat;
	for (int i = 0; i < DFT_PHASE_WORDS; i++)
		w[i] = 0;
	if (!read_str(e->cat, sizeof(e->cat), a, ours & 0xff))
		e->h.flags |= DFT_ANNOT_FAULT_CAT;
	if (!read_str(e->name, sizeof(e->name), b, ours >> 8))
		e->h.flags |= DFT_ANNOT_FAULT_NAME;
	/* with no room the strings are still read: the region stack needs them */
	if (ring || op == DFT_ANNOT_BEGIN || op == DFT_ANNOT_END)
		track_phase(st, op, dft_phase_id(e));
	else if (op == DFT_ANNOT_CTX_INT || op == DFT_ANNOT_CTX_STR || op == DFT_ANNOT_CTX_CLEAR)
		move_pos(op, e);
	send(e, sizeof(*e), DFT_NR_MAX + DFT_EV_ANNOT);
	return 0;
}

/* The record of an annotation now: kept where it is a region's at a
 * known site, else with its strings. A global function: checked once. */
__noinline int emit_annot(__u32 op, __u64 a, __u64 b, long long value, __u32 ours)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct dft_task *st = tracked(t);
	__u64 ts = bpf_ktime_get_ns();

	if (!st)
		return 0;
	if (st->ring && (op == DFT_ANNOT_BEGIN || op == DFT_ANNOT_END))
		st->probe_last = ts;
	if (!ours && (op == DFT_ANNOT_BEGIN || op == DFT_ANNOT_END) &&
	    keep_region(st, t, op, a, b, value, ts, 0, 0))
		return 0;
	return send_annot(st, t, op, a, b, value, ours, ts, false, 0);
}

/* ---- regions from a thread's ring (include/dftrace/usdt.h) ---- */

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct dft_ring_rec);
} ring_scratch SEC(".maps");

_Static_assert(DFT_ANNOT_END == DFT_ANNOT_BEGIN + 1, "a ring record's end bit is added to BEGIN");

/* The record of the thread's ring at uaddr, place records after its
 * first: kept where its site is known, else sent with its strings, as a
 * probe's would be, at the time the thread wrote it. Records older than
 * this tracer are another's. Not through emit_annot(): a call deeper
 * would pass the 512 bytes of stack that a chain of calls may take. */
__noinline int take_ring_rec(struct dft_task *st, __u64 uaddr, __u32 place, __u64 now)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct dft_ring_rec *r;
	__u32 zero = 0, op;
	__u64 ts;

	/* not on the stack: the calls below it would pass the 512 bytes */
	r = bpf_map_lookup_elem(&ring_scratch, &zero);
	if (!st || !r)
		return 0;
	if (bpf_probe_read_user(r, sizeof(*r), (void *)uaddr)) {
		count_lost(DFT_NR_MAX + DFT_EV_ANNOT);
		return 0;
	}
	ts = r->ts_end >> 1;
	if (ts < rings_since)
		return 0;
	/* the thread writes its records in time order, before now: any
	 * other time is forged, and would put years into the trace */
	if (ts < st->ring_last || ts > now + DFT_RING_SLACK_NS) {
		count_lost(DFT_NR_MAX + DFT_EV_RING_TIME);
		return 0;
	}
	/* no later than now: a record's time is one its process surely
	 * lived at, which user space relies on (model/procs.h's gate) */
	if (ts > now)
		ts = now;
	st->ring_last = ts;
	/* a record a handler's regions interrupted (include/dftrace/usdt.h's
	 * BUSY) and read before the thread could time it again: after them */
	if (ts < st->probe_last)
		ts = st->probe_last;
	/* not a branch: the verifier would walk what follows once for each */
	op = DFT_ANNOT_BEGIN + (r->ts_end & 1);
	if (keep_region(st, t, op, r->cat, r->name, r->count, ts, DFT_ANNOT_RING, place))
		return 0;
	return send_annot(st, t, op, r->cat, r->name, r->count, 0, ts, true, place);
}

/* The thread's ring up to head (records written, ever). The thread
 * writes over none it has not fired the regions probe for, so a gap of
 * more than the ring lost the oldest: only a ring the kernel side
 * learnt of late (an earlier tracer's), or a process's own mischief. */
static __always_inline int drain_to(struct dft_task *st, __u64 head)
{
	__u64 tail = st->ring_tail, ring = st->ring;
	/* once a drain: a clock read a record would cost 30% more */
	__u64 now = bpf_ktime_get_ns();
	int i;

	if (head - tail > DFT_RING_LEN) {
		count_lost(DFT_NR_MAX + DFT_EV_ANNOT);
		tail = head - DFT_RING_LEN;
	}
	/* first: a record of the loop may send the thread's batch */
	st->ring_tail = head;
	for (i = 0; i < DFT_RING_LEN && tail != head; i++, tail++)
		take_ring_rec(st, ring + DFT_RING_RECS +
					  (tail & (DFT_RING_LEN - 1)) * sizeof(struct dft_ring_rec),
			      tail, now);
	return 0;
}

/* What the thread wrote in its ring since the kernel side last read it:
 * at its syscalls, page faults and other probes, so that its region
 * stack is right for them (ring.bpf.h). */
__noinline int drain_ring(struct dft_task *st)
{
	__u64 head;

	if (!st || !st->ring ||
	    bpf_probe_read_user(&head, sizeof(head), (void *)st->ring) || head == st->ring_tail)
		return 0;
	return drain_to(st, head);
}

/* regions(ring, from, to): the ring is full, or the thread's first
 * record is in it. Arguments pinned (DFT_PINNED_ARGS, as a region's). */
SEC("usdt")
int ring_regions(struct pt_regs *ctx)
{
	struct dft_task *st = tracked(bpf_get_current_task_btf());
	__u64 ring = PT_REGS_PARM1(ctx);

	if (!st)
		return 0;
	if (st->ring != ring) {
		st->ring = ring;
		st->ring_tail = PT_REGS_PARM2(ctx);
		/* none of its records can be older than the thread */
		st->ring_last = bpf_get_current_task_btf()->start_time;
	}
	return drain_to(st, PT_REGS_PARM3(ctx));
}

/* A signal on its way to the thread: one that kills it (a crash, a kill,
 * another thread's exit_group) ends it with no syscall of its own, while
 * its memory still holds the ring. */
SEC("tp_btf/signal_deliver")
int BPF_PROG(ring_at_signal, int sig, struct kernel_siginfo *info, struct k_sigaction *ka)
{
	take_ring(tracked(bpf_get_current_task_btf()));
	return 0;
}

/* The step annotation moves --steps' window. */
static __always_inline void set_step(__u64 key, long long value)
{
	char k[8] = {};

	if (steps_on && tracked(bpf_get_current_task_btf()) &&
	    bpf_probe_read_user_str(k, sizeof(k), (void *)key) == 5 && k[0] == 's' &&
	    k[1] == 't' && k[2] == 'e' && k[3] == 'p')
		step_active = dft_step_active(&steps, value);
}

/* Every probe's arguments, as usdt.h passes them: (cat, name, count),
 * (cat, name, is_end), (key, value) or (key); CPython's gc__start
 * (generation), gc__done (collected), import__find__load__start (module)
 * and __done (module, found). */
SEC("usdt")
int DFT_USDT(annotation, __u64 a0, __u64 a1, long long a2)
{
	/* an arg is its innermost region's: the ring's regions go first */
	take_ring(tracked(bpf_get_current_task_btf()));
	switch (DFT_USDT_COOKIE) {
	case DFT_ANNOT_BEGIN:
		return emit_annot(DFT_ANNOT_BEGIN, a0, a1, a2, 0);
	case DFT_ANNOT_END:
		return emit_annot(DFT_ANNOT_END, a0, a1, a2, 0);
	case DFT_ANNOT_META:
		return emit_annot(DFT_ANNOT_META, a0, a1, a2, 0);
	case DFT_ANNOT_CTX_INT:
		set_step(a0, a1);
		return emit_annot(DFT_ANNOT_CTX_INT, a0, 0, a1, 0);
	case DFT_ANNOT_CTX_STR:
		return emit_annot(DFT_ANNOT_CTX_STR, a0, a1, 0, 0);
	case DFT_ANNOT_CTX_CLEAR:
		return emit_annot(DFT_ANNOT_CTX_CLEAR, a0, 0, 0, 0);
	case DFT_ANNOT_ARG_INT:
		return emit_annot(DFT_ANNOT_ARG_INT, a0, 0, a1, 0);
	case DFT_ANNOT_ARG_STR:
		return emit_annot(DFT_ANNOT_ARG_STR, a0, a1, 0, 0);
	case DFT_PY_GC_START:
		emit_annot(DFT_ANNOT_BEGIN, 0, 0, 0, OURS(OURS_PYTHON, OURS_GC));
		return emit_annot(DFT_ANNOT_ARG_INT, 0, 0, (int)a0, OURS(OURS_GENERATION, 0));
	case DFT_PY_GC_DONE:
		emit_annot(DFT_ANNOT_ARG_INT, 0, 0, a0, OURS(OURS_COLLECTED, 0));
		return emit_annot(DFT_ANNOT_END, 0, 0, 0, OURS(OURS_PYTHON, OURS_GC));
	case DFT_PY_IMPORT_START:
		emit_annot(DFT_ANNOT_BEGIN, 0, 0, 0, OURS(OURS_PYTHON, OURS_IMPORT));
		return emit_annot(DFT_ANNOT_ARG_STR, 0, a0, 0, OURS(OURS_MODULE, 0));
	case DFT_PY_IMPORT_DONE:
		emit_annot(DFT_ANNOT_ARG_INT, 0, 0, (int)a1, OURS(OURS_FOUND, 0));
		return emit_annot(DFT_ANNOT_END, 0, 0, 0, OURS(OURS_PYTHON, OURS_IMPORT));
	}
	return 0;
}

/* The annotation program, for pinned_begin and pinned_end to hand a hit
 * over to (user space fills the slot after the load). */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} annot_full SEC(".maps");

/* A region's begin or end at a probe whose notes all say DFT_PINNED_ARGS
 * (user space checked): its arguments are read straight from the
 * registers. A site user space does not know yet goes to the annotation
 * program, by tail call rather than a call of emit_annot(), which each
 * program calling it would have verified again; the attachment carries
 * the probe's cookie and spec for it. So does a hit of a thread with a
 * ring of regions (a site whose names are not literals). */
static __always_inline int region_pinned(struct pt_regs *ctx, __u32 op)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct dft_task *st = tracked(t);

	if (!st)
		return 0;
	/* what its ring holds went before: the annotation program reads it
	 * first, so that this program need not be verified with that too */
	if ((!rings_on || !st->ring) &&
	    keep_region(st, t, op, PT_REGS_PARM1(ctx), PT_REGS_PARM2(ctx), PT_REGS_PARM3(ctx),
			bpf_ktime_get_ns(), 0, 0))
		return 0;
	bpf_tail_call(ctx, &annot_full, 0);
	/* only with the slot empty, which user space prevents */
	count_lost(DFT_NR_MAX + DFT_EV_ANNOT);
	return 0;
}

SEC("usdt")
int pinned_begin(struct pt_regs *ctx)
{
	return region_pinned(ctx, DFT_ANNOT_BEGIN);
}

SEC("usdt")
int pinned_end(struct pt_regs *ctx)
{
	return region_pinned(ctx, DFT_ANNOT_END);
}
