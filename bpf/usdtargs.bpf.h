/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * DFT_USDT(): libbpf's BPF_USDT(), with the arguments fetched at once.
 * libbpf's bpf_usdt_arg() looks the probe's spec up again for each
 * argument and reads each register with a helper call: 130 ns of the
 * 525 a region_begin took here (bpf_stats), for its three arguments.
 * Here the spec is looked up once and the registers are copied out of
 * the context with plain loads. The specs and their maps stay libbpf's,
 * filled by the libbpf we link; a kind of argument not known here goes
 * to bpf_usdt_arg(). Included by annot.bpf.c, after <bpf/usdt.bpf.h>.
 */
#ifndef USDTARGS_BPF_H
#define USDTARGS_BPF_H

#define DFT_USDT_ARGS_MAX 3
#define USDT_REGS_WORDS (sizeof(struct pt_regs) / sizeof(long))

/* The registers' copy, per CPU: on the stack it took a third of the 512
 * bytes that older kernels allow a program and what it calls. A word
 * more than pt_regs: the verifier bounds a register's aligned offset by
 * the last byte's (167), not the last word's (160). */
struct usdt_regs {
	unsigned long w[USDT_REGS_WORDS + 1];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct usdt_regs);
} usdt_regs SEC(".maps");

/* A register of regs, the context's copy, by its offset in pt_regs. A
 * copy: the verifier takes context loads only at constant offsets, and
 * clang merges the loads of a switch into one at a variable offset. */
static __always_inline unsigned long usdt_reg(const unsigned long *regs, short off)
{
	unsigned int i = (unsigned short)off / sizeof(long);

	if (off < 0 || off % sizeof(long) || i >= USDT_REGS_WORDS)
		return 0;
	return regs[i];
}

/* Argument i of the probe hit, as bpf_usdt_arg() gives it. */
static __always_inline long usdt_arg(struct pt_regs *ctx, const unsigned long *regs,
				     struct __bpf_usdt_spec *spec, int i)
{
	struct __bpf_usdt_arg_spec *a = &spec->args[i];
	unsigned long v;
	long slow;

	switch (a->arg_type) {
	case BPF_USDT_ARG_CONST:
		v = a->val_off;
		break;
	case BPF_USDT_ARG_REG:
		v = usdt_reg(regs, a->reg_off);
		break;
	case BPF_USDT_ARG_REG_DEREF:
		if (bpf_probe_read_user(&v, sizeof(v),
					(void *)(usdt_reg(regs, a->reg_off) + a->val_off)))
			return 0;
		break;
	default:
		bpf_usdt_arg(ctx, i, &slow);
		return slow;
	}
	/* 1, 2 or 4 bytes widened to 8, signed or not */
	v <<= a->arg_bitshift;
	return a->arg_signed ? (long)v >> a->arg_bitshift : (long)(v >> a->arg_bitshift);
}

/* The first n arguments into args; 0 for those the probe lacks. Returns
 * the attachment's cookie (bpf_usdt_cookie() would look the spec up
 * again). */
static __always_inline long usdt_args(struct pt_regs *ctx, long *args, int n)
{
	int id = __bpf_usdt_spec_id(ctx);
	struct __bpf_usdt_spec *spec;
	struct usdt_regs *regs;
	__u32 zero = 0;

	for (int i = 0; i < DFT_USDT_ARGS_MAX; i++)
		if (i < n)
			args[i] = 0;
	spec = id < 0 ? NULL : bpf_map_lookup_elem(&__bpf_usdt_specs, &id);
	regs = bpf_map_lookup_elem(&usdt_regs, &zero);
	if (!spec || !regs)
		return spec ? spec->usdt_cookie : 0;
	__builtin_memcpy(regs->w, ctx, sizeof(struct pt_regs));
	for (int i = 0; i < DFT_USDT_ARGS_MAX; i++)
		if (i < n && i < spec->arg_cnt)
			args[i] = usdt_arg(ctx, regs->w, spec, i);
	return spec->usdt_cookie;
}

#define ___dft_usdt_args0() ctx, _cookie
#define ___dft_usdt_args1(x) ___dft_usdt_args0(), (void *)_args[0]
#define ___dft_usdt_args2(x, args...) ___dft_usdt_args1(args), (void *)_args[1]
#define ___dft_usdt_args3(x, args...) ___dft_usdt_args2(args), (void *)_args[2]
#define ___dft_usdt_args(args...) ___bpf_apply(___dft_usdt_args, ___bpf_narg(args))(args)

/* As BPF_USDT(name, args...), up to DFT_USDT_ARGS_MAX arguments; the
 * body has the attachment's cookie as DFT_USDT_COOKIE. */
#define DFT_USDT_COOKIE _cookie
#define DFT_USDT(name, args...)						    \
name(struct pt_regs *ctx);						    \
static __always_inline typeof(name(0))					    \
____##name(struct pt_regs *ctx, long _cookie, ##args);		    \
typeof(name(0)) name(struct pt_regs *ctx)				    \
{									    \
	long _args[DFT_USDT_ARGS_MAX], _cookie;				    \
									    \
	_Static_assert(___bpf_narg(args) <= DFT_USDT_ARGS_MAX, "too many");  \
	_cookie = usdt_args(ctx, _args, ___bpf_narg(args));		    \
	_Pragma("GCC diagnostic push")					    \
	_Pragma("GCC diagnostic ignored \"-Wint-conversion\"")		    \
	return ____##name(___dft_usdt_args(args));			    \
	_Pragma("GCC diagnostic pop")					    \
}									    \
static __always_inline typeof(name(0))					    \
____##name(struct pt_regs *ctx, long _cookie, ##args)

#endif
