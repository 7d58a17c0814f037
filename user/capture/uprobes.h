/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Uprobes: BPF programs on offsets of a file, for every process that maps
 * it (pid -1), and their release.
 *
 * Where the kernel links many uprobes at once (uprobe_multi, Linux 6.6)
 * a program's uprobes on a file are one link: one descriptor, one
 * syscall, and one wait when it goes. Elsewhere each uprobe is a perf
 * event with its link (libbpf's): two descriptors each.
 *
 * Releasing uprobes waits for the kernel to be sure that no CPU still
 * runs the program there (RCU grace periods): 40 to 100 ms a link here.
 * Those waits overlap when several threads release links, so a pool of
 * threads closes them (struct closer): uprobe_multi links, 2 uprobes
 * each, went at 18 a second one at a time, 450 a second from 32 threads
 * and 1,100 from 64 (Linux 6.18, 2 CPUs, loaded). A perf event's release
 * waits under a mutex the kernel holds for every one (event_mutex):
 * about 10 a second here, from 1 thread or 128.
 */
#ifndef CAPTURE_UPROBES_H
#define CAPTURE_UPROBES_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

struct bpf_program;
struct bpf_link;

/* BPF_TRACE_UPROBE_MULTI and its return flag: past Debian 12's header. */
#define UPROBES_MULTI_ATTACH 48
#define UPROBES_MULTI_RETURN 1

/* A probed instruction: its offset in the file, the cookie its hits
 * carry (bpf_get_attach_cookie), and the file offset of the USDT
 * semaphore the kernel raises while it is probed (0: none). */
struct uprobe_site {
	uint64_t offset, cookie, semaphore;
};

/* One program's sites on a file, at their entries or returns. */
struct uprobe_set {
	struct bpf_program *prog;
	bool retprobe;
	struct uprobe_site *site;
	uint32_t n, cap;
};

/* What a file gets, set by set in the order they are attached. */
struct uprobe_plan {
	struct uprobe_set *set;
	uint32_t n, cap;
};

/* Appends a site to the plan's last set where it is prog's (retprobe
 * alike), else to a new one: 0 or -ENOMEM. */
int uprobe_plan_add(struct uprobe_plan *p, struct bpf_program *prog, bool retprobe,
		    const struct uprobe_site *site);
uint32_t uprobe_plan_sites(const struct uprobe_plan *p);
/* The descriptors the plan's uprobes hold once attached. */
uint32_t uprobe_plan_fds(const struct uprobe_plan *p, bool multi);
void uprobe_plan_free(struct uprobe_plan *p);

/* One attachment: a uprobe_multi link's descriptor, or libbpf's link of
 * a perf event. */
struct uprobe_link {
	struct bpf_link *link;
	int fd;
};

/* A file's attachments, and what they hold. */
struct uprobe_links {
	struct uprobe_link *l;
	uint32_t n, cap;
	uint32_t sites;		/* uprobes */
	uint32_t fds;		/* descriptors */
};

/* A uprobe_multi link of prog_fd on n offsets of path (each with its
 * cookie and semaphore; NULL: none): its descriptor, or -1 with errno. */
int uprobes_multi_link(int prog_fd, const char *path, bool retprobe,
		       const unsigned long *offsets, const uint64_t *cookies,
		       const unsigned long *semaphores, uint32_t n);
/* The plan's uprobes on path (multi: a link a set), into links: 0, or
 * -errno, those attached before the failure left in links. */
int uprobes_attach(struct uprobe_links *links, const struct uprobe_plan *p,
		   const char *path, bool multi);

/*
 * Threads that release links, started when first needed; each waits for
 * the kernel with its own link. They block every signal: the tracer's
 * stay the main thread's.
 */
struct closer {
	pthread_mutex_t mu;
	pthread_cond_t work, idle;
	struct close_item *q;	/* [head, n): waiting */
	uint32_t head, n, cap;
	void **done;		/* tags whose links are all closed */
	uint32_t ndone, capdone;
	uint32_t jobs;		/* tags not done yet */
	uint32_t busy;		/* links being closed */
	pthread_t *threads;
	uint32_t nthreads, max_threads;
	uint32_t paused;	/* no release begins while an attach runs */
	bool started, stop;
};

/* Uprobe_multi links: CLOSER_THREADS, whose waits overlap. Perf events:
 * one, whose releases the kernel takes one at a time anyway, so that an
 * attach waits behind one release at most, not a queue of them. */
#define CLOSER_THREADS 32
void closer_init(struct closer *c, uint32_t threads);
/* Hands links over to be closed; links is left empty. tag comes back
 * from closer_done() once all of them are closed. */
void closer_submit(struct closer *c, struct uprobe_links *links, void *tag);
/* While paused, the threads begin no release: a perf event's attach
 * waits for the kernel's mutex a release holds (uprobes.h), and a file's
 * dozens of attaches would each wait behind the next release. Those
 * begun go on. */
void closer_pause(struct closer *c);
void closer_resume(struct closer *c);
/* The tags done since the last call, up to max, into tags: how many. */
uint32_t closer_done(struct closer *c, void **tags, uint32_t max);
/* Until every link handed over is closed. */
void closer_wait(struct closer *c);
/* Waits, then ends the threads. The closer can be used again after
 * closer_init(). */
void closer_free(struct closer *c);

#endif
