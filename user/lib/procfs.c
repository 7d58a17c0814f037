// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>
#include "dftrace.h"
#include "lib/procfs.h"

#define PF_KTHREAD 0x00200000 /* include/linux/sched.h: not exported */

ssize_t procfs_read(pid_t pid, const char *what, char *buf, size_t size)
{
	char name[96];
	ssize_t n;
	int fd;

	snprintf(name, sizeof(name), "/proc/%d/%s", pid, what);
	fd = open(name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, size);
	close(fd);
	return n;
}

ssize_t procfs_read_text(pid_t pid, const char *what, char *buf, size_t size)
{
	ssize_t n = procfs_read(pid, what, buf, size - 1);

	if (n == 0)
		errno = ESRCH; /* an entry emptied: its task gone meanwhile */
	if (n <= 0)
		return -1;
	buf[n] = 0;
	return n;
}

int procfs_stat(pid_t pid, char *state, pid_t *ppid, bool *kthread)
{
	char buf[512], *paren;
	unsigned int flags;

	if (procfs_read_text(pid, "stat", buf, sizeof(buf)) < 0)
		return -1;
	/* comm may hold ") ": the fields resume after the last ')'. */
	paren = strrchr(buf, ')');
	if (!paren || sscanf(paren + 1, " %c %d %*d %*d %*d %*d %u", state,
			     ppid, &flags) != 3) {
		errno = EINVAL;
		return -1;
	}
	if (kthread)
		*kthread = flags & PF_KTHREAD;
	return 0;
}

uint64_t procfs_start(pid_t pid)
{
	char buf[512], *paren;
	unsigned long long start;

	if (procfs_read_text(pid, "stat", buf, sizeof(buf)) < 0 ||
	    !(paren = strrchr(buf, ')')) ||
	    sscanf(paren + 1, " %*c%*d%*d%*d%*d%*d%*u%*u%*u%*u%*u%*u%*u%*d%*d%*d%*d%*d%*d%llu",
		   &start) != 1)
		return 0;
	return start;
}

/* The text after "\n<key>" in /proc/PID/status, read into buf; NULL if
 * none. */
static const char *status_text(pid_t pid, const char *key, char *buf, size_t size)
{
	const char *line;

	if (procfs_read_text(pid, "status", buf, size) < 0)
		return NULL;
	line = strstr(buf, key);
	return line ? line + strlen(key) : NULL;
}

/* The number after "\n<key>" in /proc/PID/status, or -1. */
static long status_field(pid_t pid, const char *key)
{
	char buf[4096];
	const char *v = status_text(pid, key, buf, sizeof(buf));

	return v ? atol(v) : -1;
}

bool procfs_catches(pid_t pid, int sig)
{
	char buf[4096];
	const char *v = status_text(pid, "\nSigCgt:", buf, sizeof(buf));
	unsigned long long caught;

	return v && sscanf(v, "%llx", &caught) == 1 && sig >= 1 && sig <= 64 &&
	       caught >> (sig - 1) & 1;
}

int procfs_threads(pid_t pid)
{
	long n = status_field(pid, "\nThreads:");

	return n > 0 ? n : 0;
}

pid_t procfs_tgid(pid_t tid)
{
	return status_field(tid, "\nTgid:");
}

ssize_t procfs_readlink(pid_t pid, const char *what, char *buf, size_t size)
{
	char link[96];

	snprintf(link, sizeof(link), "/proc/%d/%s", pid, what);
	return readlink(link, buf, size);
}

bool procfs_comm(pid_t pid, const char *what, char *comm)
{
	ssize_t n = procfs_read_text(pid, what, comm, DFT_COMM_LEN);

	if (n > 0 && comm[n - 1] == '\n')
		comm[--n] = 0;
	if (n < 0)
		comm[0] = 0;
	return n > 0;
}

/* Enough for the variables launchers set near the start; a longer
 * environment is read that far. */
#define ENVIRON_MAX (64 << 10)

struct job_rank procfs_job_rank(pid_t pid)
{
	char *buf = malloc(ENVIRON_MAX);
	ssize_t n = buf ? procfs_read(pid, "environ", buf, ENVIRON_MAX) : -1;
	struct job_rank r = n > 0 ? job_rank_parse(buf, n) : JOB_RANK_NONE;

	free(buf);
	return r;
}

static bool each_map_in(const char *name, void (*fn)(const struct procfs_map *m, void *ctx),
			void *ctx)
{
	char line[4096 + 512];
	struct procfs_map m;
	FILE *f;
	int at;

	f = fopen(name, "re");
	if (!f)
		return false;
	/* "addr perms offset MM:mm inode   path" */
	while (fgets(line, sizeof(line), f)) {
		at = 0;
		if (sscanf(line, "%llx-%llx %7s %*s %x:%x %llu %n", &m.start, &m.end, m.perms,
			   &m.major, &m.minor, &m.ino, &at) != 6)
			continue;
		line[strcspn(line, "\n")] = 0;
		m.path = at ? line + at : "";
		fn(&m, ctx);
	}
	fclose(f);
	return true;
}

bool procfs_each_map(pid_t pid, void (*fn)(const struct procfs_map *m, void *ctx), void *ctx)
{
	char name[64];

	snprintf(name, sizeof(name), "/proc/%d/maps", pid);
	return each_map_in(name, fn, ctx);
}

bool procfs_each_task_map(pid_t pid, pid_t tid, void (*fn)(const struct procfs_map *m, void *ctx),
			  void *ctx)
{
	char name[96];

	snprintf(name, sizeof(name), "/proc/%d/task/%d/maps", pid, tid);
	return each_map_in(name, fn, ctx);
}

/* Reads a string the kernel side could not (its page was not in yet);
 * process_vm_readv faults it in. Empty if the process is gone. */
void procfs_read_str(uint32_t pid, uint64_t addr, char *dst, size_t size)
{
	size_t page = sysconf(_SC_PAGESIZE), in_page = page - (addr & (page - 1));
	struct iovec local = { dst, size - 1 }, remote = { (void *)addr, size - 1 };
	ssize_t n;

	/* Stay inside the page the string starts in, then try the rest. */
	if (in_page < size - 1)
		remote.iov_len = local.iov_len = in_page;
	n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	if (n > 0 && (size_t)n < size - 1 && !memchr(dst, 0, n)) {
		struct iovec l2 = { dst + n, size - 1 - n },
			     r2 = { (void *)(addr + n), size - 1 - n };
		ssize_t m = process_vm_readv(pid, &l2, 1, &r2, 1, 0);

		if (m > 0)
			n += m;
	}
	dst[n > 0 ? n : 0] = 0;
}
