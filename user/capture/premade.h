/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The main instance's large maps, made on a thread of their own while
 * the start's checks parse the kernel's BTF: libbpf makes an object's
 * maps one after the other at its load, after that parse, and the
 * preallocated hash maps (AIO's in-flight requests, the totals, the
 * lost names) take most of that time, to preallocate and link each
 * element. Only maps libbpf would make the same way are made here: not
 * its own (.rodata, .bss), not the ring (its size is set later), none
 * that needs BTF (task storage), none under a name the kernel would
 * cut. Where one fails, libbpf makes them all, and says why.
 */
#ifndef CAPTURE_PREMADE_H
#define CAPTURE_PREMADE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

struct bpf_map;
struct dftrace_bpf;

/* The maps one object has at most that are worth making early. */
#define PREMADE_MAX 16

struct premade {
	pthread_t thread;
	bool started;
	bool ready;			/* skel and todo set: workers may take maps */
	bool failed;			/* a map: then libbpf makes them all */
	struct dftrace_bpf *skel;	/* opened, its large maps made */
	struct bpf_map *todo[PREMADE_MAX];
	unsigned int ntodo;
	unsigned int next;		/* the next of todo a worker takes */
	unsigned int maps;		/* made */
	uint64_t t0, ns;		/* the start; the time until all were made */
};

/* Starts the thread; where it cannot start, p stays empty. */
void premade_start(struct premade *p);
/* Makes the maps the thread has not begun, beside it, and waits for it:
 * the opened skeleton, its large maps made, for the caller to
 * configure, load and destroy; NULL where they were not all made (libbpf
 * makes them then), or it was taken. */
struct dftrace_bpf *premade_take(struct premade *p);
/* Waits for the thread and destroys a skeleton nobody took; safe to
 * repeat, and on a premade never started (zeroed). */
void premade_free(struct premade *p);

#endif
