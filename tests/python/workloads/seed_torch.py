"""Seed 002's training loop as its user writes it: plain torch.profiler,
nothing of dftrace's (the tracer's --torch, or an `import dftrace`
elsewhere in the process, must do the rest).

Each step trains a small model and saves a checkpoint inside
record_function("save"); torch.profiler runs on schedule(wait=1,
warmup=1, active=3) and its trace goes where the user's code says:

  --export handler      on_trace_ready writes trace-dir/torch-trace-R-of-N.json
                        (the seed's spelling)
  --export tensorboard  on_trace_ready=tensorboard_trace_handler(trace-dir)
  --export after        no schedule: prof.export_chrome_trace() after the block

It prints its ground truth as JSON lines: one per checkpoint ({"kind":
"ckpt", "step", "path", "bytes", "recorded", "pid", "rank"}).

usage: seed_torch.py DIR [--export KIND] [--ranks 2] [--import-dftrace]

--ranks 2 runs two ranks with torch.multiprocessing.spawn; under torchrun
(RANK and WORLD_SIZE set) each process is one rank. --import-dftrace
imports dftrace first, and nothing else of it.
"""
import json
import os
import sys

if "--import-dftrace" in sys.argv:
    import dftrace  # noqa: F401

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.profiler import ProfilerActivity, profile, record_function, schedule

STEPS = 6


def train(root, rank, world, export):
    if world > 1:
        if "MASTER_ADDR" in os.environ:  # torchrun
            dist.init_process_group("gloo")
        else:
            dist.init_process_group("gloo", init_method="file://" + os.path.join(root, "rdzv"),
                                    rank=rank, world_size=world)
    torch.manual_seed(rank)
    model = torch.nn.Sequential(torch.nn.Linear(64, 32), torch.nn.ReLU(),
                                torch.nn.Linear(32, 4))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(16, 64), torch.randn(16, 4)
    trace_dir = os.path.join(root, "traces")

    def trace_handler(prof):
        prof.export_chrome_trace(f"{trace_dir}/torch-trace-{rank}-of-{world}.json")

    kwargs = {}
    if export == "handler":
        os.makedirs(trace_dir, exist_ok=True)
        kwargs = dict(schedule=schedule(wait=1, warmup=1, active=3),
                      on_trace_ready=trace_handler)
    elif export == "tensorboard":
        kwargs = dict(schedule=schedule(wait=1, warmup=1, active=3),
                      on_trace_ready=torch.profiler.tensorboard_trace_handler(trace_dir))
    truth = []
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True, **kwargs) as prof:
        for step in range(STEPS):
            recorded = prof.current_action.name.startswith("RECORD")
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
            if export != "after":
                prof.step()
    if export == "after":
        os.makedirs(trace_dir, exist_ok=True)
        prof.export_chrome_trace(f"{trace_dir}/trace-{rank}.json")
    sys.stdout.write("".join(json.dumps(r) + "\n" for r in truth))
    sys.stdout.flush()
    if world > 1:
        dist.destroy_process_group()


def ranked(rank, root, world, export):
    train(root, rank, world, export)


def main():
    args = sys.argv[1:]
    root = args[0]
    export = args[args.index("--export") + 1] if "--export" in args else "handler"
    world = int(args[args.index("--ranks") + 1]) if "--ranks" in args else 1
    if "RANK" in os.environ and "WORLD_SIZE" in os.environ:
        train(root, int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), export)
    elif world == 1:
        train(root, 0, 1, export)
    else:
        mp.spawn(ranked, args=(root, world, export), nprocs=world)


if __name__ == "__main__":
    main()
