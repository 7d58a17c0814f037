// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <bpf/btf.h>
#include "capture/corebtf.h"
#include "capture/kernelbtf.h"
#include "lib/clock.h"
#include "lib/hmap.h"

struct btf *__wrap_btf__load_vmlinux_btf(void);
void __wrap_btf__free(struct btf *btf);
struct btf *__wrap_btf__parse(const char *path, struct btf_ext **ext);

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static bool sharing;
static struct btf *shared;
static struct kernel_btf_use use;
static struct hmap core_names;
static struct btf *core;	/* made from shared, or a parse of its own */

#define SYSFS_BTF "/sys/kernel/btf/vmlinux"
#define HUGE_PAGE (2ul << 20)
#define BTF_MAX (256ul << 20)	/* Debian's 6.x: 5.5 MB */

static size_t read_all(int fd, char *buf, size_t size)
{
	size_t got = 0;

	while (got < size) {
		ssize_t n = read(fd, buf + got, size - got);

		if (n > 0)
			got += n;
		else if (!n || errno != EINTR)
			break;
	}
	return got;
}

static size_t huge_up(size_t n)
{
	return (n + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
}

/* libbpf's parse copies the file into memory of its own, from malloc:
 * 1,350 more faults. Here that memory is made huge pages first: glibc
 * maps a block this large apart, and once one is freed, takes the next
 * of up to its size from the heap (mallopt(3), M_MMAP_THRESHOLD: the
 * threshold follows the largest freed) and keeps the heap's top while
 * it is under twice that. So a block from the heap, advised for huge
 * pages and freed, is the top that libbpf's copy is cut from. Where
 * malloc works otherwise, only the advice is lost. */
static void heap_in_huge_pages(size_t size)
{
	size_t room = huge_up(size) + 2 * HUGE_PAGE;
	char *volatile above = malloc(room + HUGE_PAGE);	/* volatile: kept */
	char *top;

	free(above);	/* raises the threshold above room */
	top = malloc(room);
	if (top)
		(void)madvise((void *)huge_up((uintptr_t)top), room - 2 * HUGE_PAGE, MADV_HUGEPAGE);
	free(top);
}

/* The kernel's BTF from sysfs, read into memory advised for huge pages:
 * where the kernel gives them (THP "madvise" or "always"), the file
 * comes in in a few page faults, not 1,350 (on a VM whose faults cost
 * ~11 us, the part of a parse that libbpf's read buffer costs); and
 * so does libbpf's copy of it. NULL where it can't: then libbpf's parse,
 * which also looks beyond sysfs. */
static struct btf *parse_sysfs(void)
{
	int fd = open(SYSFS_BTF, O_RDONLY | O_CLOEXEC);
	struct btf *btf = NULL;
	size_t size, len;
	struct stat st;
	char *map, *buf;

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) || st.st_size <= 0 || (size_t)st.st_size > BTF_MAX)
		goto out;
	size = st.st_size;
	len = huge_up(size) + HUGE_PAGE;	/* room to align */
	map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED)
		goto out;
	buf = (char *)huge_up((uintptr_t)map);
	/* whole huge pages: a part of one is no huge page */
	(void)madvise(buf, huge_up(size), MADV_HUGEPAGE);
	if (read_all(fd, buf, size) == size) {
		heap_in_huge_pages(size);
		btf = btf__new(buf, size);
	}
	munmap(map, len);
out:
	close(fd);
	return btf;
}

/* Under the lock. */
static struct btf *parse_shared(void)
{
	uint64_t t0 = clock_mono_ns();

	shared = parse_sysfs();
	if (!shared)
		shared = __real_btf__load_vmlinux_btf();
	use.parse_ns += clock_mono_ns() - t0;
	use.parses++;
	return shared;
}

/* Unshared, libbpf's own parse. A failed parse is not kept: its errno
 * is the caller's to read. */
struct btf *__wrap_btf__load_vmlinux_btf(void)
{
	struct btf *btf;
	int err;

	pthread_mutex_lock(&lock);
	if (!sharing) {
		pthread_mutex_unlock(&lock);
		return __real_btf__load_vmlinux_btf();
	}
	use.loads++;
	btf = shared ? shared : parse_shared();
	err = errno;
	pthread_mutex_unlock(&lock);
	errno = err;
	return btf;
}

/* Under the lock: the kernel's types for CO-RE, or where they can't be
 * made, the kernel's BTF (not kept: libbpf frees it, unless shared). */
static struct btf *make_core(void)
{
	struct btf *kernel = !sharing ? __real_btf__load_vmlinux_btf() :
				    shared ? shared : parse_shared();
	uint64_t t0 = clock_mono_ns();

	if (!kernel || !core_names.n)
		return kernel;
	core = core_btf_new(kernel, &core_names);
	if (!core)
		return kernel;
	use.core_ns = clock_mono_ns() - t0;
	use.core_types = btf__type_cnt(core) - 1;
	use.kernel_types = btf__type_cnt(kernel) - 1;
	if (kernel != shared)
		__real_btf__free(kernel);
	return core;
}

struct btf *__wrap_btf__parse(const char *path, struct btf_ext **ext)
{
	struct btf *btf;
	int err;

	if (!path || strcmp(path, KERNEL_BTF_CORE))
		return __real_btf__parse(path, ext);
	if (ext)
		*ext = NULL;
	pthread_mutex_lock(&lock);
	btf = core ? core : make_core();
	err = errno;
	pthread_mutex_unlock(&lock);
	errno = err;
	return btf;
}

void kernel_btf_core_names(const struct btf *local)
{
	pthread_mutex_lock(&lock);
	/* every instance is of one object: its names once */
	if (!core_names.n && core_btf_names(&core_names, local))
		hmap_free(&core_names);	/* none: the kernel's BTF, whole */
	pthread_mutex_unlock(&lock);
}

void kernel_btf_core_free(void)
{
	struct btf *btf;

	pthread_mutex_lock(&lock);
	btf = core;
	core = NULL;
	hmap_free(&core_names);
	pthread_mutex_unlock(&lock);
	__real_btf__free(btf);
}

/* The shared parse and the kernel's types for CO-RE are freed by
 * unshare and kernel_btf_core_free, not by their users. */
void __wrap_btf__free(struct btf *btf)
{
	bool own;

	pthread_mutex_lock(&lock);
	own = !btf || (btf != shared && btf != core);
	pthread_mutex_unlock(&lock);
	if (own)
		__real_btf__free(btf);
}

void kernel_btf_share(void)
{
	pthread_mutex_lock(&lock);
	sharing = true;
	use = (struct kernel_btf_use){ 0 };
	pthread_mutex_unlock(&lock);
}

struct kernel_btf_use kernel_btf_used(void)
{
	struct kernel_btf_use u;

	pthread_mutex_lock(&lock);
	u = use;
	pthread_mutex_unlock(&lock);
	return u;
}

void kernel_btf_unshare(void)
{
	struct btf *btf;

	pthread_mutex_lock(&lock);
	sharing = false;
	btf = shared;
	shared = NULL;
	pthread_mutex_unlock(&lock);
	__real_btf__free(btf);
	/* its copy was the heap's top, which glibc now keeps
	 * (heap_in_huge_pages()): back to the kernel */
	if (btf)
		malloc_trim(0);
}
