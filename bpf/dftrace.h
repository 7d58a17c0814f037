/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Types shared by the kernel programs (dftrace.bpf.c) and the loader. */
#ifndef DFTRACE_H
#define DFTRACE_H

#include "steps.h"
#include "fold.h"

/* Long enough for any path the kernel accepts (PATH_MAX); a longer user
 * string is cut here and flagged DFT_CALL_TRUNC0/1. */
#define DFT_PATH_MAX 4096
#define DFT_ARGV_MAX 1024
/* The start of a new program's environment: where launchers' rank
 * variables are looked for, as /proc may be gone by the time user space
 * reads the record. */
#define DFT_ENV_MAX 8192
#define DFT_COMM_LEN 16
/* The tracer's own name (comm): another tracer's process is never traced. */
#define DFT_TRACER_COMM "dftrace-bpf"
#define DFT_NR_MAX 512 /* syscall numbers the interest bitmap covers */
#define DFT_SC_NARGS 6 /* arguments a syscall takes at most */
#define DFT_IO_NARGS 3 /* those a struct dft_io keeps */
/* Sized for hundreds of processes each losing several kinds; past that,
 * losses are still in the global counts, just not attributed. */
#define DFT_LOST_PROCS 16384

/* What the kernel side does with one syscall number; set by the loader
 * (user/model/syscalls.c) before load, one entry per number. */
enum dft_interest {
	DFT_INTEREST_EVENT = 1,	/* recorded */
	DFT_INTEREST_MODEL = 2,	/* recorded, also outside --steps' active
				 * windows: user space's fd tables need it */
	DFT_INTEREST_RING = 3,	/* not recorded: the thread's last regions
				 * are read from its ring there (exit) */
};

struct dft_sc_cfg {
	unsigned char interest;	/* 0, or an enum dft_interest */
	/* (1 + index of path arg 0) | (1 + index of path arg 1) << 4; 0: none */
	unsigned char path_args;
	unsigned char fd_pair_arg; /* 1 + index of an int[2] it fills (pipe) */
	unsigned char new_fd_ino; /* ret is a new fd worth its inode (socket) */
	/* the file a fold charges: 1 + index of the fd arg; DFT_FD_RET: the
	 * fd it returns (open); 0: none */
	unsigned char fd_arg;
	/* a call that changes no fd table and names at most three arguments
	 * (read, pread, lseek, ioctl...): bit i set for each argument it
	 * keeps, sent in a struct dft_io; 0: a struct dft_syscall */
	unsigned char io_args;
	/* the same as the argument each of a dft_io's slots keeps, in
	 * order (0 past the last): a load each, not a loop over the mask */
	unsigned char io_arg[DFT_IO_NARGS];
	unsigned char kind;	/* enum dft_sc_kind */
};

/* What the kernel side does for a call beyond its record: one byte per
 * syscall number, so that no syscall number is written into bpf/. */
enum dft_sc_kind {
	DFT_SC_PLAIN,
	DFT_SC_MMAP,		/* recorded for file mappings only; its file named */
	DFT_SC_FCNTL,		/* recorded for the fd-duplicating commands only */
	DFT_SC_OPENAT2,		/* flags and mode from its struct open_how */
	DFT_SC_CLOSE,		/* its file kept at entry, for a fold */
	/* handled whole by bpf/asyncio.bpf.c: no record of their own */
	DFT_SC_AIO_SUBMIT,	/* io_submit: its iocbs go in flight */
	DFT_SC_AIO_EVENTS,	/* io_getevents, io_pgetevents: iocbs end */
	DFT_SC_URING_REGISTER,	/* io_uring_register: its files named */
};

/* The shapes of kernel interfaces that changed between versions, as the
 * loader found them in this kernel's BTF (user/capture/features.c). The
 * verifier drops the branches a kernel can't take. */
enum dft_uring_complete_form {
	DFT_URING_COMPLETE_CQE = 1,	/* (ctx, req, cqe): 6.14 and later */
	DFT_URING_COMPLETE_RES,		/* (ctx, req, user_data, res, ...) */
};

struct dft_kernel_shape {
	/* the kfunc bpf_rdonly_cast (6.2+): a kernel pointer read as a
	 * number is typed again for plain loads; else BPF_CORE_READ */
	unsigned char fast_reads;
	/* sched_process_exit passes group_dead (6.16+); else it is
	 * read from the process's count of live threads */
	unsigned char exit_group_dead;
	unsigned char uring_complete;	/* enum dft_uring_complete_form */
	/* cgroup has ancestors[] (6.0+); else ancestor_ids[] */
	unsigned char cgroup_ancestors;
	/* the helpers bpf_find_vma and bpf_task_pt_regs (5.17+): a
	 * mapping's own file, which overlayfs does not show elsewhere */
	unsigned char find_vma;
	/* with fast_reads, the kernel's own BTF ids of the types the kfunc
	 * casts to (bpf/kread.bpf.c): given here, as CO-RE relocates
	 * against the loader's BTF of the kernel's types for it, numbered
	 * apart (user/capture/corebtf.h) */
	unsigned int task_btf_id;
	unsigned int file_btf_id;
	unsigned int io_kiocb_btf_id;
};

#define DFT_FD_RET 0xf

/* Scopes beyond a pid tree (-a, --cgroup, --uid, --comm): a task that
 * enters one is tracked from then on. */
#define DFT_SCOPE_UIDS 8
#define DFT_SCOPE_COMMS 8
#define DFT_CGROUP_LEVEL_MAX 32

struct dft_scope {
	unsigned char all;		/* every process but the tracer */
	unsigned char nuids, ncomms;
	/* a service's client's scope: only processes whose every uid (real,
	 * effective, saved, fs) is owner_uid, wherever they come from */
	unsigned char owner_only;
	int cgroup_level;		/* 0: no --cgroup; else its depth */
	unsigned long long cgroup_id;	/* the --cgroup directory's id */
	unsigned int uids[DFT_SCOPE_UIDS];	/* real uids */
	char comms[DFT_SCOPE_COMMS][DFT_COMM_LEN];
	unsigned int self_tgid;		/* the tracer: never in scope */
	unsigned int owner_uid;
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
	DFT_EV_MMAP,	    /* pages a thread read or dirtied through a mapping */
	DFT_EV_ASYNC,	    /* an io_uring request or AIO iocb, done */
	DFT_EV_FILEID,	    /* an fd's file by (dev, ino), at mmap or registration */
	DFT_EV_FOLD,	    /* a thread's folded calls, sent as it exits */
	DFT_EV_IO,	    /* a syscall, as DFT_EV_SYSCALL, in one cache line */
	DFT_EV_URING_SUBMIT, /* an io_uring request, submitted: a dft_async */
	DFT_EV_URING_DONE,  /* the completion of one: a dft_uring_done */
	/* a call that changes fds found no room (counted lost): what the
	 * process's fds name is unknown from here */
	DFT_EV_FDS_LOST,
	DFT_EV_GPU,	    /* a GPU or collective library call (bpf/gpu.h) */
	/* no record: the lost slot of a thread's ring records dropped for
	 * times out of order or ahead of the clock (forged) */
	DFT_EV_RING_TIME,
	DFT_EV_KEPT,	    /* a thread's kept calls and regions: dft_kept_batch */
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

/* What an annotation did: one per probe. It is also the cookie the
 * probe's attachment carries (bpf_usdt_cookie): one program serves every
 * probe, and is verified once. */
enum dft_annot_op {
	DFT_ANNOT_NONE,
#define DFT_ANNOT_OP(probe, op) DFT_ANNOT_##op,
	DFT_ANNOT_PROBES(DFT_ANNOT_OP)
#undef DFT_ANNOT_OP
};

/* CPython's own probes (provider "python"), which become regions of cat
 * "python"; each with the cookie of its attachment. function__entry is
 * left out, unreliable on 3.11. */
#define DFT_PYTHON_PROBES(X)                                                   \
	X(gc__start, GC_START) X(gc__done, GC_DONE)                            \
	X(import__find__load__start, IMPORT_START)                             \
	X(import__find__load__done, IMPORT_DONE)

enum dft_python_probe {
	DFT_PY_FIRST = 16,	/* after every dft_annot_op */
#define DFT_PY_ENUM(probe, name) DFT_PY_##name,
	DFT_PYTHON_PROBES(DFT_PY_ENUM)
#undef DFT_PY_ENUM
};

#define DFT_CAT_LEN 64
#define DFT_NAME_LEN 128

/* h.flags, one enum per kind of record: */
/* DFT_EV_SYSCALL, DFT_EV_PATHS, DFT_EV_IO */
enum dft_call_flags {
	DFT_CALL_TRUNC0 = 1 << 0, /* path 0 did not fit DFT_PATH_MAX */
	DFT_CALL_TRUNC1 = 1 << 1,
	DFT_CALL_FAULT0 = 1 << 2, /* path 0 could not be read */
	DFT_CALL_FAULT1 = 1 << 3,
	/* made outside --steps' active windows: it keeps user space's
	 * model right and is not written */
	DFT_CALL_QUIET = 1 << 4,
};

enum dft_fork_flags {
	DFT_FORK_THREAD = 1 << 0,	/* the child shares the parent's tgid */
	DFT_FORK_UNTRACKED = 1 << 1,	/* no state for the child: untraced */
};

enum dft_exec_flags {
	/* the program raised privileges (setuid, setgid, file
	 * capabilities) and the tracer hides those: no longer traced */
	DFT_EXEC_PRIVILEGED = 1 << 0,
	/* the program is another tracer (dftrace-bpf): its process leaves
	 * this trace, whatever put it in */
	DFT_EXEC_LEFT = 1 << 1,
};

enum dft_exit_flags {
	DFT_EXIT_GROUP_DEAD = 1 << 0,	/* the last thread of its process */
	/* GROUP_DEAD guessed (before 6.16): a thread exiting at the same
	 * time may be told so too, and its records may follow */
	DFT_EXIT_GROUP_GUESSED = 1 << 1,
};

enum dft_annot_flags {
	DFT_ANNOT_FAULT_CAT = 1 << 0,	/* cat could not be read: see cat_ptr */
	DFT_ANNOT_FAULT_NAME = 1 << 1,
	/* a region's strings at a site user space knows (annot_sites): the
	 * record ends before cat; cat_ptr and name_ptr say which site */
	DFT_ANNOT_CACHED = 1 << 2,
	/* a region's begin or end read from its thread's ring: h.io_dur
	 * says where (the count of the ring's records before it, its low 32
	 * bits), which tells it from the copy a flight dump took of the
	 * ring first (user/capture/liverings.c) */
	DFT_ANNOT_RING = 1 << 4,
};

/* DFT_EV_URING_SUBMIT */
enum dft_async_flags {
	DFT_ASYNC_QUIET = 1 << 0,	/* as DFT_CALL_QUIET */
};

struct dft_header {
	unsigned char kind;	/* enum dft_kind */
	unsigned char flags;	/* the kind's enum dft_*_flags */
	unsigned short nr; /* syscall number, or the dft_annot_op, or 0 */
	unsigned int tgid;
	unsigned int tid;
	/* DFT_EV_IO: the call's duration in ns; a DFT_EV_ANNOT from its
	 * thread's ring (DFT_ANNOT_RING): its place there; else 0 */
	unsigned int io_dur;
	unsigned long long ts; /* CLOCK_MONOTONIC ns at syscall entry */
};

struct dft_syscall {
	struct dft_header h;
	unsigned long long dur; /* ns */
	long long ret;
	unsigned long long args[DFT_SC_NARGS];
};

/* The same for the calls of dft_sc_cfg.io_args: 56 bytes, with the
 * ring's own header one cache line, where a dft_syscall takes 1.5 (the
 * ring's cost grows with the lines a record touches). */
#define DFT_IO_DUR_MAX 0xffffffffull /* ns: longer calls take a dft_syscall */

struct dft_io {
	struct dft_header h; /* h.io_dur: the duration */
	long long ret;
	unsigned long long args[DFT_IO_NARGS]; /* those io_args names, in order */
};

/* A thread whose fd table is its own keeps its calls (and regions' begins
 * and ends at known sites) as struct dft_kept and sends them DFT_IO_BATCH
 * at a time, as one ring record, a struct dft_kept_batch: a ring
 * reservation costs more than the record. 32, not 8: ~5 ns less a call
 * under --flight; 64, not 32: ~6 ns less again (a reservation reads the
 * consumer's position and a commit writes the producer's, two cache
 * lines the consumer's CPU holds; doc/bench.md), for 1.3 KB more task
 * storage a thread each time (3.4 KB in all). A dump reads what a
 * thread keeps. See bpf/iobatch.bpf.h for when a batch must go out. */
#define DFT_IO_BATCH 64

/* One call or region a thread kept: 40 bytes where a dft_io takes 56,
 * as its thread and the batch's first time are said once, in the
 * batch's header (the ring's bytes a call were most of what --flight
 * cost the traced call over --profile: doc/bench.md). */
struct dft_kept {
	unsigned int dts;	/* its time (ts) less the batch's (h.ts), ns */
	/* a call's duration (ns), as dft_io's h.io_dur; a region read from
	 * its thread's ring: its place there */
	unsigned int dur;
	unsigned short nr;	/* as dft_header's */
	unsigned char kind;	/* DFT_EV_IO or DFT_EV_ANNOT */
	unsigned char flags;	/* a region's: dft_annot_flags; a call's: 0 */
	/* a call's first argument of those io_args names, always an fd
	 * (user/model/syscalls.c): an int, as the kernel reads it */
	int fd;
	union {
		struct {
			long long ret;
			unsigned long long args[DFT_IO_NARGS - 1]; /* the others */
		} io;
		/* a region at a known site: as a cached dft_annot's */
		struct {
			long long value;
			unsigned long long cat_ptr, name_ptr;
		} annot;
	};
};

_Static_assert(sizeof(struct dft_kept) == 40, "a kept call: 40 bytes");

/* A thread's kept calls and regions in the ring: h says the kind
 * (DFT_EV_KEPT), the thread and the first one's time once for all;
 * h.nr: how many. The record ends after the last. */
struct dft_kept_batch {
	struct dft_header h;
	struct dft_kept e[DFT_IO_BATCH];
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

/* A file as the kernel names it: a syscall-free event (a page fault, a
 * registered io_uring file) has no fd; user space finds the path. */
struct dft_file_id {
	unsigned long long dev, ino;
};

struct dft_exec {
	struct dft_header h; /* tgid/tid after exec */
	unsigned int old_tid;
	unsigned short argv_len; /* bytes of NUL-separated argv in argv[] */
	unsigned short filename_len; /* with its NUL; 0 if unreadable */
	/* Files the exec mapped, as their pages' faults name them (the
	 * mappings' vm_file): the program (at mm->start_code) and what runs
	 * first (at the entry point: the ELF interpreter, ld.so, or the
	 * program again). On overlayfs the layer's files, not the ones
	 * stat() and, from 6.8, /proc/PID/maps show. 0s: not found, or a
	 * kernel without bpf_find_vma (kshape.find_vma). */
	struct dft_file_id prog, entry;
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
	 * address goes along (DFT_ANNOT_FAULT_CAT/NAME) for user space to read. */
	unsigned long long cat_ptr, name_ptr;
	char cat[DFT_CAT_LEN];	/* zero after the string: see dft_phase_id() */
	char name[DFT_NAME_LEN];
};

/* A site of a region's strings that user space found in read-only
 * memory (a program's or library's literals, the Python package's
 * names): the kernel side takes its id from there and sends the record
 * without the strings. */
struct dft_annot_site {
	unsigned int tgid, pad;
	unsigned long long cat, name;
};

#define DFT_ANNOT_SITES 4096

/* The argument specs that include/dftrace/usdt.h's DFT__PINNED writes
 * in the notes of region_begin and region_end: cat, name and count in
 * the first three argument registers. Where every note of such a probe
 * in a file says so, user space attaches pinned_begin or pinned_end
 * (annot.bpf.c), which read them there with no spec. */
#if defined(__x86_64__)
#define DFT_PINNED_ARGS "8@%rdi 8@%rsi -8@%rdx"
#elif defined(__aarch64__)
#define DFT_PINNED_ARGS "8@x0 8@x1 -8@x2"
#else
#define DFT_PINNED_ARGS "?" /* matches no note: no pinned programs here */
#endif

/* A thread's ring of region begins and ends in its own memory, which
 * include/dftrace/usdt.h writes where the regions probe is attached
 * (struct dft_usdt_ring): its layout as the kernel side reads it.
 * user/capture/usdt.c checks at compile time that it is the header's. */
#define DFT_RING_LEN 64
#define DFT_RING_RECS 16	/* offset of the records, after head and sent */
/* A ring record's time may pass the kernel's clock by this much (ns):
 * the header reads the same clock through the vDSO. */
#define DFT_RING_SLACK_NS 1000000ull

struct dft_ring_rec {
	unsigned long long ts_end;	/* CLOCK_MONOTONIC << 1 | 1 for an end */
	unsigned long long cat, name;
	long long count;
};

/* The sites a thread hit last, by their strings' addresses: most hits
 * find their id here rather than in annot_sites. An entry holds while
 * annot_sites_gen, which user space bumps after it deletes a site, has
 * not moved. */
struct dft_site_slot {
	unsigned long long cat, name;
	unsigned int id, gen;
};

#define DFT_SITE_SLOTS 8

/* A region's id, for both sides: a hash of its record's cat and name,
 * whole buffers, zero after each string. Word by word in a loop of fixed
 * count: the verifier walks it once, where a loop that stops at the NUL
 * is walked for each byte it might stop at. 0 is kept for "no region". */
#define DFT_PHASE_WORDS ((DFT_CAT_LEN + DFT_NAME_LEN) / 8)
typedef unsigned long long __attribute__((may_alias)) dft_word;

static inline __attribute__((always_inline)) unsigned int
dft_phase_id(const struct dft_annot *e)
{
	const dft_word *w = (const dft_word *)e->cat;
	unsigned long long h = 0x9e3779b97f4a7c15ull;

	for (int i = 0; i < DFT_PHASE_WORDS; i++) {
		h = (h ^ w[i]) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	h ^= h >> 16;
	return (unsigned int)h ? (unsigned int)h : 1;
}


/* Pages a thread touched through a file mapping since its last record
 * of the kind: a run of up to DFT_MMAP_RANGES page ranges of one file,
 * coalesced (the kernel's fault-around maps up to 16 pages a fault). */
#define DFT_MMAP_RANGES 8

struct dft_mmap {
	struct dft_header h;	/* ts: the first fault of the run */
	unsigned long long last_ts;	/* the last one */
	struct dft_file_id file;
	unsigned int n;		/* page ranges [lo, hi); they may overlap */
	unsigned int faults;
	unsigned int misses;	/* pages read from storage meanwhile: not cached */
	unsigned int write;	/* pages dirtied (mmap_write), not read */
	unsigned int code;	/* the process's program, or pages it ran */
	unsigned int pad;
	unsigned long long lo[DFT_MMAP_RANGES], hi[DFT_MMAP_RANGES];
};

/* The kernel's name for the file behind an fd, sent where later I/O will
 * name it that way only: after a file mmap's syscall record (its runs of
 * pages) and for each fd io_uring_register(IORING_REGISTER_FILES) takes
 * (fixed-file requests). The path is found even after the fd and the
 * mapping are gone. h.nr: the syscall. */
struct dft_fileid {
	struct dft_header h;
	struct dft_file_id file;
	unsigned long long addr;	/* where it was mapped; 0 */
	int fd;
	unsigned int prot;
};

struct dft_mmap_run {
	unsigned long long ts0, ts1;
	struct dft_file_id file;
	unsigned long long lo[DFT_MMAP_RANGES], hi[DFT_MMAP_RANGES];
	unsigned int n, faults, misses, write, code;
};

/* An io_uring request or a Linux AIO iocb, from submission to completion
 * (io_uring's tracepoints; AIO's io_submit and io_getevents). An AIO
 * iocb comes whole; an io_uring request in two records, submitted and
 * done, which user space pairs by the request's address: keeping it in a
 * map for the kernel to pair cost an insert, a lookup and a delete. */
#define DFT_ASYNC_PATH 256

enum dft_async_engine { DFT_ASYNC_URING = 1, DFT_ASYNC_AIO };

struct dft_async {
	struct dft_header h;	/* ts: submitted; tgid/tid: who submitted */
	unsigned long long dur;	/* to completion */
	long long res;		/* the completion's result */
	long long offset;	/* -1: at the file position */
	unsigned long long len;
	struct dft_file_id file;	/* when the kernel had it; else 0s */
	int fd;			/* as submitted: a fixed file's index */
	unsigned short opcode;	/* IORING_OP_* or IOCB_CMD_* */
	unsigned char engine;	/* enum dft_async_engine */
	unsigned char fixed;	/* a registered file */
	unsigned short path_len;	/* openat, statx: the name, with its NUL */
	unsigned short pad;
	unsigned long long req;	/* io_uring: the request's address */
	char path[DFT_ASYNC_PATH];
};

/* An io_uring request's end: its DFT_EV_URING_SUBMIT record says what it
 * was. h.ts: the completion; h.tgid/tid: whoever completed it. */
struct dft_uring_done {
	struct dft_header h;
	unsigned long long req;
	long long res;
	struct dft_file_id file;	/* when the kernel had it; else 0s */
};

/* A file opened when the ring buffer had no room to say so: its name
 * waits in a map for user space (the path as the call gave it). */
struct dft_name_key {
	unsigned long long dev, ino;
	unsigned int tgid, pad;
};

/* Totals of calls a thread made (bpf/fold.h), sent as it exits: user
 * space drains the rest from the maps. */
struct dft_fold_rec {
	struct dft_header h;
	struct dft_fold_key key;
	struct dft_fold fold;
};

struct dft_task {
	unsigned long long ts;
	unsigned long long args[DFT_SC_NARGS];
	int nr; /* syscall in flight, or -1 */
	/* the page fault in progress: a write, an instruction fetch */
	unsigned char fault_write, fault_exec;
	unsigned char phase_depth;	/* of phase[]: regions begun, not ended */
	/* a call that changes fds found no room: a DFT_EV_FDS_LOST goes
	 * ahead of the thread's next call's record */
	unsigned char fds_lost;
	unsigned char kept_annots;	/* of nbatch: regions' begins and ends */
	unsigned int phase[DFT_PHASE_DEPTH];	/* dft_phase_id of each */
	struct dft_file_id close_file;	/* the file close is closing */
	struct dft_fold_acc acc;	/* --profile, overload: see bpf/fold.h */
	struct dft_pos pos;	/* its process's, for acc's key: see fold.bpf.h */
	struct dft_mmap_run run;
	unsigned int nbatch;	/* of kept.e: kept, not yet sent */
	unsigned short fds_unchanged; /* since acc's file was looked up */
	unsigned short own_table;	/* table_own() said yes: see core.bpf.h */
	struct dft_kept_batch kept;
	struct dft_site_slot sites[DFT_SITE_SLOTS];
	/* its ring of regions (struct dft_ring_rec): where, and the count of
	 * records read so far; 0, 0 till the regions probe says. ring_last:
	 * the time of the last record taken, which the next cannot precede.
	 * probe_last: the time of its last region sent by a probe while it
	 * has a ring (a signal handler's, its ring being written): a record
	 * timed before it was being written then, and ends after it */
	unsigned long long ring, ring_tail, ring_last, probe_last;
	/* Its process as user space checks it before reading /proc/PID (a
	 * pid is reused once the process is gone): when the process began
	 * and when its memory last became another (an exec), both in
	 * bpf_ktime_get_ns()'s clock, and that memory (an mm, compared
	 * only). Kept by every tracked task; the thread group leader's is
	 * the one a pidfd finds. */
	unsigned long long start_ns, image_ns, mm;
};

/* What the kept_calls iterator says of a live task before its struct
 * dft_task: who, and when it was seen alive (bpf_ktime_get_ns()). */
struct dft_kept_head {
	unsigned int tgid, tid;
	unsigned long long ns;
};

/* the GPU calls' records: after struct dft_header */
#include "gpu.h"

#endif /* DFTRACE_H */
