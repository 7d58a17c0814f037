"""A training loop under dftrace.profiler with torch.profiler on the same
schedule, for the merge's tests.

Each step trains a small model and saves a checkpoint inside
torch.profiler.record_function("save"); the steps torch records are the
active ones of schedule(wait=1, warmup=1, active=ACTIVE). It prints its
ground truth as JSON lines: one per checkpoint ({"kind": "ckpt", "step",
"path", "bytes", "recorded", "pid", "rank"}), and one per torch trace.

usage: profile_torch.py DIR [--ranks 2] [--steps N] [--wait]

With --ranks 2 it runs two ranks (torch.multiprocessing.spawn,
torch.distributed over gloo, one host), each with its own checkpoints
and torch trace. --wait prints "ready PID" and waits for a line on stdin,
then for dftrace.ready(): a tracer attaches with -p meanwhile.
"""
import json
import os
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.profiler import record_function

from dftrace import profiler

WAIT, WARMUP, ACTIVE = 1, 1, 3


def train(root, rank, world, steps):
    if world > 1:
        dist.init_process_group("gloo", init_method="file://" + os.path.join(root, "rdzv"),
                                rank=rank, world_size=world)
    torch.manual_seed(rank)
    model = torch.nn.Sequential(torch.nn.Linear(64, 32), torch.nn.ReLU(),
                                torch.nn.Linear(32, 4))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(16, 64), torch.randn(16, 4)
    sched = profiler.schedule(wait=WAIT, warmup=WARMUP, active=ACTIVE)
    truth = []
    with profiler.profile(schedule=sched, torch_profiler=True, trace_dir=root) as p:
        for step in range(steps):
            recorded = p.current_action.name.startswith("RECORD")
            loss = torch.nn.functional.mse_loss(model(x), y)
            opt.zero_grad()
            loss.backward()
            if world > 1:
                for t in model.parameters():
                    dist.all_reduce(t.grad)
            opt.step()
            path = os.path.join(root, "ckpt-r%d-s%d.pt" % (rank, step))
            with record_function("save"):
                with open(path, "wb") as f:  # all of its I/O in the region
                    torch.save(model.state_dict(), f)
                    nbytes = f.tell()
            truth.append({"kind": "ckpt", "step": step, "path": path, "rank": rank,
                          "bytes": nbytes, "recorded": recorded, "pid": os.getpid()})
            p.step()
    for t in p.traces:
        truth.append({"kind": "torch_trace", "path": t, "rank": rank, "pid": os.getpid()})
    sys.stdout.write("".join(json.dumps(r) + "\n" for r in truth))
    sys.stdout.flush()
    if world > 1:
        dist.destroy_process_group()


def ranked(rank, root, world, steps):
    train(root, rank, world, steps)


def main():
    args = sys.argv[1:]
    root = args[0]
    world = int(args[args.index("--ranks") + 1]) if "--ranks" in args else 1
    steps = int(args[args.index("--steps") + 1]) if "--steps" in args else 6
    if "--wait" in args:
        import time
        import dftrace
        print("ready", os.getpid(), flush=True)
        sys.stdin.readline()
        t0 = time.monotonic()
        while not dftrace.ready() and time.monotonic() - t0 < 10:
            time.sleep(0.002)
    if world == 1:
        train(root, 0, 1, steps)
    else:
        mp.spawn(ranked, args=(root, world, steps), nprocs=world)


if __name__ == "__main__":
    main()
