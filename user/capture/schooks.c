// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "capture/features.h"
#include "capture/report.h"
#include "capture/schooks.h"
#include "dftrace.h"
#include "dftrace.skel.h" /* after dftrace.h: its types */
#include "lib/clock.h"
#include "lib/vec.h"
#include "model/syscalls.h"

#if defined(__x86_64__)
#define SC_FN_PREFIX "__x64_sys_"
#elif defined(__aarch64__)
#define SC_FN_PREFIX "__arm64_sys_"
#else
#define SC_FN_PREFIX "sys_"
#endif

/* Calls whose number enters a function of another name (x86-64's
 * syscall table): the 64-bit stat family and sendfile. */
static const char *const renamed[][2] = {
	{ "stat", "newstat" },
	{ "lstat", "newlstat" },
	{ "fstat", "newfstat" },
	{ "sendfile", "sendfile64" },
};

bool sc_hook_function(unsigned int nr, char *buf, size_t size)
{
	const struct sc_desc *d = sc_lookup(nr);
	const char *name = d ? d->syscall : NULL;

	if (!name)
		return false;
	for (size_t i = 0; i < sizeof(renamed) / sizeof(renamed[0]); i++)
		if (!strcmp(name, renamed[i][0]))
			name = renamed[i][1];
	return snprintf(buf, size, SC_FN_PREFIX "%s", name) < (int)size;
}

int sc_hook_stub(int progs, uint32_t fn, enum bpf_attach_type kind, const char *name)
{
	struct bpf_insn insns[] = {
		/* r1 is the context: the tail call passes it on */
		{ BPF_LD | BPF_DW | BPF_IMM, BPF_REG_2, BPF_PSEUDO_MAP_FD, 0, progs },
		{ 0, 0, 0, 0, 0 },
		{ BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_3, 0, 0, 0 },
		{ BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_tail_call },
		{ BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0 },
		{ BPF_JMP | BPF_EXIT, 0, 0, 0, 0 },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, o, .expected_attach_type = kind, .attach_btf_id = fn);
	int fd = bpf_prog_load(BPF_PROG_TYPE_TRACING, name, "Dual BSD/GPL", insns,
			       sizeof(insns) / sizeof(insns[0]), &o);

	return fd < 0 ? -errno : fd;
}

static int keep_fd(struct sc_hooks *h, int fd)
{
	int err = VEC_PUSH(h->fds, h->n, h->cap, fd);

	if (err)
		close(fd);
	return err;
}

/* The stub of kind for nr's function, attached. */
static int hook(struct sc_hooks *h, int progs, unsigned int nr, uint32_t fn,
		enum bpf_attach_type kind)
{
	char name[16], fname[64];
	int prog, link, err;

	snprintf(name, sizeof(name), "sc_%s_%u", kind == BPF_TRACE_FENTRY ? "in" : "out", nr);
	prog = sc_hook_stub(progs, fn, kind, name);
	if (prog < 0) {
		err = prog;
		goto fail;
	}
	if ((err = keep_fd(h, prog)))
		goto fail;
	link = bpf_link_create(prog, 0, kind, NULL);
	if (link < 0) {
		err = -errno;
		goto fail;
	}
	if (!(err = keep_fd(h, link)))
		return 0;
fail:
	sc_hook_function(nr, fname, sizeof(fname));
	report_error("cannot hook '%s' (%s): %s; --no-fentry takes the syscall tracepoints",
		     fname, kind == BPF_TRACE_FENTRY ? "fentry" : "fexit", strerror(-err));
	return err;
}

struct bpf_program *sc_hook_program(struct dftrace_bpf *skel, unsigned int g, bool entry)
{
	struct bpf_program *progs[SC_HOOK_GROUPS][2] = {
		{ skel->progs.call_exit0, skel->progs.call_entry0 },
		{ skel->progs.call_exit1, skel->progs.call_entry1 },
	};

	return g < SC_HOOK_GROUPS ? progs[g][entry] : NULL;
}

struct bpf_map *sc_hook_map(struct dftrace_bpf *skel, unsigned int g, bool entry)
{
	struct bpf_map *maps[SC_HOOK_GROUPS][2] = {
		{ skel->maps.call_exits0, skel->maps.call_entries0 },
		{ skel->maps.call_exits1, skel->maps.call_entries1 },
	};

	return g < SC_HOOK_GROUPS ? maps[g][entry] : NULL;
}

/* Group g's two programs, where its stubs find them. */
static int set_targets(struct dftrace_bpf *skel, unsigned int g)
{
	for (int entry = 0; entry < 2; entry++) {
		int fd = bpf_program__fd(sc_hook_program(skel, g, entry)), zero = 0;

		if (bpf_map_update_elem(bpf_map__fd(sc_hook_map(skel, g, entry)), &zero, &fd, BPF_ANY))
			return -errno;
	}
	return 0;
}

int sc_hooks_attach(struct sc_hooks *h, struct dftrace_bpf *skel, const struct features *f,
		    bool verbose)
{
	uint64_t t0 = clock_mono_ns();
	unsigned int calls = 0;
	int err = 0;

	if (!f->on[FEATURE_fentry_syscalls])
		return 0;
	for (unsigned int g = 0; g < f->sc_groups && !err; g++)
		err = set_targets(skel, g);
	if (err) {
		report_error("cannot hand the syscall hooks their programs: %s", strerror(-err));
		return err;
	}
	for (unsigned int nr = 0; nr < DFT_NR_MAX && !err; nr++) {
		unsigned int g = f->sc_group[nr];

		if (!f->sc_fn[nr])
			continue;
		calls++;
		err = hook(h, bpf_map__fd(sc_hook_map(skel, g, true)), nr, f->sc_fn[nr],
			   BPF_TRACE_FENTRY);
		/* exit and exit_group: their entry alone (they do not return) */
		if (!err && !f->sc_entry_only[nr])
			err = hook(h, bpf_map__fd(sc_hook_map(skel, g, false)), nr, f->sc_fn[nr],
				   BPF_TRACE_FEXIT);
	}
	if (err)
		sc_hooks_detach(h);
	else if (verbose)
		fprintf(stderr, "dftrace-bpf: %u syscalls hooked (%u stubs and links) in %.1f ms\n",
			calls, h->n, (clock_mono_ns() - t0) / 1e6);
	return err;
}

void sc_hooks_detach(struct sc_hooks *h)
{
	/* links first, newest first: then the stubs they held */
	for (uint32_t i = h->n; i-- > 0;)
		close(h->fds[i]);
	free(h->fds);
	*h = (struct sc_hooks){ 0 };
}
