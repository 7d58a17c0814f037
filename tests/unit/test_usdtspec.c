// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* USDT argument specs (user/capture/usdtspec.c): the notes' forms as
 * the kernel side reads them, those refused, and the map's indexes
 * shared by identical specs. */
#include <errno.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "check.h"
#include "capture/usdtspec.h"

/* struct pt_regs' offsets on x86-64 (the kernel's, as user_regs_struct) */
#define RDI 112
#define RSI 104
#define RDX 96
#define RBP 32
#define RSP 152
#define RAX 80
#define R12 24

static void check_arg(const struct usdt_arg *a, int type, short reg, uint64_t val, bool sign,
		      int bits, const char *what)
{
	CHECK(a->type == type && (type == USDT_ARG_CONST || a->reg_off == reg) &&
		      a->val_off == val && a->is_signed == sign && a->bitshift == 64 - bits,
	      "%s: type %d reg %d val %lld signed %d shift %d", what, a->type, a->reg_off,
	      (long long)a->val_off, a->is_signed, a->bitshift);
}

static void test_forms(void)
{
	struct usdt_spec s;

	CHECK(usdt_spec_parse("8@%rdi 8@%rsi -8@%rdx", 7, &s) && s.nargs == 3 && s.cookie == 7,
	      "pinned registers: three arguments, the cookie kept");
	check_arg(&s.args[0], USDT_ARG_REG, RDI, 0, false, 64, "8@%rdi");
	check_arg(&s.args[1], USDT_ARG_REG, RSI, 0, false, 64, "8@%rsi");
	check_arg(&s.args[2], USDT_ARG_REG, RDX, 0, true, 64, "-8@%rdx");
	CHECK(usdt_spec_parse("-4@112(%rsp)", 0, &s) && s.nargs == 1, "CPython's gc__start");
	check_arg(&s.args[0], USDT_ARG_REG_DEREF, RSP, 112, true, 32, "-4@112(%rsp)");
	CHECK(usdt_spec_parse("-4@-20(%rbp) 2@(%r12) 1@%al", 0, &s) && s.nargs == 3,
	      "negative offset, none, a low byte");
	check_arg(&s.args[0], USDT_ARG_REG_DEREF, RBP, (uint64_t)-20, true, 32, "-4@-20(%rbp)");
	check_arg(&s.args[1], USDT_ARG_REG_DEREF, R12, 0, false, 16, "2@(%r12)");
	check_arg(&s.args[2], USDT_ARG_REG, RAX, 0, false, 8, "1@%al");
	CHECK(usdt_spec_parse("-8@$1 8@$0x10 -4@%eax", 0, &s) && s.nargs == 3, "constants");
	check_arg(&s.args[0], USDT_ARG_CONST, 0, 1, true, 64, "-8@$1");
	check_arg(&s.args[1], USDT_ARG_CONST, 0, 16, false, 64, "8@$0x10");
	check_arg(&s.args[2], USDT_ARG_REG, RAX, 0, true, 32, "-4@%eax");
	CHECK(usdt_spec_parse("", 3, &s) && s.nargs == 0, "a probe without arguments");
}

static void test_refused(void)
{
	static const char *const bad[] = {
		"8@sym(%rip)",		/* a symbol */
		"8@8(%rax,%rbx,4)",	/* indexed */
		"3@%rdi",		/* no such size */
		"8@%ah",		/* a high byte */
		"8@%xmm0",		/* not a general register */
		"%rdi",			/* no size */
		"8@$",			/* no number */
		"8@12(%rdi",		/* unclosed */
		"8@%rdi 8@%rdi 8@%rdi 8@%rdi 8@%rdi 8@%rdi 8@%rdi 8@%rdi 8@%rdi 8@%rdi "
		"8@%rdi 8@%rdi 8@%rdi",	/* 13 */
		"8@0123456789012345678901234567890123456789012345678901234567890123(%rdi)",
	};
	struct usdt_spec s;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(!usdt_spec_parse(bad[i], 0, &s), "refused: '%.40s'", bad[i]);
}

/* Identical specs share an index, counted; a freed index is used again;
 * a full map says so. */
static void test_indexes(void)
{
	int fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, NULL, 4, sizeof(struct usdt_spec), 2, NULL);
	struct usdt_specs p;
	struct usdt_spec a, b, c, got;
	uint32_t ia, ia2, ib, ic;

	if (fd < 0) {
		CHECK(1, "# skip: no BPF map here (%s)", strerror(errno));
		return;
	}
	usdt_spec_parse("8@%rdi", 1, &a);
	usdt_spec_parse("8@%rsi", 1, &b);
	usdt_spec_parse("8@%rdi", 2, &c);
	CHECK(!usdt_specs_init(&p, fd, 2, sizeof(struct usdt_spec) - 8), "another layout refused");
	CHECK(usdt_specs_init(&p, fd, 2, sizeof(struct usdt_spec)), "over the map");
	CHECK(!usdt_specs_get(&p, &a, &ia) && !usdt_specs_get(&p, &a, &ia2) && ia == ia2,
	      "one spec, one index");
	CHECK(!usdt_specs_get(&p, &b, &ib) && ib != ia && usdt_specs_used(&p) == 2, "another, another");
	CHECK(usdt_specs_get(&p, &c, &ic) == -ENOSPC, "the map full");
	usdt_specs_put(&p, ia);
	CHECK(usdt_specs_get(&p, &c, &ic) == -ENOSPC, "still full: a user of a's is left");
	usdt_specs_put(&p, ia);
	CHECK(!usdt_specs_get(&p, &c, &ic) && ic == ia, "a's index, freed, is c's");
	CHECK(!bpf_map_lookup_elem(fd, &ic, &got) && !memcmp(&got, &c, sizeof(c)),
	      "the map holds c there");
	usdt_specs_free(&p);
	close(fd);
}

int main(void)
{
	test_forms();
	test_refused();
	test_indexes();
	return check_done();
}
