// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <bpf/btf.h>
#include "capture/kernelbtf.h"
#include "lib/clock.h"

/* libbpf's own, under the link's --wrap */
struct btf *__real_btf__load_vmlinux_btf(void);
void __real_btf__free(struct btf *btf);
struct btf *__wrap_btf__load_vmlinux_btf(void);
void __wrap_btf__free(struct btf *btf);

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static bool sharing;
static struct btf *shared;
static struct kernel_btf_use use;

/* Under the lock. */
static struct btf *parse_shared(void)
{
	uint64_t t0 = clock_mono_ns();

	shared = __real_btf__load_vmlinux_btf();
	use.parse_ns += clock_mono_ns() - t0;
	use.parses++;
	return shared;
}

/* A failed parse is not kept: its errno is the caller's to read. */
struct btf *__wrap_btf__load_vmlinux_btf(void)
{
	struct btf *btf;
	int err;

	pthread_mutex_lock(&lock);
	if (sharing)
		use.loads++;
	if (!sharing)
		btf = __real_btf__load_vmlinux_btf();
	else if (!(btf = shared))
		btf = parse_shared();
	err = errno;
	pthread_mutex_unlock(&lock);
	errno = err;
	return btf;
}

/* The shared parse is freed by unshare, not by its users. */
void __wrap_btf__free(struct btf *btf)
{
	bool own;

	pthread_mutex_lock(&lock);
	own = !btf || btf != shared;
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
}
