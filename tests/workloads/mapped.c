// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * mapped DIR: I/O through file mappings, with the kernel's own account
 * of it as ground truth.
 *   DIR/scan  (64 pages) dropped from the page cache, then read through
 *             a mapping twice: the first pass reads it from storage, the
 *             second finds it cached. Each pass maps, reads every page
 *             and unmaps.
 *   DIR/dirty (16 pages) written through a shared mapping, msync'd.
 * Records:
 *   mpass PATH PASS PAGES RESIDENT  a pass over PAGES pages, RESIDENT of
 *                                   them cached before it (mincore)
 *   mdirty PATH PAGES               PAGES pages dirtied through a mapping
 */
#include <sys/mman.h>
#include "workload.h"

#define PAGE 4096
#define SCAN_PAGES 64
#define DIRTY_PAGES 16

static int make_file(const char *path, int pages)
{
	static char page[PAGE];
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);

	if (fd < 0)
		wl_die("open '%s'", path);
	for (int i = 0; i < pages; i++) {
		memset(page, 'a' + i % 26, sizeof(page));
		if (write(fd, page, PAGE) != PAGE)
			wl_die("write '%s'", path);
	}
	if (fsync(fd))
		wl_die("fsync '%s'", path);
	return fd;
}

static int resident(void *at, int pages)
{
	unsigned char vec[SCAN_PAGES];
	int n = 0;

	if (mincore(at, (size_t)pages * PAGE, vec))
		wl_die("mincore");
	for (int i = 0; i < pages; i++)
		n += vec[i] & 1;
	return n;
}

static void scan(const char *path, int fd, int pass)
{
	volatile const char *m = mmap(NULL, SCAN_PAGES * PAGE, PROT_READ, MAP_SHARED, fd, 0);
	long sum = 0;
	int cached;

	if (m == MAP_FAILED)
		wl_die("mmap '%s'", path);
	cached = resident((void *)m, SCAN_PAGES);
	for (int i = 0; i < SCAN_PAGES; i++)
		sum += m[(size_t)i * PAGE];
	if (sum != 0 && munmap((void *)m, SCAN_PAGES * PAGE))
		wl_die("munmap '%s'", path);
	wl_emit("mpass\t%s\t%d\t%d\t%d\n", path, pass, SCAN_PAGES, cached);
}

static void dirty(const char *path, int fd)
{
	char *m = mmap(NULL, DIRTY_PAGES * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	if (m == MAP_FAILED)
		wl_die("mmap '%s'", path);
	for (int i = 0; i < DIRTY_PAGES; i++)
		m[(size_t)i * PAGE + 1] = 'X';
	if (msync(m, DIRTY_PAGES * PAGE, MS_SYNC) || munmap(m, DIRTY_PAGES * PAGE))
		wl_die("msync '%s'", path);
	wl_emit("mdirty\t%s\t%d\n", path, DIRTY_PAGES);
}

int main(int argc, char **argv)
{
	char scan_path[PATH_MAX], dirty_path[PATH_MAX];
	int fd;

	if (argc != 2)
		return 2;
	snprintf(scan_path, sizeof(scan_path), "%s/scan", argv[1]);
	snprintf(dirty_path, sizeof(dirty_path), "%s/dirty", argv[1]);
	fd = make_file(scan_path, SCAN_PAGES);
	/* clean after fsync: the hint drops them all */
	if (posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED))
		wl_die("posix_fadvise '%s'", scan_path);
	scan(scan_path, fd, 1);
	scan(scan_path, fd, 2);
	close(fd);
	fd = make_file(dirty_path, DIRTY_PAGES);
	dirty(dirty_path, fd);
	close(fd);
	return 0;
}
