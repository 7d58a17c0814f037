"""torch.distributed collectives in a one-process gloo group (file store:
no network), for --torch's comm.* labels. Prints the results."""
import os
import sys

import torch
import torch.distributed as dist

store = os.path.join(sys.argv[1], "store")
dist.init_process_group("gloo", init_method="file://" + store, rank=0, world_size=1)
t = torch.ones(4)
dist.all_reduce(t)
dist.broadcast(t, src=0)
dist.barrier()
out = [torch.zeros(4)]
dist.all_gather(out, t)
objs = [None]
dist.all_gather_object(objs, {"rank": 0})  # calls all_gather inside
dist.broadcast_object_list(objs, src=0)     # calls broadcast inside
g = dist.new_group([0])  # "1": the world's is "0"
dist.all_reduce(t, group=g)
dist.broadcast(t, 0, g)  # the group given by position
dist.destroy_process_group()
print("sum", float(t.sum()), float(out[0].sum()), objs)
