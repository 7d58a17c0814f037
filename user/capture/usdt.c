// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Uprobes are attached per file, system-wide (pid -1): every process that
 * maps the file hits them and the kernel side keeps only tracked tasks.
 * That covers children, dlopen in other processes and shared libraries
 * with one attach per file, and the kernel raises each probe's semaphore
 * in every process that maps it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
/* the header's types only: no probe of ours in the tracer */
#define DFT_USDT_DISABLE
#include <dftrace/usdt.h>
#include "capture/attach.h"
#include "capture/gpuprobes.h"
#include "capture/usdt.h"
#include "dftrace.h"
#include "dftrace.skel.h" /* after dftrace.h: its types */
#include "lib/hash.h"
#include "lib/procfs.h"
#include "lib/vec.h"

/* ELF note type of SystemTap's SDT notes, and its owner name. */
#define NT_STAPSDT 3
#define STAPSDT_OWNER "stapsdt"
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

void usdt_init(struct usdt_attacher *u, struct dftrace_bpf *skel, bool annotations,
	       bool gpu, bool verbose)
{
	*u = (struct usdt_attacher){ .skel = skel, .annotations = annotations, .gpu = gpu,
				     .verbose = verbose };
}

void usdt_offer(struct usdt_attacher *u, const char *path)
{
	char *copy;

	if (!u->skel || !(u->annotations || u->gpu) || !path || path[0] != '/')
		return; /* pipes, anonymous memory, deleted files */
	copy = strdup(path);
	if (copy && VEC_PUSH(u->pending, u->npending, u->cappending, copy))
		free(copy);
}

struct offers {
	char **paths;
	uint32_t n, cap;
};

static void offer_map(const struct procfs_map *m, void *ctx)
{
	struct offers *o = ctx;
	char *copy;

	if (m->perms[2] != 'x' || m->path[0] != '/' || !(copy = strdup(m->path)))
		return;
	if (VEC_PUSH(o->paths, o->n, o->cap, copy))
		free(copy);
}

void usdt_offer_maps(struct usdt_attacher *u, pid_t pid, uint64_t alive_ns)
{
	struct offers o = { 0 };
	bool proven;

	if (!u->skel)
		return;
	procfs_each_map(pid, offer_map, &o);
	/* what another process maps, once the pid is another's, is not ours */
	proven = attach_proven(bpf_map__fd(u->skel->maps.tasks), pid, alive_ns);
	for (uint32_t i = 0; i < o.n; i++) {
		if (proven)
			usdt_offer(u, o.paths[i]);
		free(o.paths[i]);
	}
	free(o.paths);
}

/* Files are known by device and inode: one library has many paths. The
 * pair is kept as its 64-bit hash (two files colliding: about 1 in 2^64). */
static bool first_sight(struct usdt_attacher *u, const struct stat *st)
{
	uint64_t id[2] = { st->st_dev, st->st_ino };

	return hmap_add(&u->seen, dft_hash64(id, sizeof(id)), 0) == 1;
}

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
 * it is. Each region's begin before its end: attach_file() goes last to
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

/* What a file's stapsdt notes say: which of our providers it has, and
 * which probes of ours have notes that all pin their arguments
 * (DFT_PINNED_ARGS), by probes[] index. */
struct notes {
	int providers;
	uint64_t probes, unpinned;
	/* notes of the regions probe (threads' rings), and of those whose
	 * arguments are not pinned */
	int rings, rings_unpinned;
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

_Static_assert(sizeof(probes) / sizeof(probes[0]) <= 64, "a bit of struct notes each");

/* One note: its provider, and whether it is a probe of ours, pinned. */
static void scan_note(struct notes *n, const char *desc, size_t size, size_t addrs)
{
	const char *s[3];
	int provider;

	if (!note_strings(desc, size, addrs, s))
		return;
	provider = provider_bit(s[0], size);
	n->providers |= provider;
	if (provider == PROV_DFTRACE && !strcmp(s[1], RING_PROBE)) {
		n->rings++;
		n->rings_unpinned += !!strcmp(s[2], DFT_PINNED_ARGS);
	}
	for (size_t i = 0; provider && i < sizeof(probes) / sizeof(probes[0]); i++) {
		if ((int)probes[i].provider != provider || strcmp(probes[i].probe, s[1]))
			continue;
		n->probes |= 1ULL << i;
		if (strcmp(s[2], DFT_PINNED_ARGS))
			n->unpinned |= 1ULL << i;
	}
}

/* Every stapsdt note of the ELF file, into n. */
static void scan_notes(Elf *elf, struct notes *n)
{
	const char *ident = elf_getident(elf, NULL);
	size_t addrs = 3 * (ident && ident[EI_CLASS] == ELFCLASS64 ? 8 : 4);
	Elf_Scn *scn = NULL;

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
			scan_note(n, (const char *)data->d_buf + desc_off, nh.n_descsz, addrs);
		}
	}
}

/* The program for probe i of a file: pinned_begin or pinned_end where
 * every note of a region's begin or end pins its arguments and this
 * kernel loaded them, else the annotation program. */
static struct bpf_program *program_for(struct usdt_attacher *u, size_t i,
				       const struct notes *n)
{
	struct bpf_program *pinned = NULL;

	if (probes[i].provider == PROV_DFTRACE && probes[i].cookie == DFT_ANNOT_BEGIN)
		pinned = u->skel->progs.pinned_begin;
	if (probes[i].provider == PROV_DFTRACE && probes[i].cookie == DFT_ANNOT_END)
		pinned = u->skel->progs.pinned_end;
	if (pinned && !(n->unpinned >> i & 1) && bpf_program__fd(pinned) >= 0)
		return pinned;
	return u->skel->progs.annotation;
}

/* prog on a probe of the file at path, for every process; its link kept
 * to be destroyed with the others. False if either failed. */
static bool attach_probe(struct usdt_attacher *u, struct bpf_program *prog, const char *path,
			 const char *provider, const char *probe,
			 const struct bpf_usdt_opts *opts)
{
	struct bpf_link *l = bpf_program__attach_usdt(prog, -1, path, provider, probe, opts);

	if (!l)
		return false;
	if (VEC_PUSH(u->links, u->nlinks, u->caplinks, l)) {
		bpf_link__destroy(l);
		return false;
	}
	return true;
}

/*
 * A file's regions from its threads' rings, where this kernel loaded
 * their program: the header's sites with literal names then write the
 * ring, with no trap, and fire neither region_begin nor region_end.
 * Those stay attached for the file's other sites, and an older header's.
 */
static bool attach_rings(struct usdt_attacher *u, const char *path, const struct notes *n)
{
	return n->rings && !n->rings_unpinned &&
	       bpf_program__fd(u->skel->progs.ring_regions) >= 0 &&
	       attach_probe(u, u->skel->progs.ring_regions, path, "dftrace", RING_PROBE, NULL);
}

/* path: what libbpf opens; shown: what the user is told. */
static void attach_file(struct usdt_attacher *u, const char *path,
			const char *shown, const struct notes *n)
{
	bool rings = attach_rings(u, path, n);
	int attached = rings, pinned = 0;
	char pinned_note[40] = "";

	/* Last to first, so that each region's end probe is live before its
	 * begin: a process that runs meanwhile (CPython collecting at
	 * start-up) may then leave an end without a begin, flagged, but
	 * never a begin without an end, which would hold every later region
	 * of its thread as its child. */
	for (size_t i = sizeof(probes) / sizeof(probes[0]); i-- > 0;) {
		LIBBPF_OPTS(bpf_usdt_opts, opts, .usdt_cookie = probes[i].cookie);
		struct bpf_program *prog = program_for(u, i, n);

		/* a file need not use every probe */
		if (!(n->probes >> i & 1) ||
		    !attach_probe(u, prog, path,
				  probes[i].provider == PROV_PYTHON ? "python" : "dftrace",
				  probes[i].probe, &opts))
			continue;
		attached++;
		pinned += prog != u->skel->progs.annotation;
	}
	if (!u->verbose)
		return;
	if (pinned)
		snprintf(pinned_note, sizeof(pinned_note), ", %d with pinned arguments", pinned);
	fprintf(stderr, "dftrace-bpf: annotations in '%s': %d probes attached%s%s%s\n", shown,
		attached, pinned_note, rings ? ", regions from threads' rings" : "",
		n->providers & PROV_PYTHON ? " (python)" : "");
}

/*
 * Opens path for reading only if it is a regular file. Paths come from
 * traced processes, so they are hostile, yet libraries are usually reached
 * through symlinks (libfoo.so.1 -> libfoo.so.1.2.3): O_PATH follows them
 * and pins the inode without opening it (opening a device can have side
 * effects), and only a regular file is then reopened through that pin.
 */
static int open_regular(const char *path, struct stat *st)
{
	char pinned[64];
	int pin = open(path, O_PATH | O_CLOEXEC), fd = -1;

	if (pin < 0)
		return -1;
	if (!fstat(pin, st) && S_ISREG(st->st_mode)) {
		snprintf(pinned, sizeof(pinned), "/proc/self/fd/%d", pin);
		fd = open(pinned, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	}
	close(pin);
	return fd;
}

static void attach_gpu(struct usdt_attacher *u, const char *path, const char *shown,
		       const struct gpu_syms *syms)
{
	int n = gpu_attach(u->skel, path, syms, &u->links, &u->nlinks, &u->caplinks);

	if (u->verbose)
		fprintf(stderr, "dftrace-bpf: GPU calls in '%s': %d probed\n", shown, n);
}

static void consider(struct usdt_attacher *u, const char *path)
{
	char self[64];
	struct stat st;
	struct gpu_syms syms = { .families = 0 };
	int fd = open_regular(path, &st);
	struct notes notes = { 0 };
	Elf *elf;

	if (fd < 0)
		return;
	if (!first_sight(u, &st)) {
		close(fd);
		return;
	}
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf && u->annotations)
		scan_notes(elf, &notes);
	if (elf && u->gpu)
		gpu_find_syms(elf, &syms);
	elf_end(elf);
	/* libbpf and the kernel open the very file checked here, not
	 * whatever path names by then. */
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	if (notes.probes)
		attach_file(u, self, path, &notes);
	if (syms.families)
		attach_gpu(u, self, path, &syms);
	close(fd);
}

void usdt_attach_pending(struct usdt_attacher *u)
{
	static bool elf_ready;

	if (!u->npending)
		return;
	if (!elf_ready) {
		elf_version(EV_CURRENT);
		elf_ready = true;
	}
	for (uint32_t i = 0; i < u->npending; i++) {
		consider(u, u->pending[i]);
		free(u->pending[i]);
	}
	u->npending = 0;
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
	struct usdt_attacher *u = ctx;
	struct site_check c = { site->cat, site->name, false, false };

	if (!u->skel || !procfs_each_map(site->tgid, check_mapping, &c) || !c.cat_fixed ||
	    !c.name_fixed ||
	    !attach_proven(bpf_map__fd(u->skel->maps.tasks), site->tgid, alive_ns))
		return;
	/* full (DFT_ANNOT_SITES): the site's hits carry their strings */
	bpf_map_update_elem(bpf_map__fd(u->skel->maps.annot_sites), site, &id, BPF_ANY);
}

void usdt_site_gone(void *ctx, const struct dft_annot_site *site)
{
	struct usdt_attacher *u = ctx;

	if (!u->skel)
		return;
	bpf_map_delete_elem(bpf_map__fd(u->skel->maps.annot_sites), site);
	/* after the delete: threads' own copies of it go stale (annot.bpf.c) */
	__atomic_add_fetch(&u->skel->bss->annot_sites_gen, 1, __ATOMIC_SEQ_CST);
}

void usdt_free(struct usdt_attacher *u)
{
	if (!u)
		return;
	for (uint32_t i = 0; i < u->nlinks; i++)
		bpf_link__destroy(u->links[i]);
	for (uint32_t i = 0; i < u->npending; i++)
		free(u->pending[i]);
	free(u->links);
	free(u->pending);
	hmap_free(&u->seen);
	usdt_init(u, u->skel, u->annotations, u->gpu, u->verbose);
}
