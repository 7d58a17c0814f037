// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#if defined(__x86_64__)
#include <sys/user.h>
#endif
#include "capture/usdtspec.h"
#include "lib/hash.h"

_Static_assert(sizeof(struct usdt_arg) == 16 && sizeof(struct usdt_spec) == 208,
	       "libbpf 1.1's struct __bpf_usdt_spec");

/* A note's argument, as text: "SIZE@OPERAND", at most this long. */
#define ARG_TEXT_MAX 64

/* The registers an operand may name, by their offsets in the kernel's
 * struct pt_regs, which begins as user_regs_struct does (x86-64). Every
 * name of a register's low bytes reads the whole register: the spec's
 * size then keeps the bytes it names. Elsewhere no register is known
 * here, and a note that names one is not attached. */
static const struct {
	const char *name;
	short off;
} regs[] = {
#if defined(__x86_64__)
#define R(n, field) { n, offsetof(struct user_regs_struct, field) },
	R("rip", rip) R("eip", rip)
	R("rax", rax) R("eax", rax) R("ax", rax) R("al", rax)
	R("rbx", rbx) R("ebx", rbx) R("bx", rbx) R("bl", rbx)
	R("rcx", rcx) R("ecx", rcx) R("cx", rcx) R("cl", rcx)
	R("rdx", rdx) R("edx", rdx) R("dx", rdx) R("dl", rdx)
	R("rsi", rsi) R("esi", rsi) R("si", rsi) R("sil", rsi)
	R("rdi", rdi) R("edi", rdi) R("di", rdi) R("dil", rdi)
	R("rbp", rbp) R("ebp", rbp) R("bp", rbp) R("bpl", rbp)
	R("rsp", rsp) R("esp", rsp) R("sp", rsp) R("spl", rsp)
	R("r8", r8) R("r8d", r8) R("r8w", r8) R("r8b", r8)
	R("r9", r9) R("r9d", r9) R("r9w", r9) R("r9b", r9)
	R("r10", r10) R("r10d", r10) R("r10w", r10) R("r10b", r10)
	R("r11", r11) R("r11d", r11) R("r11w", r11) R("r11b", r11)
	R("r12", r12) R("r12d", r12) R("r12w", r12) R("r12b", r12)
	R("r13", r13) R("r13d", r13) R("r13w", r13) R("r13b", r13)
	R("r14", r14) R("r14d", r14) R("r14w", r14) R("r14b", r14)
	R("r15", r15) R("r15d", r15) R("r15w", r15) R("r15b", r15)
#undef R
#endif
	{ NULL, 0 },
};

/* "%name" up to end: its offset, or -1. */
static short reg_offset(const char *s, const char *end)
{
	size_t n = end - s;

	if (n < 2 || s[0] != '%')
		return -1;
	for (size_t i = 0; regs[i].name; i++)
		if (strlen(regs[i].name) == n - 1 && !memcmp(regs[i].name, s + 1, n - 1))
			return regs[i].off;
	return -1;
}

/* A number that runs to end exactly. */
static bool whole_number(const char *s, const char *end, long long *v)
{
	char *e;

	if (s == end)
		return false;
	errno = 0;
	*v = strtoll(s, &e, 0);
	return !errno && e == end;
}

/* The operand of an argument: "$5", "%rdi", "-20(%rbp)" or "(%rax)". */
static bool parse_operand(const char *s, const char *end, struct usdt_arg *a)
{
	const char *open = memchr(s, '(', end - s);
	long long v = 0;

	if (s < end && *s == '$') {
		a->type = USDT_ARG_CONST;
		if (!whole_number(s + 1, end, &v))
			return false;
		a->val_off = v;
		return true;
	}
	if (!open) {
		a->type = USDT_ARG_REG;
		a->reg_off = reg_offset(s, end);
		return a->reg_off >= 0;
	}
	/* an offset (none: 0), then the register in parentheses */
	if ((open > s && !whole_number(s, open, &v)) || end[-1] != ')')
		return false;
	a->type = USDT_ARG_REG_DEREF;
	a->val_off = v;
	a->reg_off = reg_offset(open + 1, end - 1);
	return a->reg_off >= 0;
}

/* "SIZE@OPERAND": SIZE 1, 2, 4 or 8 bytes, negative if signed. */
static bool parse_arg(const char *text, struct usdt_arg *a)
{
	const char *at = strchr(text, '@');
	long long size;

	if (!at || !whole_number(text, at, &size))
		return false;
	if (size < 0) {
		a->is_signed = true;
		size = -size;
	}
	if (size != 1 && size != 2 && size != 4 && size != 8)
		return false;
	a->bitshift = 64 - 8 * size;
	return parse_operand(at + 1, text + strlen(text), a);
}

bool usdt_spec_parse(const char *specs, uint64_t cookie, struct usdt_spec *out)
{
	char text[ARG_TEXT_MAX];
	const char *s = specs;
	size_t n;

	memset(out, 0, sizeof(*out)); /* hashed whole, padding too */
	out->cookie = cookie;
	for (;;) {
		s += strspn(s, " ");
		n = strcspn(s, " ");
		if (!n)
			return true;
		if (n >= sizeof(text) || out->nargs == USDT_SPEC_ARGS)
			return false;
		memcpy(text, s, n);
		text[n] = 0;
		if (!parse_arg(text, &out->args[out->nargs++]))
			return false;
		s += n;
	}
}

/* ---- the map's indexes ---- */

bool usdt_specs_init(struct usdt_specs *p, int map_fd, uint32_t max, uint32_t value_size)
{
	*p = (struct usdt_specs){ .map_fd = map_fd, .max = max };
	p->refs = calloc(max, sizeof(*p->refs));
	p->hashes = calloc(max, sizeof(*p->hashes));
	p->free_ids = calloc(max, sizeof(*p->free_ids));
	if (value_size == sizeof(struct usdt_spec) && p->refs && p->hashes && p->free_ids)
		return true;
	usdt_specs_free(p);
	return false;
}

static uint64_t spec_hash(const struct usdt_spec *s)
{
	return dft_hash64(s, sizeof(*s));
}

int usdt_specs_get(struct usdt_specs *p, const struct usdt_spec *s, uint32_t *id)
{
	uint64_t key = spec_hash(s), v;
	int err = 0;

	if (hmap_get(&p->by_content, key, &v)) {
		*id = v;
		p->refs[v]++;
		return 0;
	}
	if (!p->nfree && p->next == p->max)
		return -ENOSPC;
	*id = p->nfree ? p->free_ids[--p->nfree] : p->next++;
	if (bpf_map_update_elem(p->map_fd, id, s, BPF_ANY))
		err = -errno;
	else if (hmap_put(&p->by_content, key, *id))
		err = -ENOMEM;
	if (err) {
		p->free_ids[p->nfree++] = *id;
		return err;
	}
	p->refs[*id] = 1;
	p->hashes[*id] = key;
	return 0;
}

void usdt_specs_put(struct usdt_specs *p, uint32_t id)
{
	if (id >= p->max || !p->refs[id] || --p->refs[id])
		return;
	hmap_del(&p->by_content, p->hashes[id], NULL);
	p->free_ids[p->nfree++] = id;
}

uint32_t usdt_specs_used(const struct usdt_specs *p)
{
	return p->next - p->nfree;
}

void usdt_specs_free(struct usdt_specs *p)
{
	hmap_free(&p->by_content);
	free(p->refs);
	free(p->hashes);
	free(p->free_ids);
	*p = (struct usdt_specs){ 0 };
}
