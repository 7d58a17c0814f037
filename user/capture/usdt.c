// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stddef.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
/* the header's types only: no probe of ours in the tracer */
#define DFT_USDT_DISABLE
#include <dftrace/usdt.h>
#include "capture/attach.h"
#include "capture/loader.h"
#include "capture/usdt.h"
#include "dftrace.h"
#include "dftrace.skel.h" /* after dftrace.h: its types */
#include "lib/procfs.h"
#include "lib/vec.h"

/* ELF note type of SystemTap's SDT notes, and its owner name. */
#define NT_STAPSDT 3
#define STAPSDT_OWNER "stapsdt"
/* The section whose address prelinking moves: a note's base says where
 * it was at link time (SystemTap's notes). */
#define STAPSDT_BASE ".stapsdt.base"
/* include/dftrace/usdt.h's ring of a thread's regions, as the kernel side
 * reads it (struct dft_ring_rec), and its probe */
#define STR2(x) #x
#define STR(x) STR2(x)
#define RING_PROBE STR(DFT_USDT_RING_PROBE)
_Static_assert(DFT_USDT_RING_LEN == DFT_RING_LEN &&
		       offsetof(struct dft_usdt_ring, rec) == DFT_RING_RECS &&
		       sizeof(struct dft_usdt_ring_rec) == sizeof(struct dft_ring_rec) &&
		       offsetof(struct dft_usdt_ring_rec, cat) == offsetof(struct dft_ring_rec, cat) &&
		       offsetof(struct dft_usdt_ring_rec, name) ==
			       offsetof(struct dft_ring_rec, name) &&
		       offsetof(struct dft_usdt_ring_rec, count) ==
			       offsetof(struct dft_ring_rec, count),
	       "the header's ring is the one the kernel side reads");

enum provider { PROV_DFTRACE = 1, PROV_PYTHON = 2 };

static int provider_bit(const char *name, size_t max)
{
	if (strnlen(name, max) == 7 && !strcmp(name, "dftrace"))
		return PROV_DFTRACE;
	if (strnlen(name, max) == 6 && !strcmp(name, "python"))
		return PROV_PYTHON;
	return 0;
}

/* Each probe with the cookie that tells the one annotation program what
 * it is. Each region's begin before its end: plan_set() goes last to
 * first. */
static const struct {
	enum provider provider;
	const char *probe;
	__u64 cookie;
} probes[] = {
#define PROBE(p, op) { PROV_DFTRACE, #p, DFT_ANNOT_##op },
	DFT_ANNOT_PROBES(PROBE)
#undef PROBE
#define PY(p, name) { PROV_PYTHON, #p, DFT_PY_##name },
	DFT_PYTHON_PROBES(PY)
#undef PY
};

#define NPROBES (sizeof(probes) / sizeof(probes[0]))
/* A note of the regions probe (threads' rings), past probes[]; and one
 * that is not ours. */
#define RING_NOTE NPROBES
#define NOT_OURS (NPROBES + 1)

_Static_assert(NPROBES < 63, "a bit of struct notes each, and bit 63 the ring's");

/* A note of ours: its probe (probes[] index, or RING_NOTE), where its
 * instruction and semaphore (0: none) are in the file, and its
 * arguments' specs. */
struct note {
	size_t probe;
	uint64_t offset, semaphore;
	const char *args;
};

/* What a file's stapsdt notes say: which of our providers it has, and
 * which probes of ours have notes that all pin their arguments
 * (DFT_PINNED_ARGS), by probes[] index; and each note found in the
 * file's code. */
struct notes {
	int providers;
	uint64_t probes, unpinned;
	/* notes of the regions probe (threads' rings), and of those whose
	 * arguments are not pinned */
	int rings, rings_unpinned;
	struct note *note;
	uint32_t n, cap;
};

/* Where a note's addresses are in the file: its loaded segments, and
 * where .stapsdt.base is now (0: nowhere). */
struct layout {
	GElf_Phdr *seg;
	size_t nseg;
	uint64_t base;
};

/* A note's provider, name and argument specs: three strings after its
 * three addresses, each within the note (the file is the traced
 * process's). False if the note has no room for them. */
static bool note_strings(const char *desc, size_t size, size_t addrs, const char *s[3])
{
	size_t off = addrs;

	for (int i = 0; i < 3; i++) {
		const char *end = off < size ? memchr(desc + off, 0, size - off) : NULL;

		if (!end)
			return false;
		s[i] = desc + off;
		off = end - desc + 1;
	}
	return true;
}

/* The note's i-th address (the probe's, the base's, the semaphore's). */
static uint64_t note_addr(const char *desc, size_t width, int i)
{
	uint64_t a64;
	uint32_t a32;

	if (width == 8) {
		memcpy(&a64, desc + 8 * i, 8);
		return a64;
	}
	memcpy(&a32, desc + 4 * i, 4);
	return a32;
}

/* The file offset of addr in a loaded segment (an executable one if
 * exec); 0 if none holds it. */
static uint64_t file_offset(const struct layout *l, uint64_t addr, bool exec)
{
	for (size_t i = 0; i < l->nseg; i++) {
		const GElf_Phdr *p = &l->seg[i];

		if (p->p_type == PT_LOAD && (!exec || p->p_flags & PF_X) &&
		    addr >= p->p_vaddr && addr - p->p_vaddr < p->p_filesz)
			return addr - p->p_vaddr + p->p_offset;
	}
	return 0;
}

/* Where the note's probe and semaphore are in the file: false if
 * nowhere it loads. A prelinked file's notes say where .stapsdt.base
 * was: the probe moved with it. */
static bool place_note(const struct layout *l, const char *desc, size_t width, struct note *n)
{
	uint64_t pc = note_addr(desc, width, 0), base = note_addr(desc, width, 1);
	uint64_t sema = note_addr(desc, width, 2);

	if (l->base && base)
		pc += l->base - base;
	n->offset = file_offset(l, pc, true);
	n->semaphore = sema ? file_offset(l, sema, false) : 0;
	return n->offset && (!sema || n->semaphore);
}

/* The probes[] index of a probe of ours, or NOT_OURS. */
static size_t probe_index(int provider, const char *name)
{
	for (size_t i = 0; provider && i < NPROBES; i++)
		if ((int)probes[i].provider == provider && !strcmp(probes[i].probe, name))
			return i;
	return NOT_OURS;
}

/* One note: its provider, and whether it is a probe of ours, pinned. */
static void scan_note(struct notes *n, const struct layout *l, const char *desc,
		      size_t size, size_t width)
{
	struct note note = { .probe = NOT_OURS };
	const char *s[3];
	int provider;

	if (!note_strings(desc, size, 3 * width, s))
		return;
	provider = provider_bit(s[0], size);
	n->providers |= provider;
	if (provider == PROV_DFTRACE && !strcmp(s[1], RING_PROBE)) {
		note.probe = RING_NOTE;
		n->rings++;
		n->rings_unpinned += !!strcmp(s[2], DFT_PINNED_ARGS);
	} else if ((note.probe = probe_index(provider, s[1])) < NPROBES) {
		n->probes |= 1ULL << note.probe;
		if (strcmp(s[2], DFT_PINNED_ARGS))
			n->unpinned |= 1ULL << note.probe;
	}
	note.args = s[2];
	if (note.probe != NOT_OURS && place_note(l, desc, width, &note))
		(void)VEC_PUSH(n->note, n->n, n->cap, note); /* no memory: not probed */
}

/* The address .stapsdt.base is at, if the file has one. */
static uint64_t stapsdt_base(Elf *elf)
{
	Elf_Scn *scn = NULL;
	size_t strndx;
	GElf_Shdr sh;
	const char *name;

	if (elf_getshdrstrndx(elf, &strndx))
		return 0;
	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && (name = elf_strptr(elf, strndx, sh.sh_name)) &&
		    !strcmp(name, STAPSDT_BASE))
			return sh.sh_addr;
	return 0;
}

static bool read_layout(Elf *elf, struct layout *l)
{
	size_t n;

	l->base = stapsdt_base(elf);
	if (elf_getphdrnum(elf, &n) || !n || !(l->seg = calloc(n, sizeof(*l->seg))))
		return false;
	for (size_t i = 0; i < n; i++)
		if (gelf_getphdr(elf, i, &l->seg[l->nseg]))
			l->nseg++;
	return true;
}

/* Every stapsdt note of the ELF file, into n. */
static void scan_notes(Elf *elf, struct notes *n)
{
	const char *ident = elf_getident(elf, NULL);
	size_t width = ident && ident[EI_CLASS] == ELFCLASS64 ? 8 : 4;
	struct layout l = { 0 };
	Elf_Scn *scn = NULL;

	if (!read_layout(elf, &l))
		return;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		GElf_Nhdr nh;
		size_t off = 0, name_off, desc_off;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		data = elf_getdata(scn, NULL);
		while (data && (off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
			if (nh.n_type != NT_STAPSDT ||
			    nh.n_namesz != sizeof(STAPSDT_OWNER) ||
			    memcmp((char *)data->d_buf + name_off, STAPSDT_OWNER,
				   sizeof(STAPSDT_OWNER)))
				continue;
			scan_note(n, &l, (const char *)data->d_buf + desc_off, nh.n_descsz, width);
		}
	}
	free(l.seg);
}

/* The program for probe i of a file: pinned_begin or pinned_end where
 * every note of a region's begin or end pins its arguments and this
 * kernel loaded them, else the annotation program. */
static struct bpf_program *program_for(struct dftrace_bpf *skel, size_t i,
				       const struct notes *n)
{
	struct bpf_program *pinned = NULL;

	if (probes[i].provider == PROV_DFTRACE && probes[i].cookie == DFT_ANNOT_BEGIN)
		pinned = skel->progs.pinned_begin;
	if (probes[i].provider == PROV_DFTRACE && probes[i].cookie == DFT_ANNOT_END)
		pinned = skel->progs.pinned_end;
	if (pinned && !(n->unpinned >> i & 1) && bpf_program__fd(pinned) >= 0)
		return pinned;
	return skel->progs.annotation;
}

/*
 * A file's regions from its threads' rings, where this kernel loaded
 * their program: the header's sites with literal names then write the
 * ring, with no trap, and fire neither region_begin nor region_end.
 * Those stay attached for the file's other sites, and an older header's.
 */
static bool takes_rings(struct dftrace_bpf *skel, const struct notes *n)
{
	return n->rings && !n->rings_unpinned &&
	       bpf_program__fd(skel->progs.ring_regions) >= 0;
}

/* The sites of note's probe, with their specs, into the plan. */
static int plan_note(struct uprobe_plan *plan, struct usdt_specs *specs,
		     struct usdt_spec_ids *ids, struct bpf_program *prog, const struct note *note)
{
	struct uprobe_site site = { .offset = note->offset, .semaphore = note->semaphore };
	struct usdt_spec spec;
	uint32_t id;
	int err;

	/* the ring's program reads its registers: no spec */
	if (note->probe != RING_NOTE) {
		if (!usdt_spec_parse(note->args, probes[note->probe].cookie, &spec))
			return 0; /* a form not known here: left out */
		if (VEC_PUSH(ids->id, ids->n, ids->cap, 0))
			return -ENOMEM;
		if ((err = usdt_specs_get(specs, &spec, &id))) {
			ids->n--;
			return err;
		}
		ids->id[ids->n - 1] = id;
		site.cookie = id;
	}
	return uprobe_plan_add(plan, prog, false, &site) ? -ENOMEM : 1;
}

/* prog's sites. Last probe to first, so that each region's end probe is
 * live before its begin: a process that runs meanwhile (CPython
 * collecting at start-up) may then leave an end without a begin,
 * flagged, but never a begin without an end, which would hold every
 * later region of its thread as its child. The probes with a site
 * planned: a bit each in *planned. */
static int plan_set(struct dftrace_bpf *skel, struct usdt_specs *specs, const struct notes *n,
		    struct bpf_program *prog, struct uprobe_plan *plan,
		    struct usdt_spec_ids *ids, uint64_t *planned)
{
	int ret;

	for (size_t i = NPROBES + 1; i-- > 0;) {
		bool ring = i == RING_NOTE;

		if (ring ? !(prog == skel->progs.ring_regions && takes_rings(skel, n)) :
			   !(n->probes >> i & 1) || program_for(skel, i, n) != prog)
			continue;
		for (uint32_t k = 0; k < n->n; k++) {
			if (n->note[k].probe != i)
				continue;
			if ((ret = plan_note(plan, specs, ids, prog, &n->note[k])) < 0)
				return ret;
			*planned |= (uint64_t)ret << (ring ? 63 : i);
		}
	}
	return 0;
}

int usdt_plan(struct loader *loader, struct usdt_specs *specs, Elf *elf,
	      struct uprobe_plan *plan, struct usdt_spec_ids *ids, struct usdt_found *found)
{
	struct dftrace_bpf *skel;
	struct notes n = { 0 };
	uint64_t planned = 0;
	int err = 0;

	*found = (struct usdt_found){ 0 };
	scan_notes(elf, &n);
	if (!n.probes || !(skel = loader_lazy(loader, LAZY_ANNOT))) {
		free(n.note);
		return 0;
	}
	/* the ring's program first, as before; a region's end before its
	 * begin (plan_set()) */
	struct bpf_program *order[] = { skel->progs.ring_regions, skel->progs.pinned_end,
					skel->progs.annotation, skel->progs.pinned_begin };

	for (size_t i = 0; !err && i < sizeof(order) / sizeof(order[0]); i++)
		if (bpf_program__fd(order[i]) >= 0)
			err = plan_set(skel, specs, &n, order[i], plan, ids, &planned);
	for (size_t i = 0; !err && i < NPROBES; i++) {
		if (!(planned >> i & 1))
			continue;
		found->probes++;
		found->pinned += program_for(skel, i, &n) != skel->progs.annotation;
	}
	found->rings = planned >> 63 & 1;
	found->probes += found->rings;
	found->python = n.providers & PROV_PYTHON;
	free(n.note);
	return err;
}

void usdt_put_specs(struct usdt_specs *specs, struct usdt_spec_ids *ids)
{
	for (uint32_t i = 0; i < ids->n; i++)
		usdt_specs_put(specs, ids->id[i]);
	free(ids->id);
	*ids = (struct usdt_spec_ids){ 0 };
}

/* ---- sites whose strings cannot change ---- */

struct site_check {
	uint64_t cat, name;
	bool cat_fixed, name_fixed;
};

/* Read-only memory: a program's or library's literals, or names a
 * program keeps read-only for this (the Python package's). A process
 * that made such memory writable again and rewrote it would only
 * mislabel its own regions, as it could by naming them otherwise. */
static void check_mapping(const struct procfs_map *m, void *ctx)
{
	struct site_check *c = ctx;

	if (m->perms[0] != 'r' || m->perms[1] == 'w')
		return;
	c->cat_fixed |= c->cat >= m->start && c->cat < m->end;
	c->name_fixed |= c->name >= m->start && c->name < m->end;
}

void usdt_site_found(void *ctx, const struct dft_annot_site *site, uint32_t id,
		     uint64_t alive_ns)
{
	struct dftrace_bpf *skel = ctx;
	struct site_check c = { site->cat, site->name, false, false };

	if (!skel || !procfs_each_map(site->tgid, check_mapping, &c) || !c.cat_fixed ||
	    !c.name_fixed || !attach_proven(bpf_map__fd(skel->maps.tasks), site->tgid, alive_ns))
		return;
	/* full (DFT_ANNOT_SITES): the site's hits carry their strings */
	bpf_map_update_elem(bpf_map__fd(skel->maps.annot_sites), site, &id, BPF_ANY);
}

void usdt_site_gone(void *ctx, const struct dft_annot_site *site)
{
	struct dftrace_bpf *skel = ctx;

	if (!skel)
		return;
	bpf_map_delete_elem(bpf_map__fd(skel->maps.annot_sites), site);
	/* after the delete: threads' own copies of it go stale (annot.bpf.c) */
	__atomic_add_fetch(&skel->bss->annot_sites_gen, 1, __ATOMIC_SEQ_CST);
}

