"""A Dataset over a numpy.memmap: each item is one 4 KiB page of the file.
usage: memmap_job.py DIR; prints the file and its size as JSON."""
import json, os, sys
import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset

PAGES = 32

class Pages(Dataset):
    def __init__(self, path):
        self.mm = np.memmap(path, dtype=np.float32, mode="r")
    def __len__(self):
        return PAGES
    def __getitem__(self, i):
        return torch.from_numpy(np.array(self.mm[i * 1024:(i + 1) * 1024])), 0

path = os.path.join(sys.argv[1], "pages.f32")
np.arange(PAGES * 1024, dtype=np.float32).tofile(path)
total = 0.0
for x, _ in DataLoader(Pages(path), batch_size=4, num_workers=0):
    total += float(x.sum())
print(json.dumps({"path": path, "size": os.path.getsize(path), "sum": total}))
