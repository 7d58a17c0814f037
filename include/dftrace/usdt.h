/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * dftrace/usdt.h: mark the phases of AI/DL code for dftrace-bpf.
 *
 * Header-only, for C11 and later and C++11 and later, with GCC or Clang;
 * needs only libc's <stdint.h> and <time.h>. Names follow DFTracer's AI logging:
 * DFT_USDT_FORWARD() is {"name":"forward","cat":"compute"}.
 *
 *     void train_step(void) {
 *         DFT_USDT_FORWARD();       // ends when the block is left, by any path
 *         ...
 *     }
 *     DFT_USDT_SET_EPOCH(e);        // args of every later event of the process
 *
 * Every probe has a semaphore that the kernel raises only while a tracer
 * is attached, so an annotation costs one load and a not-taken branch when
 * nobody traces: no call, no syscall, no lock.
 *
 * Probes (provider "dftrace"), the contract with the tracer:
 *   region_begin(const char *cat, const char *name, int64_t count)
 *   region_end(const char *cat, const char *name, int64_t count)
 *                                   count -1: drop the region (no event)
 *   meta(const char *cat, const char *name, int64_t is_end)
 *   ctx_int(const char *key, int64_t value)
 *   ctx_str(const char *key, const char *value)
 *   ctx_clear(const char *key)            key NULL: every user key
 *   arg_int(const char *key, int64_t value)   an arg of the calling thread's
 *   arg_str(const char *key, const char *value)  innermost open region
 *   regions(struct dft_usdt_ring *ring, uint64_t from, uint64_t to)
 *                                   the calling thread's region begins and
 *                                   ends [from, to) in ring (below)
 * Strings are NUL-terminated; the tracer reads up to 63 bytes of cat and
 * key and 127 of name and value. count is 0 when there is none. A
 * region's args are those it has when it ends. region_begin's and
 * region_end's arguments are always in the first three argument
 * registers (x86-64 %rdi %rsi %rdx, AArch64 x0 x1 x2), where dftrace-bpf
 * reads them with no lookup; their notes say so as well.
 *
 * A tracer that raises regions' semaphore takes the begins and ends of
 * regions named by string literals from a ring in the thread's own memory
 * instead: each is written there with the time (CLOCK_MONOTONIC), and
 * regions fires once the ring is full, so that a pair costs no trap. The
 * tracer reads the ring at the thread's next probe, syscall or page
 * fault, too, and reads the names then: only a literal is sure to hold
 * them still. While regions' semaphore is raised, those sites do not
 * fire region_begin and region_end; sites whose names are not literals
 * always do, and so does a signal handler's region while its thread is
 * writing the ring.
 *
 * Define DFT_USDT_DISABLE before the include to compile every annotation
 * out. Where probes are not supported (not ELF, not x86-64 or AArch64) the
 * macros compile to nothing as well.
 *
 * Caveats: a scoped macro is a declaration, so in C it cannot directly
 * follow a label (write "case 1: { DFT_USDT_ITEM(); ... }"). Names given
 * to DFT_USDT_DERIVE and DFT_USDT_ITER must be string literals.
 */
#ifndef DFTRACE_USDT_H
#define DFTRACE_USDT_H

#include <stdint.h>
#include <time.h>

#if !defined(DFT_USDT_DISABLE) && defined(__ELF__) && defined(__GNUC__) && \
	((defined(__x86_64__) && !defined(__ILP32__)) || defined(__aarch64__))
#define DFT__PROBES 1
#else
#define DFT__PROBES 0
#endif

/*
 * The ring of a thread's region begins and ends, for a tracer that raised
 * the semaphore of its probe (regions). Records [sent, head) are the
 * tracer's to read until regions fires for them; the thread never writes
 * over those, since it fires when they fill the ring. 2 KiB of TLS a
 * thread. dftrace-bpf checks this layout against its own at compile time.
 */
#define DFT_USDT_RING_PROBE regions
#define DFT_USDT_RING_LEN 64 /* a power of two */
struct dft_usdt_ring_rec {
	uint64_t ts_end;	/* CLOCK_MONOTONIC ns << 1 | 1 for an end */
	const char *cat, *name;
	int64_t count;
};
struct dft_usdt_ring {
	uint64_t head;	/* records written, ever: the next goes at head % LEN */
	uint64_t sent;	/* head when regions last fired; 0: never. Its top
			 * bits only while the thread writes (DFT__RING_BUSY,
			 * DFT__RING_HELD); the tracer never reads it */
	struct dft_usdt_ring_rec rec[DFT_USDT_RING_LEN];
};

#ifdef __cplusplus
/* inline, not static: C++ inline members below call these (ODR) */
#define DFT__FN inline __attribute__((always_inline))
#else
#define DFT__FN static inline __attribute__((always_inline, unused))
#endif

#if DFT__PROBES

/*
 * One semaphore per probe and per DSO. The kernel increments it in every
 * process that maps the file while a uprobe is attached to that probe, so
 * untraced code reads 0 and skips the probe.
 *  - weak: every translation unit that includes this header defines it,
 *    and the linker keeps one;
 *  - hidden: a note in libfoo.so must name the semaphore that libfoo's own
 *    code reads; with default visibility the code would go through the GOT
 *    and could read another DSO's copy (interposition) that nobody raises;
 *  - in .probes, a PROGBITS section: the kernel finds it by file offset
 *    (uprobe ref_ctr_offset), which .bss does not have;
 *  - volatile: a tracer attaches at any time, so a loop must not keep the
 *    value in a register.
 */
#define DFT__SEMA_(probe) dftrace_##probe##_semaphore
#define DFT__SEMA(probe) DFT__SEMA_(probe) /* a macro's name expanded first */
#define DFT__DEFINE_SEMA(probe)                                               \
	__attribute__((weak, visibility("hidden"), section(".probes"), used))  \
	volatile unsigned short DFT__SEMA(probe)
#ifdef __cplusplus
extern "C" {
#endif
DFT__DEFINE_SEMA(region_begin);
DFT__DEFINE_SEMA(region_end);
DFT__DEFINE_SEMA(meta);
DFT__DEFINE_SEMA(ctx_int);
DFT__DEFINE_SEMA(ctx_str);
DFT__DEFINE_SEMA(ctx_clear);
DFT__DEFINE_SEMA(arg_int);
DFT__DEFINE_SEMA(arg_str);
DFT__DEFINE_SEMA(DFT_USDT_RING_PROBE);

/* One ring per thread for the whole process: default visibility, so that
 * every DSO writes the same ring and the tracer reads its regions in the
 * order they happened. The _v1 is the layout's: a header that changes it
 * must change the name. */
__attribute__((weak)) __thread struct dft_usdt_ring dftrace_usdt_ring_v1;
#ifdef __cplusplus
}
#endif

#define DFT__ON(probe) __builtin_expect(DFT__SEMA(probe) != 0, 0)

/*
 * The probe site: a nop, and a stapsdt note (.note.stapsdt, type 3, owner
 * "stapsdt") holding its address, the .stapsdt.base address (prelink
 * adjustment), the semaphore's address, provider, name and argument specs.
 * This is the layout <sys/sdt.h> writes; it is written here so that the
 * header needs no systemtap-sdt-dev and so that the arguments are always
 * in a register or an immediate ("nr"): sys/sdt.h's "nor" also allows
 * memory operands such as "-8@epoch(%rip)", which libbpf cannot read and
 * which would make the whole probe fail to attach in that binary.
 *  - the note section is not allocated: it costs no memory at run time;
 *  - "?" keeps the note in the section group of the code around it, so a
 *    discarded C++ COMDAT copy takes its notes along;
 *  - numeric labels are local, so the compiler may duplicate the asm
 *    (inlining, unrolling): every copy gets its own note.
 * The semaphore is an "i" operand rather than a name in the string, so
 * that the compiler and LTO see the reference.
 */
#define DFT__NOTE(probe, argspec, ...)                                        \
	__asm__ __volatile__(                                                  \
		"990:	nop\n"                                                 \
		"	.pushsection .note.stapsdt,\"?\",\"note\"\n"           \
		"	.balign 4\n"                                           \
		"	.4byte 992f-991f, 994f-993f, 3\n"                      \
		"991:	.asciz \"stapsdt\"\n"                                  \
		"992:	.balign 4\n"                                           \
		"993:	.8byte 990b\n"                                         \
		"	.8byte _.stapsdt.base\n"                               \
		"	.8byte %c[dft_sema]\n"                                 \
		"	.asciz \"dftrace\"\n"                                  \
		"	.asciz \"" #probe "\"\n"                               \
		"	.asciz \"" argspec "\"\n"                              \
		"994:	.balign 4\n"                                           \
		"	.popsection\n"                                         \
		"	.ifndef _.stapsdt.base\n"                              \
		"	.pushsection .stapsdt.base,\"aG\",\"progbits\",.stapsdt.base,comdat\n" \
		"	.weak _.stapsdt.base\n"                                \
		"	.hidden _.stapsdt.base\n"                              \
		"_.stapsdt.base:\n"                                            \
		"	.space 1\n"                                            \
		"	.size _.stapsdt.base, 1\n"                             \
		"	.popsection\n"                                         \
		"	.endif\n"                                              \
		:                                                              \
		: [dft_sema] "i"(&DFT__SEMA(probe)), __VA_ARGS__)

/* Argument specs: "8@" unsigned 64-bit (pointers), "-8@" signed 64-bit. */
#define DFT__SPEC3 "8@%[dft_a] 8@%[dft_b] -8@%[dft_c]"
#define DFT__S3(p, a, b, c)                                                   \
	DFT__NOTE(p, DFT__SPEC3, [dft_a] "nr"(a), [dft_b] "nr"(b),             \
		  [dft_c] "nr"(c))
#define DFT__SI(p, a, b)                                                      \
	DFT__NOTE(p, "8@%[dft_a] -8@%[dft_b]", [dft_a] "nr"(a), [dft_b] "nr"(b))
#define DFT__SS(p, a, b)                                                      \
	DFT__NOTE(p, "8@%[dft_a] 8@%[dft_b]", [dft_a] "nr"(a), [dft_b] "nr"(b))

/*
 * A region's begin and end, the probes that fire most: their arguments
 * always in the first three argument registers, so that the tracer reads
 * them from fixed places and looks no spec up (the note still says where
 * they are, for every other tool). Costs a register move or two, only
 * while traced.
 */
#if defined(__x86_64__)
#define DFT__PINNED(p, a, b, c)                                               \
	DFT__NOTE(p, DFT__SPEC3, [dft_a] "D"(a), [dft_b] "S"(b), [dft_c] "d"(c))
#else /* AArch64: no constraint letter names x0-x2. The values first: code
       * that computes one (a call) could use x0 after it is set. */
#define DFT__PINNED(p, a, b, c)                                               \
	do {                                                                   \
		uint64_t dft__a = (uint64_t)(a), dft__b = (uint64_t)(b);       \
		int64_t dft__c = (c);                                          \
		register uint64_t dft__x0 __asm__("x0") = dft__a;              \
		register uint64_t dft__x1 __asm__("x1") = dft__b;              \
		register int64_t dft__x2 __asm__("x2") = dft__c;               \
		DFT__NOTE(p, DFT__SPEC3, [dft_a] "r"(dft__x0),                 \
			  [dft_b] "r"(dft__x1), [dft_c] "r"(dft__x2));         \
	} while (0)
#endif
/*
 * A uprobe cannot fault a page in, and a string literal nobody else has
 * read may not be paged in yet: touch its first byte, only when traced,
 * so that the tracer can read it in the kernel.
 */
DFT__FN void dft__touch(const char *s)
{
	if (s)
		__asm__ __volatile__("" : : "r"(*(const volatile char *)s));
}

/* ---- the probes: each is a no-op unless its semaphore is raised ---- */

/* clock_gettime(CLOCK_MONOTONIC), the clock of bpf_ktime_get_ns(): from
 * the vDSO, no syscall. Declared here under a name of ours, since strict
 * C11 and C++ modes of <time.h> may not declare it; CLOCK_MONOTONIC is 1
 * in Linux's ABI. */
#ifdef __cplusplus
extern "C"
#endif
int dft__clock_gettime(int clock, struct timespec *ts) __asm__("clock_gettime");

DFT__FN uint64_t dft__now_ns(void)
{
	struct timespec ts;

	dft__clock_gettime(1, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * sent's top bits, while the thread writes its ring: BUSY, being written;
 * HELD, a signal handler annotated meanwhile. The handler's region then
 * goes through the probes (the tracer reads the ring there first), and
 * the interrupted record takes a time after the handler's, so that the
 * regions stay in order and neither record is written over. A handler
 * that never returns (longjmp) leaves BUSY set: the thread's regions go
 * on through the probes.
 */
#define DFT__RING_BUSY ((uint64_t)1 << 63)
#define DFT__RING_HELD ((uint64_t)1 << 62)

/* A begin or end into the thread's ring; regions fires when the ring is
 * full, and at the thread's first, which tells the tracer where its ring
 * is. The record is whole before head counts it: the tracer may read the
 * ring at any page fault. 0, and nothing written, in a handler that
 * interrupted its thread's write. */
DFT__FN int dft__ring_put(int end, const char *cat, const char *name,
			  int64_t count)
{
	struct dft_usdt_ring *r = &dftrace_usdt_ring_v1;
	uint64_t sent = r->sent, h;
	struct dft_usdt_ring_rec *e;

	if (sent & DFT__RING_BUSY) {
		r->sent = sent | DFT__RING_HELD;
		return 0;
	}
	r->sent = sent | DFT__RING_BUSY;
	/* head after the mark: a handler that ran before it wrote its own
	 * record whole, and this one goes after it */
	__asm__ __volatile__("" : : : "memory");
	h = r->head;
	e = &r->rec[h & (DFT_USDT_RING_LEN - 1)];
	e->ts_end = dft__now_ns() << 1 | (uint64_t)(end != 0);
	e->cat = cat;
	e->name = name;
	e->count = count;
	__asm__ __volatile__("" : : : "memory");
	r->head = ++h;
	__asm__ __volatile__("" : : : "memory");
	/* A handler's probe went before this was counted, or while the
	 * tracer had read it (then the new time changes nothing): the
	 * record comes after the handler's region. Read between the two
	 * stores above and this one (a signal's delivery), it still has the
	 * old time: the tracer puts it after the handler's region itself. */
	if (r->sent & DFT__RING_HELD)
		e->ts_end = dft__now_ns() << 1 | (uint64_t)(end != 0);
	if (h - sent >= DFT_USDT_RING_LEN || !sent) {
		DFT__PINNED(DFT_USDT_RING_PROBE, r, sent, h);
		sent = h;
	}
	__asm__ __volatile__("" : : : "memory");
	r->sent = sent;
	return 1;
}

/* fixed: cat's and name's bytes never change while the process lives
 * (literals: DFT__FIXED), so that the tracer may read them later, from
 * the ring. A constant after inlining. */
DFT__FN void dft__region_at(int end, const char *cat, const char *name,
			    int64_t count, int fixed)
{
	if (fixed && DFT__ON(DFT_USDT_RING_PROBE)) {
		dft__touch(cat);
		dft__touch(name);
		if (dft__ring_put(end, cat, name, count))
			return;
	}
	if (!end && DFT__ON(region_begin)) {
		dft__touch(cat);
		dft__touch(name);
		DFT__PINNED(region_begin, cat, name, count);
	} else if (end && DFT__ON(region_end)) {
		dft__touch(cat);
		dft__touch(name);
		DFT__PINNED(region_end, cat, name, count);
	}
}

DFT__FN void dft__region(int end, const char *cat, const char *name,
			 int64_t count)
{
	dft__region_at(end, cat, name, count, 0);
}

DFT__FN void dft__meta(const char *cat, const char *name, int64_t is_end)
{
	if (DFT__ON(meta)) {
		dft__touch(cat);
		dft__touch(name);
		DFT__S3(meta, cat, name, is_end);
	}
}

DFT__FN void dft__ctx_int(const char *key, int64_t value)
{
	if (DFT__ON(ctx_int)) {
		dft__touch(key);
		DFT__SI(ctx_int, key, value);
	}
}

DFT__FN void dft__ctx_str(const char *key, const char *value)
{
	if (DFT__ON(ctx_str)) {
		dft__touch(key);
		dft__touch(value);
		DFT__SS(ctx_str, key, value);
	}
}

DFT__FN void dft__ctx_clear(const char *key)
{
	if (DFT__ON(ctx_clear)) {
		dft__touch(key);
		DFT__NOTE(ctx_clear, "8@%[dft_a]", [dft_a] "nr"(key));
	}
}

DFT__FN void dft__arg_int(const char *key, int64_t value)
{
	if (DFT__ON(arg_int)) {
		dft__touch(key);
		DFT__SI(arg_int, key, value);
	}
}

DFT__FN void dft__arg_str(const char *key, const char *value)
{
	if (DFT__ON(arg_str)) {
		dft__touch(key);
		dft__touch(value);
		DFT__SS(arg_str, key, value);
	}
}

/* True while a tracer is attached to any probe of this DSO: lets callers
 * skip preparing costly arguments (a DFT_USDT_SET_STR value, say). */
DFT__FN int dft__enabled(void)
{
	return __builtin_expect((DFT__SEMA(region_begin) | DFT__SEMA(region_end) |
				 DFT__SEMA(meta) | DFT__SEMA(ctx_int) |
				 DFT__SEMA(ctx_str) | DFT__SEMA(ctx_clear) |
				 DFT__SEMA(arg_int) | DFT__SEMA(arg_str) |
				 DFT__SEMA(DFT_USDT_RING_PROBE)) != 0,
				0);
}

#else /* !DFT__PROBES: the same API, compiled out */

#define DFT__ON(probe) 0

DFT__FN void dft__region_at(int end, const char *cat, const char *name,
			    int64_t count, int fixed)
{
	(void)end, (void)cat, (void)name, (void)count, (void)fixed;
}
DFT__FN void dft__region(int end, const char *cat, const char *name,
			 int64_t count)
{
	(void)end, (void)cat, (void)name, (void)count;
}
DFT__FN void dft__meta(const char *cat, const char *name, int64_t is_end)
{
	(void)cat, (void)name, (void)is_end;
}
DFT__FN void dft__ctx_int(const char *key, int64_t value)
{
	(void)key, (void)value;
}
DFT__FN void dft__ctx_str(const char *key, const char *value)
{
	(void)key, (void)value;
}
DFT__FN void dft__ctx_clear(const char *key)
{
	(void)key;
}
DFT__FN void dft__arg_int(const char *key, int64_t value)
{
	(void)key, (void)value;
}
DFT__FN void dft__arg_str(const char *key, const char *value)
{
	(void)key, (void)value;
}
DFT__FN int dft__enabled(void)
{
	return 0;
}

#endif /* DFT__PROBES */

#define DFT_USDT_ENABLED() dft__enabled()

/* ---- regions ---- */

#define DFT__CAT2(a, b) a##b
#define DFT__CAT(a, b) DFT__CAT2(a, b)
/* several scoped annotations may share a block: each needs its own name */
#ifdef __COUNTER__
#define DFT__UNIQ(prefix) DFT__CAT(prefix, __COUNTER__)
#else
#define DFT__UNIQ(prefix) DFT__CAT(prefix, __LINE__)
#endif

/* String literals (or NULL), at the macro itself: GCC and Clang say so
 * there, at every -O, and of nothing else (a pointer variable, an array). */
#define DFT__FIXED(cat, name) (__builtin_constant_p(cat) && __builtin_constant_p(name))

#define DFT_USDT_REGION_BEGIN(cat, name)                                      \
	dft__region_at(0, (cat), (name), 0, DFT__FIXED(cat, name))
#define DFT_USDT_REGION_END(cat, name)                                        \
	dft__region_at(1, (cat), (name), 0, DFT__FIXED(cat, name))

#ifdef __cplusplus
namespace dftrace {
/* RAII: the end probe fires however the scope is left, exceptions too. */
class usdt_scope {
public:
	usdt_scope(const char *cat, const char *name, int fixed = 0)
		: cat_(cat), name_(name), fixed_(fixed)
	{
		dft__region_at(0, cat_, name_, 0, fixed_);
	}
	~usdt_scope() { dft__region_at(1, cat_, name_, 0, fixed_); }
	usdt_scope(const usdt_scope &) = delete;
	usdt_scope &operator=(const usdt_scope &) = delete;

private:
	const char *cat_, *name_;
	int fixed_;
};
} /* namespace dftrace */
#define DFT_USDT_REGION(cat, name)                                            \
	::dftrace::usdt_scope DFT__UNIQ(dft__scope_)((cat), (name),           \
						     DFT__FIXED(cat, name))
#else
struct dft_usdt_scope {
	const char *cat, *name;
	int fixed;
};

DFT__FN struct dft_usdt_scope dft__scope_begin(const char *cat, const char *name,
					       int fixed)
{
	struct dft_usdt_scope s;

	s.cat = cat;
	s.name = name;
	s.fixed = fixed;
	dft__region_at(0, cat, name, 0, fixed);
	return s;
}

DFT__FN void dft__scope_end(struct dft_usdt_scope *s)
{
	dft__region_at(1, s->cat, s->name, 0, s->fixed);
}

/* The cleanup attribute ends the region on every exit from the block
 * (return, break, goto; and unwinding when built with -fexceptions). */
#define DFT_USDT_REGION(cat, name)                                            \
	__attribute__((cleanup(dft__scope_end), unused))                       \
	struct dft_usdt_scope DFT__UNIQ(dft__scope_) =                          \
		dft__scope_begin((cat), (name), DFT__FIXED(cat, name))
#endif

/* A child of a node: DFT_USDT_DERIVE("data", "preprocess", "collate") is
 * "preprocess.collate" in cat "data". Literals only. */
#define DFT_USDT_DERIVE(cat, parent, child) DFT_USDT_REGION(cat, parent "." child)
#define DFT_USDT_DERIVE_BEGIN(cat, parent, child)                             \
	DFT_USDT_REGION_BEGIN(cat, parent "." child)
#define DFT_USDT_DERIVE_END(cat, parent, child)                               \
	DFT_USDT_REGION_END(cat, parent "." child)

/* ---- context: args of every later event of this process ---- */

#define DFT_USDT_SET_EPOCH(n) dft__ctx_int("epoch", (int64_t)(n))
#define DFT_USDT_SET_STEP(n) dft__ctx_int("step", (int64_t)(n))
#define DFT_USDT_SET_INT(key, v) dft__ctx_int((key), (int64_t)(v))
#define DFT_USDT_SET_STR(key, v) dft__ctx_str((key), (v))
#define DFT_USDT_CLEAR(key) dft__ctx_clear(key)
#define DFT_USDT_CLEAR_ALL() dft__ctx_clear((const char *)0)

/* An arg of this thread's innermost open region only (DFTracer's per-event
 * args, e.g. @ai.compute.forward(args={...})). */
#define DFT_USDT_ARG_INT(key, v) dft__arg_int((key), (int64_t)(v))
#define DFT_USDT_ARG_STR(key, v) dft__arg_str((key), (v))

/* ---- metadata (instant) mode: CM events "<name>.start"/"<name>.end" ---- */

#define DFT_USDT_START_META(cat, name) dft__meta((cat), (name), 0)
#define DFT_USDT_STOP_META(cat, name) dft__meta((cat), (name), 1)

/* ---- iteration: <name>.iter waits for the next element, <name>.block is
 * the loop body; both carry a 1-based count ----
 *
 *     struct dft_usdt_iter it = DFT_USDT_FETCH_ITER();
 *     for (;;) {
 *         dft_usdt_iter_wait(&it);   // ends .block n, begins .iter n+1
 *         if (!next(&batch))
 *             break;
 *         dft_usdt_iter_body(&it);   // ends .iter n, begins .block n
 *         ...
 *     }
 *     dft_usdt_iter_done(&it);       // ends what is open; idempotent
 *
 * N elements give N .iter and N .block events: the last wait, which found
 * none, is dropped, as pydftracer does.
 *
 * The count advances whether or not a tracer is attached, so a tracer that
 * attaches mid-loop sees the true element numbers. In C++ the iterator
 * also calls dft_usdt_iter_done() when it goes out of scope.
 */
struct dft_usdt_iter {
	const char *cat, *iter_name, *block_name;
	int64_t count;
	int open; /* 0 nothing, 1 .iter, 2 .block */
	int fixed; /* cat a literal too (the names are): see DFT__FIXED */
#ifdef __cplusplus
	dft_usdt_iter(const char *c, const char *i, const char *b, int f = 0)
		: cat(c), iter_name(i), block_name(b), count(0), open(0), fixed(f)
	{
	}
	dft_usdt_iter(dft_usdt_iter &&o)
		: cat(o.cat), iter_name(o.iter_name), block_name(o.block_name),
		  count(o.count), open(o.open), fixed(o.fixed)
	{
		o.open = 0;
	}
	dft_usdt_iter(const dft_usdt_iter &) = delete;
	dft_usdt_iter &operator=(const dft_usdt_iter &) = delete;
	inline ~dft_usdt_iter();
#endif
};

/* A region end with this count drops the region: the last wait, which
 * found no element, is no event (N elements give N .iter events). */
#define DFT__DISCARD ((int64_t)-1)

DFT__FN void dft_usdt_iter_done(struct dft_usdt_iter *it)
{
	if (it->open == 1)
		dft__region_at(1, it->cat, it->iter_name, DFT__DISCARD, it->fixed);
	else if (it->open == 2)
		dft__region_at(1, it->cat, it->block_name, it->count, it->fixed);
	it->open = 0;
}

DFT__FN void dft_usdt_iter_wait(struct dft_usdt_iter *it)
{
	dft_usdt_iter_done(it);
	it->count++;
	dft__region_at(0, it->cat, it->iter_name, it->count, it->fixed);
	it->open = 1;
}

DFT__FN void dft_usdt_iter_body(struct dft_usdt_iter *it)
{
	if (it->open != 1) /* no wait before it: a new element */
		it->count++;
	dft_usdt_iter_done(it);
	dft__region_at(0, it->cat, it->block_name, it->count, it->fixed);
	it->open = 2;
}

#ifdef __cplusplus
inline dft_usdt_iter::~dft_usdt_iter()
{
	dft_usdt_iter_done(this);
}
#define DFT_USDT_ITER(cat, name)                                              \
	dft_usdt_iter((cat), name ".iter", name ".block", DFT__FIXED(cat, ""))
#else
#define DFT_USDT_ITER(cat, name)                                              \
	((struct dft_usdt_iter){ (cat), name ".iter", name ".block", 0, 0,      \
				 DFT__FIXED(cat, "") })
#endif

/* ---- DFTracer's AI logging tree: DFT_USDT_FORWARD() and the rest, one
 * family of macros per node, generated from the tree the Python package
 * uses too ---- */
#include "usdt_ai.h"

#endif /* DFTRACE_USDT_H */
