/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Name the ioctls that traced processes send to accelerator device nodes.
 *
 * The tracer knows the path behind each fd; dev_classify() turns that path
 * into a device class and ioctl_name() turns (class, request) into the
 * driver's own name for the request, e.g. ("/dev/nvidia-uvm", 51) ->
 * "UVM_MIGRATE". Unknown requests give NULL so the caller can fall back to
 * printing the raw _IOC fields from ioctl_split().
 */
#ifndef MODEL_IOCTL_DECODE_H
#define MODEL_IOCTL_DECODE_H

#include <stdbool.h>

enum dev_class {
	DEV_NONE = 0,
	DEV_NVIDIA,		/* /dev/nvidiaN: one GPU, RM ioctls */
	DEV_NVIDIACTL,		/* /dev/nvidiactl: RM control node */
	DEV_NVIDIA_UVM,		/* /dev/nvidia-uvm, /dev/nvidia-uvm-tools */
	DEV_NVIDIA_MODESET,	/* /dev/nvidia-modeset */
	DEV_NVIDIA_CAPS,	/* /dev/nvidia-caps/nvidia-capN (MIG) */
	DEV_DRI,		/* /dev/dri/{card,renderD,controlD}N */
	DEV_KFD,		/* /dev/kfd: AMD compute */
	DEV_ACCEL,		/* /dev/accel/accelN: DRM accel subsystem */
	DEV_INFINIBAND,		/* /dev/infiniband/{uverbsN,rdma_cm,umadN,issmN} */
	DEV_HABANA,		/* /dev/hlN, /dev/hl_controlDN */
	DEV_CLASS_COUNT
};

/* Class of the device node at path; DEV_NONE for anything else or NULL.
 * The path may hold any bytes: matching stops at the first byte that
 * cannot be part of a known node name, so at most a few dozen bytes of
 * path are ever read. */
enum dev_class dev_classify(const char *path);

/* Short name: "nvidia", "nvidiactl", "nvidia-uvm", "nvidia-modeset",
 * "nvidia-caps", "dri", "kfd", "accel", "infiniband", "habana".
 * NULL for DEV_NONE and out-of-range values. */
const char *dev_class_name(enum dev_class c);

/* The four _IOC fields of a request. */
struct ioctl_req {
	unsigned dir;	/* _IOC_NONE / _IOC_WRITE / _IOC_READ bits */
	unsigned type;	/* magic, e.g. 'd' for DRM */
	unsigned nr;
	unsigned size;	/* bytes of the argument struct */
};

/* Split request into its _IOC fields. The kernel takes the request as a
 * 32-bit unsigned int, so bits above 31 (e.g. sign extension) are ignored.
 * Some drivers (nvidia-uvm) use plain numbers that are not _IOC encoded;
 * the fields are then meaningless and ioctl_name() is the way to decode. */
void ioctl_split(unsigned long request, struct ioctl_req *r);

/* False for classes whose requests are plain numbers (nvidia-uvm), where
 * the _IOC fields would be noise. */
bool ioctl_class_uses_ioc(enum dev_class c);

/* Driver name of request on a device of class c, or NULL if unknown.
 * If is_transfer is not NULL it is set to true when the call allocates,
 * maps/unmaps or moves data, or submits work that does (a data-path
 * call), and false for control calls and unknown requests. */
const char *ioctl_name(enum dev_class c, unsigned long request,
		       bool *is_transfer);

/* "none", "w", "r" or "rw" for an _IOC direction, seen from the caller:
 * _IOC_WRITE means user space writes the argument to the kernel.
 * "?" for a value that is no valid direction. */
const char *ioctl_dir_name(unsigned dir);

/* Self-check of the decode tables for the unit test: every table sorted
 * with unique keys and every entry found by ioctl_name() for its class
 * (no entry shadowed by another table). Returns the number of bad
 * entries, 0 when all is well. */
int ioctl_decode_check_tables(void);

/* Number of named requests for class c (for tests and reports). */
unsigned ioctl_name_count(enum dev_class c);

#endif /* MODEL_IOCTL_DECODE_H */
