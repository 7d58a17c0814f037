"""One rank of a two-rank gloo job (a file store: no network), for
merge's alignment of hosts' clocks from --torch's collectives.

    ranks.py DIR RANK ROUNDS [ASYNC_EVERY]

ROUNDS all_reduces on the world's group, each after a pause that depends
on the rank and the round (0 to 4 ms); each reported as "coll RANK ROUND
START END", CLOCK_REALTIME ns just outside the call. With ASYNC_EVERY,
every such round's call is async_op=True (and waited for at once): not
reported. Before each, (ROUND + 2 * RANK) % 3 all_reduces on a group of
the rank alone: the ranks' n-th all_reduce calls are not one collective,
only their process groups (args.comm_id) tell them apart."""
import os
import sys
import time

import torch
import torch.distributed as dist

d, rank, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
every = int(sys.argv[4]) if len(sys.argv) > 4 else 0
dist.init_process_group("gloo", init_method="file://" + os.path.join(d, "store"),
                        rank=rank, world_size=2)
local = [dist.new_group([r]) for r in range(2)][rank]  # every rank makes both
t = torch.ones(16)
lines = []
for i in range(rounds):
    time.sleep(((i * 7 + rank * 3) % 5) / 1000)
    for _ in range((i + 2 * rank) % 3):
        dist.all_reduce(torch.ones(4), group=local)
    if every and i % every == every - 1:
        dist.all_reduce(t, async_op=True).wait()
        continue
    start = time.time_ns()
    dist.all_reduce(t)
    end = time.time_ns()
    lines.append("coll\t%d\t%d\t%d\t%d\n" % (rank, i, start, end))
dist.destroy_process_group()
sys.stdout.write("".join(lines))
