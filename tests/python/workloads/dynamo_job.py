"""@dynamo.compile on a model's forward and create_backend on an FX graph:
the traced job for test_dynamo.py (PYTHONPATH must hold build/python)."""
import sys, time, torch
from dftrace import dynamo
from dftrace.dynamo import create_backend
from dftrace._backend import probes
t0 = time.time()
while not probes.enabled() and time.time() - t0 < 10: time.sleep(0.01)
assert probes.enabled()
class Net(torch.nn.Module):
    def __init__(self):
        super().__init__(); self.conv1 = torch.nn.Conv2d(1, 4, 3); self.fc = torch.nn.Linear(4*6*6, 2)
    @dynamo.compile
    def forward(self, x):
        x = torch.nn.functional.relu(self.conv1(x))
        return self.fc(x.view(x.size(0), -1))
m = Net(); x = torch.randn(2, 1, 8, 8)
out = m(x)
ref = Net.forward.__wrapped__(m, x)
assert torch.equal(out, ref)
class Plain(torch.nn.Module):
    def __init__(self):
        super().__init__(); self.lin = torch.nn.Linear(3, 3)
    def forward(self, x): return torch.relu(self.lin(x))
p = Plain(); be = create_backend(name="plain", epoch=2, step=5)
fn = be(torch.fx.symbolic_trace(p), [torch.randn(1, 3)])
with torch.no_grad(): y = fn(torch.randn(1, 3))
print("ok")
