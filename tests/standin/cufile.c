// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Stand-in libcufile.so.0: the cuFile (GPUDirect Storage) calls that
 * dftrace-bpf probes, with their real names and signatures.
 *
 * It works the way cuFile's compatibility mode does: a registered handle
 * keeps the file's fd, and a read or write is a pread(2) or pwrite(2) of
 * that fd into or out of the "device" buffer (host memory, as in the
 * stand-in libcuda), so the syscall happens too. The async calls and the
 * batch calls do their I/O at once; a batch keeps its completions until
 * cuFileBatchIOGetStatus reaps them.
 *
 * With $STANDIN_CUFILE_GDS set it works the way GPUDirect Storage does
 * with its kernel driver: no syscall moves the bytes (the stand-in keeps
 * them in memory, per handle, as storage the DMA would reach), so the
 * cuFile call is the only trace of them.
 *
 * No exported function calls another: each call is one probe hit.
 */
#define GPUAPI __attribute__((visibility("default"), noinline))
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "gpuapi.h"

struct registered_file {
	int fd;
	char *gds;		/* $STANDIN_CUFILE_GDS: the file's bytes */
	size_t gds_len;
};

/* A batch's slots, and of its completed I/Os those not yet reaped. */
struct batch {
	unsigned int max, done, reaped;
	CUfileIOEvents_t ev[];
};

static int driver_open;
static long registered_bufs;

static CUfileError_t status(int err)
{
	CUfileError_t e = { err, CUDA_SUCCESS };

	return e;
}

/* GDS mode: the bytes in memory, grown as written; a read past the end
 * is short, as a file's. */
static ssize_t gds_io(struct registered_file *h, int write, char *p, size_t size, off_t offset)
{
	size_t end = offset + size;

	if (write) {
		if (end > h->gds_len) {
			char *g = realloc(h->gds, end);

			if (!g)
				return -1;
			memset(g + h->gds_len, 0, end - h->gds_len);
			h->gds = g;
			h->gds_len = end;
		}
		memcpy(h->gds + offset, p, size);
		return size;
	}
	if ((size_t)offset >= h->gds_len)
		return 0;
	if (end > h->gds_len)
		size = h->gds_len - offset;
	memcpy(p, h->gds + offset, size);
	return size;
}

/* Reads or writes SIZE bytes at OFFSET of the file, from or into
 * BUF + BUF_OFFSET; a short count only at the end of the file. Returns
 * the bytes done, -1 with errno set, or minus a cuFile error. */
static ssize_t file_io(CUfileHandle_t fh, int write, void *buf, size_t size,
		       off_t offset, off_t buf_offset)
{
	struct registered_file *h = fh;
	char *p = (char *)buf + buf_offset;
	size_t done = 0;

	if (!driver_open)
		return -CU_FILE_DRIVER_NOT_INITIALIZED;
	if (!h)
		return -CU_FILE_HANDLE_NOT_REGISTERED;
	if (!buf || offset < 0 || buf_offset < 0)
		return -CU_FILE_INVALID_VALUE;
	if (getenv("STANDIN_CUFILE_GDS"))
		return gds_io(h, write, p, size, offset);
	while (done < size) {
		ssize_t n = write ? pwrite(h->fd, p + done, size - done, offset + done)
				  : pread(h->fd, p + done, size - done, offset + done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			break;
		done += n;
	}
	return done;
}

/* The async form: arguments by pointer, the count to *DONE_P. */
static CUfileError_t file_io_async(CUfileHandle_t fh, int write, void *buf, size_t *size_p,
				   off_t *offset_p, off_t *buf_offset_p, ssize_t *done_p)
{
	if (!size_p || !offset_p || !buf_offset_p || !done_p)
		return status(CU_FILE_INVALID_VALUE);
	*done_p = file_io(fh, write, buf, *size_p, *offset_p, *buf_offset_p);
	return status(*done_p < -1 ? -*done_p : CU_FILE_SUCCESS);
}

GPUAPI CUfileError_t cuFileDriverOpen(void)
{
	driver_open = 1;
	return status(CU_FILE_SUCCESS);
}

static CUfileError_t close_driver(void)
{
	if (!driver_open)
		return status(CU_FILE_DRIVER_NOT_INITIALIZED);
	driver_open = 0;
	return status(CU_FILE_SUCCESS);
}

GPUAPI CUfileError_t cuFileDriverClose(void)
{
	return close_driver();
}

/* What cufile.h's cuFileDriverClose is a macro for in later releases:
 * the library exports both. */
GPUAPI CUfileError_t cuFileDriverClose_v2(void)
{
	return close_driver();
}

GPUAPI CUfileError_t cuFileHandleRegister(CUfileHandle_t *fh, CUfileDescr_t *descr)
{
	struct registered_file *h;

	if (!driver_open)
		return status(CU_FILE_DRIVER_NOT_INITIALIZED);
	if (!fh || !descr || descr->type != CU_FILE_HANDLE_TYPE_OPAQUE_FD ||
	    fcntl(descr->handle.fd, F_GETFL) < 0)
		return status(CU_FILE_INVALID_VALUE);
	h = calloc(1, sizeof(*h));
	if (!h)
		return status(CU_FILE_INTERNAL_ERROR);
	h->fd = descr->handle.fd;
	*fh = h;
	return status(CU_FILE_SUCCESS);
}

GPUAPI void cuFileHandleDeregister(CUfileHandle_t fh)
{
	struct registered_file *h = fh;

	if (h)
		free(h->gds);
	free(h);
}

GPUAPI CUfileError_t cuFileBufRegister(const void *bufPtr_base, size_t length, int flags)
{
	if (!driver_open)
		return status(CU_FILE_DRIVER_NOT_INITIALIZED);
	if (!bufPtr_base || !length)
		return status(CU_FILE_INVALID_VALUE);
	registered_bufs++;
	return status(CU_FILE_SUCCESS);
}

GPUAPI CUfileError_t cuFileBufDeregister(const void *bufPtr_base)
{
	if (!bufPtr_base || registered_bufs == 0)
		return status(CU_FILE_MEMORY_NOT_REGISTERED);
	registered_bufs--;
	return status(CU_FILE_SUCCESS);
}

GPUAPI ssize_t cuFileRead(CUfileHandle_t fh, void *bufPtr_base, size_t size,
			  off_t file_offset, off_t bufPtr_offset)
{
	return file_io(fh, 0, bufPtr_base, size, file_offset, bufPtr_offset);
}

GPUAPI ssize_t cuFileWrite(CUfileHandle_t fh, const void *bufPtr_base, size_t size,
			   off_t file_offset, off_t bufPtr_offset)
{
	return file_io(fh, 1, (void *)bufPtr_base, size, file_offset, bufPtr_offset);
}

GPUAPI CUfileError_t cuFileReadAsync(CUfileHandle_t fh, void *bufPtr_base, size_t *size_p,
				     off_t *file_offset_p, off_t *bufPtr_offset_p,
				     ssize_t *bytes_read_p, CUstream stream)
{
	return file_io_async(fh, 0, bufPtr_base, size_p, file_offset_p, bufPtr_offset_p,
			     bytes_read_p);
}

GPUAPI CUfileError_t cuFileWriteAsync(CUfileHandle_t fh, void *bufPtr_base, size_t *size_p,
				      off_t *file_offset_p, off_t *bufPtr_offset_p,
				      ssize_t *bytes_written_p, CUstream stream)
{
	return file_io_async(fh, 1, bufPtr_base, size_p, file_offset_p, bufPtr_offset_p,
			     bytes_written_p);
}

GPUAPI CUfileError_t cuFileBatchIOSetUp(CUfileBatchHandle_t *batch_idp, unsigned nr)
{
	struct batch *b;

	if (!driver_open)
		return status(CU_FILE_DRIVER_NOT_INITIALIZED);
	if (!batch_idp || nr == 0 || nr > 1024)
		return status(CU_FILE_INVALID_VALUE);
	b = calloc(1, sizeof(*b) + nr * sizeof(b->ev[0]));
	if (!b)
		return status(CU_FILE_INTERNAL_ERROR);
	b->max = nr;
	*batch_idp = b;
	return status(CU_FILE_SUCCESS);
}

/* Does every I/O now; each completes, or fails with its error in ret. */
GPUAPI CUfileError_t cuFileBatchIOSubmit(CUfileBatchHandle_t batch_idp, unsigned nr,
					 CUfileIOParams_t *iocbp, unsigned int flags)
{
	struct batch *b = batch_idp;

	if (!b || !iocbp || nr > b->max - b->done)
		return status(CU_FILE_INVALID_VALUE);
	for (unsigned int i = 0; i < nr; i++) {
		CUfileIOParams_t *io = &iocbp[i];
		CUfileIOEvents_t *ev = &b->ev[b->done++];
		ssize_t n = -CU_FILE_INVALID_VALUE;

		if (io->mode == CUFILE_BATCH && (io->opcode == CUFILE_READ ||
						 io->opcode == CUFILE_WRITE))
			n = file_io(io->fh, io->opcode == CUFILE_WRITE, io->u.batch.devPtr_base,
				    io->u.batch.size, io->u.batch.file_offset,
				    io->u.batch.devPtr_offset);
		ev->cookie = io->cookie;
		ev->status = n >= 0 ? CUFILE_COMPLETE : CUFILE_FAILED;
		ev->ret = n >= 0 ? (size_t)n : (size_t)(n == -1 ? errno : -n);
	}
	return status(CU_FILE_SUCCESS);
}

/* Up to *nr completions not yet reaped; their number to *nr. */
GPUAPI CUfileError_t cuFileBatchIOGetStatus(CUfileBatchHandle_t batch_idp, unsigned min_nr,
					    unsigned *nr, CUfileIOEvents_t *iocbp,
					    struct timespec *timeout)
{
	struct batch *b = batch_idp;
	unsigned int n = 0;

	if (!b || !nr || !iocbp || min_nr > *nr)
		return status(CU_FILE_INVALID_VALUE);
	while (n < *nr && b->reaped < b->done)
		iocbp[n++] = b->ev[b->reaped++];
	*nr = n;
	return status(CU_FILE_SUCCESS);
}

GPUAPI void cuFileBatchIODestroy(CUfileBatchHandle_t batch_idp)
{
	free(batch_idp);
}
