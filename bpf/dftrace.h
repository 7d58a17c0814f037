/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Types shared by the kernel programs (dftrace.bpf.c) and the loader. */
#ifndef DFTRACE_H
#define DFTRACE_H

#include "steps.h"

/* Long enough for any path the kernel accepts (PATH_MAX); a longer user
 * string is cut here and flagged DFT_F_TRUNC0/1. */
#define DFT_PATH_MAX 4096
#define DFT_ARGV_MAX 1024
/* The start of a new program's environment: where launchers' rank
 * variables are looked for, as /proc may be gone by the time user space
 * reads the record. */
#define DFT_ENV_MAX 8192
#define DFT_COMM_LEN 16
#define DFT_NR_MAX 512 /* syscall numbers the interest bitmap covers */
#define DFT_SC_NARGS 6 /* arguments a syscall takes at most */
/* Sized for hundreds of processes each losing several kinds; past that,
 * losses are still in the global counts, just not attributed. */
#define DFT_LOST_PROCS 16384

/* What the kernel side does with one syscall number; set by the loader
 * (user/model/syscalls.c) before load, one entry per number. */
enum dft_interest {
	DFT_INTEREST_EVENT = 1,	/* recorded */
	DFT_INTEREST_MODEL = 2,	/* recorded, also outside --steps' active
				 * windows: user space's fd tables need it */
};

struct dft_sc_cfg {
	unsigned char interest;	/* 0, or an enum dft_interest */
	/* (1 + index of path arg 0) | (1 + index of path arg 1) << 4; 0: none */
	unsigned char path_args;
	unsigned char fd_pair_arg; /* 1 + index of an int[2] it fills (pipe) */
	unsigned char new_fd_ino; /* ret is a new fd worth its inode (socket) */
};

/* Scopes beyond a pid tree (-a, --cgroup, --uid, --comm): a task that
 * enters one is tracked from then on. */
#define DFT_SCOPE_UIDS 8
#define DFT_SCOPE_COMMS 8
#define DFT_CGROUP_LEVEL_MAX 32

struct dft_scope {
	unsigned char all;		/* every process but the tracer */
	unsigned char nuids, ncomms;
	unsigned char pad;
	int cgroup_level;		/* 0: no --cgroup; else its depth */
	unsigned long long cgroup_id;	/* the --cgroup directory's id */
	unsigned int uids[DFT_SCOPE_UIDS];	/* real uids */
	char comms[DFT_SCOPE_COMMS][DFT_COMM_LEN];
	unsigned int self_tgid;		/* the tracer: never in scope */
	unsigned int pad2;
};

/* Key of the per-process loss counters (-D: each file reports its own). */
struct dft_lost_key {
	unsigned int tgid;
	unsigned int slot;
};

enum dft_kind {
	DFT_EV_SYSCALL = 1, /* a syscall with its arguments and duration */
	DFT_EV_PATHS,	    /* same, plus up to two user path strings */
	DFT_EV_FORK,	    /* a tracked task created a process or thread */
	DFT_EV_EXEC,	    /* a tracked process exec'd */
	DFT_EV_EXIT,	    /* a tracked task exited */
	DFT_EV_COMM,	    /* a tracked task was renamed */
	DFT_EV_ANNOT,	    /* a dftrace USDT annotation fired */
	DFT_EV__COUNT
};

/* Lost-record counters: one per syscall nr, then one per enum dft_kind. */
#define DFT_LOST_SLOTS (DFT_NR_MAX + DFT_EV__COUNT)

/* The probes of include/dftrace/usdt.h (provider "dftrace"), each with
 * the BPF program of its name and the op its records carry. */
#define DFT_ANNOT_PROBES(X)                                                   \
	X(region_begin, BEGIN) X(region_end, END) X(meta, META)               \
	X(ctx_int, CTX_INT) X(ctx_str, CTX_STR) X(ctx_clear, CTX_CLEAR)       \
	X(arg_int, ARG_INT) /* an arg of the thread's innermost region */     \
	X(arg_str, ARG_STR)

/* What an annotation did: one per probe. */
enum dft_annot_op {
	DFT_ANNOT_NONE,
#define DFT_ANNOT_OP(probe, op) DFT_ANNOT_##op,
	DFT_ANNOT_PROBES(DFT_ANNOT_OP)
#undef DFT_ANNOT_OP
};

#define DFT_CAT_LEN 64
#define DFT_NAME_LEN 128

enum dft_flags {
	DFT_F_TRUNC0 = 1 << 0, /* path 0 did not fit DFT_PATH_MAX */
	DFT_F_TRUNC1 = 1 << 1,
	DFT_F_FAULT0 = 1 << 2, /* path 0 could not be read */
	DFT_F_FAULT1 = 1 << 3,
	DFT_F_THREAD = 1 << 4, /* fork: the child shares the parent's tgid */
	DFT_F_UNTRACKED = 1 << 2, /* fork: no state for the child: untraced */
	DFT_F_GROUP_DEAD = 1 << 5, /* exit: last thread of the process */
	/* exec: the program raised privileges (setuid, setgid, file
	 * capabilities) and the tracer hides those: no longer traced */
	DFT_F_PRIVILEGED = 1 << 6,
	/* syscall: made outside --steps' active windows; it keeps user
	 * space's model right and is not written */
	DFT_F_QUIET = 1 << 7,
	/* exec: the program is another tracer (dftrace-bpf): its process
	 * leaves this trace, whatever put it in */
	DFT_F_LEFT = 1 << 5,
};

struct dft_header {
	unsigned char kind;
	unsigned char flags;
	unsigned short nr; /* syscall number, or the dft_annot_op, or 0 */
	unsigned int tgid;
	unsigned int tid;
	unsigned int pad;
	unsigned long long ts; /* CLOCK_MONOTONIC ns at syscall entry */
};

struct dft_syscall {
	struct dft_header h;
	unsigned long long dur; /* ns */
	long long ret;
	unsigned long long args[DFT_SC_NARGS];
};

/* Followed by len[0] + len[1] bytes of path data (each NUL-terminated). */
struct dft_paths {
	struct dft_syscall sc;
	unsigned short len[2];
	unsigned int pad;
};

struct dft_fork {
	struct dft_header h; /* tgid/tid are the parent's */
	unsigned int child_tgid;
	unsigned int child_tid;
	char comm[DFT_COMM_LEN];
};

struct dft_exec {
	struct dft_header h; /* tgid/tid after exec */
	unsigned int old_tid;
	unsigned short argv_len; /* bytes of NUL-separated argv in argv[] */
	unsigned short filename_len; /* with its NUL; 0 if unreadable */
	char comm[DFT_COMM_LEN];
	char argv[DFT_ARGV_MAX];
	/* The program as execve() named it (bprm->filename): relative, or
	 * /proc/self/exe, or /dev/fd/N for fexecve; user space resolves it. */
	char filename[DFT_PATH_MAX];
	unsigned int env_len;	/* bytes of NUL-separated NAME=VALUE in env[] */
	char env[DFT_ENV_MAX];
};

struct dft_exit {
	struct dft_header h;
	int exit_code; /* task->exit_code: wait(2) status encoding */
	unsigned int pad;
};

struct dft_comm {
	struct dft_header h;
	char comm[DFT_COMM_LEN];
};

/* cat/name hold the probe's two strings (for ctx_*: key and string
 * value), value its integer (count, is_end, or the context value). */
struct dft_annot {
	struct dft_header h; /* nr holds the dft_annot_op */
	long long value;
	/* A string not yet paged in cannot be read from a uprobe: its
	 * address goes along (flag DFT_F_FAULT0/1) for user space to read. */
	unsigned long long cat_ptr, name_ptr;
	char cat[DFT_CAT_LEN];
	char name[DFT_NAME_LEN];
};

/* Per-task state in task storage: presence means "tracked". */
struct dft_task {
	unsigned long long ts;
	unsigned long long args[DFT_SC_NARGS];
	int nr; /* syscall in flight, or -1 */
	unsigned int pad;
};

#endif /* DFTRACE_H */
