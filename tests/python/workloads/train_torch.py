"""A small, unannotated PyTorch training job for the tracer's tests.

A Dataset reads real files (so the test knows the bytes per file), a
DataLoader with two worker processes, SGD on a small model, and a
torch.save checkpoint every epoch. It prints its ground truth as JSON
lines on stdout. With --wait it prints "ready PID" and waits for a line
on stdin before training (so a tracer can attach with -p first).

usage: train_torch.py DIR [EPOCHS] [--wait]
"""
import json
import os
import sys

import torch
from torch.utils.data import DataLoader, Dataset

SAMPLES = 8
FEATURES = 64


class FileDataset(Dataset):
    def __init__(self, root):
        self.paths = [os.path.join(root, "sample_%02d.bin" % i) for i in range(SAMPLES)]

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        with open(self.paths[i], "rb") as f:
            raw = f.read()
        x = torch.frombuffer(bytearray(raw[:FEATURES * 4]), dtype=torch.float32)
        return torch.nan_to_num(x).clamp(-1, 1), i % 2


def make_data(root):
    os.makedirs(root, exist_ok=True)
    g = torch.Generator().manual_seed(1)
    for i in range(SAMPLES):
        data = torch.rand(FEATURES + 16 * i, generator=g).numpy().tobytes()
        with open(os.path.join(root, "sample_%02d.bin" % i), "wb") as f:
            f.write(data)


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    root, epochs = args[0], int(args[1]) if len(args) > 1 else 2
    make_data(os.path.join(root, "data"))
    if "--wait" in sys.argv:
        print("ready", os.getpid(), flush=True)
        sys.stdin.readline()
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(FEATURES, 16), torch.nn.ReLU(),
                                torch.nn.Linear(16, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    ds = FileDataset(os.path.join(root, "data"))
    loader = DataLoader(ds, batch_size=4, num_workers=2)
    for epoch in range(epochs):
        for x, y in loader:
            loss = torch.nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            print(json.dumps({"kind": "loss", "epoch": epoch, "value": loss.item()}), flush=True)
        ckpt = os.path.join(root, "ckpt_%d.pt" % epoch)
        torch.save(model.state_dict(), ckpt)
        print(json.dumps({"kind": "ckpt", "pid": os.getpid(), "path": ckpt,
                          "bytes": os.path.getsize(ckpt)}), flush=True)
    for p in ds.paths:
        print(json.dumps({"kind": "sample", "path": p, "bytes": os.path.getsize(p),
                          "reads": epochs}), flush=True)
    print(json.dumps({"kind": "main", "pid": os.getpid()}), flush=True)


if __name__ == "__main__":
    main()
