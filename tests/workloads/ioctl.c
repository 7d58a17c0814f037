/* ioctl DIR: real ioctls that work without special hardware, each reported
 * as an "ioctl" record with its request decoded by the kernel's own _IOC_*
 * macros:
 *   FIONREAD on a pipe (a legacy request: dir 0, size 0), TCGETS on a pty
 *   slave, TIOCGPTN on the pty master (_IOR('T', 0x30, unsigned int)),
 *   FS_IOC_GETFLAGS on a file in DIR (_IOR('f', 1, long)), and TCGETS on
 *   that regular file, which fails with ENOTTY.
 *
 * ioctl --devices: one accelerator or interconnect request on each node
 *   name the tracer classifies (/dev/nvidia-uvm, /dev/dri/card0, /dev/kfd,
 *   ...) and on a look-alike, recorded with the request's name from the
 *   driver's public header and the device class and kind expected. The
 *   nodes must be copies of /dev/null (char 1:3) in a private /dev: the
 *   program refuses anything else, so it never sends a made-up request to
 *   a real driver. /dev/null answers every ioctl with ENOTTY.
 */
#include <linux/fs.h>
#include <libdrm/drm.h>
#include <libdrm/drm_mode.h>
#include <misc/habanalabs.h>
#include <rdma/rdma_user_ioctl.h>
#include <sys/ioctl.h>
#include <sys/sysmacros.h>
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

/* A request that is a plain number, not _IOC encoded: no fields. */
static void rec_plain(const char *path, unsigned long req, long ret,
		      const char *name)
{
	wl_emit("ioctl\t%d\t%d\t%s\t%#lx\t-\t-\t-\t-\t%ld\t%s\n",
		wl_pid(), wl_tid(), path, req, ret, name);
}

/* Request numbers that no system header carries, from NVIDIA's
 * open-gpu-kernel-modules: uvm_linux_ioctl.h, uvm_ioctl.h (plain numbers,
 * not _IOC) and nv_escape.h (_IOC type 'F', NV_IOCTL_MAGIC; the driver
 * matches by nr, so the size here is arbitrary). */
#define UVM_INITIALIZE 0x30000001
#define UVM_MIGRATE 51
#define NV_ESC_RM_ALLOC _IOWR('F', 0x2b, char[48])
#define NV_ESC_RM_MAP_MEMORY _IOWR('F', 0x4e, char[56])
/* linux/kfd_ioctl.h: struct kfd_ioctl_get_version_args is two __u32. The
 * header itself wants <drm/drm.h>, which Debian ships only as libdrm's. */
#define AMDKFD_IOC_GET_VERSION _IOR('K', 0x01, char[8])

struct dev_case {
	const char *node;
	unsigned long req;
	const char *req_name;	/* "-": no name expected */
	const char *device;	/* "-": not an accelerator node */
	const char *kind;
	int plain;		/* not _IOC encoded (nvidia-uvm) */
};

static const struct dev_case dev_cases[] = {
	{ "/dev/nvidia-uvm", UVM_INITIALIZE, "UVM_INITIALIZE", "nvidia-uvm", "control", 1 },
	{ "/dev/nvidia-uvm", UVM_MIGRATE, "UVM_MIGRATE", "nvidia-uvm", "transfer", 1 },
	{ "/dev/nvidiactl", NV_ESC_RM_ALLOC, "NV_ESC_RM_ALLOC", "nvidiactl", "control", 0 },
	{ "/dev/nvidia0", NV_ESC_RM_MAP_MEMORY, "NV_ESC_RM_MAP_MEMORY", "nvidia", "transfer", 0 },
	{ "/dev/dri/card0", DRM_IOCTL_VERSION, "DRM_IOCTL_VERSION", "dri", "control", 0 },
	{ "/dev/dri/renderD128", DRM_IOCTL_MODE_CREATE_DUMB, "DRM_IOCTL_MODE_CREATE_DUMB", "dri", "transfer", 0 },
	{ "/dev/kfd", AMDKFD_IOC_GET_VERSION, "AMDKFD_IOC_GET_VERSION", "kfd", "control", 0 },
	{ "/dev/accel/accel0", DRM_IOCTL_GEM_CLOSE, "DRM_IOCTL_GEM_CLOSE", "accel", "control", 0 },
	{ "/dev/infiniband/uverbs0", RDMA_VERBS_IOCTL, "RDMA_VERBS_IOCTL", "infiniband", "control", 0 },
	{ "/dev/infiniband/uverbs0", _IO('I', 0x7f), "-", "infiniband", "control", 0 },
	{ "/dev/hl0", HL_IOCTL_MEMORY, "HL_IOCTL_MEMORY", "habana", "transfer", 0 },
	{ "/dev/nvidiafoo", NV_ESC_RM_ALLOC, "-", "-", "-", 0 },
};

static int device_ioctls(void)
{
	for (size_t i = 0; i < sizeof(dev_cases) / sizeof(dev_cases[0]); i++) {
		const struct dev_case *c = &dev_cases[i];
		struct stat st;
		long fd = wl_ok(R(open(c->node, O_RDWR)), c->node), r;

		if (fstat(fd, &st) || !S_ISCHR(st.st_mode) ||
		    st.st_rdev != makedev(1, 3))
			wl_die("%s is not a copy of /dev/null: refusing to send it %s",
			       c->node, c->req_name);
		r = R(ioctl(fd, c->req, NULL));
		(c->plain ? rec_plain : rec)(c->node, c->req, r, c->req_name);
		wl_emit("devioctl\t%s\t%#lx\t%s\t%s\t%s\n", c->node, c->req,
			c->req_name, c->device, c->kind);
		close(fd);
	}
	return 0;
}

int main(int argc, char **argv)
{
	char path[PATH_MAX], pts[64];
	int p[2], n = 0, zero = 0;
	unsigned int ptn = 0;
	struct termios tio;
	long fd, m, s, flags = 0, r;

	if (argc != 2) {
		fprintf(stderr, "usage: ioctl DIR | ioctl --devices\n");
		return 2;
	}
	if (!strcmp(argv[1], "--devices"))
		return device_ioctls();
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
