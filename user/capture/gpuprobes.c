// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <string.h>
#include <bpf/libbpf.h>
#include "capture/gpuprobes.h"
#include "dftrace.skel.h" /* after dftrace.h: its types */
#include "lib/hash.h"
#include "lib/hmap.h"
#include "model/gpucalls.h"

/* The calls by their names' hash: a library's dynamic symbols are
 * looked up once each (libtorch_cuda has a hundred thousand). */
static const struct hmap *calls_by_name(void)
{
	static struct hmap m;

	if (!m.n)
		for (unsigned int i = 1; i < DFT_GPU__COUNT; i++)
			(void)hmap_put(&m, dft_hash64(gpu_call(i)->name,
						      strlen(gpu_call(i)->name)), i);
	return &m;
}

/* A defined function's offset in the file, as uprobes take it: its
 * address less its section's, plus the section's place in the file. */
static uint64_t file_offset(Elf *elf, const GElf_Sym *sym)
{
	Elf_Scn *scn = elf_getscn(elf, sym->st_shndx);
	GElf_Shdr sh;

	if (!scn || !gelf_getshdr(scn, &sh) || sym->st_value < sh.sh_addr)
		return 0;
	return sym->st_value - sh.sh_addr + sh.sh_offset;
}

static void note_symbol(Elf *elf, const GElf_Sym *sym, const char *name, struct gpu_syms *s)
{
	const struct gpu_desc *d;
	uint64_t id;

	if (GELF_ST_TYPE(sym->st_info) != STT_FUNC || sym->st_shndx == SHN_UNDEF ||
	    sym->st_shndx >= SHN_LORESERVE || (name[0] != 'c' && name[0] != 'n') ||
	    !hmap_get(calls_by_name(), dft_hash64(name, strlen(name)), &id) ||
	    !(d = gpu_call(id)) || strcmp(d->name, name))
		return;
	s->off[id] = file_offset(elf, sym);
	if (s->off[id] && !strcmp(name, gpu_family_marker(d->family)))
		s->families |= 1u << d->family;
}

void gpu_find_syms(Elf *elf, struct gpu_syms *s)
{
	Elf_Scn *scn = NULL;

	memset(s, 0, sizeof(*s));
	while (elf && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || !sh.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		for (size_t i = 0; data && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *name;

			if (!gelf_getsym(data, i, &sym) ||
			    !(name = elf_strptr(elf, sh.sh_link, sym.st_name)))
				continue;
			note_symbol(elf, &sym, name, s);
		}
	}
}

int gpu_plan(struct dftrace_bpf *skel, const struct gpu_syms *s, struct uprobe_plan *plan)
{
	int calls = 0;

	/* every return first (gpuprobes.h) */
	for (int enter = 0; enter < 2; enter++) {
		for (unsigned int id = 1; id < DFT_GPU__COUNT; id++) {
			struct uprobe_site site = { .offset = s->off[id], .cookie = id };

			if (!s->off[id] || !(s->families & (1u << gpu_call(id)->family)))
				continue;
			if (uprobe_plan_add(plan, enter ? skel->progs.gpu_enter : skel->progs.gpu_exit,
					    !enter, &site))
				return -ENOMEM;
			calls += enter;
		}
	}
	return calls;
}
