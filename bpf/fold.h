/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Calls folded in the kernel into totals, not sent one by one: under
 * --profile all of them, otherwise those whose record found the ring
 * buffer full. Keyed by process, thread, call, file, phase, epoch and
 * step, as the trace would have attributed them; user space writes each
 * total as one event. One definition for both sides (the phase id: dftrace.h).
 */
#ifndef DFT_FOLD_H
#define DFT_FOLD_H

#define DFT_FOLD_BUCKETS 32	/* log2 of ns: bucket b holds [2^b, 2^(b+1)) */
#define DFT_PHASE_DEPTH 8	/* regions a thread's kernel-side stack keeps */

/* The process's epoch and step (DFT_USDT_SET_EPOCH, _STEP) as its calls
 * saw them: a total is written later, when they may have moved on. */
enum dft_pos_bits {
	DFT_POS_EPOCH = 1 << 0,
	DFT_POS_STEP = 1 << 1,
};

struct dft_pos {
	unsigned char set;	/* dft_pos_bits: set to the integer here */
	/* set to a string, which only user space keeps: the value it has
	 * when the total is written */
	unsigned char str;
	unsigned short pad;
	unsigned int seq;	/* task storage: the pos_seq it was read at */
	long long epoch, step;
};

struct dft_fold_key {
	unsigned int tgid, tid;
	unsigned int phase;	/* dft_phase_id of the innermost region; 0: none */
	unsigned short nr;	/* the syscall */
	unsigned char pos_set, pos_str;	/* the calls' struct dft_pos */
	unsigned long long dev, ino;	/* the file; 0, 0: none or unknown */
	long long epoch, step;
};

struct dft_fold {
	unsigned long long calls, bytes;	/* bytes: sum of positive results */
	unsigned long long errors;		/* negative results */
	unsigned long long dur_ns;		/* sum of the calls' durations */
	unsigned long long first_ns, last_ns;	/* first call's start, last's end */
	int fd;					/* the last fd (to name a pipe) */
	unsigned int hist[DFT_FOLD_BUCKETS];
};

/* A thread's total being added to, in its task storage: it goes out (a
 * record; the map when the ring is full) when the thread's next call is
 * another (call, fd, file, phase), when the maps flip, or when it exits;
 * user space reads what is left at the end. A tight loop on one fd costs
 * neither a record nor a map lookup. */
struct dft_fold_acc {
	struct dft_fold_key key;
	struct dft_fold fold;
	unsigned long long file;	/* the struct file the fd was */
	unsigned int gen;	/* the fold_gen it was begun under */
	unsigned int used;
};

/* The bucket of a duration: floor(log2(ns)), 0 for 0 and 1. Without
 * branches: the verifier walks each branch's outcome apart, and a
 * binary search of six branches cost it 64 walks. Each step halves the
 * bits left: s is 1 if the upper half is not empty ((v + 2^k - 1) >> k,
 * v < 2^k), times the half's width. */
static inline __attribute__((always_inline)) unsigned int
dft_fold_bucket(unsigned long long ns)
{
	unsigned long long b, s;

	s = ((ns >> 32) + 0xffffffffull) >> 32 << 5;
	ns >>= s;
	b = s;
	s = ((ns >> 16) + 0xffff) >> 16 << 4;
	ns >>= s;
	b += s;
	s = ((ns >> 8) + 0xff) >> 8 << 3;
	ns >>= s;
	b += s;
	s = ((ns >> 4) + 0xf) >> 4 << 2;
	ns >>= s;
	b += s;
	s = ((ns >> 2) + 0x3) >> 2 << 1;
	ns >>= s;
	b += s + (ns >> 1);
	return b < DFT_FOLD_BUCKETS ? b : DFT_FOLD_BUCKETS - 1;
}

/* One call, ended at end_ns after dur ns with result ret (on fd), into a
 * total: as the kernel side folds a call, and user space one it was
 * sent (--flight). */
static inline __attribute__((always_inline)) void
dft_fold_add_call(struct dft_fold *v, long long ret, unsigned long long dur,
		  unsigned long long end_ns, int fd)
{
	v->calls++;
	if (ret > 0)
		v->bytes += ret;
	else if (ret < 0)
		v->errors++;
	v->dur_ns += dur;
	v->last_ns = end_ns;
	v->fd = fd;
	v->hist[dft_fold_bucket(dur) & (DFT_FOLD_BUCKETS - 1)]++;
}

#endif
