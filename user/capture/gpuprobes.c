// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <string.h>
#include <bpf/libbpf.h>
#include "capture/gpuprobes.h"
#include "dftrace.skel.h" /* after dftrace.h: its types */
#include "lib/hash.h"
#include "lib/hmap.h"
#include "lib/vec.h"
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

static int attach_one(struct bpf_program *prog, bool ret, const char *path, uint64_t off,
		      unsigned int id, struct bpf_link ***links, uint32_t *n, uint32_t *cap)
{
	LIBBPF_OPTS(bpf_uprobe_opts, o, .retprobe = ret, .bpf_cookie = id);
	struct bpf_link *l = bpf_program__attach_uprobe_opts(prog, -1, path, off, &o);

	if (!l)
		return -1;
	if (VEC_PUSH(*links, *n, *cap, l)) {
		bpf_link__destroy(l);
		return -1;
	}
	return 0;
}

int gpu_attach(struct dftrace_bpf *skel, const char *path, const struct gpu_syms *s,
	       struct bpf_link ***links, uint32_t *n, uint32_t *cap)
{
	int attached = 0;

	for (unsigned int id = 1; id < DFT_GPU__COUNT; id++) {
		if (!s->off[id] || !(s->families & (1u << gpu_call(id)->family)))
			continue;
		if (attach_one(skel->progs.gpu_exit, true, path, s->off[id], id, links, n, cap))
			continue;
		if (!attach_one(skel->progs.gpu_enter, false, path, s->off[id], id, links, n, cap))
			attached++;
	}
	return attached;
}
