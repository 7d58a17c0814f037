/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * dftrace/usdt.h: mark the phases of AI/DL code for dftrace-bpf.
 *
 * Header-only, for C11 and later and C++11 and later, with GCC or Clang;
 * needs only libc's <stdint.h>. Names follow DFTracer's AI logging:
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
 *   meta(const char *cat, const char *name, int64_t is_end)
 *   ctx_int(const char *key, int64_t value)
 *   ctx_str(const char *key, const char *value)
 *   ctx_clear(const char *key)            key NULL: every user key
 *   arg_int(const char *key, int64_t value)   an arg of the calling thread's
 *   arg_str(const char *key, const char *value)  innermost open region
 * Strings are NUL-terminated; the tracer reads up to 63 bytes of cat and
 * key and 127 of name and value. count is 0 when there is none.
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

#if !defined(DFT_USDT_DISABLE) && defined(__ELF__) && defined(__GNUC__) && \
	((defined(__x86_64__) && !defined(__ILP32__)) || defined(__aarch64__))
#define DFT__PROBES 1
#else
#define DFT__PROBES 0
#endif

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
#define DFT__SEMA(probe) dftrace_##probe##_semaphore
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
#define DFT__S3(p, a, b, c)                                                   \
	DFT__NOTE(p, "8@%[dft_a] 8@%[dft_b] -8@%[dft_c]", [dft_a] "nr"(a),   \
		  [dft_b] "nr"(b), [dft_c] "nr"(c))
#define DFT__SI(p, a, b)                                                      \
	DFT__NOTE(p, "8@%[dft_a] -8@%[dft_b]", [dft_a] "nr"(a), [dft_b] "nr"(b))
#define DFT__SS(p, a, b)                                                      \
	DFT__NOTE(p, "8@%[dft_a] 8@%[dft_b]", [dft_a] "nr"(a), [dft_b] "nr"(b))

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

DFT__FN void dft__region(int end, const char *cat, const char *name,
			 int64_t count)
{
	if (!end && DFT__ON(region_begin)) {
		dft__touch(cat);
		dft__touch(name);
		DFT__S3(region_begin, cat, name, count);
	} else if (end && DFT__ON(region_end)) {
		dft__touch(cat);
		dft__touch(name);
		DFT__S3(region_end, cat, name, count);
	}
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
				 DFT__SEMA(arg_int) | DFT__SEMA(arg_str)) != 0,
				0);
}

#else /* !DFT__PROBES: the same API, compiled out */

#define DFT__ON(probe) 0

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

#define DFT_USDT_REGION_BEGIN(cat, name) dft__region(0, (cat), (name), 0)
#define DFT_USDT_REGION_END(cat, name) dft__region(1, (cat), (name), 0)

#ifdef __cplusplus
namespace dftrace {
/* RAII: the end probe fires however the scope is left, exceptions too. */
class usdt_scope {
public:
	usdt_scope(const char *cat, const char *name) : cat_(cat), name_(name)
	{
		dft__region(0, cat_, name_, 0);
	}
	~usdt_scope() { dft__region(1, cat_, name_, 0); }
	usdt_scope(const usdt_scope &) = delete;
	usdt_scope &operator=(const usdt_scope &) = delete;

private:
	const char *cat_, *name_;
};
} /* namespace dftrace */
#define DFT_USDT_REGION(cat, name)                                            \
	::dftrace::usdt_scope DFT__UNIQ(dft__scope_)((cat), (name))
#else
struct dft_usdt_scope {
	const char *cat, *name;
};

DFT__FN struct dft_usdt_scope dft__scope_begin(const char *cat, const char *name)
{
	struct dft_usdt_scope s;

	s.cat = cat;
	s.name = name;
	dft__region(0, cat, name, 0);
	return s;
}

DFT__FN void dft__scope_end(struct dft_usdt_scope *s)
{
	dft__region(1, s->cat, s->name, 0);
}

/* The cleanup attribute ends the region on every exit from the block
 * (return, break, goto; and unwinding when built with -fexceptions). */
#define DFT_USDT_REGION(cat, name)                                            \
	__attribute__((cleanup(dft__scope_end), unused))                       \
	struct dft_usdt_scope DFT__UNIQ(dft__scope_) =                          \
		dft__scope_begin((cat), (name))
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
 * The count advances whether or not a tracer is attached, so a tracer that
 * attaches mid-loop sees the true element numbers. In C++ the iterator
 * also calls dft_usdt_iter_done() when it goes out of scope.
 */
struct dft_usdt_iter {
	const char *cat, *iter_name, *block_name;
	int64_t count;
	int open; /* 0 nothing, 1 .iter, 2 .block */
#ifdef __cplusplus
	dft_usdt_iter(const char *c, const char *i, const char *b)
		: cat(c), iter_name(i), block_name(b), count(0), open(0)
	{
	}
	dft_usdt_iter(dft_usdt_iter &&o)
		: cat(o.cat), iter_name(o.iter_name), block_name(o.block_name),
		  count(o.count), open(o.open)
	{
		o.open = 0;
	}
	dft_usdt_iter(const dft_usdt_iter &) = delete;
	dft_usdt_iter &operator=(const dft_usdt_iter &) = delete;
	inline ~dft_usdt_iter();
#endif
};

DFT__FN void dft_usdt_iter_done(struct dft_usdt_iter *it)
{
	if (it->open == 1)
		dft__region(1, it->cat, it->iter_name, it->count);
	else if (it->open == 2)
		dft__region(1, it->cat, it->block_name, it->count);
	it->open = 0;
}

DFT__FN void dft_usdt_iter_wait(struct dft_usdt_iter *it)
{
	dft_usdt_iter_done(it);
	it->count++;
	dft__region(0, it->cat, it->iter_name, it->count);
	it->open = 1;
}

DFT__FN void dft_usdt_iter_body(struct dft_usdt_iter *it)
{
	if (it->open != 1) /* no wait before it: a new element */
		it->count++;
	dft_usdt_iter_done(it);
	dft__region(0, it->cat, it->block_name, it->count);
	it->open = 2;
}

#ifdef __cplusplus
inline dft_usdt_iter::~dft_usdt_iter()
{
	dft_usdt_iter_done(this);
}
#define DFT_USDT_ITER(cat, name) dft_usdt_iter((cat), name ".iter", name ".block")
#else
#define DFT_USDT_ITER(cat, name)                                              \
	((struct dft_usdt_iter){ (cat), name ".iter", name ".block", 0, 0 })
#endif

/* ---- DFTracer's AI logging tree: the same family of macros for every
 * category and every leaf X in category C:
 *   DFT_USDT_X()              scoped region "x" in cat "c"
 *   DFT_USDT_X_BEGIN/_END()   the same, explicit
 *   DFT_USDT_X_INIT()         scoped "x.init" (constructors)
 *   DFT_USDT_X_ITER()         a struct dft_usdt_iter for "x.iter"/"x.block"
 *   DFT_USDT_X_START_META/_STOP_META()   CM "x.start"/"x.end"
 * A category's own node is named after it: DFT_USDT_COMPUTE() is
 * "compute" in cat "compute". ---- */

/* compute: the category itself, then forward, backward, step */
#define DFT_USDT_COMPUTE() DFT_USDT_REGION("compute", "compute")
#define DFT_USDT_COMPUTE_BEGIN() DFT_USDT_REGION_BEGIN("compute", "compute")
#define DFT_USDT_COMPUTE_END() DFT_USDT_REGION_END("compute", "compute")
#define DFT_USDT_COMPUTE_INIT() DFT_USDT_REGION("compute", "compute.init")
#define DFT_USDT_COMPUTE_ITER() DFT_USDT_ITER("compute", "compute")
#define DFT_USDT_COMPUTE_START_META() DFT_USDT_START_META("compute", "compute")
#define DFT_USDT_COMPUTE_STOP_META() DFT_USDT_STOP_META("compute", "compute")
#define DFT_USDT_FORWARD() DFT_USDT_REGION("compute", "forward")
#define DFT_USDT_FORWARD_BEGIN() DFT_USDT_REGION_BEGIN("compute", "forward")
#define DFT_USDT_FORWARD_END() DFT_USDT_REGION_END("compute", "forward")
#define DFT_USDT_FORWARD_INIT() DFT_USDT_REGION("compute", "forward.init")
#define DFT_USDT_FORWARD_ITER() DFT_USDT_ITER("compute", "forward")
#define DFT_USDT_FORWARD_START_META() DFT_USDT_START_META("compute", "forward")
#define DFT_USDT_FORWARD_STOP_META() DFT_USDT_STOP_META("compute", "forward")
#define DFT_USDT_BACKWARD() DFT_USDT_REGION("compute", "backward")
#define DFT_USDT_BACKWARD_BEGIN() DFT_USDT_REGION_BEGIN("compute", "backward")
#define DFT_USDT_BACKWARD_END() DFT_USDT_REGION_END("compute", "backward")
#define DFT_USDT_BACKWARD_INIT() DFT_USDT_REGION("compute", "backward.init")
#define DFT_USDT_BACKWARD_ITER() DFT_USDT_ITER("compute", "backward")
#define DFT_USDT_BACKWARD_START_META() DFT_USDT_START_META("compute", "backward")
#define DFT_USDT_BACKWARD_STOP_META() DFT_USDT_STOP_META("compute", "backward")
#define DFT_USDT_STEP() DFT_USDT_REGION("compute", "step")
#define DFT_USDT_STEP_BEGIN() DFT_USDT_REGION_BEGIN("compute", "step")
#define DFT_USDT_STEP_END() DFT_USDT_REGION_END("compute", "step")
#define DFT_USDT_STEP_INIT() DFT_USDT_REGION("compute", "step.init")
#define DFT_USDT_STEP_ITER() DFT_USDT_ITER("compute", "step")
#define DFT_USDT_STEP_START_META() DFT_USDT_START_META("compute", "step")
#define DFT_USDT_STEP_STOP_META() DFT_USDT_STOP_META("compute", "step")

/* data: the category itself, then preprocess, item */
#define DFT_USDT_DATA() DFT_USDT_REGION("data", "data")
#define DFT_USDT_DATA_BEGIN() DFT_USDT_REGION_BEGIN("data", "data")
#define DFT_USDT_DATA_END() DFT_USDT_REGION_END("data", "data")
#define DFT_USDT_DATA_INIT() DFT_USDT_REGION("data", "data.init")
#define DFT_USDT_DATA_ITER() DFT_USDT_ITER("data", "data")
#define DFT_USDT_DATA_START_META() DFT_USDT_START_META("data", "data")
#define DFT_USDT_DATA_STOP_META() DFT_USDT_STOP_META("data", "data")
#define DFT_USDT_PREPROCESS() DFT_USDT_REGION("data", "preprocess")
#define DFT_USDT_PREPROCESS_BEGIN() DFT_USDT_REGION_BEGIN("data", "preprocess")
#define DFT_USDT_PREPROCESS_END() DFT_USDT_REGION_END("data", "preprocess")
#define DFT_USDT_PREPROCESS_INIT() DFT_USDT_REGION("data", "preprocess.init")
#define DFT_USDT_PREPROCESS_ITER() DFT_USDT_ITER("data", "preprocess")
#define DFT_USDT_PREPROCESS_START_META() DFT_USDT_START_META("data", "preprocess")
#define DFT_USDT_PREPROCESS_STOP_META() DFT_USDT_STOP_META("data", "preprocess")
#define DFT_USDT_ITEM() DFT_USDT_REGION("data", "item")
#define DFT_USDT_ITEM_BEGIN() DFT_USDT_REGION_BEGIN("data", "item")
#define DFT_USDT_ITEM_END() DFT_USDT_REGION_END("data", "item")
#define DFT_USDT_ITEM_INIT() DFT_USDT_REGION("data", "item.init")
#define DFT_USDT_ITEM_ITER() DFT_USDT_ITER("data", "item")
#define DFT_USDT_ITEM_START_META() DFT_USDT_START_META("data", "item")
#define DFT_USDT_ITEM_STOP_META() DFT_USDT_STOP_META("data", "item")

/* dataloader: the category itself, then fetch */
#define DFT_USDT_DATALOADER() DFT_USDT_REGION("dataloader", "dataloader")
#define DFT_USDT_DATALOADER_BEGIN() DFT_USDT_REGION_BEGIN("dataloader", "dataloader")
#define DFT_USDT_DATALOADER_END() DFT_USDT_REGION_END("dataloader", "dataloader")
#define DFT_USDT_DATALOADER_INIT() DFT_USDT_REGION("dataloader", "dataloader.init")
#define DFT_USDT_DATALOADER_ITER() DFT_USDT_ITER("dataloader", "dataloader")
#define DFT_USDT_DATALOADER_START_META() DFT_USDT_START_META("dataloader", "dataloader")
#define DFT_USDT_DATALOADER_STOP_META() DFT_USDT_STOP_META("dataloader", "dataloader")
#define DFT_USDT_FETCH() DFT_USDT_REGION("dataloader", "fetch")
#define DFT_USDT_FETCH_BEGIN() DFT_USDT_REGION_BEGIN("dataloader", "fetch")
#define DFT_USDT_FETCH_END() DFT_USDT_REGION_END("dataloader", "fetch")
#define DFT_USDT_FETCH_INIT() DFT_USDT_REGION("dataloader", "fetch.init")
#define DFT_USDT_FETCH_ITER() DFT_USDT_ITER("dataloader", "fetch")
#define DFT_USDT_FETCH_START_META() DFT_USDT_START_META("dataloader", "fetch")
#define DFT_USDT_FETCH_STOP_META() DFT_USDT_STOP_META("dataloader", "fetch")

/* comm: the category itself, then send, receive, barrier, bcast, reduce, all_reduce, gather, all_gather, scatter, reduce_scatter, all_to_all */
#define DFT_USDT_COMM() DFT_USDT_REGION("comm", "comm")
#define DFT_USDT_COMM_BEGIN() DFT_USDT_REGION_BEGIN("comm", "comm")
#define DFT_USDT_COMM_END() DFT_USDT_REGION_END("comm", "comm")
#define DFT_USDT_COMM_INIT() DFT_USDT_REGION("comm", "comm.init")
#define DFT_USDT_COMM_ITER() DFT_USDT_ITER("comm", "comm")
#define DFT_USDT_COMM_START_META() DFT_USDT_START_META("comm", "comm")
#define DFT_USDT_COMM_STOP_META() DFT_USDT_STOP_META("comm", "comm")
#define DFT_USDT_SEND() DFT_USDT_REGION("comm", "send")
#define DFT_USDT_SEND_BEGIN() DFT_USDT_REGION_BEGIN("comm", "send")
#define DFT_USDT_SEND_END() DFT_USDT_REGION_END("comm", "send")
#define DFT_USDT_SEND_INIT() DFT_USDT_REGION("comm", "send.init")
#define DFT_USDT_SEND_ITER() DFT_USDT_ITER("comm", "send")
#define DFT_USDT_SEND_START_META() DFT_USDT_START_META("comm", "send")
#define DFT_USDT_SEND_STOP_META() DFT_USDT_STOP_META("comm", "send")
#define DFT_USDT_RECEIVE() DFT_USDT_REGION("comm", "receive")
#define DFT_USDT_RECEIVE_BEGIN() DFT_USDT_REGION_BEGIN("comm", "receive")
#define DFT_USDT_RECEIVE_END() DFT_USDT_REGION_END("comm", "receive")
#define DFT_USDT_RECEIVE_INIT() DFT_USDT_REGION("comm", "receive.init")
#define DFT_USDT_RECEIVE_ITER() DFT_USDT_ITER("comm", "receive")
#define DFT_USDT_RECEIVE_START_META() DFT_USDT_START_META("comm", "receive")
#define DFT_USDT_RECEIVE_STOP_META() DFT_USDT_STOP_META("comm", "receive")
#define DFT_USDT_BARRIER() DFT_USDT_REGION("comm", "barrier")
#define DFT_USDT_BARRIER_BEGIN() DFT_USDT_REGION_BEGIN("comm", "barrier")
#define DFT_USDT_BARRIER_END() DFT_USDT_REGION_END("comm", "barrier")
#define DFT_USDT_BARRIER_INIT() DFT_USDT_REGION("comm", "barrier.init")
#define DFT_USDT_BARRIER_ITER() DFT_USDT_ITER("comm", "barrier")
#define DFT_USDT_BARRIER_START_META() DFT_USDT_START_META("comm", "barrier")
#define DFT_USDT_BARRIER_STOP_META() DFT_USDT_STOP_META("comm", "barrier")
#define DFT_USDT_BCAST() DFT_USDT_REGION("comm", "bcast")
#define DFT_USDT_BCAST_BEGIN() DFT_USDT_REGION_BEGIN("comm", "bcast")
#define DFT_USDT_BCAST_END() DFT_USDT_REGION_END("comm", "bcast")
#define DFT_USDT_BCAST_INIT() DFT_USDT_REGION("comm", "bcast.init")
#define DFT_USDT_BCAST_ITER() DFT_USDT_ITER("comm", "bcast")
#define DFT_USDT_BCAST_START_META() DFT_USDT_START_META("comm", "bcast")
#define DFT_USDT_BCAST_STOP_META() DFT_USDT_STOP_META("comm", "bcast")
#define DFT_USDT_REDUCE() DFT_USDT_REGION("comm", "reduce")
#define DFT_USDT_REDUCE_BEGIN() DFT_USDT_REGION_BEGIN("comm", "reduce")
#define DFT_USDT_REDUCE_END() DFT_USDT_REGION_END("comm", "reduce")
#define DFT_USDT_REDUCE_INIT() DFT_USDT_REGION("comm", "reduce.init")
#define DFT_USDT_REDUCE_ITER() DFT_USDT_ITER("comm", "reduce")
#define DFT_USDT_REDUCE_START_META() DFT_USDT_START_META("comm", "reduce")
#define DFT_USDT_REDUCE_STOP_META() DFT_USDT_STOP_META("comm", "reduce")
#define DFT_USDT_ALL_REDUCE() DFT_USDT_REGION("comm", "all_reduce")
#define DFT_USDT_ALL_REDUCE_BEGIN() DFT_USDT_REGION_BEGIN("comm", "all_reduce")
#define DFT_USDT_ALL_REDUCE_END() DFT_USDT_REGION_END("comm", "all_reduce")
#define DFT_USDT_ALL_REDUCE_INIT() DFT_USDT_REGION("comm", "all_reduce.init")
#define DFT_USDT_ALL_REDUCE_ITER() DFT_USDT_ITER("comm", "all_reduce")
#define DFT_USDT_ALL_REDUCE_START_META() DFT_USDT_START_META("comm", "all_reduce")
#define DFT_USDT_ALL_REDUCE_STOP_META() DFT_USDT_STOP_META("comm", "all_reduce")
#define DFT_USDT_GATHER() DFT_USDT_REGION("comm", "gather")
#define DFT_USDT_GATHER_BEGIN() DFT_USDT_REGION_BEGIN("comm", "gather")
#define DFT_USDT_GATHER_END() DFT_USDT_REGION_END("comm", "gather")
#define DFT_USDT_GATHER_INIT() DFT_USDT_REGION("comm", "gather.init")
#define DFT_USDT_GATHER_ITER() DFT_USDT_ITER("comm", "gather")
#define DFT_USDT_GATHER_START_META() DFT_USDT_START_META("comm", "gather")
#define DFT_USDT_GATHER_STOP_META() DFT_USDT_STOP_META("comm", "gather")
#define DFT_USDT_ALL_GATHER() DFT_USDT_REGION("comm", "all_gather")
#define DFT_USDT_ALL_GATHER_BEGIN() DFT_USDT_REGION_BEGIN("comm", "all_gather")
#define DFT_USDT_ALL_GATHER_END() DFT_USDT_REGION_END("comm", "all_gather")
#define DFT_USDT_ALL_GATHER_INIT() DFT_USDT_REGION("comm", "all_gather.init")
#define DFT_USDT_ALL_GATHER_ITER() DFT_USDT_ITER("comm", "all_gather")
#define DFT_USDT_ALL_GATHER_START_META() DFT_USDT_START_META("comm", "all_gather")
#define DFT_USDT_ALL_GATHER_STOP_META() DFT_USDT_STOP_META("comm", "all_gather")
#define DFT_USDT_SCATTER() DFT_USDT_REGION("comm", "scatter")
#define DFT_USDT_SCATTER_BEGIN() DFT_USDT_REGION_BEGIN("comm", "scatter")
#define DFT_USDT_SCATTER_END() DFT_USDT_REGION_END("comm", "scatter")
#define DFT_USDT_SCATTER_INIT() DFT_USDT_REGION("comm", "scatter.init")
#define DFT_USDT_SCATTER_ITER() DFT_USDT_ITER("comm", "scatter")
#define DFT_USDT_SCATTER_START_META() DFT_USDT_START_META("comm", "scatter")
#define DFT_USDT_SCATTER_STOP_META() DFT_USDT_STOP_META("comm", "scatter")
#define DFT_USDT_REDUCE_SCATTER() DFT_USDT_REGION("comm", "reduce_scatter")
#define DFT_USDT_REDUCE_SCATTER_BEGIN() DFT_USDT_REGION_BEGIN("comm", "reduce_scatter")
#define DFT_USDT_REDUCE_SCATTER_END() DFT_USDT_REGION_END("comm", "reduce_scatter")
#define DFT_USDT_REDUCE_SCATTER_INIT() DFT_USDT_REGION("comm", "reduce_scatter.init")
#define DFT_USDT_REDUCE_SCATTER_ITER() DFT_USDT_ITER("comm", "reduce_scatter")
#define DFT_USDT_REDUCE_SCATTER_START_META() DFT_USDT_START_META("comm", "reduce_scatter")
#define DFT_USDT_REDUCE_SCATTER_STOP_META() DFT_USDT_STOP_META("comm", "reduce_scatter")
#define DFT_USDT_ALL_TO_ALL() DFT_USDT_REGION("comm", "all_to_all")
#define DFT_USDT_ALL_TO_ALL_BEGIN() DFT_USDT_REGION_BEGIN("comm", "all_to_all")
#define DFT_USDT_ALL_TO_ALL_END() DFT_USDT_REGION_END("comm", "all_to_all")
#define DFT_USDT_ALL_TO_ALL_INIT() DFT_USDT_REGION("comm", "all_to_all.init")
#define DFT_USDT_ALL_TO_ALL_ITER() DFT_USDT_ITER("comm", "all_to_all")
#define DFT_USDT_ALL_TO_ALL_START_META() DFT_USDT_START_META("comm", "all_to_all")
#define DFT_USDT_ALL_TO_ALL_STOP_META() DFT_USDT_STOP_META("comm", "all_to_all")

/* device: the category itself, then transfer */
#define DFT_USDT_DEVICE() DFT_USDT_REGION("device", "device")
#define DFT_USDT_DEVICE_BEGIN() DFT_USDT_REGION_BEGIN("device", "device")
#define DFT_USDT_DEVICE_END() DFT_USDT_REGION_END("device", "device")
#define DFT_USDT_DEVICE_INIT() DFT_USDT_REGION("device", "device.init")
#define DFT_USDT_DEVICE_ITER() DFT_USDT_ITER("device", "device")
#define DFT_USDT_DEVICE_START_META() DFT_USDT_START_META("device", "device")
#define DFT_USDT_DEVICE_STOP_META() DFT_USDT_STOP_META("device", "device")
#define DFT_USDT_TRANSFER() DFT_USDT_REGION("device", "transfer")
#define DFT_USDT_TRANSFER_BEGIN() DFT_USDT_REGION_BEGIN("device", "transfer")
#define DFT_USDT_TRANSFER_END() DFT_USDT_REGION_END("device", "transfer")
#define DFT_USDT_TRANSFER_INIT() DFT_USDT_REGION("device", "transfer.init")
#define DFT_USDT_TRANSFER_ITER() DFT_USDT_ITER("device", "transfer")
#define DFT_USDT_TRANSFER_START_META() DFT_USDT_START_META("device", "transfer")
#define DFT_USDT_TRANSFER_STOP_META() DFT_USDT_STOP_META("device", "transfer")

/* checkpoint: the category itself, then capture, restart */
#define DFT_USDT_CHECKPOINT() DFT_USDT_REGION("checkpoint", "checkpoint")
#define DFT_USDT_CHECKPOINT_BEGIN() DFT_USDT_REGION_BEGIN("checkpoint", "checkpoint")
#define DFT_USDT_CHECKPOINT_END() DFT_USDT_REGION_END("checkpoint", "checkpoint")
#define DFT_USDT_CHECKPOINT_INIT() DFT_USDT_REGION("checkpoint", "checkpoint.init")
#define DFT_USDT_CHECKPOINT_ITER() DFT_USDT_ITER("checkpoint", "checkpoint")
#define DFT_USDT_CHECKPOINT_START_META() DFT_USDT_START_META("checkpoint", "checkpoint")
#define DFT_USDT_CHECKPOINT_STOP_META() DFT_USDT_STOP_META("checkpoint", "checkpoint")
#define DFT_USDT_CAPTURE() DFT_USDT_REGION("checkpoint", "capture")
#define DFT_USDT_CAPTURE_BEGIN() DFT_USDT_REGION_BEGIN("checkpoint", "capture")
#define DFT_USDT_CAPTURE_END() DFT_USDT_REGION_END("checkpoint", "capture")
#define DFT_USDT_CAPTURE_INIT() DFT_USDT_REGION("checkpoint", "capture.init")
#define DFT_USDT_CAPTURE_ITER() DFT_USDT_ITER("checkpoint", "capture")
#define DFT_USDT_CAPTURE_START_META() DFT_USDT_START_META("checkpoint", "capture")
#define DFT_USDT_CAPTURE_STOP_META() DFT_USDT_STOP_META("checkpoint", "capture")
#define DFT_USDT_RESTART() DFT_USDT_REGION("checkpoint", "restart")
#define DFT_USDT_RESTART_BEGIN() DFT_USDT_REGION_BEGIN("checkpoint", "restart")
#define DFT_USDT_RESTART_END() DFT_USDT_REGION_END("checkpoint", "restart")
#define DFT_USDT_RESTART_INIT() DFT_USDT_REGION("checkpoint", "restart.init")
#define DFT_USDT_RESTART_ITER() DFT_USDT_ITER("checkpoint", "restart")
#define DFT_USDT_RESTART_START_META() DFT_USDT_START_META("checkpoint", "restart")
#define DFT_USDT_RESTART_STOP_META() DFT_USDT_STOP_META("checkpoint", "restart")

/* pipeline: the category itself, then epoch, train, evaluate, test */
#define DFT_USDT_PIPELINE() DFT_USDT_REGION("pipeline", "pipeline")
#define DFT_USDT_PIPELINE_BEGIN() DFT_USDT_REGION_BEGIN("pipeline", "pipeline")
#define DFT_USDT_PIPELINE_END() DFT_USDT_REGION_END("pipeline", "pipeline")
#define DFT_USDT_PIPELINE_INIT() DFT_USDT_REGION("pipeline", "pipeline.init")
#define DFT_USDT_PIPELINE_ITER() DFT_USDT_ITER("pipeline", "pipeline")
#define DFT_USDT_PIPELINE_START_META() DFT_USDT_START_META("pipeline", "pipeline")
#define DFT_USDT_PIPELINE_STOP_META() DFT_USDT_STOP_META("pipeline", "pipeline")
#define DFT_USDT_EPOCH() DFT_USDT_REGION("pipeline", "epoch")
#define DFT_USDT_EPOCH_BEGIN() DFT_USDT_REGION_BEGIN("pipeline", "epoch")
#define DFT_USDT_EPOCH_END() DFT_USDT_REGION_END("pipeline", "epoch")
#define DFT_USDT_EPOCH_INIT() DFT_USDT_REGION("pipeline", "epoch.init")
#define DFT_USDT_EPOCH_ITER() DFT_USDT_ITER("pipeline", "epoch")
#define DFT_USDT_EPOCH_START_META() DFT_USDT_START_META("pipeline", "epoch")
#define DFT_USDT_EPOCH_STOP_META() DFT_USDT_STOP_META("pipeline", "epoch")
#define DFT_USDT_TRAIN() DFT_USDT_REGION("pipeline", "train")
#define DFT_USDT_TRAIN_BEGIN() DFT_USDT_REGION_BEGIN("pipeline", "train")
#define DFT_USDT_TRAIN_END() DFT_USDT_REGION_END("pipeline", "train")
#define DFT_USDT_TRAIN_INIT() DFT_USDT_REGION("pipeline", "train.init")
#define DFT_USDT_TRAIN_ITER() DFT_USDT_ITER("pipeline", "train")
#define DFT_USDT_TRAIN_START_META() DFT_USDT_START_META("pipeline", "train")
#define DFT_USDT_TRAIN_STOP_META() DFT_USDT_STOP_META("pipeline", "train")
#define DFT_USDT_EVALUATE() DFT_USDT_REGION("pipeline", "evaluate")
#define DFT_USDT_EVALUATE_BEGIN() DFT_USDT_REGION_BEGIN("pipeline", "evaluate")
#define DFT_USDT_EVALUATE_END() DFT_USDT_REGION_END("pipeline", "evaluate")
#define DFT_USDT_EVALUATE_INIT() DFT_USDT_REGION("pipeline", "evaluate.init")
#define DFT_USDT_EVALUATE_ITER() DFT_USDT_ITER("pipeline", "evaluate")
#define DFT_USDT_EVALUATE_START_META() DFT_USDT_START_META("pipeline", "evaluate")
#define DFT_USDT_EVALUATE_STOP_META() DFT_USDT_STOP_META("pipeline", "evaluate")
#define DFT_USDT_TEST() DFT_USDT_REGION("pipeline", "test")
#define DFT_USDT_TEST_BEGIN() DFT_USDT_REGION_BEGIN("pipeline", "test")
#define DFT_USDT_TEST_END() DFT_USDT_REGION_END("pipeline", "test")
#define DFT_USDT_TEST_INIT() DFT_USDT_REGION("pipeline", "test.init")
#define DFT_USDT_TEST_ITER() DFT_USDT_ITER("pipeline", "test")
#define DFT_USDT_TEST_START_META() DFT_USDT_START_META("pipeline", "test")
#define DFT_USDT_TEST_STOP_META() DFT_USDT_STOP_META("pipeline", "test")

#endif /* DFTRACE_USDT_H */
