// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Stand-in libnccl.so.2: the NCCL calls that dftrace-bpf probes, with
 * their real names and signatures, in one process with no peers.
 *
 * A communicator is a malloc'd {rank, nranks}. A collective does this
 * rank's share of the host work on its buffers ("device" memory is host
 * memory, as in the stand-in libcuda): all-reduce and reduce copy the
 * input (the others contribute zeros), a broadcast copies at the root and
 * fills elsewhere, all-gather places this rank's block, reduce-scatter
 * takes it, send sums the bytes it would send, receive fills its buffer.
 * Group calls count their nesting, as NCCL's do.
 *
 * No exported function calls another: each call is one probe hit.
 */
#define GPUAPI __attribute__((visibility("default"), noinline))
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "gpuapi.h"

#define RECV_FILL 0x5a /* what a rank receives from its stand-in peers */

struct ncclComm {
	int rank, nranks;
	unsigned long calls;
};

static int group_depth;
static volatile unsigned long sent_sum; /* keeps the send's reads */

/* Bytes of one element; 0 for a type NCCL does not have. */
static size_t type_size(ncclDataType_t t)
{
	switch (t) {
	case ncclInt8:
	case ncclUint8:
	case ncclFloat8e4m3:
	case ncclFloat8e5m2:
		return 1;
	case ncclFloat16:
	case ncclBfloat16:
		return 2;
	case ncclInt32:
	case ncclUint32:
	case ncclFloat32:
		return 4;
	case ncclInt64:
	case ncclUint64:
	case ncclFloat64:
		return 8;
	default:
		return 0;
	}
}

#define NO_OP ((ncclRedOp_t)-1) /* a call that takes no reduction */
#define NO_PEER INT_MIN          /* a call that takes no root or peer */

/* Checks a call on COMM of COUNT elements of type T, with reduction OP
 * and root or peer PEER; their bytes to *N. */
static ncclResult_t check(ncclComm_t comm, size_t count, ncclDataType_t t,
			  ncclRedOp_t op, int peer, size_t *n)
{
	size_t sz = type_size(t);

	if (!comm || !sz || count > (size_t)-1 / sz / (size_t)comm->nranks)
		return ncclInvalidArgument;
	if (op != NO_OP && (op < ncclSum || op >= ncclNumOps))
		return ncclInvalidArgument;
	if (peer != NO_PEER && (peer < 0 || peer >= comm->nranks))
		return ncclInvalidArgument;
	*n = count * sz;
	comm->calls++;
	return ncclSuccess;
}

static ncclResult_t new_comm(ncclComm_t *comm, int nranks, int rank)
{
	struct ncclComm *c;

	if (!comm || nranks < 1 || rank < 0 || rank >= nranks)
		return ncclInvalidArgument;
	c = calloc(1, sizeof(*c));
	if (!c)
		return ncclInvalidUsage;
	c->rank = rank;
	c->nranks = nranks;
	*comm = c;
	return ncclSuccess;
}

/* A unique id: who made it, and when (what a root would broadcast). */
GPUAPI ncclResult_t ncclGetUniqueId(ncclUniqueId *uniqueId)
{
	struct timespec ts;

	if (!uniqueId)
		return ncclInvalidArgument;
	clock_gettime(CLOCK_REALTIME, &ts);
	memset(uniqueId, 0, sizeof(*uniqueId));
	snprintf(uniqueId->internal, sizeof(uniqueId->internal), "standin:%d:%lld.%09ld",
		 (int)getpid(), (long long)ts.tv_sec, ts.tv_nsec);
	return ncclSuccess;
}

GPUAPI ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId commId,
				     int rank)
{
	if (strncmp(commId.internal, "standin:", 8) != 0)
		return ncclInvalidArgument;
	return new_comm(comm, nranks, rank);
}

GPUAPI ncclResult_t ncclCommInitRankConfig(ncclComm_t *comm, int nranks,
					   ncclUniqueId commId, int rank,
					   ncclConfig_t *config)
{
	if (strncmp(commId.internal, "standin:", 8) != 0 ||
	    (config && config->size < sizeof(*config)))
		return ncclInvalidArgument;
	return new_comm(comm, nranks, rank);
}

/* One communicator per device, rank i on device i. */
GPUAPI ncclResult_t ncclCommInitAll(ncclComm_t *comms, int ndev, const int *devlist)
{
	if (!comms || ndev < 1)
		return ncclInvalidArgument;
	for (int i = 0; i < ndev; i++) {
		ncclResult_t r = new_comm(&comms[i], ndev, i);

		if (r != ncclSuccess) {
			while (i--)
				free(comms[i]);
			return r;
		}
	}
	return ncclSuccess;
}

GPUAPI ncclResult_t ncclCommUserRank(const ncclComm_t comm, int *rank)
{
	if (!comm || !rank)
		return ncclInvalidArgument;
	*rank = comm->rank;
	return ncclSuccess;
}

GPUAPI ncclResult_t ncclCommCount(const ncclComm_t comm, int *count)
{
	if (!comm || !count)
		return ncclInvalidArgument;
	*count = comm->nranks;
	return ncclSuccess;
}

/* The ranks of comm that gave color: with no peers, this rank alone
 * knows its key, which is its rank in the new one of comm's size. */
GPUAPI ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t *newcomm,
				  ncclConfig_t *config)
{
	if (!comm || !newcomm || key < 0 || key >= comm->nranks ||
	    (config && config->size < sizeof(*config)))
		return ncclInvalidArgument;
	if (color == NCCL_SPLIT_NOCOLOR) {
		*newcomm = NULL;
		return ncclSuccess;
	}
	return color < 0 ? ncclInvalidArgument : new_comm(newcomm, comm->nranks, key);
}

GPUAPI ncclResult_t ncclCommDestroy(ncclComm_t comm)
{
	if (!comm)
		return ncclInvalidArgument;
	free(comm);
	return ncclSuccess;
}

GPUAPI ncclResult_t ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count,
				  ncclDataType_t datatype, ncclRedOp_t op,
				  ncclComm_t comm, cudaStream_t stream)
{
	size_t n;
	ncclResult_t r = check(comm, count, datatype, op, NO_PEER, &n);

	if (r == ncclSuccess)
		memmove(recvbuff, sendbuff, n);
	return r;
}

GPUAPI ncclResult_t ncclBroadcast(const void *sendbuff, void *recvbuff, size_t count,
				  ncclDataType_t datatype, int root, ncclComm_t comm,
				  cudaStream_t stream)
{
	size_t n;
	ncclResult_t r = check(comm, count, datatype, NO_OP, root, &n);

	if (r == ncclSuccess && comm->rank == root)
		memmove(recvbuff, sendbuff, n);
	else if (r == ncclSuccess)
		memset(recvbuff, RECV_FILL, n);
	return r;
}

GPUAPI ncclResult_t ncclReduce(const void *sendbuff, void *recvbuff, size_t count,
			       ncclDataType_t datatype, ncclRedOp_t op, int root,
			       ncclComm_t comm, cudaStream_t stream)
{
	size_t n;
	ncclResult_t r = check(comm, count, datatype, op, root, &n);

	if (r == ncclSuccess && comm->rank == root)
		memmove(recvbuff, sendbuff, n);
	return r;
}

/* recvbuff holds nranks blocks of sendcount elements. */
GPUAPI ncclResult_t ncclAllGather(const void *sendbuff, void *recvbuff, size_t sendcount,
				  ncclDataType_t datatype, ncclComm_t comm,
				  cudaStream_t stream)
{
	size_t n;
	ncclResult_t r = check(comm, sendcount, datatype, NO_OP, NO_PEER, &n);

	if (r != ncclSuccess)
		return r;
	memset(recvbuff, RECV_FILL, n * comm->nranks);
	memmove((char *)recvbuff + n * comm->rank, sendbuff, n);
	return r;
}

/* sendbuff holds nranks blocks of recvcount elements. */
GPUAPI ncclResult_t ncclReduceScatter(const void *sendbuff, void *recvbuff,
				      size_t recvcount, ncclDataType_t datatype,
				      ncclRedOp_t op, ncclComm_t comm,
				      cudaStream_t stream)
{
	size_t n;
	ncclResult_t r = check(comm, recvcount, datatype, op, NO_PEER, &n);

	if (r == ncclSuccess)
		memmove(recvbuff, (const char *)sendbuff + n * comm->rank, n);
	return r;
}

GPUAPI ncclResult_t ncclSend(const void *sendbuff, size_t count, ncclDataType_t datatype,
			     int peer, ncclComm_t comm, cudaStream_t stream)
{
	size_t n = 0;
	ncclResult_t r = check(comm, count, datatype, NO_OP, peer, &n);
	unsigned long sum = 0;

	for (size_t i = 0; r == ncclSuccess && i < n; i++)
		sum += ((const unsigned char *)sendbuff)[i];
	sent_sum += sum;
	return r;
}

GPUAPI ncclResult_t ncclRecv(void *recvbuff, size_t count, ncclDataType_t datatype,
			     int peer, ncclComm_t comm, cudaStream_t stream)
{
	size_t n;
	ncclResult_t r = check(comm, count, datatype, NO_OP, peer, &n);

	if (r == ncclSuccess)
		memset(recvbuff, RECV_FILL, n);
	return r;
}

GPUAPI ncclResult_t ncclGroupStart(void)
{
	group_depth++;
	return ncclSuccess;
}

GPUAPI ncclResult_t ncclGroupEnd(void)
{
	if (group_depth == 0)
		return ncclInvalidUsage;
	group_depth--;
	return ncclSuccess;
}
