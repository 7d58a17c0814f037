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
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "dftrace.skel.h"
#include "usdt.h"

struct seen_file {
	dev_t dev;
	ino_t ino;
};

static struct dftrace_bpf *skel;
static bool verbose;
static struct seen_file *seen;
static size_t nseen, capseen;
static char **pending;
static size_t npending, cappending;
static struct bpf_link **links;
static size_t nlinks, caplinks;
static int nbinaries;

void usdt_init(struct dftrace_bpf *s, bool v)
{
	skel = s;
	verbose = v;
}

static bool push(void ***arr, size_t *n, size_t *cap, void *item)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 16;
		void **a = realloc(*arr, c * sizeof(*a));

		if (!a)
			return false;
		*arr = a;
		*cap = c;
	}
	(*arr)[(*n)++] = item;
	return true;
}

void usdt_offer(const char *path)
{
	char *copy;

	if (!skel || !path || path[0] != '/')
		return; /* pipes, anonymous memory, deleted files */
	copy = strdup(path);
	if (copy && !push((void ***)&pending, &npending, &cappending, copy))
		free(copy);
}

void usdt_offer_maps(pid_t pid)
{
	char name[64], line[4608], perms[8], path[4096];
	FILE *f;

	snprintf(name, sizeof(name), "/proc/%d/maps", pid);
	f = fopen(name, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%*s %7s %*s %*s %*s %4095[^\n]", perms, path) == 2 &&
		    perms[2] == 'x')
			usdt_offer(path);
	}
	fclose(f);
}

/* Files are known by device and inode: one library has many paths. */
static bool first_sight(const struct stat *st)
{
	for (size_t i = 0; i < nseen; i++)
		if (seen[i].dev == st->st_dev && seen[i].ino == st->st_ino)
			return false;
	if (nseen == capseen) {
		size_t c = capseen ? capseen * 2 : 64;
		struct seen_file *s = realloc(seen, c * sizeof(*s));

		if (!s)
			return false;
		seen = s;
		capseen = c;
	}
	seen[nseen++] = (struct seen_file){ st->st_dev, st->st_ino };
	return true;
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

/* Which of our providers the ELF file has stapsdt notes of. */
static int providers_in(int fd)
{
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	Elf_Scn *scn = NULL;
	int found = 0;

	while (elf && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		GElf_Nhdr nh;
		size_t off = 0, name_off, desc_off;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		data = elf_getdata(scn, NULL);
		while (data && (off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
			const char *desc = (const char *)data->d_buf + desc_off;
			size_t addrs = 3 * (elf_getident(elf, NULL)[EI_CLASS] == ELFCLASS64 ? 8 : 4);

			if (nh.n_type != 3 || nh.n_namesz != 8 ||
			    memcmp((char *)data->d_buf + name_off, "stapsdt", 8) ||
			    nh.n_descsz <= addrs)
				continue;
			found |= provider_bit(desc + addrs, nh.n_descsz - addrs);
		}
	}
	elf_end(elf);
	return found;
}

static const struct {
	enum provider provider;
	const char *probe;
	size_t prog_offset;
} probes[] = {
#define PROBE(p) { PROV_DFTRACE, #p, offsetof(struct dftrace_bpf, progs.p) }
	PROBE(region_begin), PROBE(region_end), PROBE(meta),
	PROBE(ctx_int), PROBE(ctx_str), PROBE(ctx_clear),
	PROBE(arg_int), PROBE(arg_str),
#undef PROBE
	/* CPython's: function__entry is left out, unreliable on 3.11. */
#define PY(p, prog) { PROV_PYTHON, #p, offsetof(struct dftrace_bpf, progs.prog) }
	PY(gc__start, py_gc_start), PY(gc__done, py_gc_done),
	PY(import__find__load__start, py_import_start),
	PY(import__find__load__done, py_import_done),
#undef PY
};

/* path: what libbpf opens; shown: what the user is told. */
static void attach_file(const char *path, const char *shown, int providers)
{
	int attached = 0;

	for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
		struct bpf_program *prog =
			*(struct bpf_program **)((char *)skel + probes[i].prog_offset);
		struct bpf_link *l;

		if (!(providers & probes[i].provider))
			continue;
		l = bpf_program__attach_usdt(prog, -1, path,
					     probes[i].provider == PROV_PYTHON ?
						     "python" : "dftrace",
					     probes[i].probe, NULL);

		/* A file need not use every probe: ENOENT is expected. */
		if (!l)
			continue;
		if (push((void ***)&links, &nlinks, &caplinks, l))
			attached++;
		else
			bpf_link__destroy(l);
	}
	if (attached)
		nbinaries++;
	if (verbose)
		fprintf(stderr, "dftrace-bpf: annotations in '%s': %d probes attached%s\n",
			shown, attached, providers & PROV_PYTHON ? " (python)" : "");
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

static void consider(const char *path)
{
	char self[64];
	struct stat st;
	int fd = open_regular(path, &st);
	int providers;

	if (fd < 0)
		return;
	/* libbpf and the kernel open the very file checked here, not
	 * whatever path names by then. */
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	if (first_sight(&st) && (providers = providers_in(fd)))
		attach_file(self, path, providers);
	close(fd);
}

void usdt_attach_pending(void)
{
	static bool elf_ready;

	if (!npending)
		return;
	if (!elf_ready) {
		elf_version(EV_CURRENT);
		elf_ready = true;
	}
	for (size_t i = 0; i < npending; i++) {
		consider(pending[i]);
		free(pending[i]);
	}
	npending = 0;
}

int usdt_binaries_attached(void)
{
	return nbinaries;
}

void usdt_free(void)
{
	for (size_t i = 0; i < nlinks; i++)
		bpf_link__destroy(links[i]);
	for (size_t i = 0; i < npending; i++)
		free(pending[i]);
	free(links);
	free(pending);
	free(seen);
	links = NULL;
	pending = NULL;
	seen = NULL;
	nlinks = npending = nseen = 0;
}
