// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * One rank of a two-rank job whose collectives are NCCL calls, on the
 * stand-in libnccl.so.2 and libcuda.so.1 (tests/standin), for merge's
 * alignment of hosts' clocks. Usage:
 *   ncclranks RANK ROUNDS TO FROM HOLD [SLOW_STEP SLOW_MS]
 * Unless HOLD is "-", it first holds (wl_hold: its pid in the file HOLD,
 * then no call before SIGUSR1), so that a tracer probes the libraries
 * before the first call.
 * Rank 0 makes the job's ncclUniqueId and sends it through the FIFO TO;
 * rank 1 reads it from FROM; both make the world communicator of it
 * (ncclCommInitRank), and splits it by color 7 (ncclCommSplit). Each
 * also makes a communicator of its own, of one rank (a unique id of its
 * own), as a node's local group would be. Reports the communicators as
 * "comm RANK NAME SIZE": world 2, split 2, local 1.
 * ROUNDS times:
 *   - round i, step i (DFT_USDT_SET_STEP): a pause that depends on the
 *     rank and the round (0 to 4 ms: one rank comes late), and SLOW_MS
 *     more in SLOW_STEP (a straggler);
 *   - a few all_reduces on the local communicator, each synchronised at
 *     once (cuStreamSynchronize): how many depends on the rank and the
 *     round, so that the ranks' n-th ncclAllReduce are not the same
 *     collective: only the communicator says which calls pair;
 *   - the world all_reduce, enqueued (ncclAllReduce returns at once, as
 *     NCCL's does); then a byte written to TO and one read from FROM, the
 *     stand-in's peer, which NCCL's kernel would wait for on the device;
 *     then cuStreamSynchronize on the collective's stream, which returns
 *     once the collective is done.
 * Reports each world call as "coll RANK ROUND START END", CLOCK_REALTIME
 * ns just before the ncclAllReduce and just after its synchronise.
 */
#include <dftrace/usdt.h>
#include "../standin/gpuapi.h"
#include "workload.h"

#define COUNT 256

static void all_reduce(ncclComm_t comm, CUstream s, float *buf, const char *what)
{
	if (ncclAllReduce(buf, buf, COUNT, ncclFloat32, ncclSum, comm, s) != ncclSuccess)
		wl_die("ncclAllReduce %s", what);
}

static void synchronize(CUstream s)
{
	if (cuStreamSynchronize(s) != CUDA_SUCCESS)
		wl_die("cuStreamSynchronize");
}

int main(int argc, char **argv)
{
	static float buf[COUNT];
	ncclComm_t world, split, local;
	ncclUniqueId id, own;
	int rank, rounds, to, from, slow_step;
	unsigned long long start, end;
	CUstream s;
	char c = 'x';

	if (argc != 6 && argc != 8)
		wl_die("usage: ncclranks RANK ROUNDS TO FROM HOLD [SLOW_STEP SLOW_MS]");
	if (strcmp(argv[5], "-"))
		wl_hold(argv[5], 60);
	slow_step = argc == 8 ? atoi(argv[6]) : -1;
	rank = atoi(argv[1]);
	rounds = atoi(argv[2]);
	if (cuInit(0) != CUDA_SUCCESS || cuStreamCreate(&s, 0) != CUDA_SUCCESS)
		wl_die("cuda");
	wl_open_pair(rank, argv[3], argv[4], &to, &from);
	if (rank == 0) {
		if (ncclGetUniqueId(&id) != ncclSuccess ||
		    write(to, &id, sizeof(id)) != (ssize_t)sizeof(id))
			wl_die("unique id");
	} else if (read(from, &id, sizeof(id)) != (ssize_t)sizeof(id)) {
		wl_die("unique id");
	}
	if (ncclGetUniqueId(&own) != ncclSuccess ||
	    ncclCommInitRank(&world, 2, id, rank) != ncclSuccess ||
	    ncclCommInitRank(&local, 1, own, 0) != ncclSuccess)
		wl_die("ncclCommInitRank");
	if (ncclCommSplit(world, 7, rank, &split, NULL) != ncclSuccess)
		wl_die("ncclCommSplit");
	wl_emit("comm\t%d\tworld\t2\n", rank);
	wl_emit("comm\t%d\tsplit\t2\n", rank);
	wl_emit("comm\t%d\tlocal\t1\n", rank);
	for (int i = 0; i < rounds; i++) {
		struct timespec pause = { 0, ((i * 7 + rank * 3) % 5) * 1000000L };
		int locals = (i + rank * 2) % 3;

		DFT_USDT_SET_STEP(i);
		nanosleep(&pause, NULL);
		if (i == slow_step)
			wl_msleep(atol(argv[7]));
		for (int j = 0; j < locals; j++) {
			all_reduce(local, s, buf, "local");
			synchronize(s);
		}
		start = wl_wall_ns();
		all_reduce(world, s, buf, "world");
		if (write(to, &c, 1) != 1 || read(from, &c, 1) != 1)
			wl_die("all_reduce %d", i);
		synchronize(s);
		end = wl_wall_ns();
		wl_emit("coll\t%d\t%d\t%llu\t%llu\n", rank, i, start, end);
	}
	ncclCommDestroy(split);
	ncclCommDestroy(local);
	ncclCommDestroy(world);
	return 0;
}
