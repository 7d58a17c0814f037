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
from test_merge_viewers import SEVEN_LINES  # noqa: E402

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


def as_rows(path):
    """Every event but the names, as its process and thread names and the
    rest of it: ids may differ between two merges, what they name may not."""
    events = json.load(open(path))["traceEvents"]
    meta = {(e["name"], e["pid"], e["tid"] if e["name"] == "thread_name" else 0):
            e["args"]["name"] for e in events if e["ph"] == "M"}
    named = [(e["name"], e["pid"], e["tid"]) for e in events if e["ph"] == "M"]
    rows = sorted(json.dumps([meta.get(("process_name", e["pid"], 0)),
                              meta.get(("thread_name", e["pid"], e["tid"])),
                              {k: v for k, v in e.items() if k not in ("pid", "tid")}],
                             sort_keys=True)
                  for e in events if e["ph"] != "M")
    return rows, sorted(meta.values()), len(named) - len(set(named))


def test_merge_of_merges_is_a_one_step_merge_event_for_event(tmp_path, built):
    script = tmp_path / "seven.py"
    script.write_text(SEVEN_LINES)
    traces = []
    for rank in (0, 1):
        e = private_env(tmp_path)
        e.update(RANK=str(rank), WORLD_SIZE="2")
        trace = str(tmp_path / ("t%d.pfw.gz" % rank))
        r = subprocess.run([DFT, "-q", "-o", trace, "--", PY, str(script),
                            str(tmp_path / ("torch%d.json" % rank))], env=e,
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        traces.append(trace)
    one = str(tmp_path / "one.json")
    merge(["-q", "-o", one] + traces)
    per_rank = []
    for rank, trace in enumerate(traces):
        per_rank.append(str(tmp_path / ("rank%d.json" % rank)))
        merge(["-q", "-o", per_rank[-1], trace])
    two = str(tmp_path / "two.json")
    merge(["-q", "-o", two] + per_rank)
    rows_one, names_one, repeated_one = as_rows(one)
    rows_two, names_two, repeated_two = as_rows(two)
    assert (repeated_one, repeated_two) == (0, 0)  # each thread named once
    assert names_two == names_one
    assert [n for n in names_one if n.startswith("rank ")] == sorted(
        [n for n in names_one if n.startswith("rank 0 ")][:1] +
        [n for n in names_one if n.startswith("rank 1 ")][:1])
    assert any(n.startswith("torch ") for n in names_one)
    assert len(rows_two) == len(rows_one)
    assert rows_two == rows_one
