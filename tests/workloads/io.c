/* File I/O workloads.  Every syscall on a file under DIR is reported as an
 * "io" record (see workload.h), so the test can compare the trace with it
 * exactly: calls, bytes and return values per (path, pid, tid, name).
 *
 *   io basic DIR      open/openat/creat, the read and write family, lseek,
 *                     sync, truncate, fallocate, stat family, getdents64,
 *                     mkdir/rmdir/unlink/rename, sendfile, copy_file_range,
 *                     splice, mmap + msync + munmap, failing calls,
 *                     openat2 (with an "openhow" record of its flags, mode)
 *   io relative DIR   relative paths: initial cwd, chdir, "x/../y", openat
 *                     with a dirfd, fchdir  (run it with cwd = DIR)
 *   io pipe DIR       pipes, a socketpair and an eventfd, made by syscalls
 *                     the tracer does not record: named as /proc/PID/fd
 *                     names them; then a file reuses the freed fd numbers
 *   io dup DIR        dup/dup2/dup3/fcntl(F_DUPFD*), close_range: I/O on a
 *                     duplicate counts for the original file
 *   io threads DIR    a thread's fd closed and reused by another thread
 *   io exec DIR       writes to an O_CLOEXEC fd, then exec /bin/true
 *   io exec-reuse DIR preads of DIR/a.dat on an O_CLOEXEC fd, then exec
 *                     of rawopen, whose first call opens DIR/b.dat and
 *                     gets the same fd number
 *
 * Raw syscall() is used wherever glibc might pick another syscall.
 */
#include <dirent.h>
#include <libgen.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <linux/openat2.h>
#include <linux/stat.h>
#include <pthread.h>
#include <semaphore.h>
#include "workload.h"

/* ret of a libc call or raw syscall: -errno on failure */
#define R(x) ({ long r_ = (long)(x); r_ < 0 ? -(long)errno : r_; })

static char *buf, rbuf[65536];

/* openat2: its flags and mode travel in a struct; "openhow PATH FLAGS MODE"
 * records what was asked. */
static void open_how_call(const char *D)
{
	struct open_how how = { .flags = O_CREAT | O_RDWR | O_CLOEXEC,
				.mode = 0640 };
	char *g = wl_path(D, "g.dat");
	long fg = wl_ok(R(syscall(SYS_openat2, AT_FDCWD, g, &how, sizeof(how))),
			"openat2 g");

	wl_io(g, "open", "openat2", fg);
	wl_emit("openhow\t%s\t%llu\t%llu\n", g, (unsigned long long)how.flags,
		(unsigned long long)how.mode);
	wl_io(g, "write", "write", R(write(fg, buf, 123)));
	wl_io(g, "close", "close", R(close(fg)));
}

static void basic(const char *D)
{
	char *a = wl_path(D, "a.dat"), *b = wl_path(D, "b.dat");
	char *c = wl_path(D, "c.dat"), *d = wl_path(D, "d.dat");
	char *e = wl_path(D, "sub/e.dat"), *f = wl_path(D, "f.dat");
	char *sub = wl_path(D, "sub"), *sub2 = wl_path(D, "sub2");
	char *out = wl_path(D, "out.dat"), *m = wl_path(D, "m.dat");
	char *none = wl_path(D, "nonexistent");
	struct iovec wv[3] = { { buf, 10 }, { buf + 10, 20 }, { buf + 30, 30 } };
	struct iovec rv[2] = { { rbuf, 7 }, { rbuf + 100, 9 } };
	struct stat st;
	struct statx stx;
	long fa, fb, fc, fd_d, dfd, fo, fm, r;
	loff_t off, off2;
	char *map;

	/* opens */
	fa = wl_ok(R(open(a, O_CREAT | O_RDWR | O_TRUNC, 0644)), "open a");
	wl_io(a, "open", "openat", fa);
	fb = wl_ok(R(syscall(SYS_open, b, O_CREAT | O_RDWR | O_TRUNC, 0644)),
		   "open b");
	wl_io(b, "open", "open", fb);
	fc = wl_ok(R(syscall(SYS_creat, c, 0644)), "creat c");
	wl_io(c, "creat", "creat", fc);
	dfd = wl_ok(R(open(D, O_RDONLY | O_DIRECTORY)), "open D");
	wl_io(D, "open", "openat", dfd);
	fd_d = wl_ok(R(openat(dfd, "d.dat", O_CREAT | O_RDWR, 0644)), "d");
	wl_io(d, "open", "openat", fd_d);
	r = R(open(none, O_RDONLY));
	wl_io(none, "open", "openat", r);

	/* writes */
	wl_io(a, "write", "write", R(write(fa, buf, 1000)));
	wl_io(a, "pwrite", "pwrite64", R(syscall(SYS_pwrite64, fa, buf, 500, 4000)));
	wl_io(a, "writev", "writev", R(syscall(SYS_writev, fa, wv, 3)));
	wl_io(b, "pwritev", "pwritev",
	      R(syscall(SYS_pwritev, fb, wv, 2, 100, 0)));
	wl_io(b, "pwritev", "pwritev2",
	      R(syscall(SYS_pwritev2, fb, wv, 3, 2000, 0, 0)));
	wl_io(c, "write", "write", R(write(fc, buf, 777)));
	wl_io(d, "write", "write", R(write(fd_d, buf, 333)));
	/* a failing read: c was opened write-only by creat */
	wl_io(c, "read", "read", R(read(fc, rbuf, 10)));

	/* reads */
	wl_io(a, "lseek", "lseek", R(lseek(fa, 0, SEEK_SET)));
	wl_io(a, "read", "read", R(read(fa, rbuf, 100)));
	wl_io(a, "pread", "pread64", R(syscall(SYS_pread64, fa, rbuf, 200, 50)));
	wl_io(a, "readv", "readv", R(syscall(SYS_readv, fa, rv, 2)));
	wl_io(b, "preadv", "preadv", R(syscall(SYS_preadv, fb, rv, 2, 0, 0)));
	wl_io(b, "preadv", "preadv2",
	      R(syscall(SYS_preadv2, fb, rv, 2, 2010, 0, 0)));
	wl_io(a, "lseek", "lseek", R(lseek(fa, 0, SEEK_END)));
	wl_io(a, "read", "read", R(read(fa, rbuf, 100))); /* at EOF: 0 */

	/* sync and size */
	wl_io(a, "fsync", "fsync", R(fsync(fa)));
	wl_io(b, "fdatasync", "fdatasync", R(fdatasync(fb)));
	wl_io(a, "ftruncate", "ftruncate", R(syscall(SYS_ftruncate, fa, 8192)));
	wl_io(c, "fallocate", "fallocate",
	      R(syscall(SYS_fallocate, fc, 0, 0, 16384)));
	wl_io(a, "sync_file_range", "sync_file_range",
	      R(syscall(SYS_sync_file_range, fa, 0, 0, 2 /* WRITE */)));

	/* stat family */
	wl_io(a, "stat", "stat", R(syscall(SYS_stat, a, &st)));
	wl_io(a, "lstat", "lstat", R(syscall(SYS_lstat, a, &st)));
	wl_io(a, "fstat", "fstat", R(syscall(SYS_fstat, fa, &st)));
	wl_io(b, "stat", "newfstatat",
	      R(syscall(SYS_newfstatat, AT_FDCWD, b, &st, 0)));
	wl_io(d, "stat", "newfstatat",
	      R(syscall(SYS_newfstatat, dfd, "d.dat", &st, 0)));
	wl_io(c, "stat", "statx",
	      R(syscall(SYS_statx, AT_FDCWD, c, 0, STATX_BASIC_STATS, &stx)));

	/* directories */
	do {
		r = R(syscall(SYS_getdents64, dfd, rbuf, sizeof(rbuf)));
		wl_io(D, "getdents", "getdents64", r);
	} while (r > 0);
	wl_io(sub, "mkdir", "mkdir", R(syscall(SYS_mkdir, sub, 0755)));
	wl_io(sub2, "mkdir", "mkdirat", R(syscall(SYS_mkdirat, dfd, "sub2", 0755)));
	wl_io(d, "close", "close", R(close(fd_d)));
	wl_io2(d, e, "rename", "rename", R(syscall(SYS_rename, d, e)));
	wl_io2(e, f, "rename", "renameat2",
	       R(syscall(SYS_renameat2, dfd, "sub/e.dat", dfd, "f.dat", 0)));
	wl_io(f, "unlink", "unlink", R(syscall(SYS_unlink, f)));
	wl_io(sub2, "unlink", "unlinkat",
	      R(syscall(SYS_unlinkat, dfd, "sub2", AT_REMOVEDIR)));
	wl_io(sub, "rmdir", "rmdir", R(syscall(SYS_rmdir, sub)));

	/* two-fd calls: fhash is the source (in) fd, fhash2 the destination */
	fo = wl_ok(R(open(out, O_CREAT | O_RDWR | O_TRUNC, 0644)), "open out");
	wl_io(out, "open", "openat", fo);
	off = 0;
	wl_io2(a, out, "sendfile", "sendfile",
	       R(syscall(SYS_sendfile, fo, fa, &off, 300)));
	off = 0;
	off2 = 1000;
	wl_io2(a, out, "copy_file_range", "copy_file_range",
	       R(syscall(SYS_copy_file_range, fa, &off, fo, &off2, 400, 0)));
	/* mmap of a file */
	fm = wl_ok(R(open(m, O_CREAT | O_RDWR | O_TRUNC, 0644)), "open m");
	wl_io(m, "open", "openat", fm);
	wl_io(m, "ftruncate", "ftruncate", R(syscall(SYS_ftruncate, fm, 8192)));
	map = (char *)syscall(SYS_mmap, NULL, 8192, PROT_READ | PROT_WRITE,
			      MAP_SHARED, fm, 0);
	if (map == MAP_FAILED)
		wl_die("mmap");
	wl_io(m, "mmap", "mmap", (long)map);
	memcpy(map, buf, 8192);
	/* both pages dirtied through the mapping: one run of them */
	wl_io(m, "mmap_write", "-", 8192);
	/* msync and munmap name the mapped file */
	r = R(syscall(SYS_msync, map, 8192, MS_SYNC));
	wl_io(m, "msync", "msync", r);
	wl_emit("mm\t%d\t%d\tmsync\t%#lx\t8192\t%ld\n", wl_pid(), wl_tid(),
		(unsigned long)map, r);
	r = R(syscall(SYS_munmap, map, 8192));
	wl_io(m, "munmap", "munmap", r);
	wl_emit("mm\t%d\t%d\tmunmap\t%#lx\t8192\t%ld\n", wl_pid(), wl_tid(),
		(unsigned long)map, r);

	wl_io(a, "close", "close", R(close(fa)));
	wl_io(b, "close", "close", R(close(fb)));
	wl_io(c, "close", "close", R(close(fc)));
	wl_io(D, "close", "close", R(close(dfd)));
	wl_io(out, "close", "close", R(close(fo)));
	wl_io(m, "close", "close", R(close(fm)));
	open_how_call(D);
}

static void pipes(const char *D)
{
	char *a = wl_path(D, "a.dat"), *out = wl_path(D, "out.dat");
	char *after = wl_path(D, "after.dat");
	char *pn, *s0, *s1, *en;
	int p[2], sv[2], ev;
	long fa, fo, fd, r;
	loff_t off;
	unsigned long long v = 5;

	fa = wl_ok(R(open(a, O_CREAT | O_RDWR | O_TRUNC, 0644)), "open a");
	wl_io(a, "open", "openat", fa);
	wl_io(a, "write", "write", R(write(fa, buf, 1000)));
	fo = wl_ok(R(open(out, O_CREAT | O_RDWR | O_TRUNC, 0644)), "open out");
	wl_io(out, "open", "openat", fo);

	if (pipe(p) < 0 || socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
		wl_die("pipe/socketpair");
	ev = eventfd(0, 0);
	if (ev < 0)
		wl_die("eventfd");
	pn = wl_fdpath(p[0]);
	s0 = wl_fdpath(sv[0]);
	s1 = wl_fdpath(sv[1]);
	en = wl_fdpath(ev);

	wl_io(pn, "write", "write", R(write(p[1], buf, 100)));
	wl_io(pn, "read", "read", R(read(p[0], rbuf, 100)));
	off = 0;
	wl_io2(a, pn, "splice", "splice",
	       R(syscall(SYS_splice, fa, &off, p[1], NULL, 256, 0)));
	off = 5000;
	wl_io2(pn, out, "splice", "splice",
	       R(syscall(SYS_splice, p[0], NULL, fo, &off, 256, 0)));
	wl_io(s0, "write", "write", R(write(sv[0], buf, 123)));
	wl_io(s1, "read", "read", R(read(sv[1], rbuf, 123)));
	wl_io(en, "write", "write", R(write(ev, &v, 8)));
	wl_io(en, "read", "read", R(read(ev, &v, 8)));
	wl_io(pn, "close", "close", R(close(p[0])));
	wl_io(pn, "close", "close", R(close(p[1])));
	wl_io(s0, "close", "close", R(close(sv[0])));
	wl_io(s1, "close", "close", R(close(sv[1])));
	wl_io(en, "close", "close", R(close(ev)));

	/* the freed numbers now name a file */
	fd = wl_ok(R(open(after, O_CREAT | O_RDWR | O_TRUNC, 0644)), "after");
	wl_io(after, "open", "openat", fd);
	wl_io(after, "write", "write", R(write(fd, buf, 10)));
	r = R(syscall(SYS_dup2, fd, p[1]));
	wl_io(after, "dup2", "dup2", r);
	wl_io(after, "write", "write", R(write(p[1], buf, 20)));
	wl_io(after, "close", "close", R(close(p[1])));
	wl_io(after, "close", "close", R(close(fd)));
	wl_io(a, "close", "close", R(close(fa)));
	wl_io(out, "close", "close", R(close(fo)));
}

static void relative(const char *D)
{
	char *init = wl_path(D, "init_rel.dat"), *rdir = wl_path(D, "r");
	char *x = wl_path(D, "r/x"), *y = wl_path(D, "r/y");
	char *s2 = wl_path(D, "r/sub2"), *z = wl_path(D, "r/sub2/z");
	char *nd = wl_path(D, "r/sub2/newdir");
	char cwd[PATH_MAX];
	long fd, f1, f2, f3, f4, f5, f6, dfd;

	/* The test starts us in DIR: a relative open before any chdir needs
	 * the tracer to know the initial working directory. */
	if (!getcwd(cwd, sizeof(cwd)) || strcmp(cwd, D) != 0) {
		errno = EINVAL;
		wl_die("run me with cwd = %s (cwd is %s)", D, cwd);
	}
	fd = wl_ok(R(open("init_rel.dat", O_CREAT | O_WRONLY | O_TRUNC, 0644)),
		   "open init_rel.dat");
	wl_io(init, "open", "openat", fd);
	wl_io(init, "write", "write", R(write(fd, buf, 41)));
	wl_io(init, "close", "close", R(close(fd)));

	wl_io(rdir, "mkdir", "mkdir", R(syscall(SYS_mkdir, "r", 0755)));
	wl_io(x, "mkdir", "mkdir", R(syscall(SYS_mkdir, "r/x", 0755)));
	wl_io(s2, "mkdir", "mkdir", R(syscall(SYS_mkdir, "r/./sub2", 0755)));
	wl_io(rdir, "chdir", "chdir", R(syscall(SYS_chdir, rdir)));

	f1 = wl_ok(R(open("x/../y", O_CREAT | O_WRONLY | O_TRUNC, 0644)), "y");
	wl_io(y, "open", "openat", f1);
	wl_io(y, "write", "write", R(write(f1, buf, 111)));
	wl_io(y, "stat", "stat", R(syscall(SYS_stat, "x/../y", &(struct stat){ 0 })));
	f2 = wl_ok(R(openat(AT_FDCWD, "./x/../../r/y", O_RDONLY)), "y2");
	wl_io(y, "open", "openat", f2);
	wl_io(y, "read", "read", R(read(f2, rbuf, 60)));

	dfd = wl_ok(R(open("sub2", O_RDONLY | O_DIRECTORY)), "sub2");
	wl_io(s2, "open", "openat", dfd);
	f3 = wl_ok(R(openat(dfd, "z", O_CREAT | O_WRONLY | O_TRUNC, 0644)), "z");
	wl_io(z, "open", "openat", f3);
	wl_io(z, "write", "write", R(write(f3, buf, 222)));
	f4 = wl_ok(R(openat(dfd, "../y", O_RDONLY)), "../y");
	wl_io(y, "open", "openat", f4);
	wl_io(y, "read", "read", R(read(f4, rbuf, 1000)));

	wl_io(s2, "fchdir", "fchdir", R(syscall(SYS_fchdir, dfd)));
	f5 = wl_ok(R(open("../x/../sub2/z", O_RDONLY)), "z2");
	wl_io(z, "open", "openat", f5);
	wl_io(z, "read", "read", R(read(f5, rbuf, 1000)));
	wl_io(nd, "mkdir", "mkdir", R(syscall(SYS_mkdir, "newdir", 0755)));
	wl_io(nd, "rmdir", "rmdir", R(syscall(SYS_rmdir, "./newdir")));
	wl_io(rdir, "chdir", "chdir", R(syscall(SYS_chdir, "..")));
	f6 = wl_ok(R(open("y", O_RDONLY)), "y3");
	wl_io(y, "open", "openat", f6);
	wl_io(y, "pread", "pread64", R(syscall(SYS_pread64, f6, rbuf, 50, 7)));

	wl_io(y, "close", "close", R(close(f1)));
	wl_io(y, "close", "close", R(close(f2)));
	wl_io(z, "close", "close", R(close(f3)));
	wl_io(y, "close", "close", R(close(f4)));
	wl_io(z, "close", "close", R(close(f5)));
	wl_io(y, "close", "close", R(close(f6)));
	wl_io(s2, "close", "close", R(close(dfd)));
	wl_io(z, "unlink", "unlink", R(syscall(SYS_unlink, "sub2/z")));
}

static void dups(const char *D)
{
	char *f = wl_path(D, "f.dat"), *g = wl_path(D, "g.dat");
	char *h = wl_path(D, "h.dat");
	long fd, d1, d2, d3, d4, d5, gfd, hfd;

	fd = wl_ok(R(open(f, O_CREAT | O_RDWR | O_TRUNC, 0644)), "open f");
	wl_io(f, "open", "openat", fd);
	d1 = wl_ok(R(syscall(SYS_dup, fd)), "dup");
	wl_io(f, "dup", "dup", d1);
	d2 = wl_ok(R(syscall(SYS_dup2, fd, 50)), "dup2");
	wl_io(f, "dup2", "dup2", d2);
	d3 = wl_ok(R(syscall(SYS_dup3, fd, 60, O_CLOEXEC)), "dup3");
	wl_io(f, "dup3", "dup3", d3);
	d4 = wl_ok(R(syscall(SYS_fcntl, fd, F_DUPFD, 70)), "F_DUPFD");
	wl_io(f, "fcntl", "fcntl", d4);
	d5 = wl_ok(R(syscall(SYS_fcntl, fd, F_DUPFD_CLOEXEC, 80)), "F_DUPFD_CL");
	wl_io(f, "fcntl", "fcntl", d5);
	wl_emit("info\tfds\t%ld\t%ld\t%ld\t%ld\t%ld\t%ld\n", fd, d1, d2, d3, d4,
		d5);

	wl_io(f, "write", "write", R(write(d1, buf, 11)));
	wl_io(f, "write", "write", R(write(d2, buf, 22)));
	wl_io(f, "write", "write", R(write(d3, buf, 33)));
	wl_io(f, "write", "write", R(write(d4, buf, 44)));
	wl_io(f, "write", "write", R(write(d5, buf, 55)));
	wl_io(f, "write", "write", R(write(fd, buf, 66)));
	/* the original closed, its duplicate still names the file */
	wl_io(f, "close", "close", R(close(fd)));
	wl_io(f, "write", "write", R(write(d1, buf, 7)));

	/* dup2 over an open fd: that slot now names f, not g */
	gfd = wl_ok(R(open(g, O_CREAT | O_RDWR | O_TRUNC, 0644)), "open g");
	wl_io(g, "open", "openat", gfd);
	wl_io(g, "write", "write", R(write(gfd, buf, 5)));
	wl_io(f, "dup2", "dup2", R(syscall(SYS_dup2, d1, gfd)));
	wl_io(f, "write", "write", R(write(gfd, buf, 9)));

	/* close_range frees 50..80; 60 then names h */
	wl_io(NULL, "close_range", "close_range",
	      R(syscall(SYS_close_range, 50, 80, 0)));
	hfd = wl_ok(R(open(h, O_CREAT | O_RDWR | O_TRUNC, 0644)), "open h");
	wl_io(h, "open", "openat", hfd);
	wl_io(h, "dup2", "dup2", R(syscall(SYS_dup2, hfd, 60)));
	wl_io(h, "write", "write", R(write(60, buf, 13)));
	/* (the tracer records only fcntls that change the fd table) */
	wl_io(h, "fcntl", "fcntl", R(syscall(SYS_fcntl, 60, F_SETFD, FD_CLOEXEC)));
	/* a write on an fd that close_range closed fails: -EBADF, no path */
	wl_io(NULL, "write", "write", R(write(70, buf, 3)));

	wl_io(f, "close", "close", R(close(d1)));
	wl_io(f, "close", "close", R(close(gfd)));
	wl_io(h, "close", "close", R(close(hfd)));
	wl_io(h, "close", "close", R(close(60)));
}

/* Two threads, one fd table: thread A's preads of fd N come before
 * thread B closes N and opens another file, which gets N. They must be
 * charged to the first file, so a thread whose table is shared may keep
 * no records back to send later. Semaphores (futexes, not traced calls)
 * order the threads. */
struct handoff {
	sem_t to_b, to_a;
	long fd;
	char *first, *second;
};

static void *reopen_as_same_fd(void *arg)
{
	struct handoff *h = arg;
	long fd;

	sem_wait(&h->to_b);
	wl_io(h->first, "close", "close", R(close(h->fd)));
	fd = wl_ok(R(open(h->second, O_CREAT | O_RDWR | O_TRUNC, 0644)), "open second");
	wl_io(h->second, "open", "openat", fd);
	if (fd != h->fd) {
		errno = EBADF;
		wl_die("second.dat got fd %ld, not %ld", fd, h->fd);
	}
	sem_post(&h->to_a);
	return NULL;
}

static void threads(const char *D)
{
	struct handoff h = { .first = wl_path(D, "first.dat"), .second = wl_path(D, "second.dat") };
	pthread_t b;

	sem_init(&h.to_b, 0, 0);
	sem_init(&h.to_a, 0, 0);
	h.fd = wl_ok(R(open(h.first, O_CREAT | O_RDWR | O_TRUNC, 0644)), "open first");
	wl_io(h.first, "open", "openat", h.fd);
	wl_io(h.first, "write", "write", R(write(h.fd, buf, 4096)));
	if (pthread_create(&b, NULL, reopen_as_same_fd, &h))
		wl_die("pthread_create");
	for (int i = 0; i < 3; i++)
		wl_io(h.first, "pread", "pread64", R(pread(h.fd, buf, 100 + i, 0)));
	sem_post(&h.to_b);
	sem_wait(&h.to_a);
	wl_io(h.second, "write", "write", R(write(h.fd, buf, 77)));
	pthread_join(b, NULL);
	wl_io(h.second, "close", "close", R(close(h.fd)));
}

/* Writes to an O_CLOEXEC fd, then exec: the exec closes the fd, and
 * the writes, made before it, are still charged to the file. */
static void exec_after_io(const char *D)
{
	char *f = wl_path(D, "cloexec.dat");
	long fd = wl_ok(R(open(f, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0644)), "open");

	wl_io(f, "open", "openat", fd);
	for (int i = 0; i < 3; i++)
		wl_io(f, "write", "write", R(write(fd, buf, 10 + i)));
	execl("/bin/true", "true", (char *)NULL);
	wl_die("exec /bin/true");
}

/* Preads DIR/a.dat on an O_CLOEXEC fd (10, 11 and 12 bytes), then execs
 * rawopen (beside this program) in DIR: the exec closes the fd, and
 * rawopen's first call, an open of b.dat, gets the same number. Nothing
 * is reported: a report is a write to another fd, and no call on another
 * fd may come between the preads and rawopen's open (the test knows what
 * both programs do). */
static void exec_reuse(const char *D)
{
	char *f = wl_path(D, "a.dat"), *raw, self[4096] = "";
	long fd;

	wl_ok(R(readlink("/proc/self/exe", self, sizeof(self) - 1)), "readlink");
	raw = wl_path(dirname(self), "rawopen");
	wl_ok(R(chdir(D)), "chdir");
	fd = wl_ok(R(open(f, O_RDONLY | O_CLOEXEC)), "open");
	for (int i = 0; i < 3; i++)
		wl_ok(R(pread(fd, buf, 10 + i, 0)), "pread");
	execl(raw, "rawopen", (char *)NULL);
	wl_die("exec rawopen");
}

int main(int argc, char **argv)
{
	char *D;

	if (argc != 3) {
		fprintf(stderr, "usage: io basic|pipe|relative|dup|threads|exec|exec-reuse DIR\n");
		return 2;
	}
	D = argv[2]; /* absolute and canonical: the test passes realpath */
	buf = wl_buf(65536);
	if (strcmp(argv[1], "basic") == 0)
		basic(D);
	else if (strcmp(argv[1], "relative") == 0)
		relative(D);
	else if (strcmp(argv[1], "pipe") == 0)
		pipes(D);
	else if (strcmp(argv[1], "dup") == 0)
		dups(D);
	else if (strcmp(argv[1], "threads") == 0)
		threads(D);
	else if (strcmp(argv[1], "exec") == 0)
		exec_after_io(D);
	else if (strcmp(argv[1], "exec-reuse") == 0)
		exec_reuse(D);
	else {
		fprintf(stderr, "io: unknown mode %s\n", argv[1]);
		return 2;
	}
	return 0;
}
