"""One rank of a two-rank gloo job (a file store: no network), for
merge's alignment of hosts' clocks from --torch's collectives.

    ranks.py DIR RANK ROUNDS [ASYNC_EVERY]

ROUNDS all_reduces, each after a pause that depends on the rank and the
round (0 to 4 ms); each reported as "coll RANK ROUND START END",
CLOCK_REALTIME ns just outside the call. With ASYNC_EVERY, every such
round's call is async_op=True (and waited for at once): not reported."""
import os
import sys
import time

import torch
import torch.distributed as dist

d, rank, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
every = int(sys.argv[4]) if len(sys.argv) > 4 else 0
dist.init_process_group("gloo", init_method="file://" + os.path.join(d, "store"),
                        rank=rank, world_size=2)
t = torch.ones(16)
lines = []
for i in range(rounds):
    time.sleep(((i * 7 + rank * 3) % 5) / 1000)
    if every and i % every == every - 1:
        dist.all_reduce(t, async_op=True).wait()
        continue
    start = time.time_ns()
    dist.all_reduce(t)
    end = time.time_ns()
    lines.append("coll\t%d\t%d\t%d\t%d\n" % (rank, i, start, end))
dist.destroy_process_group()
sys.stdout.write("".join(lines))
