// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * annotcost N: ns per scoped annotation (DFT_USDT_FORWARD: a begin and an
 * end probe), minus an empty loop of the same shape. Run it plain for the
 * untraced cost and under dftrace-bpf for the traced one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <dftrace/usdt.h>

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static volatile long sink;

__attribute__((noinline)) static void annotated(long i)
{
	DFT_USDT_FORWARD();
	sink = i;
}

__attribute__((noinline)) static void bare(long i)
{
	sink = i;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 10000000;
	long long t0, t1, t2;

	t0 = now_ns();
	for (long i = 0; i < n; i++)
		bare(i);
	t1 = now_ns();
	for (long i = 0; i < n; i++)
		annotated(i);
	t2 = now_ns();
	printf("annotation %.2f ns/call (bare call %.2f ns, annotated %.2f ns, %ld calls)\n",
	       (double)((t2 - t1) - (t1 - t0)) / n, (double)(t1 - t0) / n,
	       (double)(t2 - t1) / n, n);
	return 0;
}
