// SPDX-License-Identifier: GPL-2.0
/* Unit tests for user/ioctl_decode.c: device classes and ioctl names. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/ioctl.h>

#include "check.h"
#include "model/ioctl_decode.h"

/* Generic _IOC layout (x86, arm64, riscv...): the literal request values
 * below are only valid there. */
#define GENERIC_IOC (_IOC_SIZEBITS == 14 && _IOC_DIRBITS == 2)

static void check_class(const char *path, enum dev_class want, const char *why)
{
	enum dev_class got = dev_classify(path);

	CHECK(got == want, "classify %s -> %s (got %s)", why,
	      dev_class_name(want) ? dev_class_name(want) : "none",
	      dev_class_name(got) ? dev_class_name(got) : "none");
}

static void test_classify_nodes(void)
{
	static const struct {
		const char *path;
		enum dev_class cls;
	} nodes[] = {
		{ "/dev/nvidiactl", DEV_NVIDIACTL },
		{ "/dev/nvidia-uvm", DEV_NVIDIA_UVM },
		{ "/dev/nvidia-uvm-tools", DEV_NVIDIA_UVM },
		{ "/dev/nvidia0", DEV_NVIDIA },
		{ "/dev/nvidia7", DEV_NVIDIA },
		{ "/dev/nvidia255", DEV_NVIDIA },
		{ "/dev/nvidia-modeset", DEV_NVIDIA_MODESET },
		{ "/dev/nvidia-caps/nvidia-cap1", DEV_NVIDIA_CAPS },
		{ "/dev/nvidia-caps/nvidia-cap2047", DEV_NVIDIA_CAPS },
		{ "/dev/dri/card0", DEV_DRI },
		{ "/dev/dri/card12", DEV_DRI },
		{ "/dev/dri/renderD128", DEV_DRI },
		{ "/dev/dri/controlD64", DEV_DRI },
		{ "/dev/kfd", DEV_KFD },
		{ "/dev/accel/accel0", DEV_ACCEL },
		{ "/dev/infiniband/uverbs0", DEV_INFINIBAND },
		{ "/dev/infiniband/rdma_cm", DEV_INFINIBAND },
		{ "/dev/infiniband/umad1", DEV_INFINIBAND },
		{ "/dev/infiniband/issm3", DEV_INFINIBAND },
		{ "/dev/hl0", DEV_HABANA },
		{ "/dev/hl7", DEV_HABANA },
		{ "/dev/hl_controlD0", DEV_HABANA },
	};
	size_t i;

	for (i = 0; i < sizeof(nodes) / sizeof(nodes[0]); i++)
		check_class(nodes[i].path, nodes[i].cls, nodes[i].path);
}

static void test_classify_lookalikes(void)
{
	static const char *const fakes[] = {
		"/dev/nvidia", "/dev/nvidiafoo", "/dev/nvidia0x", "/dev/nvidia-0",
		"/dev/nvidia0/", "/dev/nvidia-uvmx", "/dev/nvidia-uvm/",
		"/dev/nvidia-uvm-tool", "/dev/nvidiactl0", "/dev/nvidiact",
		"/dev/nvidia-modeset1", "/dev/nvidia-caps", "/dev/nvidia-caps/",
		"/dev/nvidia-caps/nvidia-cap", "/dev/nvidia-caps/foo",
		"/dev/nvidia-caps/nvidia-cap1/x", "/dev/dri", "/dev/dri/",
		"/dev/dri/card", "/dev/dri/cardX", "/dev/dri/card0x",
		"/dev/dri/renderD", "/dev/dri/renderD128/", "/dev/dri/render128",
		"/dev/dri/by-path/pci-0000:03:00.0-render", "/dev/card0",
		"/dev/kfd0", "/dev/kfdx", "/dev/kfd/", "/dev/accel", "/dev/accel/",
		"/dev/accel/accel", "/dev/accel/foo0", "/dev/infiniband/uverbs",
		"/dev/infiniband/rdma_cm0", "/dev/infiniband/umad",
		"/dev/infiniband/foo", "/dev/hl", "/dev/hlx", "/dev/hl0a",
		"/dev/hl_controlD", "/dev/hl_control0", "dev/nvidia0",
		"//dev/nvidia0", "/dev//nvidia0", "/dev/./kfd", "/dev/dri/../kfd",
		"/dev/../dev/kfd", "/tmp/dev/nvidia0", "/proc/self/fd/3",
		"/DEV/nvidia0", "/dev/KFD", "/dev/kfd ", " /dev/kfd",
		"/dev/nvidia-uvm (deleted)", "/dev/null", "/dev/", "/", "/dev",
	};
	size_t i;

	for (i = 0; i < sizeof(fakes) / sizeof(fakes[0]); i++)
		check_class(fakes[i], DEV_NONE, fakes[i]);
}

static void test_classify_hostile(void)
{
	char digits[64];
	char *huge;
	size_t n = 1 << 16;

	check_class(NULL, DEV_NONE, "NULL");
	check_class("", DEV_NONE, "empty string");
	check_class("/dev/nvidia\xff", DEV_NONE, "high byte after prefix");
	check_class("/dev/\xc3\xa9kfd", DEV_NONE, "UTF-8 in name");
	check_class("/dev/kfd\x80", DEV_NONE, "high byte after exact name");
	check_class("\x80\xff/dev/kfd", DEV_NONE, "high bytes before /dev");
	check_class("/dev/dri/renderD1\xb2\xb8", DEV_NONE, "high byte digits");
	/* C string: whatever follows an embedded NUL is not part of it */
	check_class("/dev/kfd\0junk", DEV_KFD, "embedded NUL ends the path");

	/* node numbers: up to 10 digits, more is no real node */
	strcpy(digits, "/dev/nvidia");
	memset(digits + 11, '9', 10);
	digits[21] = '\0';
	check_class(digits, DEV_NVIDIA, "10-digit node number");
	digits[21] = '9';
	digits[22] = '\0';
	check_class(digits, DEV_NONE, "11-digit node number");

	huge = malloc(n + 16);
	if (!huge) {
		CHECK(0, "malloc for long path");
		return;
	}
	memset(huge, 'A', n);
	huge[n] = '\0';
	check_class(huge, DEV_NONE, "64 KiB of 'A'");
	memcpy(huge, "/dev/nvidia", 11);
	memset(huge + 11, '1', n - 11);
	check_class(huge, DEV_NONE, "/dev/nvidia + 64 Ki digits");
	memcpy(huge, "/dev/dri/renderD128/", 20);
	check_class(huge, DEV_NONE, "/dev/dri/renderD128/ + 64 KiB");
	free(huge);
}

/* Put s at the very end of a readable page followed by an inaccessible
 * one, without its NUL: any read past the bytes that matter faults. */
static void check_class_at_page_end(const char *s, const char *why)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t len = strlen(s);
	char *map;

	map = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED || mprotect(map + page, page, PROT_NONE)) {
		CHECK(0, "guard page for %s", why);
		return;
	}
	memcpy(map + page - len, s, len);
	check_class(map + page - len, DEV_NONE, why);
	munmap(map, 2 * page);
}

static void test_classify_bounded_reads(void)
{
	/* each string is long enough that a match would need the next byte,
	 * which lies on the guard page: classify must give up before it */
	check_class_at_page_end("/dev/nvidia12345678901", "unterminated 11 digits");
	check_class_at_page_end("/dev/dri/renderD12812345678", "unterminated renderD");
	check_class_at_page_end("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "unterminated junk");
	check_class_at_page_end("/dev/nvidiaX", "unterminated look-alike");
}

static void test_class_names(void)
{
	static const struct {
		enum dev_class cls;
		const char *name;
	} names[] = {
		{ DEV_NVIDIA, "nvidia" },
		{ DEV_NVIDIACTL, "nvidiactl" },
		{ DEV_NVIDIA_UVM, "nvidia-uvm" },
		{ DEV_NVIDIA_MODESET, "nvidia-modeset" },
		{ DEV_NVIDIA_CAPS, "nvidia-caps" },
		{ DEV_DRI, "dri" },
		{ DEV_KFD, "kfd" },
		{ DEV_ACCEL, "accel" },
		{ DEV_INFINIBAND, "infiniband" },
		{ DEV_HABANA, "habana" },
	};
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		CHECK_STREQ(dev_class_name(names[i].cls), names[i].name,
			    "class name %s", names[i].name);
	CHECK(dev_class_name(DEV_NONE) == NULL, "DEV_NONE has no name");
	CHECK(dev_class_name(DEV_CLASS_COUNT) == NULL, "DEV_CLASS_COUNT has no name");
	CHECK(dev_class_name((enum dev_class)-1) == NULL, "class -1 has no name");
}

static void test_split(void)
{
	struct ioctl_req r;

	/* DRM_IOCTL_VERSION = DRM_IOWR(0x00, struct drm_version), 64 bytes */
	ioctl_split(_IOC(_IOC_READ | _IOC_WRITE, 'd', 0x00, 64), &r);
	CHECK(r.dir == (_IOC_READ | _IOC_WRITE) && r.type == 'd' && r.nr == 0 &&
	      r.size == 64, "split DRM_IOCTL_VERSION: dir=%u type=%u nr=%u size=%u",
	      r.dir, r.type, r.nr, r.size);
	CHECK_STREQ(ioctl_dir_name(r.dir), "rw", "DRM_IOCTL_VERSION is rw");

	/* AMDKFD_IOC_GET_VERSION = _IOR('K', 0x01, 8 bytes) */
	ioctl_split(_IOC(_IOC_READ, 'K', 0x01, 8), &r);
	CHECK(r.dir == _IOC_READ && r.type == 'K' && r.nr == 1 && r.size == 8,
	      "split AMDKFD_IOC_GET_VERSION");
	CHECK_STREQ(ioctl_dir_name(r.dir), "r", "AMDKFD_IOC_GET_VERSION is r");

#if GENERIC_IOC
	ioctl_split(0xc0406400UL, &r);
	CHECK(r.dir == 3 && r.type == 0x64 && r.nr == 0 && r.size == 64,
	      "split literal 0xc0406400 (DRM_IOCTL_VERSION)");
	if (sizeof(long) > 4) {
		/* a sign-extended int request: the kernel only sees 32 bits */
		ioctl_split((unsigned long)(long)(int32_t)0xc0406400u, &r);
		CHECK(r.dir == 3 && r.type == 'd' && r.nr == 0 && r.size == 64,
		      "split ignores bits above 31");
	}
	/*
	 * UVM_INITIALIZE = 0x30000001 is a plain number, not _IOC: split
	 * reads it as dir=none type=0 nr=1 size=0x3000 (12288), which means
	 * nothing. The caller prints ioctl_name()'s "UVM_INITIALIZE" instead.
	 */
	ioctl_split(0x30000001UL, &r);
	CHECK(r.dir == _IOC_NONE && r.type == 0 && r.nr == 1 && r.size == 0x3000,
	      "split UVM_INITIALIZE gives the meaningless none/0/1/12288");
	/* UVM_MIGRATE = 51: dir=none type=0 nr=51 size=0 */
	ioctl_split(51, &r);
	CHECK(r.dir == _IOC_NONE && r.type == 0 && r.nr == 51 && r.size == 0,
	      "split UVM_MIGRATE gives none/0/51/0");
#endif
	ioctl_split(0xc0406400UL, NULL);
	CHECK(1, "split with NULL result does not crash");
}

static void test_dir_names(void)
{
	CHECK_STREQ(ioctl_dir_name(_IOC_NONE), "none", "dir none");
	CHECK_STREQ(ioctl_dir_name(_IOC_WRITE), "w", "dir _IOC_WRITE is w");
	CHECK_STREQ(ioctl_dir_name(_IOC_READ), "r", "dir _IOC_READ is r");
	CHECK_STREQ(ioctl_dir_name(_IOC_READ | _IOC_WRITE), "rw", "dir rw");
	CHECK_STREQ(ioctl_dir_name(99), "?", "dir 99 is invalid");
}

/* name and transfer flag of one request */
static void check_name(enum dev_class c, unsigned long req, const char *want,
		       bool want_xfer)
{
	bool xfer = !want_xfer;	/* must be overwritten */
	const char *got = ioctl_name(c, req, &xfer);

	if (!want) {
		CHECK(got == NULL && !xfer, "%s 0x%lx is unknown (got %s)",
		      dev_class_name(c) ? dev_class_name(c) : "none", req,
		      got ? got : "NULL");
		return;
	}
	CHECK_STREQ(got, want, "%s 0x%lx is %s", dev_class_name(c), req, want);
	CHECK(xfer == want_xfer, "%s is %s", want,
	      want_xfer ? "transfer" : "control");
}

#define IOWR(t, nr, sz) _IOC(_IOC_READ | _IOC_WRITE, (t), (nr), (sz))
#define IOW(t, nr, sz) _IOC(_IOC_WRITE, (t), (nr), (sz))
#define IOR(t, nr, sz) _IOC(_IOC_READ, (t), (nr), (sz))
#define IO(t, nr) _IOC(_IOC_NONE, (t), (nr), 0)

static void test_names_uvm(void)
{
	check_name(DEV_NVIDIA_UVM, 0x30000001, "UVM_INITIALIZE", false);
	check_name(DEV_NVIDIA_UVM, 0x30000002, "UVM_DEINITIALIZE", false);
	check_name(DEV_NVIDIA_UVM, 1, "UVM_RESERVE_VA", false);
	check_name(DEV_NVIDIA_UVM, 23, "UVM_CREATE_RANGE_GROUP", false);
	check_name(DEV_NVIDIA_UVM, 25, "UVM_REGISTER_GPU_VASPACE", false);
	check_name(DEV_NVIDIA_UVM, 33, "UVM_MAP_EXTERNAL_ALLOCATION", true);
	check_name(DEV_NVIDIA_UVM, 37, "UVM_REGISTER_GPU", false);
	check_name(DEV_NVIDIA_UVM, 38, "UVM_UNREGISTER_GPU", false);
	check_name(DEV_NVIDIA_UVM, 42, "UVM_SET_PREFERRED_LOCATION", false);
	check_name(DEV_NVIDIA_UVM, 46, "UVM_SET_ACCESSED_BY", false);
	check_name(DEV_NVIDIA_UVM, 51, "UVM_MIGRATE", true);
	check_name(DEV_NVIDIA_UVM, 53, "UVM_MIGRATE_RANGE_GROUP", true);
	check_name(DEV_NVIDIA_UVM, 56, "UVM_TOOLS_INIT_EVENT_TRACKER", false);
	check_name(DEV_NVIDIA_UVM, 68, "UVM_ALLOC_SEMAPHORE_POOL", true);
	check_name(DEV_NVIDIA_UVM, 71, "UVM_POPULATE_PAGEABLE", true);
	check_name(DEV_NVIDIA_UVM, 75, "UVM_MM_INITIALIZE", false);
	check_name(DEV_NVIDIA_UVM, 8, NULL, false);		/* gap */
	check_name(DEV_NVIDIA_UVM, 52, NULL, false);		/* gap */
	check_name(DEV_NVIDIA_UVM, 0x30000003, NULL, false);
	check_name(DEV_NVIDIA_UVM, 0, NULL, false);
	/* the same numbers mean nothing on an RM node */
	check_name(DEV_NVIDIACTL, 51, NULL, false);
	check_name(DEV_NVIDIA, 0x30000001, NULL, false);
}

static void test_names_nvidia_rm(void)
{
	/* real requests: NV_ESC_RM_CONTROL with 32-byte NVOS54_PARAMETERS */
	check_name(DEV_NVIDIACTL, IOWR('F', 0x2a, 32), "NV_ESC_RM_CONTROL", false);
	check_name(DEV_NVIDIACTL, IOWR('F', 0x2b, 48), "NV_ESC_RM_ALLOC", false);
	check_name(DEV_NVIDIACTL, IOWR('F', 0x29, 16), "NV_ESC_RM_FREE", false);
	check_name(DEV_NVIDIACTL, IOWR('F', 210, 72), "NV_ESC_CHECK_VERSION_STR", false);
	check_name(DEV_NVIDIACTL, IOWR('F', 200, 1), "NV_ESC_CARD_INFO", false);
	check_name(DEV_NVIDIACTL, IOWR('F', 217, 8), "NV_ESC_EXPORT_TO_DMABUF_FD", false);
	check_name(DEV_NVIDIACTL, IOWR('F', 218, 8), "NV_ESC_WAIT_OPEN_COMPLETE", false);
	check_name(DEV_NVIDIA, IOWR('F', 0x4e, 56), "NV_ESC_RM_MAP_MEMORY", true);
	check_name(DEV_NVIDIA, IOWR('F', 0x57, 48), "NV_ESC_RM_MAP_MEMORY_DMA", true);
	check_name(DEV_NVIDIA, IOWR('F', 0x58, 40), "NV_ESC_RM_UNMAP_MEMORY_DMA", true);
	check_name(DEV_NVIDIA, IOWR('F', 0x4a, 184), "NV_ESC_RM_VID_HEAP_CONTROL", false);
	check_name(DEV_NVIDIA, IOWR('F', 201, 4), "NV_ESC_REGISTER_FD", false);
	/* matched by nr: any size or direction is the same escape */
	check_name(DEV_NVIDIA, IO('F', 0x2a), "NV_ESC_RM_CONTROL", false);
	check_name(DEV_NVIDIA, IOWR('G', 0x2a, 32), NULL, false);
	check_name(DEV_NVIDIA, IOWR('F', 0x30, 32), NULL, false);
	check_name(DEV_NVIDIA, IOWR('F', 219, 32), NULL, false);
	check_name(DEV_NVIDIA_MODESET, IOWR('m', 0, 16), "NVKMS_IOCTL_IOWR", false);
	check_name(DEV_NVIDIA_MODESET, IOWR('m', 1, 16), NULL, false);
	check_name(DEV_NVIDIA_CAPS, IOWR('F', 0x2a, 32), NULL, false);
}

static void test_names_drm(void)
{
	check_name(DEV_DRI, IOWR('d', 0x00, 64), "DRM_IOCTL_VERSION", false);
	/* a 32-bit caller's smaller struct drm_version reaches the same one */
	check_name(DEV_DRI, IOWR('d', 0x00, 36), "DRM_IOCTL_VERSION", false);
	check_name(DEV_DRI, IOWR('d', 0x0c, 16), "DRM_IOCTL_GET_CAP", false);
	check_name(DEV_DRI, IOW('d', 0x09, 8), "DRM_IOCTL_GEM_CLOSE", false);
	check_name(DEV_DRI, IOWR('d', 0x2d, 12), "DRM_IOCTL_PRIME_HANDLE_TO_FD", false);
	check_name(DEV_DRI, IOWR('d', 0x2e, 12), "DRM_IOCTL_PRIME_FD_TO_HANDLE", false);
	check_name(DEV_DRI, IOWR('d', 0xb2, 32), "DRM_IOCTL_MODE_CREATE_DUMB", true);
	check_name(DEV_DRI, IOWR('d', 0xbf, 8), "DRM_IOCTL_SYNCOBJ_CREATE", false);
	check_name(DEV_DRI, IOWR('d', 0xca, 40), "DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT", false);
	check_name(DEV_DRI, IO('d', 0x1e), "DRM_IOCTL_SET_MASTER", false);
	/* amdgpu */
	check_name(DEV_DRI, IOWR('d', 0x40, 32), "DRM_IOCTL_AMDGPU_GEM_CREATE", true);
	check_name(DEV_DRI, IOWR('d', 0x41, 8), "DRM_IOCTL_AMDGPU_GEM_MMAP", true);
	check_name(DEV_DRI, IOWR('d', 0x42, 16), "DRM_IOCTL_AMDGPU_CTX", false);
	check_name(DEV_DRI, IOWR('d', 0x44, 24), "DRM_IOCTL_AMDGPU_CS", true);
	check_name(DEV_DRI, IOW('d', 0x45, 32), "DRM_IOCTL_AMDGPU_INFO", false);
	check_name(DEV_DRI, IOW('d', 0x48, 40), "DRM_IOCTL_AMDGPU_GEM_VA", true);
	check_name(DEV_DRI, IOWR('d', 0x49, 32), "DRM_IOCTL_AMDGPU_WAIT_CS", false);
	/* i915, including same-nr pairs told apart by dir or size */
	check_name(DEV_DRI, IOWR('d', 0x46, 16), "DRM_IOCTL_I915_GETPARAM", false);
	check_name(DEV_DRI, IOW('d', 0x69, 64), "DRM_IOCTL_I915_GEM_EXECBUFFER2", true);
	check_name(DEV_DRI, IOWR('d', 0x69, 64), "DRM_IOCTL_I915_GEM_EXECBUFFER2_WR", true);
	check_name(DEV_DRI, IOWR('d', 0x64, 16), "DRM_IOCTL_I915_GEM_MMAP_GTT", true);
	check_name(DEV_DRI, IOWR('d', 0x64, 32), "DRM_IOCTL_I915_GEM_MMAP_OFFSET", true);
	check_name(DEV_DRI, IOWR('d', 0x7c, 24), "DRM_IOCTL_I915_GEM_CREATE_EXT", true);
	check_name(DEV_DRI, IOWR('d', 0x6d, 16), "DRM_IOCTL_I915_GEM_CONTEXT_CREATE_EXT", false);
	/* driver range: exact match only */
	check_name(DEV_DRI, IOWR('d', 0x40, 24), NULL, false);
	check_name(DEV_DRI, IOWR('d', 0x99, 16), NULL, false);
	check_name(DEV_DRI, IOWR('e', 0x00, 64), NULL, false);
	check_name(DEV_DRI, IOWR('d', 0x04, 16), NULL, false);	/* GET_MAP, left out */
	/* accel: DRM core only */
	check_name(DEV_ACCEL, IOWR('d', 0x00, 64), "DRM_IOCTL_VERSION", false);
	check_name(DEV_ACCEL, IOWR('d', 0x40, 32), NULL, false);
#if GENERIC_IOC
	check_name(DEV_DRI, 0xc0406400UL, "DRM_IOCTL_VERSION", false);
	check_name(DEV_DRI, 0xc0186444UL, "DRM_IOCTL_AMDGPU_CS", true);
	check_name(DEV_DRI, 0x40406469UL, "DRM_IOCTL_I915_GEM_EXECBUFFER2", true);
	check_name(DEV_DRI, 0xc01864cfUL, "DRM_IOCTL_SYNCOBJ_EVENTFD", false);
	check_name(DEV_DRI, 0xc00864d0UL, "DRM_IOCTL_MODE_CLOSEFB", false);
	if (sizeof(long) > 4)
		check_name(DEV_DRI, 0xffffffffc0406400UL, "DRM_IOCTL_VERSION", false);
#endif
}

static void test_names_kfd(void)
{
	check_name(DEV_KFD, IOR('K', 0x01, 8), "AMDKFD_IOC_GET_VERSION", false);
	check_name(DEV_KFD, IOWR('K', 0x02, 88), "AMDKFD_IOC_CREATE_QUEUE", false);
	check_name(DEV_KFD, IOWR('K', 0x03, 8), "AMDKFD_IOC_DESTROY_QUEUE", false);
	check_name(DEV_KFD, IOWR('K', 0x16, 40), "AMDKFD_IOC_ALLOC_MEMORY_OF_GPU", true);
	check_name(DEV_KFD, IOW('K', 0x17, 8), "AMDKFD_IOC_FREE_MEMORY_OF_GPU", false);
	check_name(DEV_KFD, IOWR('K', 0x18, 24), "AMDKFD_IOC_MAP_MEMORY_TO_GPU", true);
	check_name(DEV_KFD, IOWR('K', 0x19, 24), "AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU", true);
	check_name(DEV_KFD, IOWR('K', 0x20, 24), "AMDKFD_IOC_SVM", true);
	check_name(DEV_KFD, IOWR('K', 0x26, 48), "AMDKFD_IOC_DBG_TRAP", false);
	check_name(DEV_KFD, IOWR('K', 0x00, 8), NULL, false);
	check_name(DEV_KFD, IOWR('K', 0x7f, 8), NULL, false);
	check_name(DEV_KFD, IOWR('d', 0x00, 64), NULL, false);
#if GENERIC_IOC
	check_name(DEV_KFD, 0x80084b01UL, "AMDKFD_IOC_GET_VERSION", false);
	check_name(DEV_KFD, 0xc0284b16UL, "AMDKFD_IOC_ALLOC_MEMORY_OF_GPU", true);
	check_name(DEV_KFD, 0xc0184b20UL, "AMDKFD_IOC_SVM", true);
#endif
}

static void test_names_rdma_habana(void)
{
	check_name(DEV_INFINIBAND, IOWR(0x1b, 1, 24), "RDMA_VERBS_IOCTL", false);
	check_name(DEV_INFINIBAND, IOWR(0x1b, 1, 28), "IB_USER_MAD_REGISTER_AGENT", false);
	check_name(DEV_INFINIBAND, IO(0x1b, 3), "IB_USER_MAD_ENABLE_PKEY", false);
	check_name(DEV_INFINIBAND, IOWR(0x1b, 1, 32), NULL, false);
	check_name(DEV_HABANA, IOWR('H', 0x01, 24), "HL_IOCTL_INFO", false);
	check_name(DEV_HABANA, IOWR('H', 0x03, 48), "HL_IOCTL_CS", true);
	check_name(DEV_HABANA, IOWR('H', 0x05, 40), "HL_IOCTL_MEMORY", true);
	check_name(DEV_HABANA, IOWR('H', 0x07, 40), NULL, false);
}

static void test_names_edges(void)
{
	bool xfer = true;

	check_name(DEV_NONE, IOWR('d', 0x00, 64), NULL, false);
	check_name(DEV_NONE, 51, NULL, false);
	check_name((enum dev_class)DEV_CLASS_COUNT, 51, NULL, false);
	check_name((enum dev_class)1000, 51, NULL, false);
	CHECK_STREQ(ioctl_name(DEV_NVIDIA_UVM, 51, NULL), "UVM_MIGRATE",
		    "is_transfer may be NULL");
	CHECK(ioctl_name(DEV_NVIDIA_UVM, 8, &xfer) == NULL && !xfer,
	      "unknown request clears is_transfer");
}

static void test_tables(void)
{
	static const struct {
		enum dev_class cls;
		const char *what;
	} counted[] = {
		{ DEV_NVIDIA_UVM, "nvidia-uvm" },
		{ DEV_NVIDIACTL, "nvidia RM" },
		{ DEV_NVIDIA_MODESET, "nvidia-modeset" },
		{ DEV_DRI, "dri (core+amdgpu+i915)" },
		{ DEV_ACCEL, "accel (DRM core)" },
		{ DEV_KFD, "kfd" },
		{ DEV_INFINIBAND, "infiniband" },
		{ DEV_HABANA, "habana" },
	};
	size_t i;

	CHECK(ioctl_decode_check_tables() == 0,
	      "tables sorted, unique, no entry shadowed (%d bad)",
	      ioctl_decode_check_tables());
	for (i = 0; i < sizeof(counted) / sizeof(counted[0]); i++)
		CHECK(ioctl_name_count(counted[i].cls) > 0, "%s table: %u names",
		      counted[i].what, ioctl_name_count(counted[i].cls));
	CHECK(ioctl_name_count(DEV_NONE) == 0, "no names for DEV_NONE");
	CHECK(ioctl_name_count(DEV_NVIDIA_CAPS) == 0, "no names for nvidia-caps");
}

/*
 * Compare with the real uAPI headers where this machine has them: the
 * decoder spells DRM numbers out because drm/drm.h is not always there.
 */
#if __has_include(<libdrm/drm.h>) && __has_include(<libdrm/amdgpu_drm.h>) && \
	__has_include(<libdrm/i915_drm.h>)
#include <libdrm/drm.h>
#include <libdrm/amdgpu_drm.h>
#include <libdrm/i915_drm.h>
#define HAVE_LIBDRM_HEADERS 1
#endif

#if __has_include(<drm/drm.h>) && __has_include(<linux/kfd_ioctl.h>)
#include <linux/kfd_ioctl.h>
#define HAVE_KFD_HEADER 1
#endif

#define HDR(cls, m) { cls, m, #m }

static void test_against_headers(void)
{
	static const struct {
		enum dev_class cls;
		unsigned long req;
		const char *name;
	} hdr[] = {
#ifdef HAVE_LIBDRM_HEADERS
		HDR(DEV_DRI, DRM_IOCTL_VERSION),
		HDR(DEV_DRI, DRM_IOCTL_GET_UNIQUE),
		HDR(DEV_DRI, DRM_IOCTL_GET_MAGIC),
		HDR(DEV_DRI, DRM_IOCTL_IRQ_BUSID),
		HDR(DEV_DRI, DRM_IOCTL_SET_VERSION),
		HDR(DEV_DRI, DRM_IOCTL_GEM_CLOSE),
		HDR(DEV_DRI, DRM_IOCTL_GEM_FLINK),
		HDR(DEV_DRI, DRM_IOCTL_GEM_OPEN),
		HDR(DEV_DRI, DRM_IOCTL_GET_CAP),
		HDR(DEV_DRI, DRM_IOCTL_SET_CLIENT_CAP),
		HDR(DEV_DRI, DRM_IOCTL_AUTH_MAGIC),
		HDR(DEV_DRI, DRM_IOCTL_SET_MASTER),
		HDR(DEV_DRI, DRM_IOCTL_DROP_MASTER),
		HDR(DEV_DRI, DRM_IOCTL_PRIME_HANDLE_TO_FD),
		HDR(DEV_DRI, DRM_IOCTL_PRIME_FD_TO_HANDLE),
		HDR(DEV_DRI, DRM_IOCTL_WAIT_VBLANK),
		HDR(DEV_DRI, DRM_IOCTL_MODE_GETRESOURCES),
		HDR(DEV_DRI, DRM_IOCTL_MODE_ATOMIC),
		HDR(DEV_DRI, DRM_IOCTL_MODE_CREATE_DUMB),
		HDR(DEV_DRI, DRM_IOCTL_MODE_MAP_DUMB),
		HDR(DEV_DRI, DRM_IOCTL_SYNCOBJ_CREATE),
		HDR(DEV_DRI, DRM_IOCTL_SYNCOBJ_WAIT),
		HDR(DEV_DRI, DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL),
		HDR(DEV_DRI, DRM_IOCTL_MODE_GETFB2),
		HDR(DEV_DRI, DRM_IOCTL_AMDGPU_GEM_CREATE),
		HDR(DEV_DRI, DRM_IOCTL_AMDGPU_GEM_MMAP),
		HDR(DEV_DRI, DRM_IOCTL_AMDGPU_CTX),
		HDR(DEV_DRI, DRM_IOCTL_AMDGPU_BO_LIST),
		HDR(DEV_DRI, DRM_IOCTL_AMDGPU_CS),
		HDR(DEV_DRI, DRM_IOCTL_AMDGPU_INFO),
		HDR(DEV_DRI, DRM_IOCTL_AMDGPU_GEM_METADATA),
		HDR(DEV_DRI, DRM_IOCTL_AMDGPU_GEM_WAIT_IDLE),
		HDR(DEV_DRI, DRM_IOCTL_AMDGPU_GEM_VA),
		HDR(DEV_DRI, DRM_IOCTL_AMDGPU_WAIT_CS),
		HDR(DEV_DRI, DRM_IOCTL_AMDGPU_GEM_OP),
		HDR(DEV_DRI, DRM_IOCTL_AMDGPU_GEM_USERPTR),
		HDR(DEV_DRI, DRM_IOCTL_AMDGPU_WAIT_FENCES),
		HDR(DEV_DRI, DRM_IOCTL_AMDGPU_VM),
		HDR(DEV_DRI, DRM_IOCTL_AMDGPU_FENCE_TO_HANDLE),
		HDR(DEV_DRI, DRM_IOCTL_AMDGPU_SCHED),
		HDR(DEV_DRI, DRM_IOCTL_I915_GETPARAM),
		HDR(DEV_DRI, DRM_IOCTL_I915_SETPARAM),
		HDR(DEV_DRI, DRM_IOCTL_I915_GEM_EXECBUFFER2),
		HDR(DEV_DRI, DRM_IOCTL_I915_GEM_EXECBUFFER2_WR),
		HDR(DEV_DRI, DRM_IOCTL_I915_GEM_BUSY),
		HDR(DEV_DRI, DRM_IOCTL_I915_GEM_SET_CACHING),
		HDR(DEV_DRI, DRM_IOCTL_I915_GEM_GET_CACHING),
		HDR(DEV_DRI, DRM_IOCTL_I915_GEM_THROTTLE),
		HDR(DEV_DRI, DRM_IOCTL_I915_GEM_CREATE),
		HDR(DEV_DRI, DRM_IOCTL_I915_GEM_CREATE_EXT),
		HDR(DEV_DRI, DRM_IOCTL_I915_GEM_PREAD),
		HDR(DEV_DRI, DRM_IOCTL_I915_GEM_PWRITE),
		HDR(DEV_DRI, DRM_IOCTL_I915_GEM_MMAP),
		HDR(DEV_DRI, DRM_IOCTL_I915_GEM_MMAP_GTT),
		HDR(DEV_DRI, DRM_IOCTL_I915_GEM_MMAP_OFFSET),
		HDR(DEV_DRI, DRM_IOCTL_I915_GEM_SET_DOMAIN),
		HDR(DEV_DRI, DRM_IOCTL_I915_GEM_SW_FINISH),
		HDR(DEV_DRI, DRM_IOCTL_I915_GEM_SET_TILING),
		HDR(DEV_DRI, DRM_IOCTL_I915_GEM_GET_TILING),
		HDR(DEV_DRI, DRM_IOCTL_I915_GEM_GET_APERTURE),
		HDR(DEV_DRI, DRM_IOCTL_I915_GET_PIPE_FROM_CRTC_ID),
		HDR(DEV_DRI, DRM_IOCTL_I915_GEM_MADVISE),
		HDR(DEV_DRI, DRM_IOCTL_I915_GEM_WAIT),
		HDR(DEV_DRI, DRM_IOCTL_I915_GEM_CONTEXT_CREATE),
		HDR(DEV_DRI, DRM_IOCTL_I915_GEM_CONTEXT_CREATE_EXT),
		HDR(DEV_DRI, DRM_IOCTL_I915_GEM_CONTEXT_DESTROY),
		HDR(DEV_DRI, DRM_IOCTL_I915_REG_READ),
		HDR(DEV_DRI, DRM_IOCTL_I915_GET_RESET_STATS),
		HDR(DEV_DRI, DRM_IOCTL_I915_GEM_USERPTR),
		HDR(DEV_DRI, DRM_IOCTL_I915_GEM_CONTEXT_GETPARAM),
		HDR(DEV_DRI, DRM_IOCTL_I915_GEM_CONTEXT_SETPARAM),
		HDR(DEV_DRI, DRM_IOCTL_I915_PERF_OPEN),
		HDR(DEV_DRI, DRM_IOCTL_I915_PERF_ADD_CONFIG),
		HDR(DEV_DRI, DRM_IOCTL_I915_PERF_REMOVE_CONFIG),
		HDR(DEV_DRI, DRM_IOCTL_I915_QUERY),
		HDR(DEV_DRI, DRM_IOCTL_I915_GEM_VM_CREATE),
		HDR(DEV_DRI, DRM_IOCTL_I915_GEM_VM_DESTROY),
#endif
#ifdef HAVE_KFD_HEADER
		HDR(DEV_KFD, AMDKFD_IOC_GET_VERSION),
		HDR(DEV_KFD, AMDKFD_IOC_CREATE_QUEUE),
		HDR(DEV_KFD, AMDKFD_IOC_ALLOC_MEMORY_OF_GPU),
		HDR(DEV_KFD, AMDKFD_IOC_MAP_MEMORY_TO_GPU),
		HDR(DEV_KFD, AMDKFD_IOC_SVM),
		HDR(DEV_KFD, AMDKFD_IOC_AVAILABLE_MEMORY),
#endif
		{ DEV_NONE, 0, NULL },	/* keeps the array non-empty */
	};
	size_t i, n = sizeof(hdr) / sizeof(hdr[0]) - 1;

	if (n == 0)
		printf("# no libdrm or kfd headers here: header cross-check skipped\n");
	for (i = 0; i < n; i++)
		CHECK_STREQ(ioctl_name(hdr[i].cls, hdr[i].req, NULL), hdr[i].name,
			    "header value of %s decodes to its name", hdr[i].name);
}

int main(void)
{
	test_classify_nodes();
	test_classify_lookalikes();
	test_classify_hostile();
	test_classify_bounded_reads();
	test_class_names();
	test_split();
	test_dir_names();
	test_names_uvm();
	test_names_nvidia_rm();
	test_names_drm();
	test_names_kfd();
	test_names_rdma_habana();
	test_names_edges();
	test_tables();
	test_against_headers();
	return check_done();
}
