// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
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
#include "capture/attach.h"
#include "capture/gpuprobes.h"
#include "capture/holders.h"
#include "capture/loader.h"
#include "capture/probed.h"
#include "capture/report.h"
#include "capture/usdt.h"
#include "dftrace.h"
#include "dftrace.skel.h" /* after dftrace.h: its types */
#include "lib/hash.h"
#include "lib/procfs.h"
#include "lib/vec.h"

/* Files looked at that carry no probes, remembered so that each is
 * parsed once (libc is mapped by every process); forgotten all at once
 * past this many. */
#define PLAIN_MAX 65536
/* Closed files handled a call. */
#define DONE_BATCH 64
/* The key said() keeps for the bound. */
#define SAID_BOUND 0

enum event_kind { EV_OFFER, EV_FORK, EV_UNMAP, EV_END };

/* What the record path saw, queued in its order. */
struct probed_event {
	enum event_kind kind;
	uint32_t pid;
	uint32_t other;		/* a fork's child; an unmapping's thread */
	uint64_t addr, len;
	uint64_t at;		/* an unmapping's time: its process was alive */
	char *path;		/* an offer's */
};

enum file_state {
	FILE_ATTACHED,
	FILE_WAITING,		/* for the bound: attached when there is room */
	FILE_REFUSED,		/* could not be attached: not again while held */
	FILE_CLOSING,		/* its links handed to the closer */
};

/* A file that carries probes, while a traced process maps it. */
struct probed_file {
	uint64_t key;
	dev_t dev;
	ino_t ino;
	char *path;		/* as first offered: shown, and opened again */
	enum file_state state;
	bool failed;		/* its attach failed: refused once closed */
	struct uprobe_links links;
	struct usdt_spec_ids specs;
	uint32_t closing_sites, closing_fds;
};

/* What a file's probes are, before they are attached. */
struct file_plan {
	struct uprobe_plan plan;
	struct usdt_spec_ids specs;
	struct usdt_found usdt;
	int calls;		/* GPU calls */
};

static void release_file(struct probed_files *pf, struct probed_file *f);
static void released(void *ctx, void *file);
static void *find_file(void *ctx, dev_t dev, ino_t ino);

static bool proven(void *ctx, uint32_t pid, uint64_t alive_ns)
{
	const struct probed_files *pf = ctx;

	return attach_proven(bpf_map__fd(pf->o.skel->maps.tasks), pid, alive_ns);
}

void probed_init(struct probed_files *pf, const struct probed_opts *o)
{
	struct bpf_map *m = o->skel && o->annotations ? o->skel->maps.__bpf_usdt_specs : NULL;

	*pf = (struct probed_files){ .o = *o };
	closer_init(&pf->closer, o->multi ? CLOSER_THREADS : 1);
	pf->holders = (struct holders){ .find = find_file, .released = released,
					.proven = o->skel ? proven : NULL, .ctx = pf };
	pf->specs_ok = m && usdt_specs_init(&pf->specs, bpf_map__fd(m), bpf_map__max_entries(m),
					    bpf_map__value_size(m));
	if (m && !pf->specs_ok)
		report_error("annotations off: libbpf's USDT specs are not of the form "
			     "this tracer was built for");
}

/* ---- the queue ---- */

static bool queued_for(const struct probed_files *pf, uint32_t pid)
{
	uint64_t v;

	return hmap_get(&pf->queued, pid, &v) || holders_has(&pf->holders, pid);
}

static void queue_event(struct probed_files *pf, const struct probed_event *ev)
{
	if (VEC_PUSH(pf->queue, pf->nqueue, pf->capqueue, *ev))
		free(ev->path);
}

void probed_offer(struct probed_files *pf, uint32_t pid, const char *path, uint64_t addr,
		  uint64_t len)
{
	struct probed_event ev = { EV_OFFER, pid, 0, addr, len, 0, NULL };

	if (!pf->o.skel || !(pf->specs_ok || pf->o.gpu) || !path || path[0] != '/')
		return; /* pipes, anonymous memory, deleted files */
	ev.path = strdup(path);
	if (!ev.path)
		return;
	(void)hmap_add(&pf->queued, pid, 0);
	queue_event(pf, &ev);
}

struct maps_offer {
	struct probed_event *ev;
	uint32_t n, cap;
};

static void offer_map(const struct procfs_map *m, void *ctx)
{
	struct maps_offer *o = ctx;
	struct probed_event ev = { EV_OFFER, 0, 0, m->start, m->end - m->start, 0, NULL };

	if (m->perms[2] != 'x' || m->path[0] != '/' || !(ev.path = strdup(m->path)))
		return;
	if (VEC_PUSH(o->ev, o->n, o->cap, ev))
		free(ev.path);
}

void probed_offer_maps(struct probed_files *pf, uint32_t pid, uint64_t alive_ns)
{
	struct maps_offer o = { 0 };
	bool ours;

	if (!pf->o.skel)
		return;
	procfs_each_map(pid, offer_map, &o);
	/* what another process maps, once the pid is another's, is not ours */
	ours = proven(pf, pid, alive_ns);
	for (uint32_t i = 0; i < o.n; i++) {
		if (ours)
			probed_offer(pf, pid, o.ev[i].path, o.ev[i].addr, o.ev[i].len);
		free(o.ev[i].path);
	}
	free(o.ev);
}

void probed_forked(struct probed_files *pf, uint32_t parent, uint32_t child)
{
	struct probed_event ev = { EV_FORK, parent, child, 0, 0, 0, NULL };

	if (!queued_for(pf, parent))
		return; /* it maps nothing probed */
	(void)hmap_add(&pf->queued, child, 0);
	queue_event(pf, &ev);
}

void probed_unmapped(struct probed_files *pf, uint32_t pid, uint32_t tid, uint64_t addr,
		     uint64_t len, uint64_t alive_ns)
{
	struct probed_event *last = pf->nqueue ? &pf->queue[pf->nqueue - 1] : NULL;
	struct probed_event ev = { tid ? EV_UNMAP : EV_END, pid, tid, addr, len, alive_ns, NULL };
	uint64_t end = addr + len < addr ? UINT64_MAX : addr + len;

	if (!queued_for(pf, pid))
		return;
	/* a run of unmappings (free() giving memory back) is looked at once */
	if (tid && last && last->kind == EV_UNMAP && last->pid == pid && last->other == tid) {
		uint64_t last_end = last->addr + last->len < last->addr ? UINT64_MAX :
					    last->addr + last->len;

		last->addr = addr < last->addr ? addr : last->addr;
		last->len = (end > last_end ? end : last_end) - last->addr;
		return;
	}
	queue_event(pf, &ev);
}

/* ---- what is said ---- */

/* Once a run for each reason (an errno; SAID_BOUND): true the first time. */
static bool first_time(struct probed_files *pf, uint64_t reason)
{
	return hmap_add(&pf->said, reason, 0) == 1;
}

static void say_attached(const struct probed_files *pf, const struct probed_file *f,
			 const struct file_plan *fp)
{
	char pinned[40] = "";

	if (!pf->o.verbose)
		return;
	if (fp->usdt.pinned)
		snprintf(pinned, sizeof(pinned), ", %d with pinned arguments", fp->usdt.pinned);
	if (fp->usdt.probes)
		fprintf(stderr, "dftrace-bpf: annotations in '%s': %d probes attached%s%s%s\n",
			f->path, fp->usdt.probes, pinned,
			fp->usdt.rings ? ", regions from threads' rings" : "",
			fp->usdt.python ? " (python)" : "");
	if (fp->calls)
		fprintf(stderr, "dftrace-bpf: GPU calls in '%s': %d probed\n", f->path, fp->calls);
}

/* A file that cannot be attached now: why, once a run for each reason;
 * with -v, each file again, in short. */
static void say_refused(struct probed_files *pf, const struct probed_file *f, int err)
{
	uint64_t reason = err == -EBUSY ? SAID_BOUND : (uint64_t)-err;

	if (!first_time(pf, reason)) {
		if (pf->o.verbose)
			fprintf(stderr, "dftrace-bpf: not probing '%s': %s\n", f->path,
				err == -EBUSY ? "at the bound, until others are released" :
						strerror(-err));
	} else if (err == -EBUSY) {
		report_error("not probing '%s' while probes on %u sites, in %u descriptors, are "
			     "held: at most %u and %u at once; it is probed once others are "
			     "released, and its calls until then are not traced",
			     f->path, pf->sites, pf->fds, PROBED_SITES_MAX, pf->o.fd_budget);
	} else if (err == -ENOSPC) {
		report_error("cannot probe '%s': its annotations' argument specs do not fit "
			     "(%u in use, at most %u); its calls and regions are not traced",
			     f->path, usdt_specs_used(&pf->specs), pf->specs.max);
	} else {
		report_error("cannot probe '%s': %s; its calls and regions are not traced",
			     f->path, strerror(-err));
	}
}

/* ---- attaching ---- */

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

/* Files are known by device and inode: one library has many paths. The
 * pair is kept as its 64-bit hash (two files colliding: about 1 in 2^64). */
static uint64_t file_key(dev_t dev, ino_t ino)
{
	uint64_t id[2] = { dev, ino };

	return dft_hash64(id, sizeof(id));
}

/* A file without probes, as it is now: rewritten, it is looked at again. */
static uint64_t plain_key(const struct stat *st)
{
	uint64_t id[4] = { st->st_dev, st->st_ino, st->st_ctim.tv_sec, st->st_ctim.tv_nsec };

	return dft_hash64(id, sizeof(id));
}

static void file_plan_free(struct probed_files *pf, struct file_plan *fp)
{
	uprobe_plan_free(&fp->plan);
	usdt_put_specs(&pf->specs, &fp->specs);
}

/* What the file at fd carries: 0, or -errno. */
static int plan_file(struct probed_files *pf, int fd, struct file_plan *fp)
{
	static bool elf_ready;
	struct gpu_syms syms = { .families = 0 };
	struct dftrace_bpf *gpu;
	Elf *elf;
	int err = 0;

	if (!elf_ready) {
		elf_version(EV_CURRENT);
		elf_ready = true;
	}
	*fp = (struct file_plan){ 0 };
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		return 0; /* not ELF: nothing */
	if (pf->specs_ok)
		err = usdt_plan(pf->o.loader, &pf->specs, elf, &fp->plan, &fp->specs, &fp->usdt);
	if (!err && pf->o.gpu) {
		gpu_find_syms(elf, &syms);
		gpu = syms.families ? loader_lazy(pf->o.loader, LAZY_GPU) : NULL;
		fp->calls = gpu ? gpu_plan(gpu, &syms, &fp->plan) : 0;
		err = fp->calls < 0 ? fp->calls : 0;
	}
	elf_end(elf);
	return err;
}

/* f's probes, from the file at fd: attached, waiting for the bound, or
 * refused (said). */
static void attach_file(struct probed_files *pf, struct probed_file *f, int fd,
			struct file_plan *fp)
{
	uint32_t sites = uprobe_plan_sites(&fp->plan), fds = uprobe_plan_fds(&fp->plan, pf->o.multi);
	char self[64];
	int err;

	if (pf->sites + sites > PROBED_SITES_MAX || pf->fds + fds > pf->o.fd_budget) {
		f->state = FILE_WAITING;
		say_refused(pf, f, -EBUSY);
		return;
	}
	/* libbpf and the kernel open the very file checked here, not
	 * whatever its path names by then */
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	closer_pause(&pf->closer);
	err = uprobes_attach(&f->links, &fp->plan, self, pf->o.multi);
	closer_resume(&pf->closer);
	pf->sites += f->links.sites;
	pf->fds += f->links.fds;
	f->specs = fp->specs;
	fp->specs = (struct usdt_spec_ids){ 0 };
	f->state = FILE_ATTACHED;
	if (err) {
		/* all of the file or none: those attached go */
		f->failed = true;
		say_refused(pf, f, err);
		release_file(pf, f);
		return;
	}
	pf->attached_any = true;
	say_attached(pf, f, fp);
}

/* f's probes as planned (err: the plan's failure, said), and the plan
 * freed. */
static void attach_plan(struct probed_files *pf, struct probed_file *f, int fd,
			struct file_plan *fp, int err)
{
	if (err) {
		f->state = FILE_REFUSED;
		say_refused(pf, f, err);
	} else {
		attach_file(pf, f, fd, fp);
	}
	file_plan_free(pf, fp);
}

/* A file first seen (at fd): its entry if it carries probes, else NULL
 * (and it is remembered as plain). */
static struct probed_file *examine(struct probed_files *pf, int fd, const char *path,
				   const struct stat *st)
{
	struct probed_file *f;
	struct file_plan fp;
	int err = plan_file(pf, fd, &fp);

	if (!err && !uprobe_plan_sites(&fp.plan)) {
		if (pf->plain.n >= PLAIN_MAX)
			hmap_free(&pf->plain);
		(void)hmap_add(&pf->plain, plain_key(st), 0);
		file_plan_free(pf, &fp);
		return NULL;
	}
	f = calloc(1, sizeof(*f));
	if (f && !(f->path = strdup(path))) {
		free(f);
		f = NULL;
	}
	if (!f || hmap_put_ptr(&pf->files, file_key(st->st_dev, st->st_ino), f)) {
		if (f)
			free(f->path);
		free(f);
		file_plan_free(pf, &fp);
		return NULL;
	}
	f->key = file_key(st->st_dev, st->st_ino);
	f->dev = st->st_dev;
	f->ino = st->st_ino;
	attach_plan(pf, f, fd, &fp, err);
	return f;
}

/* A file waiting for room, or held again while it closed: attached if
 * its path still names it. */
static void attach_again(struct probed_files *pf, struct probed_file *f)
{
	struct file_plan fp;
	struct stat st;
	int fd = open_regular(f->path, &st), err;

	if (fd < 0 || st.st_dev != f->dev || st.st_ino != f->ino) {
		f->state = FILE_REFUSED; /* only the processes mapping it reach it now */
		if (fd >= 0)
			close(fd);
		return;
	}
	err = plan_file(pf, fd, &fp);
	attach_plan(pf, f, fd, &fp, err);
	close(fd);
}

/* ---- holding and releasing ---- */

static void forget_file(struct probed_files *pf, struct probed_file *f)
{
	hmap_del(&pf->files, f->key, NULL);
	free(f->path);
	free(f);
}

/* The file's links go to the closer; its specs and its entry go once
 * they are closed (files_closed()). */
static void release_file(struct probed_files *pf, struct probed_file *f)
{
	if (f->state == FILE_CLOSING)
		return;
	if (f->state != FILE_ATTACHED) {
		forget_file(pf, f);
		return;
	}
	f->state = FILE_CLOSING;
	f->closing_sites = f->links.sites;
	f->closing_fds = f->links.fds;
	closer_submit(&pf->closer, &f->links, f);
}

/* The last process mapping it let it go (capture/holders.h). */
static void released(void *ctx, void *file)
{
	release_file(ctx, file);
}

/* The probed file of these ids, or NULL. */
static void *find_file(void *ctx, dev_t dev, ino_t ino)
{
	struct probed_files *pf = ctx;

	return hmap_get_ptr(&pf->files, file_key(dev, ino));
}

static void handle_offer(struct probed_files *pf, const struct probed_event *ev)
{
	struct probed_file *f;
	struct stat st;
	uint64_t v;
	int fd = open_regular(ev->path, &st);

	if (fd < 0)
		return;
	f = hmap_get_ptr(&pf->files, file_key(st.st_dev, st.st_ino));
	if (!f && !hmap_get(&pf->plain, plain_key(&st), &v))
		f = examine(pf, fd, ev->path, &st);
	close(fd);
	if (f)
		holders_add(&pf->holders, ev->pid, f, ev->addr, ev->len ? ev->addr + ev->len : 0);
}

static void handle_event(struct probed_files *pf, const struct probed_event *ev)
{
	switch (ev->kind) {
	case EV_OFFER:
		handle_offer(pf, ev);
		break;
	case EV_FORK:
		holders_fork(&pf->holders, ev->pid, ev->other);
		break;
	case EV_UNMAP:
		holders_unmapped(&pf->holders, ev->pid, ev->other, ev->addr, ev->len, ev->at);
		break;
	case EV_END:
		holders_gone(&pf->holders, ev->pid);
		break;
	}
}

/* Files whose links the closer has closed: their specs go back, and the
 * file is forgotten, or waits to be attached again where it is mapped
 * again. Whether any were. */
static bool files_closed(struct probed_files *pf, bool ending)
{
	struct probed_file *f, *tags[DONE_BATCH];
	bool freed = false;
	uint32_t n;

	while ((n = closer_done(&pf->closer, (void **)tags, DONE_BATCH))) {
		for (uint32_t i = 0; i < n; i++) {
			f = tags[i];
			pf->sites -= f->closing_sites;
			pf->fds -= f->closing_fds;
			usdt_put_specs(&pf->specs, &f->specs);
			freed = true;
			if (holders_of(&pf->holders, f) && !ending) {
				f->state = f->failed ? FILE_REFUSED : FILE_WAITING;
				continue;
			}
			if (pf->o.verbose && !f->failed && !ending)
				fprintf(stderr, "dftrace-bpf: probes in '%s' released: no traced "
					"process maps it\n", f->path);
			forget_file(pf, f);
		}
	}
	return freed;
}

/* Files waiting for room, now that some was freed. */
static void attach_waiting(struct probed_files *pf)
{
	struct probed_file **waiting = NULL;
	uint32_t n = 0, cap = 0;
	size_t it = 0;
	uint64_t key, v;

	while (hmap_next(&pf->files, &it, &key, &v))
		if (((struct probed_file *)(uintptr_t)v)->state == FILE_WAITING)
			(void)VEC_PUSH(waiting, n, cap, (struct probed_file *)(uintptr_t)v);
	for (uint32_t i = 0; i < n; i++)
		attach_again(pf, waiting[i]);
	free(waiting);
}

void probed_attach_pending(struct probed_files *pf)
{
	bool freed = files_closed(pf, false);

	/* the queue first: a file its processes have unmapped since is not
	 * attached again only to be released */
	for (uint32_t i = 0; i < pf->nqueue; i++) {
		handle_event(pf, &pf->queue[i]);
		free(pf->queue[i].path);
	}
	pf->nqueue = 0;
	hmap_free(&pf->queued);
	if (freed)
		attach_waiting(pf);
}

uint32_t probed_sites(const struct probed_files *pf)
{
	return pf->sites;
}

void probed_free(struct probed_files *pf)
{
	struct probed_file **all = NULL;
	uint32_t n = 0, cap = 0;
	size_t it = 0;
	uint64_t key, v;

	if (!pf || !pf->o.skel)
		return;
	while (hmap_next(&pf->files, &it, &key, &v))
		if (VEC_PUSH(all, n, cap, (struct probed_file *)(uintptr_t)v))
			break;
	for (uint32_t i = 0; i < n; i++)
		release_file(pf, all[i]);
	free(all);
	closer_wait(&pf->closer);
	files_closed(pf, true);
	closer_free(&pf->closer);
	for (uint32_t i = 0; i < pf->nqueue; i++)
		free(pf->queue[i].path);
	free(pf->queue);
	holders_free(&pf->holders);
	hmap_free(&pf->files);
	hmap_free(&pf->plain);
	hmap_free(&pf->queued);
	hmap_free(&pf->said);
	usdt_specs_free(&pf->specs);
	*pf = (struct probed_files){ 0 };
}
