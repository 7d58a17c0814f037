// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The table of recorded syscalls. Names follow what DFAnalyzer classifies
 * (openat is logged as open, pread64 as pread); the exact syscall is kept
 * in args.syscall. x86_64 numbers come from <sys/syscall.h>.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include "model/syscalls.h"

#define FD { "fd", ARG_FD }
#define DIRFD { "dirfd", ARG_DIRFD }
#define PATH { "path", ARG_PATH }
#define COUNT { "count", ARG_UINT }
#define OFFSET { "offset", ARG_INT }
#define FLAGS { "flags", ARG_INT }
#define MODE { "mode", ARG_INT }
#define IOVCNT { "iovcnt", ARG_INT }
#define SKIP { NULL, ARG_SKIP }
#define POSIX(sc, nm, fx, ...) { #sc, nm, CAT_POSIX, fx, { __VA_ARGS__ } }
/* For silent calls the only argument that matters is O_CLOEXEC's home,
 * keyed "flags" whatever the man page calls it. */
#define SILENT(sc, ...) { #sc, #sc, CAT_POSIX, FX_NEWFD, { __VA_ARGS__ }, \
			  .silent = true }
#define SILENT_PAIR(sc, pair, ...) { #sc, #sc, CAT_POSIX, FX_NEWFD_PAIR, \
				     { __VA_ARGS__ }, .silent = true, \
				     .fd_pair_arg = pair }

/* Handled whole by the kernel side (AIO's submissions and completions
 * become one record per iocb; io_uring's registered files, their names):
 * no record of their own. */
#define KERNEL_SIDE(sc, kind) { #sc, #sc, CAT_POSIX, FX_NONE, { SKIP }, .silent = true, \
				.kernel = kind }

static struct sc_desc table[DFT_NR_MAX] = {
	[SYS_io_submit] = KERNEL_SIDE(io_submit, DFT_SC_AIO_SUBMIT),
	[SYS_io_getevents] = KERNEL_SIDE(io_getevents, DFT_SC_AIO_EVENTS),
	[SYS_io_pgetevents] = KERNEL_SIDE(io_pgetevents, DFT_SC_AIO_EVENTS),
	[SYS_io_uring_register] = KERNEL_SIDE(io_uring_register, DFT_SC_URING_REGISTER),
	[SYS_open] = POSIX(open, "open", FX_OPEN, PATH, FLAGS, MODE),
	[SYS_openat] = POSIX(openat, "open", FX_OPEN, DIRFD, PATH, FLAGS, MODE),
	/* flags and mode: from its struct open_how, read by the kernel side */
	[SYS_openat2] = { "openat2", "open", CAT_POSIX, FX_OPEN, { DIRFD, PATH, FLAGS, MODE },
			  .kernel = DFT_SC_OPENAT2 },
	[SYS_creat] = POSIX(creat, "creat", FX_OPEN, PATH, MODE),
	[SYS_close] = POSIX(close, "close", FX_CLOSE, FD),
	[SYS_close_range] = POSIX(close_range, "close_range", FX_CLOSE_RANGE,
				  { "first", ARG_UINT }, { "last", ARG_UINT },
				  FLAGS),
	[SYS_read] = POSIX(read, "read", FX_NONE, FD, SKIP, COUNT),
	[SYS_write] = POSIX(write, "write", FX_NONE, FD, SKIP, COUNT),
	[SYS_pread64] = POSIX(pread64, "pread", FX_NONE, FD, SKIP, COUNT, OFFSET),
	[SYS_pwrite64] = POSIX(pwrite64, "pwrite", FX_NONE, FD, SKIP, COUNT,
			       OFFSET),
	[SYS_readv] = POSIX(readv, "readv", FX_NONE, FD, SKIP, IOVCNT),
	[SYS_writev] = POSIX(writev, "writev", FX_NONE, FD, SKIP, IOVCNT),
	[SYS_preadv] = POSIX(preadv, "preadv", FX_NONE, FD, SKIP, IOVCNT, OFFSET),
	[SYS_pwritev] = POSIX(pwritev, "pwritev", FX_NONE, FD, SKIP, IOVCNT,
			      OFFSET),
	[SYS_preadv2] = POSIX(preadv2, "preadv", FX_NONE, FD, SKIP, IOVCNT,
			      OFFSET, SKIP, FLAGS),
	[SYS_pwritev2] = POSIX(pwritev2, "pwritev", FX_NONE, FD, SKIP, IOVCNT,
			       OFFSET, SKIP, FLAGS),
	[SYS_lseek] = POSIX(lseek, "lseek", FX_NONE, FD, OFFSET,
			    { "whence", ARG_INT }),
	[SYS_fsync] = POSIX(fsync, "fsync", FX_NONE, FD),
	[SYS_fdatasync] = POSIX(fdatasync, "fdatasync", FX_NONE, FD),
	[SYS_sync_file_range] = POSIX(sync_file_range, "sync_file_range",
				      FX_NONE, FD, OFFSET, COUNT, FLAGS),
	[SYS_truncate] = POSIX(truncate, "truncate", FX_NONE, PATH,
			       { "length", ARG_INT }),
	[SYS_ftruncate] = POSIX(ftruncate, "ftruncate", FX_NONE, FD,
				{ "length", ARG_INT }),
	[SYS_fallocate] = POSIX(fallocate, "fallocate", FX_NONE, FD,
				{ "mode", ARG_INT }, OFFSET,
				{ "length", ARG_INT }),
	[SYS_mmap] = POSIX(mmap, "mmap", FX_MMAP, { "addr", ARG_HEX },
			   { "length", ARG_UINT }, { "prot", ARG_INT }, FLAGS,
			   FD, OFFSET),
	[SYS_munmap] = POSIX(munmap, "munmap", FX_MUNMAP, { "addr", ARG_HEX },
			     { "length", ARG_UINT }),
	[SYS_msync] = POSIX(msync, "msync", FX_MUNMAP, { "addr", ARG_HEX },
			    { "length", ARG_UINT }, FLAGS),
	[SYS_stat] = POSIX(stat, "stat", FX_NONE, PATH),
	[SYS_lstat] = POSIX(lstat, "lstat", FX_NONE, PATH),
	[SYS_fstat] = POSIX(fstat, "fstat", FX_NONE, FD),
	[SYS_newfstatat] = POSIX(newfstatat, "stat", FX_NONE, DIRFD, PATH, SKIP,
				 FLAGS),
	[SYS_statx] = POSIX(statx, "stat", FX_NONE, DIRFD, PATH, FLAGS,
			    { "mask", ARG_UINT }),
	[SYS_getdents64] = POSIX(getdents64, "getdents", FX_NONE, FD, SKIP,
				 COUNT),
	[SYS_unlink] = POSIX(unlink, "unlink", FX_NONE, PATH),
	[SYS_unlinkat] = POSIX(unlinkat, "unlink", FX_NONE, DIRFD, PATH, FLAGS),
	[SYS_rename] = POSIX(rename, "rename", FX_NONE, PATH,
			     { "newpath", ARG_PATH }),
	[SYS_renameat] = POSIX(renameat, "rename", FX_NONE, DIRFD, PATH,
			       { "newdirfd", ARG_DIRFD },
			       { "newpath", ARG_PATH }),
	[SYS_renameat2] = POSIX(renameat2, "rename", FX_NONE, DIRFD, PATH,
				{ "newdirfd", ARG_DIRFD },
				{ "newpath", ARG_PATH }, FLAGS),
	[SYS_mkdir] = POSIX(mkdir, "mkdir", FX_NONE, PATH, MODE),
	[SYS_mkdirat] = POSIX(mkdirat, "mkdir", FX_NONE, DIRFD, PATH, MODE),
	[SYS_rmdir] = POSIX(rmdir, "rmdir", FX_NONE, PATH),
	[SYS_chdir] = POSIX(chdir, "chdir", FX_CHDIR, PATH),
	[SYS_fchdir] = POSIX(fchdir, "fchdir", FX_FCHDIR, FD),
	[SYS_dup] = POSIX(dup, "dup", FX_DUP, FD),
	[SYS_dup2] = POSIX(dup2, "dup2", FX_DUP2, FD, { "newfd", ARG_INT }),
	[SYS_dup3] = POSIX(dup3, "dup3", FX_DUP2, FD, { "newfd", ARG_INT },
			   FLAGS),
	[SYS_fcntl] = POSIX(fcntl, "fcntl", FX_FCNTL, FD, { "cmd", ARG_INT },
			    { "arg", ARG_INT }),
	[SYS_sendfile] = POSIX(sendfile, "sendfile", FX_NONE,
			       { "out_fd", ARG_FD2 }, { "in_fd", ARG_FD },
			       SKIP, COUNT),
	[SYS_copy_file_range] = POSIX(copy_file_range, "copy_file_range",
				      FX_NONE, { "fd_in", ARG_FD },
				      SKIP,
				      { "fd_out", ARG_FD2 },
				      SKIP, COUNT,
				      FLAGS),
	[SYS_splice] = POSIX(splice, "splice", FX_NONE, { "fd_in", ARG_FD },
			     SKIP, { "fd_out", ARG_FD2 },
			     SKIP, COUNT, FLAGS),
	[SYS_ioctl] = { "ioctl", "ioctl", CAT_IOCTL, FX_IOCTL,
			{ FD, { "request", ARG_HEX }, { "arg", ARG_HEX } } },
	[SYS_clone] = { "clone", "clone", CAT_PROC, FX_NONE,
			{ { "flags", ARG_HEX } } },
	[SYS_clone3] = { "clone3", "clone", CAT_PROC, FX_NONE, { SKIP } },
	[SYS_fork] = { "fork", "fork", CAT_PROC, FX_NONE, { SKIP } },
	[SYS_vfork] = { "vfork", "vfork", CAT_PROC, FX_NONE, { SKIP } },
	[SYS_open_by_handle_at] = POSIX(open_by_handle_at, "open", FX_NEWFD,
					{ "mount_fd", ARG_INT }, SKIP, FLAGS),
	/* Other ways to get an fd: silent, so later I/O on them is named. */
	[SYS_pipe] = SILENT_PAIR(pipe, 1),
	[SYS_pipe2] = SILENT_PAIR(pipe2, 1, FLAGS),
	[SYS_socketpair] = SILENT_PAIR(socketpair, 4, SKIP, FLAGS),
	[SYS_socket] = SILENT(socket, SKIP, FLAGS),
	[SYS_accept] = SILENT(accept),
	[SYS_accept4] = SILENT(accept4, SKIP, SKIP, SKIP, FLAGS),
	[SYS_eventfd] = SILENT(eventfd),
	[SYS_eventfd2] = SILENT(eventfd2, SKIP, FLAGS),
	[SYS_epoll_create] = SILENT(epoll_create),
	[SYS_epoll_create1] = SILENT(epoll_create1, FLAGS),
	[SYS_memfd_create] = SILENT(memfd_create),
	[SYS_timerfd_create] = SILENT(timerfd_create, SKIP, FLAGS),
	[SYS_signalfd] = SILENT(signalfd),
	[SYS_signalfd4] = SILENT(signalfd4, SKIP, SKIP, SKIP, FLAGS),
	[SYS_inotify_init] = SILENT(inotify_init),
	[SYS_inotify_init1] = SILENT(inotify_init1, FLAGS),
	[SYS_fanotify_init] = SILENT(fanotify_init),
	[SYS_userfaultfd] = SILENT(userfaultfd),
	[SYS_perf_event_open] = SILENT(perf_event_open),
	[SYS_pidfd_open] = SILENT(pidfd_open),
	[SYS_pidfd_getfd] = SILENT(pidfd_getfd),
	[SYS_io_uring_setup] = SILENT(io_uring_setup),
};

static const char *names[SC_MAX_NAMES];
static unsigned char name_index[DFT_NR_MAX];
static int nnames;

static const char *cat_name(enum sc_cat c)
{
	switch (c) {
	case CAT_PROC:
		return "PROC";
	case CAT_IOCTL:
		return "IOCTL";
	default:
		return "POSIX";
	}
}

static int intern_name(const char *name)
{
	for (int i = 0; i < nnames; i++)
		if (strcmp(names[i], name) == 0)
			return i;
	if (nnames == SC_MAX_NAMES)
		return -1;
	names[nnames] = name;
	return nnames++;
}

enum sc_bytes sc_bytes_of(const char *name, size_t len)
{
	/* libc-style names: ours, and DFTracer's STDIO ones */
	static const struct {
		const char *name;
		enum sc_bytes kind;
	} ops[] = {
		{ "read", SC_BYTES_READ }, { "pread", SC_BYTES_READ },
		{ "readv", SC_BYTES_READ }, { "preadv", SC_BYTES_READ },
		{ "fread", SC_BYTES_READ },
		{ "write", SC_BYTES_WRITE }, { "pwrite", SC_BYTES_WRITE },
		{ "writev", SC_BYTES_WRITE }, { "pwritev", SC_BYTES_WRITE },
		{ "fwrite", SC_BYTES_WRITE },
		{ "sendfile", SC_BYTES_COPY }, { "copy_file_range", SC_BYTES_COPY },
		{ "splice", SC_BYTES_COPY },
		/* what no syscall shows: mappings, io_uring, AIO */
		{ "mmap_read", SC_BYTES_READ }, { "mmap_write", SC_BYTES_WRITE },
		{ "io_uring_read", SC_BYTES_READ }, { "io_uring_readv", SC_BYTES_READ },
		{ "io_uring_read_fixed", SC_BYTES_READ },
		{ "io_uring_write", SC_BYTES_WRITE }, { "io_uring_writev", SC_BYTES_WRITE },
		{ "io_uring_write_fixed", SC_BYTES_WRITE },
		{ "aio_read", SC_BYTES_READ }, { "aio_readv", SC_BYTES_READ },
		{ "aio_write", SC_BYTES_WRITE }, { "aio_writev", SC_BYTES_WRITE },
	};

	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (strlen(ops[i].name) == len && !memcmp(name, ops[i].name, len))
			return ops[i].kind;
	return SC_BYTES_NONE;
}

/* What the model applies to its fd tables; an ioctl is only decoded. */
static bool changes_fds(const struct sc_desc *d)
{
	return d->effect != FX_NONE && d->effect != FX_IOCTL;
}

/* The arguments a call's dft_io keeps: those it writes or names files
 * by, if they are few enough, for a call that changes no fd table and
 * has nothing more to send (paths, fds in user memory); 0: none. The
 * first is an fd: a kept call (struct dft_kept) holds it in 32 bits. */
static unsigned char io_args_of(const struct sc_desc *d)
{
	unsigned char mask = 0;
	int n = 0;

	if (!d->syscall || d->silent || d->fd_pair_arg || changes_fds(d))
		return 0;
	for (int i = 0; i < DFT_SC_NARGS; i++) {
		enum arg_type type = d->args[i].type;

		if (type == ARG_PATH || (!n && type != ARG_SKIP && type != ARG_FD &&
					 type != ARG_FD2))
			return 0;
		if (type != ARG_SKIP) {
			mask |= 1u << i;
			n++;
		}
	}
	return n <= DFT_IO_NARGS ? mask : 0;
}

/* The fd whose file a call's totals are keyed by (struct sc_desc's
 * fd_arg). */
static unsigned char fd_arg_of(const struct sc_desc *d)
{
	if (d->effect == FX_OPEN)
		return DFT_FD_RET;
	for (int i = 0; d->syscall && i < DFT_SC_NARGS; i++)
		if (d->args[i].type == ARG_FD)
			return i + 1;
	return 0;
}

static int first_path_arg(const struct sc_desc *d)
{
	for (int i = 0; i < DFT_SC_NARGS; i++)
		if (d->args[i].type == ARG_PATH)
			return i;
	return -1;
}

int sc_init(void)
{
	for (unsigned int nr = 0; nr < DFT_NR_MAX; nr++) {
		struct sc_desc *d = &table[nr];
		int n;

		if (!d->syscall)
			continue;
		n = asprintf(&d->json_name_cat, "\"name\":\"%s\",\"cat\":\"%s\",",
			     d->name, cat_name(d->cat));
		if (n < 0)
			return -ENOMEM;
		d->json_name_cat_len = n;
		n = asprintf(&d->json_syscall_ret, ",\"syscall\":\"%s\",\"ret\":",
			     d->syscall);
		if (n < 0)
			return -ENOMEM;
		d->json_syscall_ret_len = n;
		d->moves_bytes = sc_bytes_of(d->name, strlen(d->name)) != SC_BYTES_NONE;
		d->io_args = io_args_of(d);
		d->fd_arg = fd_arg_of(d);
		/* the fd's path is the call's first named file (correlate.c's
		 * name_files(), which totals take): no path beside it */
		if (d->fd_arg && d->fd_arg != DFT_FD_RET && first_path_arg(d) >= 0)
			return -EINVAL;
		for (int i = 0; i < DFT_SC_NARGS; i++) {
			struct arg_desc *a = &d->args[i];

			if (!a->key)
				continue;
			n = asprintf(&a->json_key, ",\"%s\":", a->key);
			if (n < 0)
				return -ENOMEM;
			a->json_key_len = n;
			a->wide = !strcmp(a->key, "offset") || !strcmp(a->key, "length");
		}
		if (d->silent)
			continue; /* never written or counted */
		if (nnames == SC_MAX_NAMES && intern_name(d->name) < 0)
			return -E2BIG;
		name_index[nr] = intern_name(d->name);
	}
	return 0;
}

const struct sc_desc *sc_lookup(unsigned int nr)
{
	return nr < DFT_NR_MAX && table[nr].syscall ? &table[nr] : NULL;
}

bool sc_is_arg_key(const char *key)
{
	for (unsigned int nr = 0; nr < DFT_NR_MAX; nr++)
		for (int i = 0; table[nr].syscall && i < DFT_SC_NARGS; i++)
			if (table[nr].args[i].key && !strcmp(table[nr].args[i].key, key))
				return true;
	return false;
}

int sc_name_index(const struct sc_desc *d)
{
	return name_index[d - table];
}

int sc_index_of_name(const char *name)
{
	return intern_name(name);
}

int sc_nnames(void)
{
	return nnames;
}

const char *sc_name_at(int i)
{
	return i >= 0 && i < nnames ? names[i] : NULL;
}

/* A call's kept arguments (slot, in the order io_args names them) where
 * its dft_syscall has them. */
static void place_io_args(unsigned int nr, const unsigned long long slot[DFT_IO_NARGS],
			  struct dft_syscall *out)
{
	unsigned char mask = nr < DFT_NR_MAX ? table[nr].io_args : 0;
	int n = 0;

	for (int i = 0; i < DFT_SC_NARGS && n < DFT_IO_NARGS; i++)
		if (mask & (1u << i))
			out->args[i] = slot[n++];
}

void sc_expand_io(const struct dft_io *io, struct dft_syscall *out)
{
	memset(out, 0, sizeof(*out));
	out->h = io->h;
	out->h.kind = DFT_EV_SYSCALL;
	out->h.io_dur = 0;
	out->dur = io->h.io_dur;
	out->ret = io->ret;
	place_io_args(io->h.nr, io->args, out);
}

void sc_expand_kept(const struct dft_header *head, const struct dft_kept *k,
		    struct dft_syscall *out)
{
	/* the fd as the kernel reads it, an int: as a dft_io's is written */
	const unsigned long long slot[DFT_IO_NARGS] = {
		(unsigned long long)(long long)k->fd, k->io.args[0], k->io.args[1]
	};

	memset(out, 0, sizeof(*out));
	out->h.kind = DFT_EV_SYSCALL;
	out->h.flags = k->flags;
	out->h.nr = k->nr;
	out->h.tgid = head->tgid;
	out->h.tid = head->tid;
	out->h.ts = head->ts + k->dts;
	out->dur = k->dur;
	out->ret = k->io.ret;
	place_io_args(k->nr, slot, out);
}

/* What the kernel side does for the call beyond its record: by its
 * effect, or as its entry says. */
static unsigned char kernel_kind(const struct sc_desc *d)
{
	switch (d->effect) {
	case FX_MMAP: return DFT_SC_MMAP;
	case FX_FCNTL: return DFT_SC_FCNTL;
	case FX_CLOSE: return DFT_SC_CLOSE;
	default: return d->kernel;
	}
}

void sc_fill_config(struct dft_sc_cfg cfg[DFT_NR_MAX])
{
	for (unsigned int nr = 0; nr < DFT_NR_MAX; nr++) {
		const struct sc_desc *d = &table[nr];
		int slot = 0;

		cfg[nr] = (struct dft_sc_cfg){
			.interest = !d->syscall ? 0 : changes_fds(d) ? DFT_INTEREST_MODEL :
				    DFT_INTEREST_EVENT,
			.fd_pair_arg = d->fd_pair_arg,
			.new_fd_ino = d->silent && d->effect == FX_NEWFD,
			.fd_arg = fd_arg_of(d),
			.io_args = io_args_of(d),
			.kind = kernel_kind(d),
		};
		for (int i = 0, slot = 0; i < DFT_SC_NARGS && slot < DFT_IO_NARGS; i++)
			if (cfg[nr].io_args & (1u << i))
				cfg[nr].io_arg[slot++] = i;
		for (int i = 0; d->syscall && i < DFT_SC_NARGS && slot < 2; i++) {
			if (d->args[i].type != ARG_PATH)
				continue;
			cfg[nr].path_args |= (i + 1) << (4 * slot);
			slot++;
		}
	}
	/* a thread's last regions, in its ring, are read as it leaves */
	cfg[SYS_exit].interest = DFT_INTEREST_RING;
	cfg[SYS_exit_group].interest = DFT_INTEREST_RING;
}
