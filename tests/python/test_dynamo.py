"""dftrace.dynamo on Debian's torch 1.13 (no torch.compile: the FX path)."""
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
from trace import Trace  # noqa: E402

from test_torch_attach import DFT, PY, have_torch  # noqa: E402

pytestmark = pytest.mark.skipif(not have_torch(), reason="python3-torch is not installed")


def test_graph_nodes_are_events(tmp_path):
    trace = str(tmp_path / "t.pfw")
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "build", "python"))
    run = subprocess.run([DFT, "-q", "-o", trace, "--", PY,
                          os.path.join(HERE, "workloads", "dynamo_job.py")],
                         capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "ok"
    t = Trace.load(trace)
    assert not t.errors
    nodes = [e for e in t.xevents if e["cat"] == "dynamo"]
    assert [e["name"] for e in nodes] == [
        "module.conv1", "function.relu", "method.size", "method.view", "module.fc",
        "module.lin", "function.relu"]
    for e in nodes[:5]:  # @dynamo.compile, gradients on, no context given
        assert e["args"]["grad_enabled"] == 1
        assert "epoch" not in e["args"]
    for e in nodes[5:]:  # create_backend(name="plain", epoch=2, step=5) under no_grad
        a = e["args"]
        assert (a["grad_enabled"], a["epoch"], a["step"], a["name"]) == (0, 2, 5, "plain")
