/* ioctl DIR: real ioctls that work without special hardware, each reported
 * as an "ioctl" record with its request decoded by the kernel's own _IOC_*
 * macros:
 *   FIONREAD on a pipe (a legacy request: dir 0, size 0), TCGETS on a pty
 *   slave, TIOCGPTN on the pty master (_IOR('T', 0x30, unsigned int)),
 *   FS_IOC_GETFLAGS on a file in DIR (_IOR('f', 1, long)), and TCGETS on
 *   that regular file, which fails with ENOTTY.
 */
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <termios.h>
#include "workload.h"

#define R(x) ({ long r_ = (long)(x); r_ < 0 ? -(long)errno : r_; })

static void rec(const char *path, unsigned long req, long ret,
		const char *name)
{
	wl_emit("ioctl\t%d\t%d\t%s\t%#lx\t%lu\t%lu\t%lu\t%lu\t%ld\t%s\n",
		wl_pid(), wl_tid(), path, req, (unsigned long)_IOC_DIR(req),
		(unsigned long)_IOC_TYPE(req), (unsigned long)_IOC_NR(req),
		(unsigned long)_IOC_SIZE(req), ret, name);
}

int main(int argc, char **argv)
{
	char path[PATH_MAX], pts[64];
	int p[2], n = 0, zero = 0;
	unsigned int ptn = 0;
	struct termios tio;
	long fd, m, s, flags = 0, r;

	if (argc != 2) {
		fprintf(stderr, "usage: ioctl DIR\n");
		return 2;
	}
	/* a pipe with 123 bytes in it */
	if (pipe(p) < 0)
		wl_die("pipe");
	if (write(p[1], wl_buf(123), 123) != 123)
		wl_die("write pipe");
	r = R(ioctl(p[0], FIONREAD, &n));
	if (r != 0 || n != 123)
		wl_die("FIONREAD gave %d", n);
	rec(wl_fdpath(p[0]), FIONREAD, r, "FIONREAD");

	/* a pty pair, by hand (glibc's grantpt/ptsname add ioctls of their
	 * own) */
	m = wl_ok(R(open("/dev/ptmx", O_RDWR | O_NOCTTY)), "open /dev/ptmx");
	r = R(ioctl(m, TIOCSPTLCK, &zero));
	rec(wl_fdpath(m), TIOCSPTLCK, r, "TIOCSPTLCK");
	r = R(ioctl(m, TIOCGPTN, &ptn));
	rec(wl_fdpath(m), TIOCGPTN, r, "TIOCGPTN");
	snprintf(pts, sizeof(pts), "/dev/pts/%u", ptn);
	s = wl_ok(R(open(pts, O_RDWR | O_NOCTTY)), pts);
	rec(wl_fdpath(s), TCGETS, R(ioctl(s, TCGETS, &tio)), "TCGETS");

	/* a regular file */
	snprintf(path, sizeof(path), "%s/ioctl.dat", argv[1]);
	fd = wl_ok(R(open(path, O_CREAT | O_RDWR | O_TRUNC, 0644)), path);
	rec(path, FS_IOC_GETFLAGS, R(ioctl(fd, FS_IOC_GETFLAGS, &flags)),
	    "FS_IOC_GETFLAGS");
	rec(path, TCGETS, R(ioctl(fd, TCGETS, &tio)), "TCGETS");
	return 0;
}
