/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * I/O submitted now and done later, which syscalls do not show whole:
 * io_uring requests (io_uring_submit_req, io_uring_complete: a record at
 * each, which user space pairs by the request) and Linux AIO iocbs
 * (decoded at io_submit's return, paired here with io_getevents' events
 * by the iocb's address: one record per iocb). What, on which file, when
 * submitted, how long, what result.
 * A ring's SQPOLL thread and io-wq workers are threads of its owner
 * process: their requests are charged to the thread that made the ring.
 * Its programs are off where this kernel lacks their hooks (io_uring
 * from 6.1 on; AIO is syscalls only).
 */
#ifndef ASYNCIO_BPF_H
#define ASYNCIO_BPF_H

#include "core.bpf.h"

/* At sys_exit, for the calls handled whole here (kind
 * DFT_SC_AIO_SUBMIT and after): no syscall record of their own. */
int async_exit(struct dft_task *st, __u32 kind, long ret);

#endif
