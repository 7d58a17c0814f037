"""What `dftrace-bpf merge` takes in, on real torch 1.13 traces: a trace
cut by --steps still brings its torch trace; merged files are inputs like
any other.
"""
import json
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from conftest import DFT, PY  # noqa: E402
from test_merge_torch import have_torch, merge, private_env  # noqa: E402

pytestmark = pytest.mark.skipif(not have_torch(), reason="python3-torch is not installed")

# The README's schedule: steps 0 wait, 1 warm up, 2-4 recorded; torch's
# trace is exported at the step that ends the cycle, after the window.
README_SCHEDULE = """\
import sys, torch
from dftrace import profiler
with profiler.profile(schedule=profiler.schedule(wait=1, warmup=1, active=3),
                      torch_profiler=True, trace_dir=sys.argv[1]) as p:
    for _ in range(6):
        torch.zeros(4)
        p.step()
"""


def names(doc, name):
    return [e for e in doc["traceEvents"] if e.get("ph") == "X" and e["name"] == name]


def test_steps_window_keeps_where_the_torch_trace_went(tmp_path, built):
    script, traces = tmp_path / "job.py", tmp_path / "traces"
    script.write_text(README_SCHEDULE)
    traces.mkdir()
    trace = tmp_path / "t.pfw.gz"
    r = subprocess.run([DFT, "-q", "--steps", "1:1:3", "-o", str(trace), "--", PY,
                        str(script), str(traces)], env=private_env(tmp_path),
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    [torch_trace] = [str(p) for p in traces.iterdir()]
    r = merge(["-o", str(tmp_path / "m.json"), str(trace)])
    assert "with '%s', the torch trace a trace recorded" % torch_trace in r.stderr, r.stderr
    assert " aligned to " in r.stderr, r.stderr
    merged = json.load(open(tmp_path / "m.json"))
    theirs = json.load(open(torch_trace))
    want = len([e for e in theirs if e["name"] == "aten::zeros"])
    assert want > 0
    assert len(names(merged, "aten::zeros")) == want
