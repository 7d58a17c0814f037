/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* What dftrace-bpf records for each syscall, and how it is written. */
#ifndef MODEL_SYSCALLS_H
#define MODEL_SYSCALLS_H

#include <stdbool.h>
#include <stddef.h>
#include "dftrace.h"

enum sc_cat { CAT_POSIX, CAT_PROC, CAT_IOCTL };

/* How user space treats the call beyond printing it. */
enum sc_effect {
	FX_NONE,
	FX_OPEN,	/* ret is a new fd for path 0 (relative to dirfd) */
	FX_CLOSE,
	FX_CLOSE_RANGE,
	FX_DUP,		/* ret duplicates fd */
	FX_DUP2,	/* args[1] duplicates args[0] */
	FX_FCNTL,
	FX_CHDIR,
	FX_FCHDIR,
	FX_MMAP,
	FX_MUNMAP,
	FX_IOCTL,
	FX_NEWFD,	/* ret is an fd we only label (pipe, socket...) */
	FX_NEWFD_PAIR,	/* args[5] holds two new fds (pipe, socketpair) */
};

enum arg_type {
	ARG_SKIP = 0,
	ARG_INT,	/* signed decimal */
	ARG_UINT,	/* unsigned decimal */
	ARG_FD,		/* fd: printed, and names the file (fhash) */
	ARG_FD2,	/* second fd: fhash2 */
	ARG_DIRFD,	/* base for a relative path; printed as dirfd */
	ARG_PATH,	/* user string, delivered by the kernel side */
	ARG_HEX,	/* "0x..." string */
};

struct arg_desc {
	const char *key;	/* JSON key, e.g. "count" */
	enum arg_type type;
	/* Filled by sc_init() so the writer never measures or compares: */
	bool wide;		/* 64-bit value (offsets, lengths) vs C int */
	unsigned char json_key_len;
	char *json_key;		/* ,"count": */
};

struct sc_desc {
	const char *syscall;	/* exact kernel name, e.g. "pread64" */
	const char *name;	/* DFAnalyzer's libc-style name, e.g. "pread" */
	enum sc_cat cat;
	enum sc_effect effect;
	struct arg_desc args[DFT_SC_NARGS];
	bool moves_bytes;	/* ret counts bytes read or written */
	unsigned char io_args;	/* dft_sc_cfg.io_args: what its dft_io keeps */
	/* The argument whose fd names the file its totals are keyed by
	 * (dft_sc_cfg.fd_arg's rule): DFT_FD_RET for an open's, 1 + the
	 * first ARG_FD's index, or 0: none. */
	unsigned char fd_arg;
	/* Recorded only to keep fd tables right; no event is written. */
	bool silent;
	unsigned char fd_pair_arg;	/* 1 + index of an int[2] the call fills */
	/* dft_sc_cfg.kind where the effect does not say it (openat2, AIO's
	 * and io_uring's calls); 0 else */
	unsigned char kernel;
	/* Precomputed JSON fragments: "name":"pread","cat":"POSIX", and
	 * ,"syscall":"pread64","ret": */
	char *json_name_cat, *json_syscall_ret;
	unsigned short json_name_cat_len, json_syscall_ret_len;
};

/* What an operation's ret counts, by its libc-style name (ours, and
 * DFTracer's fread/fwrite). */
enum sc_bytes { SC_BYTES_NONE, SC_BYTES_READ, SC_BYTES_WRITE, SC_BYTES_COPY };
enum sc_bytes sc_bytes_of(const char *name, size_t len);

/* The descriptor for a syscall number, or NULL if it is not recorded. */
const struct sc_desc *sc_lookup(unsigned int nr);
/* A dft_io as the dft_syscall it stands for (after sc_init()). */
void sc_expand_io(const struct dft_io *io, struct dft_syscall *out);
/* The same for a call its thread kept (k->kind DFT_EV_IO), in the batch
 * whose header is head. */
void sc_expand_kept(const struct dft_header *head, const struct dft_kept *k,
		    struct dft_syscall *out);
/* Fills the kernel side's per-syscall configuration. */
void sc_fill_config(struct dft_sc_cfg cfg[DFT_NR_MAX]);
int sc_init(void);
/* Distinct libc-style names; sc_init() fails if the table has more. */
#define SC_MAX_NAMES 96
/* True if some syscall's event has an arg named key ("fd", "count"...). */
bool sc_is_arg_key(const char *key);
/* Index of the libc-style name for per-operation totals (0..sc_nnames()-1). */
int sc_name_index(const struct sc_desc *d);
/* The same for an operation no syscall is (a static string): "mmap_read". */
int sc_index_of_name(const char *name);
int sc_nnames(void);
const char *sc_name_at(int i);

#endif
