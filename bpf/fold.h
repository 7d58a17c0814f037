/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Calls folded in the kernel into totals, not sent one by one: under
 * --profile all of them, otherwise those whose record found the ring
 * buffer full. Keyed by process, thread, call, file and phase, as the
 * trace would have attributed them; user space writes each total as one
 * event. One definition for both sides, with the phase id both compute.
 */
#ifndef DFT_FOLD_H
#define DFT_FOLD_H

#define DFT_FOLD_BUCKETS 32	/* log2 of ns: bucket b holds [2^b, 2^(b+1)) */
#define DFT_PHASE_DEPTH 8	/* regions a thread's kernel-side stack keeps */

struct dft_fold_key {
	unsigned int tgid, tid;
	unsigned int phase;	/* dft_phase_id of the innermost region; 0: none */
	unsigned short nr;	/* the syscall */
	unsigned short pad;
	unsigned long long dev, ino;	/* the file; 0, 0: none or unknown */
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

/* FNV-1a over cat, a 0xff, name (each up to its NUL or its size): a
 * region's id for both sides. 0 is kept for "no region". */
static inline __attribute__((always_inline)) unsigned int
dft_phase_id(const char *cat, unsigned int cat_size, const char *name,
	     unsigned int name_size)
{
	unsigned int h = 2166136261u;

	for (unsigned int i = 0; i < 64 && i < cat_size && cat[i]; i++)
		h = (h ^ (unsigned char)cat[i]) * 16777619u;
	h = (h ^ 0xffu) * 16777619u;
	for (unsigned int i = 0; i < 128 && i < name_size && name[i]; i++)
		h = (h ^ (unsigned char)name[i]) * 16777619u;
	return h ? h : 1;
}

/* The bucket of a duration: floor(log2(ns)), 0 for 0 and 1. */
static inline __attribute__((always_inline)) unsigned int
dft_fold_bucket(unsigned long long ns)
{
	unsigned int b = 0;

	if (ns >> 32) { b += 32; ns >>= 32; }
	if (ns >> 16) { b += 16; ns >>= 16; }
	if (ns >> 8) { b += 8; ns >>= 8; }
	if (ns >> 4) { b += 4; ns >>= 4; }
	if (ns >> 2) { b += 2; ns >>= 2; }
	if (ns >> 1) b += 1;
	return b < DFT_FOLD_BUCKETS ? b : DFT_FOLD_BUCKETS - 1;
}

#endif
