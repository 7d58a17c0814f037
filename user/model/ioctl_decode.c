// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Device classes and ioctl names for accelerator device nodes.
 *
 * Tables are static const arrays searched by binary search. How a request
 * is matched follows how the kernel driver itself dispatches it:
 *
 *   MATCH_NR     type byte and nr only: DRM core, amdkfd, nvidia RM and
 *                habanalabs index their handler table by _IOC_NR and accept
 *                any argument size, so a caller built against older or
 *                newer headers (or a 32-bit caller) reaches the same handler.
 *   MATCH_EXACT  full 32-bit request: DRM driver-private ioctls share the
 *                nr range 0x40-0x9f between drivers and the path does not
 *                say which driver is behind /dev/dri/renderD128, so only
 *                dir+size tell amdgpu and i915 apart; uverbs and umad
 *                compare the full request too.
 *   MATCH_PLAIN  plain integer: nvidia-uvm does not use _IOC encoding.
 *
 * DRM and KFD numbers are spelled out here rather than taken from
 * <drm/drm.h> and <linux/kfd_ioctl.h>: Debian's linux-libc-dev does not
 * ship drm/drm.h (libdrm-dev puts it under /usr/include/libdrm), and
 * kfd_ioctl.h includes it. Sizes are those of the LP64 structs; the unit
 * test compares the results with the header values.
 */
#include <stddef.h>
#include <stdint.h>
#include <linux/ioctl.h>
#include <rdma/rdma_user_ioctl.h>

#include "model/ioctl_decode.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* ---- device classification ------------------------------------------ */

/* Longest decimal node number accepted: minors are 20 bits, so 10 digits
 * is generous, and it bounds how far a hostile "/dev/nvidia999..." is read. */
#define NODE_NUMBER_MAX_DIGITS 10

enum node_tail {
	TAIL_EXACT,	/* the name ends right after the prefix */
	TAIL_NUMBER,	/* the prefix is followed by a decimal number */
};

struct node_rule {
	const char *prefix;	/* after "/dev/" */
	enum node_tail tail;
	enum dev_class cls;
};

/* Real node names only: look-alikes such as "/dev/nvidiafoo" or
 * "/dev/dri/card0x" must not be taken for a GPU. */
static const struct node_rule node_rules[] = {
	{ "nvidiactl",			TAIL_EXACT,  DEV_NVIDIACTL },
	{ "nvidia-uvm",			TAIL_EXACT,  DEV_NVIDIA_UVM },
	{ "nvidia-uvm-tools",		TAIL_EXACT,  DEV_NVIDIA_UVM },
	{ "nvidia-modeset",		TAIL_EXACT,  DEV_NVIDIA_MODESET },
	{ "nvidia-caps/nvidia-cap",	TAIL_NUMBER, DEV_NVIDIA_CAPS },
	{ "nvidia",			TAIL_NUMBER, DEV_NVIDIA },
	{ "dri/card",			TAIL_NUMBER, DEV_DRI },
	{ "dri/renderD",		TAIL_NUMBER, DEV_DRI },
	{ "dri/controlD",		TAIL_NUMBER, DEV_DRI },
	{ "kfd",			TAIL_EXACT,  DEV_KFD },
	{ "accel/accel",		TAIL_NUMBER, DEV_ACCEL },
	{ "infiniband/uverbs",		TAIL_NUMBER, DEV_INFINIBAND },
	{ "infiniband/rdma_cm",		TAIL_EXACT,  DEV_INFINIBAND },
	{ "infiniband/umad",		TAIL_NUMBER, DEV_INFINIBAND },
	{ "infiniband/issm",		TAIL_NUMBER, DEV_INFINIBAND },
	{ "hl",				TAIL_NUMBER, DEV_HABANA },
	{ "hl_controlD",		TAIL_NUMBER, DEV_HABANA },
};

/* Rest of s after prefix, or NULL. Compares byte by byte and stops at the
 * first difference, so it never reads past the NUL of a shorter s. */
static const char *skip_prefix(const char *s, const char *prefix)
{
	while (*prefix)
		if (*s++ != *prefix++)
			return NULL;
	return s;
}

/* True if s is 1..NODE_NUMBER_MAX_DIGITS decimal digits and nothing else. */
static bool is_node_number(const char *s)
{
	int n = 0;

	while (n <= NODE_NUMBER_MAX_DIGITS && s[n] >= '0' && s[n] <= '9')
		n++;
	return n > 0 && n <= NODE_NUMBER_MAX_DIGITS && s[n] == '\0';
}

static bool rule_matches(const struct node_rule *rule, const char *name)
{
	const char *tail = skip_prefix(name, rule->prefix);

	if (!tail)
		return false;
	if (rule->tail == TAIL_EXACT)
		return *tail == '\0';
	return is_node_number(tail);
}

enum dev_class dev_classify(const char *path)
{
	const char *name;
	size_t i;

	if (!path)
		return DEV_NONE;
	name = skip_prefix(path, "/dev/");
	if (!name)
		return DEV_NONE;
	for (i = 0; i < ARRAY_SIZE(node_rules); i++)
		if (rule_matches(&node_rules[i], name))
			return node_rules[i].cls;
	return DEV_NONE;
}

static const char *const class_names[DEV_CLASS_COUNT] = {
	[DEV_NVIDIA]		= "nvidia",
	[DEV_NVIDIACTL]		= "nvidiactl",
	[DEV_NVIDIA_UVM]	= "nvidia-uvm",
	[DEV_NVIDIA_MODESET]	= "nvidia-modeset",
	[DEV_NVIDIA_CAPS]	= "nvidia-caps",
	[DEV_DRI]		= "dri",
	[DEV_KFD]		= "kfd",
	[DEV_ACCEL]		= "accel",
	[DEV_INFINIBAND]	= "infiniband",
	[DEV_HABANA]		= "habana",
};

const char *dev_class_name(enum dev_class c)
{
	if ((unsigned)c >= DEV_CLASS_COUNT)
		return NULL;
	return class_names[c];
}

/* ---- _IOC fields ------------------------------------------------------ */

void ioctl_split(unsigned long request, struct ioctl_req *r)
{
	uint32_t cmd = (uint32_t)request;

	if (!r)
		return;
	r->dir = _IOC_DIR(cmd);
	r->type = _IOC_TYPE(cmd);
	r->nr = _IOC_NR(cmd);
	r->size = _IOC_SIZE(cmd);
}

const char *ioctl_dir_name(unsigned dir)
{
	if (dir == _IOC_NONE)
		return "none";
	if (dir == _IOC_WRITE)
		return "w";
	if (dir == _IOC_READ)
		return "r";
	if (dir == (_IOC_READ | _IOC_WRITE))
		return "rw";
	return "?";
}

/* ---- decode tables ----------------------------------------------------- */

enum match_kind { MATCH_NR, MATCH_EXACT, MATCH_PLAIN };

struct ioctl_entry {
	uint32_t code;		/* nr, full request or plain number: see table */
	const char *name;
	bool transfer;
};

struct ioctl_table {
	const struct ioctl_entry *v;
	size_t n;
	enum match_kind match;
	unsigned type;		/* MATCH_NR: the type byte every entry has */
};

#define XFER true
#define CTRL false

/*
 * nvidia-uvm: plain numbers from open-gpu-kernel-modules
 * kernel-open/nvidia-uvm/uvm_ioctl.h (UVM_IOCTL_BASE(i) is i on Linux) and
 * uvm_linux_ioctl.h (UVM_INITIALIZE, UVM_DEINITIALIZE). Partial: the
 * UVM_TEST_* ioctls (built-in tests only) and the Windows-only 21/22
 * (UVM_REGION_SET_BACKING/UNSET_BACKING) are left out. Sorted by number.
 */
static const struct ioctl_entry uvm_ioctls[] = {
	{ 1,  "UVM_RESERVE_VA", CTRL },
	{ 2,  "UVM_RELEASE_VA", CTRL },
	{ 3,  "UVM_REGION_COMMIT", XFER },
	{ 4,  "UVM_REGION_DECOMMIT", XFER },
	{ 5,  "UVM_REGION_SET_STREAM", CTRL },
	{ 6,  "UVM_SET_STREAM_RUNNING", CTRL },
	{ 7,  "UVM_SET_STREAM_STOPPED", CTRL },
	{ 9,  "UVM_RUN_TEST", CTRL },
	{ 10, "UVM_ADD_SESSION", CTRL },
	{ 11, "UVM_REMOVE_SESSION", CTRL },
	{ 12, "UVM_ENABLE_COUNTERS", CTRL },
	{ 13, "UVM_MAP_COUNTER", CTRL },
	{ 14, "UVM_CREATE_EVENT_QUEUE", CTRL },
	{ 15, "UVM_REMOVE_EVENT_QUEUE", CTRL },
	{ 16, "UVM_MAP_EVENT_QUEUE", CTRL },
	{ 17, "UVM_EVENT_CTRL", CTRL },
	{ 18, "UVM_REGISTER_MPS_SERVER", CTRL },
	{ 19, "UVM_REGISTER_MPS_CLIENT", CTRL },
	{ 20, "UVM_GET_GPU_UUID_TABLE", CTRL },
	{ 23, "UVM_CREATE_RANGE_GROUP", CTRL },
	{ 24, "UVM_DESTROY_RANGE_GROUP", CTRL },
	{ 25, "UVM_REGISTER_GPU_VASPACE", CTRL },
	{ 26, "UVM_UNREGISTER_GPU_VASPACE", CTRL },
	{ 27, "UVM_REGISTER_CHANNEL", CTRL },
	{ 28, "UVM_UNREGISTER_CHANNEL", CTRL },
	{ 29, "UVM_ENABLE_PEER_ACCESS", CTRL },
	{ 30, "UVM_DISABLE_PEER_ACCESS", CTRL },
	{ 31, "UVM_SET_RANGE_GROUP", CTRL },
	{ 33, "UVM_MAP_EXTERNAL_ALLOCATION", XFER },
	{ 34, "UVM_FREE", CTRL },
	{ 35, "UVM_MEM_MAP", XFER },
	{ 36, "UVM_DEBUG_ACCESS_MEMORY", XFER },
	{ 37, "UVM_REGISTER_GPU", CTRL },
	{ 38, "UVM_UNREGISTER_GPU", CTRL },
	{ 39, "UVM_PAGEABLE_MEM_ACCESS", CTRL },
	{ 40, "UVM_PREVENT_MIGRATION_RANGE_GROUPS", CTRL },
	{ 41, "UVM_ALLOW_MIGRATION_RANGE_GROUPS", CTRL },
	{ 42, "UVM_SET_PREFERRED_LOCATION", CTRL },
	{ 43, "UVM_UNSET_PREFERRED_LOCATION", CTRL },
	{ 44, "UVM_ENABLE_READ_DUPLICATION", CTRL },
	{ 45, "UVM_DISABLE_READ_DUPLICATION", CTRL },
	{ 46, "UVM_SET_ACCESSED_BY", CTRL },
	{ 47, "UVM_UNSET_ACCESSED_BY", CTRL },
	{ 51, "UVM_MIGRATE", XFER },
	{ 53, "UVM_MIGRATE_RANGE_GROUP", XFER },
	{ 54, "UVM_ENABLE_SYSTEM_WIDE_ATOMICS", CTRL },
	{ 55, "UVM_DISABLE_SYSTEM_WIDE_ATOMICS", CTRL },
	{ 56, "UVM_TOOLS_INIT_EVENT_TRACKER", CTRL },
	{ 57, "UVM_TOOLS_SET_NOTIFICATION_THRESHOLD", CTRL },
	{ 58, "UVM_TOOLS_EVENT_QUEUE_ENABLE_EVENTS", CTRL },
	{ 59, "UVM_TOOLS_EVENT_QUEUE_DISABLE_EVENTS", CTRL },
	{ 60, "UVM_TOOLS_ENABLE_COUNTERS", CTRL },
	{ 61, "UVM_TOOLS_DISABLE_COUNTERS", CTRL },
	{ 62, "UVM_TOOLS_READ_PROCESS_MEMORY", XFER },
	{ 63, "UVM_TOOLS_WRITE_PROCESS_MEMORY", XFER },
	{ 64, "UVM_TOOLS_GET_PROCESSOR_UUID_TABLE", CTRL },
	{ 65, "UVM_MAP_DYNAMIC_PARALLELISM_REGION", XFER },
	{ 66, "UVM_UNMAP_EXTERNAL", XFER },
	{ 67, "UVM_TOOLS_FLUSH_EVENTS", CTRL },
	{ 68, "UVM_ALLOC_SEMAPHORE_POOL", XFER },
	{ 69, "UVM_CLEAN_UP_ZOMBIE_RESOURCES", CTRL },
	{ 70, "UVM_PAGEABLE_MEM_ACCESS_ON_GPU", CTRL },
	{ 71, "UVM_POPULATE_PAGEABLE", XFER },
	{ 72, "UVM_VALIDATE_VA_RANGE", CTRL },
	{ 73, "UVM_CREATE_EXTERNAL_RANGE", CTRL },
	{ 74, "UVM_MAP_EXTERNAL_SPARSE", XFER },
	{ 75, "UVM_MM_INITIALIZE", CTRL },
	{ 76, "UVM_TOOLS_INIT_EVENT_TRACKER_V2", CTRL },
	{ 77, "UVM_TOOLS_GET_PROCESSOR_UUID_TABLE_V2", CTRL },
	{ 78, "UVM_ALLOC_DEVICE_P2P", XFER },
	{ 79, "UVM_CLEAR_ALL_ACCESS_COUNTERS", CTRL },
	{ 2047, "UVM_IS_8_SUPPORTED", CTRL },
	{ 0x30000001, "UVM_INITIALIZE", CTRL },
	{ 0x30000002, "UVM_DEINITIALIZE", CTRL },
};

/*
 * nvidia RM escapes on /dev/nvidiactl and /dev/nvidiaN: _IOC type 'F'
 * (NV_IOCTL_MAGIC), matched by nr. Numbers from open-gpu-kernel-modules
 * src/nvidia/arch/nvalloc/unix/include/nv_escape.h (RM, 0x27-0x5f) and
 * kernel-open/common/inc/nv-ioctl-numbers.h + nv-ioctl-numa.h
 * (NV_IOCTL_BASE 200 + n). NV_ESC_IOCTL_XFER_CMD carries the real escape
 * inside its argument, which a request number alone cannot show.
 */
static const struct ioctl_entry nv_rm_ioctls[] = {
	{ 0x27, "NV_ESC_RM_ALLOC_MEMORY", CTRL },
	{ 0x28, "NV_ESC_RM_ALLOC_OBJECT", CTRL },
	{ 0x29, "NV_ESC_RM_FREE", CTRL },
	{ 0x2a, "NV_ESC_RM_CONTROL", CTRL },
	{ 0x2b, "NV_ESC_RM_ALLOC", CTRL },
	{ 0x32, "NV_ESC_RM_CONFIG_GET", CTRL },
	{ 0x33, "NV_ESC_RM_CONFIG_SET", CTRL },
	{ 0x34, "NV_ESC_RM_DUP_OBJECT", CTRL },
	{ 0x35, "NV_ESC_RM_SHARE", CTRL },
	{ 0x37, "NV_ESC_RM_CONFIG_GET_EX", CTRL },
	{ 0x38, "NV_ESC_RM_CONFIG_SET_EX", CTRL },
	{ 0x39, "NV_ESC_RM_I2C_ACCESS", CTRL },
	{ 0x41, "NV_ESC_RM_IDLE_CHANNELS", CTRL },
	{ 0x4a, "NV_ESC_RM_VID_HEAP_CONTROL", CTRL },
	{ 0x4d, "NV_ESC_RM_ACCESS_REGISTRY", CTRL },
	{ 0x4e, "NV_ESC_RM_MAP_MEMORY", XFER },
	{ 0x4f, "NV_ESC_RM_UNMAP_MEMORY", XFER },
	{ 0x52, "NV_ESC_RM_GET_EVENT_DATA", CTRL },
	{ 0x54, "NV_ESC_RM_ALLOC_CONTEXT_DMA2", CTRL },
	{ 0x56, "NV_ESC_RM_ADD_VBLANK_CALLBACK", CTRL },
	{ 0x57, "NV_ESC_RM_MAP_MEMORY_DMA", XFER },
	{ 0x58, "NV_ESC_RM_UNMAP_MEMORY_DMA", XFER },
	{ 0x59, "NV_ESC_RM_BIND_CONTEXT_DMA", CTRL },
	{ 0x5c, "NV_ESC_RM_EXPORT_OBJECT_TO_FD", CTRL },
	{ 0x5d, "NV_ESC_RM_IMPORT_OBJECT_FROM_FD", CTRL },
	{ 0x5e, "NV_ESC_RM_UPDATE_DEVICE_MAPPING_INFO", CTRL },
	{ 0x5f, "NV_ESC_RM_LOCKLESS_DIAGNOSTIC", CTRL },
	{ 200, "NV_ESC_CARD_INFO", CTRL },
	{ 201, "NV_ESC_REGISTER_FD", CTRL },
	{ 206, "NV_ESC_ALLOC_OS_EVENT", CTRL },
	{ 207, "NV_ESC_FREE_OS_EVENT", CTRL },
	{ 209, "NV_ESC_STATUS_CODE", CTRL },
	{ 210, "NV_ESC_CHECK_VERSION_STR", CTRL },
	{ 211, "NV_ESC_IOCTL_XFER_CMD", CTRL },
	{ 212, "NV_ESC_ATTACH_GPUS_TO_FD", CTRL },
	{ 213, "NV_ESC_QUERY_DEVICE_INTR", CTRL },
	{ 214, "NV_ESC_SYS_PARAMS", CTRL },
	{ 215, "NV_ESC_NUMA_INFO", CTRL },
	{ 216, "NV_ESC_SET_NUMA_STATUS", CTRL },
	{ 217, "NV_ESC_EXPORT_TO_DMABUF_FD", CTRL },
	{ 218, "NV_ESC_WAIT_OPEN_COMPLETE", CTRL },
};

/* nvidia-modeset: every NVKMS request goes through one ioctl whose
 * argument names the real command (nvkms-ioctl.h:
 * _IOWR('m', 0, struct NvKmsIoctlParams), 16 bytes). */
static const struct ioctl_entry nvkms_ioctls[] = {
	{ _IOC(_IOC_READ | _IOC_WRITE, 'm', 0, 16), "NVKMS_IOCTL_IOWR", CTRL },
};

/*
 * DRM core ioctls (drm/drm.h), type 'd', matched by nr as drm_ioctl()
 * does. Legacy DRI1 ioctls (contexts, AGP, SG, DMA buffers, locks) are
 * left out. Also used for /dev/accel, whose drivers sit on drm_ioctl().
 */
static const struct ioctl_entry drm_core_ioctls[] = {
	{ 0x00, "DRM_IOCTL_VERSION", CTRL },
	{ 0x01, "DRM_IOCTL_GET_UNIQUE", CTRL },
	{ 0x02, "DRM_IOCTL_GET_MAGIC", CTRL },
	{ 0x03, "DRM_IOCTL_IRQ_BUSID", CTRL },
	{ 0x07, "DRM_IOCTL_SET_VERSION", CTRL },
	{ 0x08, "DRM_IOCTL_MODESET_CTL", CTRL },
	{ 0x09, "DRM_IOCTL_GEM_CLOSE", CTRL },
	{ 0x0a, "DRM_IOCTL_GEM_FLINK", CTRL },
	{ 0x0b, "DRM_IOCTL_GEM_OPEN", CTRL },
	{ 0x0c, "DRM_IOCTL_GET_CAP", CTRL },
	{ 0x0d, "DRM_IOCTL_SET_CLIENT_CAP", CTRL },
	{ 0x10, "DRM_IOCTL_SET_UNIQUE", CTRL },
	{ 0x11, "DRM_IOCTL_AUTH_MAGIC", CTRL },
	{ 0x1e, "DRM_IOCTL_SET_MASTER", CTRL },
	{ 0x1f, "DRM_IOCTL_DROP_MASTER", CTRL },
	{ 0x2d, "DRM_IOCTL_PRIME_HANDLE_TO_FD", CTRL },
	{ 0x2e, "DRM_IOCTL_PRIME_FD_TO_HANDLE", CTRL },
	{ 0x3a, "DRM_IOCTL_WAIT_VBLANK", CTRL },
	{ 0x3b, "DRM_IOCTL_CRTC_GET_SEQUENCE", CTRL },
	{ 0x3c, "DRM_IOCTL_CRTC_QUEUE_SEQUENCE", CTRL },
	{ 0xa0, "DRM_IOCTL_MODE_GETRESOURCES", CTRL },
	{ 0xa1, "DRM_IOCTL_MODE_GETCRTC", CTRL },
	{ 0xa2, "DRM_IOCTL_MODE_SETCRTC", CTRL },
	{ 0xa3, "DRM_IOCTL_MODE_CURSOR", CTRL },
	{ 0xa4, "DRM_IOCTL_MODE_GETGAMMA", CTRL },
	{ 0xa5, "DRM_IOCTL_MODE_SETGAMMA", CTRL },
	{ 0xa6, "DRM_IOCTL_MODE_GETENCODER", CTRL },
	{ 0xa7, "DRM_IOCTL_MODE_GETCONNECTOR", CTRL },
	{ 0xaa, "DRM_IOCTL_MODE_GETPROPERTY", CTRL },
	{ 0xab, "DRM_IOCTL_MODE_SETPROPERTY", CTRL },
	{ 0xac, "DRM_IOCTL_MODE_GETPROPBLOB", CTRL },
	{ 0xad, "DRM_IOCTL_MODE_GETFB", CTRL },
	{ 0xae, "DRM_IOCTL_MODE_ADDFB", CTRL },
	{ 0xaf, "DRM_IOCTL_MODE_RMFB", CTRL },
	{ 0xb0, "DRM_IOCTL_MODE_PAGE_FLIP", CTRL },
	{ 0xb1, "DRM_IOCTL_MODE_DIRTYFB", CTRL },
	{ 0xb2, "DRM_IOCTL_MODE_CREATE_DUMB", XFER },
	{ 0xb3, "DRM_IOCTL_MODE_MAP_DUMB", XFER },
	{ 0xb4, "DRM_IOCTL_MODE_DESTROY_DUMB", CTRL },
	{ 0xb5, "DRM_IOCTL_MODE_GETPLANERESOURCES", CTRL },
	{ 0xb6, "DRM_IOCTL_MODE_GETPLANE", CTRL },
	{ 0xb7, "DRM_IOCTL_MODE_SETPLANE", CTRL },
	{ 0xb8, "DRM_IOCTL_MODE_ADDFB2", CTRL },
	{ 0xb9, "DRM_IOCTL_MODE_OBJ_GETPROPERTIES", CTRL },
	{ 0xba, "DRM_IOCTL_MODE_OBJ_SETPROPERTY", CTRL },
	{ 0xbb, "DRM_IOCTL_MODE_CURSOR2", CTRL },
	{ 0xbc, "DRM_IOCTL_MODE_ATOMIC", CTRL },
	{ 0xbd, "DRM_IOCTL_MODE_CREATEPROPBLOB", CTRL },
	{ 0xbe, "DRM_IOCTL_MODE_DESTROYPROPBLOB", CTRL },
	{ 0xbf, "DRM_IOCTL_SYNCOBJ_CREATE", CTRL },
	{ 0xc0, "DRM_IOCTL_SYNCOBJ_DESTROY", CTRL },
	{ 0xc1, "DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD", CTRL },
	{ 0xc2, "DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE", CTRL },
	{ 0xc3, "DRM_IOCTL_SYNCOBJ_WAIT", CTRL },
	{ 0xc4, "DRM_IOCTL_SYNCOBJ_RESET", CTRL },
	{ 0xc5, "DRM_IOCTL_SYNCOBJ_SIGNAL", CTRL },
	{ 0xc6, "DRM_IOCTL_MODE_CREATE_LEASE", CTRL },
	{ 0xc7, "DRM_IOCTL_MODE_LIST_LESSEES", CTRL },
	{ 0xc8, "DRM_IOCTL_MODE_GET_LEASE", CTRL },
	{ 0xc9, "DRM_IOCTL_MODE_REVOKE_LEASE", CTRL },
	{ 0xca, "DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT", CTRL },
	{ 0xcb, "DRM_IOCTL_SYNCOBJ_QUERY", CTRL },
	{ 0xcc, "DRM_IOCTL_SYNCOBJ_TRANSFER", CTRL },
	{ 0xcd, "DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL", CTRL },
	{ 0xce, "DRM_IOCTL_MODE_GETFB2", CTRL },
	{ 0xcf, "DRM_IOCTL_SYNCOBJ_EVENTFD", CTRL },
	{ 0xd0, "DRM_IOCTL_MODE_CLOSEFB", CTRL },
	{ 0xd1, "DRM_IOCTL_SET_CLIENT_NAME", CTRL },
};

/* Full DRM requests, as the DRM_IO* macros of drm/drm.h build them. */
#define DRM_COMMAND_BASE_ 0x40
#define DRM_IO_(nr) _IOC(_IOC_NONE, 'd', (nr), 0)
#define DRM_IOW_(nr, size) _IOC(_IOC_WRITE, 'd', (nr), (size))
#define DRM_IOWR_(nr, size) _IOC(_IOC_READ | _IOC_WRITE, 'd', (nr), (size))
#define DRM_IOR_(nr, size) _IOC(_IOC_READ, 'd', (nr), (size))
#define DRV_IOR(n, size) DRM_IOR_(DRM_COMMAND_BASE_ + (n), (size))
#define DRV_IOW(n, size) DRM_IOW_(DRM_COMMAND_BASE_ + (n), (size))
#define DRV_IOWR(n, size) DRM_IOWR_(DRM_COMMAND_BASE_ + (n), (size))
#define DRV_IO(n) DRM_IO_(DRM_COMMAND_BASE_ + (n))

/* amdgpu (drm/amdgpu_drm.h), exact requests in nr order. */
static const struct ioctl_entry amdgpu_ioctls[] = {
	{ DRV_IOWR(0x00, 32),  "DRM_IOCTL_AMDGPU_GEM_CREATE", XFER },
	{ DRV_IOWR(0x01, 8),   "DRM_IOCTL_AMDGPU_GEM_MMAP", XFER },
	{ DRV_IOWR(0x02, 16),  "DRM_IOCTL_AMDGPU_CTX", CTRL },
	{ DRV_IOWR(0x03, 24),  "DRM_IOCTL_AMDGPU_BO_LIST", CTRL },
	{ DRV_IOWR(0x04, 24),  "DRM_IOCTL_AMDGPU_CS", XFER },
	{ DRV_IOW(0x05, 32),   "DRM_IOCTL_AMDGPU_INFO", CTRL },
	{ DRV_IOWR(0x06, 288), "DRM_IOCTL_AMDGPU_GEM_METADATA", CTRL },
	{ DRV_IOWR(0x07, 16),  "DRM_IOCTL_AMDGPU_GEM_WAIT_IDLE", CTRL },
	{ DRV_IOW(0x08, 40),   "DRM_IOCTL_AMDGPU_GEM_VA", XFER },
	{ DRV_IOWR(0x09, 32),  "DRM_IOCTL_AMDGPU_WAIT_CS", CTRL },
	{ DRV_IOWR(0x10, 16),  "DRM_IOCTL_AMDGPU_GEM_OP", CTRL },
	{ DRV_IOWR(0x11, 24),  "DRM_IOCTL_AMDGPU_GEM_USERPTR", XFER },
	{ DRV_IOWR(0x12, 24),  "DRM_IOCTL_AMDGPU_WAIT_FENCES", CTRL },
	{ DRV_IOWR(0x13, 8),   "DRM_IOCTL_AMDGPU_VM", CTRL },
	{ DRV_IOWR(0x14, 32),  "DRM_IOCTL_AMDGPU_FENCE_TO_HANDLE", CTRL },
	{ DRV_IOW(0x15, 16),   "DRM_IOCTL_AMDGPU_SCHED", CTRL },
};

/* i915 (drm/i915_drm.h), exact requests in nr order; DRI1-era ioctls
 * left out. Same-nr pairs are ordered by full request. */
static const struct ioctl_entry i915_ioctls[] = {
	/* drm_i915_getparam_t holds a pointer: 8 bytes from 32-bit callers */
	{ DRV_IOWR(0x06, 8),   "DRM_IOCTL_I915_GETPARAM", CTRL },
	{ DRV_IOWR(0x06, 16),  "DRM_IOCTL_I915_GETPARAM", CTRL },
	{ DRV_IOW(0x07, 8),    "DRM_IOCTL_I915_SETPARAM", CTRL },
	{ DRV_IOWR(0x17, 8),   "DRM_IOCTL_I915_GEM_BUSY", CTRL },
	{ DRV_IO(0x18),        "DRM_IOCTL_I915_GEM_THROTTLE", CTRL },
	{ DRV_IOWR(0x1b, 16),  "DRM_IOCTL_I915_GEM_CREATE", XFER },
	{ DRV_IOW(0x1c, 32),   "DRM_IOCTL_I915_GEM_PREAD", XFER },
	{ DRV_IOW(0x1d, 32),   "DRM_IOCTL_I915_GEM_PWRITE", XFER },
	{ DRV_IOWR(0x1e, 40),  "DRM_IOCTL_I915_GEM_MMAP", XFER },
	{ DRV_IOW(0x1f, 12),   "DRM_IOCTL_I915_GEM_SET_DOMAIN", CTRL },
	{ DRV_IOW(0x20, 4),    "DRM_IOCTL_I915_GEM_SW_FINISH", CTRL },
	{ DRV_IOWR(0x21, 16),  "DRM_IOCTL_I915_GEM_SET_TILING", CTRL },
	{ DRV_IOWR(0x22, 16),  "DRM_IOCTL_I915_GEM_GET_TILING", CTRL },
	{ DRV_IOR(0x23, 16),   "DRM_IOCTL_I915_GEM_GET_APERTURE", CTRL },
	{ DRV_IOWR(0x24, 16),  "DRM_IOCTL_I915_GEM_MMAP_GTT", XFER },
	{ DRV_IOWR(0x24, 32),  "DRM_IOCTL_I915_GEM_MMAP_OFFSET", XFER },
	{ DRV_IOWR(0x25, 8),   "DRM_IOCTL_I915_GET_PIPE_FROM_CRTC_ID", CTRL },
	{ DRV_IOWR(0x26, 12),  "DRM_IOCTL_I915_GEM_MADVISE", CTRL },
	{ DRV_IOW(0x29, 64),   "DRM_IOCTL_I915_GEM_EXECBUFFER2", XFER },
	{ DRV_IOWR(0x29, 64),  "DRM_IOCTL_I915_GEM_EXECBUFFER2_WR", XFER },
	{ DRV_IOWR(0x2c, 16),  "DRM_IOCTL_I915_GEM_WAIT", CTRL },
	{ DRV_IOWR(0x2d, 8),   "DRM_IOCTL_I915_GEM_CONTEXT_CREATE", CTRL },
	{ DRV_IOWR(0x2d, 16),  "DRM_IOCTL_I915_GEM_CONTEXT_CREATE_EXT", CTRL },
	{ DRV_IOW(0x2e, 8),    "DRM_IOCTL_I915_GEM_CONTEXT_DESTROY", CTRL },
	{ DRV_IOW(0x2f, 8),    "DRM_IOCTL_I915_GEM_SET_CACHING", CTRL },
	{ DRV_IOWR(0x30, 8),   "DRM_IOCTL_I915_GEM_GET_CACHING", CTRL },
	{ DRV_IOWR(0x31, 16),  "DRM_IOCTL_I915_REG_READ", CTRL },
	{ DRV_IOWR(0x32, 24),  "DRM_IOCTL_I915_GET_RESET_STATS", CTRL },
	{ DRV_IOWR(0x33, 24),  "DRM_IOCTL_I915_GEM_USERPTR", XFER },
	{ DRV_IOWR(0x34, 24),  "DRM_IOCTL_I915_GEM_CONTEXT_GETPARAM", CTRL },
	{ DRV_IOWR(0x35, 24),  "DRM_IOCTL_I915_GEM_CONTEXT_SETPARAM", CTRL },
	{ DRV_IOW(0x36, 16),   "DRM_IOCTL_I915_PERF_OPEN", CTRL },
	{ DRV_IOW(0x37, 72),   "DRM_IOCTL_I915_PERF_ADD_CONFIG", CTRL },
	{ DRV_IOW(0x38, 8),    "DRM_IOCTL_I915_PERF_REMOVE_CONFIG", CTRL },
	{ DRV_IOWR(0x39, 16),  "DRM_IOCTL_I915_QUERY", CTRL },
	{ DRV_IOWR(0x3a, 16),  "DRM_IOCTL_I915_GEM_VM_CREATE", CTRL },
	{ DRV_IOW(0x3b, 16),   "DRM_IOCTL_I915_GEM_VM_DESTROY", CTRL },
	{ DRV_IOWR(0x3c, 24),  "DRM_IOCTL_I915_GEM_CREATE_EXT", XFER },
};

/*
 * amdkfd (linux/kfd_ioctl.h), type 'K', matched by nr as kfd_ioctl()
 * does. 0x24-0x26 are newer than Debian 12's header (kernel 6.5+).
 */
static const struct ioctl_entry kfd_ioctls[] = {
	{ 0x01, "AMDKFD_IOC_GET_VERSION", CTRL },
	{ 0x02, "AMDKFD_IOC_CREATE_QUEUE", CTRL },
	{ 0x03, "AMDKFD_IOC_DESTROY_QUEUE", CTRL },
	{ 0x04, "AMDKFD_IOC_SET_MEMORY_POLICY", CTRL },
	{ 0x05, "AMDKFD_IOC_GET_CLOCK_COUNTERS", CTRL },
	{ 0x06, "AMDKFD_IOC_GET_PROCESS_APERTURES", CTRL },
	{ 0x07, "AMDKFD_IOC_UPDATE_QUEUE", CTRL },
	{ 0x08, "AMDKFD_IOC_CREATE_EVENT", CTRL },
	{ 0x09, "AMDKFD_IOC_DESTROY_EVENT", CTRL },
	{ 0x0a, "AMDKFD_IOC_SET_EVENT", CTRL },
	{ 0x0b, "AMDKFD_IOC_RESET_EVENT", CTRL },
	{ 0x0c, "AMDKFD_IOC_WAIT_EVENTS", CTRL },
	{ 0x0d, "AMDKFD_IOC_DBG_REGISTER_DEPRECATED", CTRL },
	{ 0x0e, "AMDKFD_IOC_DBG_UNREGISTER_DEPRECATED", CTRL },
	{ 0x0f, "AMDKFD_IOC_DBG_ADDRESS_WATCH_DEPRECATED", CTRL },
	{ 0x10, "AMDKFD_IOC_DBG_WAVE_CONTROL_DEPRECATED", CTRL },
	{ 0x11, "AMDKFD_IOC_SET_SCRATCH_BACKING_VA", CTRL },
	{ 0x12, "AMDKFD_IOC_GET_TILE_CONFIG", CTRL },
	{ 0x13, "AMDKFD_IOC_SET_TRAP_HANDLER", CTRL },
	{ 0x14, "AMDKFD_IOC_GET_PROCESS_APERTURES_NEW", CTRL },
	{ 0x15, "AMDKFD_IOC_ACQUIRE_VM", CTRL },
	{ 0x16, "AMDKFD_IOC_ALLOC_MEMORY_OF_GPU", XFER },
	{ 0x17, "AMDKFD_IOC_FREE_MEMORY_OF_GPU", CTRL },
	{ 0x18, "AMDKFD_IOC_MAP_MEMORY_TO_GPU", XFER },
	{ 0x19, "AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU", XFER },
	{ 0x1a, "AMDKFD_IOC_SET_CU_MASK", CTRL },
	{ 0x1b, "AMDKFD_IOC_GET_QUEUE_WAVE_STATE", CTRL },
	{ 0x1c, "AMDKFD_IOC_GET_DMABUF_INFO", CTRL },
	{ 0x1d, "AMDKFD_IOC_IMPORT_DMABUF", CTRL },
	{ 0x1e, "AMDKFD_IOC_ALLOC_QUEUE_GWS", CTRL },
	{ 0x1f, "AMDKFD_IOC_SMI_EVENTS", CTRL },
	{ 0x20, "AMDKFD_IOC_SVM", XFER },
	{ 0x21, "AMDKFD_IOC_SET_XNACK_MODE", CTRL },
	{ 0x22, "AMDKFD_IOC_CRIU_OP", CTRL },
	{ 0x23, "AMDKFD_IOC_AVAILABLE_MEMORY", CTRL },
	{ 0x24, "AMDKFD_IOC_EXPORT_DMABUF", CTRL },
	{ 0x25, "AMDKFD_IOC_RUNTIME_ENABLE", CTRL },
	{ 0x26, "AMDKFD_IOC_DBG_TRAP", CTRL },
};

/*
 * /dev/infiniband: uverbs takes every verb through RDMA_VERBS_IOCTL (the
 * method id is in the argument); umad has its own few. Both are stable
 * uAPI from linux-libc-dev, compared as full requests. rdma_cm and the
 * legacy uverbs commands use write(), not ioctl.
 */
static const struct ioctl_entry rdma_ioctls[] = {
	{ RDMA_VERBS_IOCTL, "RDMA_VERBS_IOCTL", CTRL },
	{ IB_USER_MAD_REGISTER_AGENT, "IB_USER_MAD_REGISTER_AGENT", CTRL },
	{ IB_USER_MAD_UNREGISTER_AGENT, "IB_USER_MAD_UNREGISTER_AGENT", CTRL },
	{ IB_USER_MAD_ENABLE_PKEY, "IB_USER_MAD_ENABLE_PKEY", CTRL },
	{ IB_USER_MAD_REGISTER_AGENT2, "IB_USER_MAD_REGISTER_AGENT2", CTRL },
};

/* habanalabs on /dev/hlN (misc/habanalabs.h up to kernel 6.2, and the
 * out-of-tree driver): type 'H', matched by nr as hl_ioctl() does. The
 * in-tree driver moved to /dev/accel with DRM ioctls in 6.3. */
static const struct ioctl_entry habana_ioctls[] = {
	{ 0x01, "HL_IOCTL_INFO", CTRL },
	{ 0x02, "HL_IOCTL_CB", CTRL },
	{ 0x03, "HL_IOCTL_CS", XFER },
	{ 0x04, "HL_IOCTL_WAIT_CS", CTRL },
	{ 0x05, "HL_IOCTL_MEMORY", XFER },
	{ 0x06, "HL_IOCTL_DEBUG", CTRL },
};

#define TABLE(arr, how, magic) { arr, ARRAY_SIZE(arr), how, magic }

static const struct ioctl_table uvm_tables[] = {
	TABLE(uvm_ioctls, MATCH_PLAIN, 0),
};
static const struct ioctl_table nv_rm_tables[] = {
	TABLE(nv_rm_ioctls, MATCH_NR, 'F'),
};
static const struct ioctl_table nvkms_tables[] = {
	TABLE(nvkms_ioctls, MATCH_EXACT, 0),
};
/* Core first: driver tables only hold nr 0x40-0x9f, where core has none. */
static const struct ioctl_table dri_tables[] = {
	TABLE(drm_core_ioctls, MATCH_NR, 'd'),
	TABLE(amdgpu_ioctls, MATCH_EXACT, 0),
	TABLE(i915_ioctls, MATCH_EXACT, 0),
};
static const struct ioctl_table accel_tables[] = {
	TABLE(drm_core_ioctls, MATCH_NR, 'd'),
};
static const struct ioctl_table kfd_tables[] = {
	TABLE(kfd_ioctls, MATCH_NR, 'K'),
};
static const struct ioctl_table rdma_tables[] = {
	TABLE(rdma_ioctls, MATCH_EXACT, 0),
};
static const struct ioctl_table habana_tables[] = {
	TABLE(habana_ioctls, MATCH_NR, 'H'),
};

struct class_tables {
	const struct ioctl_table *t;
	size_t n;
};

#define TABLES(arr) { arr, ARRAY_SIZE(arr) }

/* DEV_NVIDIA_CAPS nodes are only opened to prove a capability. */
static const struct class_tables tables_of_class[DEV_CLASS_COUNT] = {
	[DEV_NVIDIA]		= TABLES(nv_rm_tables),
	[DEV_NVIDIACTL]		= TABLES(nv_rm_tables),
	[DEV_NVIDIA_UVM]	= TABLES(uvm_tables),
	[DEV_NVIDIA_MODESET]	= TABLES(nvkms_tables),
	[DEV_DRI]		= TABLES(dri_tables),
	[DEV_KFD]		= TABLES(kfd_tables),
	[DEV_ACCEL]		= TABLES(accel_tables),
	[DEV_INFINIBAND]	= TABLES(rdma_tables),
	[DEV_HABANA]		= TABLES(habana_tables),
};

bool ioctl_class_uses_ioc(enum dev_class c)
{
	return c != DEV_NVIDIA_UVM;
}

/* ---- lookup ------------------------------------------------------------ */

/* Order of entries within a table. Exact tables are kept in nr order, as
 * the headers list them, with the full request breaking ties. */
static uint64_t sort_key(const struct ioctl_table *t, uint32_t code)
{
	if (t->match == MATCH_EXACT)
		return ((uint64_t)_IOC_NR(code) << 32) | code;
	return code;
}

/* The code a request is looked up by, or false if it cannot be in t. */
static bool request_code(const struct ioctl_table *t, uint32_t cmd,
			 uint32_t *code)
{
	if (t->match != MATCH_NR) {
		*code = cmd;
		return true;
	}
	if (_IOC_TYPE(cmd) != t->type)
		return false;
	*code = _IOC_NR(cmd);
	return true;
}

static const struct ioctl_entry *table_find(const struct ioctl_table *t,
					    uint32_t cmd)
{
	size_t lo = 0, hi = t->n;
	uint32_t code;
	uint64_t key;

	if (!request_code(t, cmd, &code))
		return NULL;
	key = sort_key(t, code);
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t k = sort_key(t, t->v[mid].code);

		if (k == key)
			return &t->v[mid];
		if (k < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static const struct ioctl_entry *class_find(enum dev_class c, uint32_t cmd)
{
	const struct class_tables *ct;
	size_t i;

	if ((unsigned)c >= DEV_CLASS_COUNT)
		return NULL;
	ct = &tables_of_class[c];
	for (i = 0; i < ct->n; i++) {
		const struct ioctl_entry *e = table_find(&ct->t[i], cmd);

		if (e)
			return e;
	}
	return NULL;
}

const char *ioctl_name(enum dev_class c, unsigned long request,
		       bool *is_transfer)
{
	/* the kernel sees the request as a 32-bit unsigned int */
	const struct ioctl_entry *e = class_find(c, (uint32_t)request);

	if (is_transfer)
		*is_transfer = e ? e->transfer : false;
	return e ? e->name : NULL;
}

/* ---- self-check -------------------------------------------------------- */

/* A request that table t must decode to entry e. */
static uint32_t entry_request(const struct ioctl_table *t,
			      const struct ioctl_entry *e)
{
	if (t->match == MATCH_NR)
		return _IOC(_IOC_NONE, t->type, e->code, 0);
	return e->code;
}

static int check_table(enum dev_class c, const struct ioctl_table *t)
{
	int bad = 0;
	size_t i;

	for (i = 0; i < t->n; i++) {
		const struct ioctl_entry *e = &t->v[i];

		if (i > 0 && sort_key(t, t->v[i - 1].code) >= sort_key(t, e->code))
			bad++;
		else if (t->match == MATCH_NR && e->code > _IOC_NRMASK)
			bad++;
		else if (class_find(c, entry_request(t, e)) != e)
			bad++;
	}
	return bad;
}

int ioctl_decode_check_tables(void)
{
	int bad = 0;
	unsigned c;
	size_t i;

	for (c = 0; c < DEV_CLASS_COUNT; c++)
		for (i = 0; i < tables_of_class[c].n; i++)
			bad += check_table(c, &tables_of_class[c].t[i]);
	return bad;
}

unsigned ioctl_name_count(enum dev_class c)
{
	unsigned n = 0;
	size_t i;

	if ((unsigned)c >= DEV_CLASS_COUNT)
		return 0;
	for (i = 0; i < tables_of_class[c].n; i++)
		n += tables_of_class[c].t[i].n;
	return n;
}
