"""Merged files holding a torch 1.13 trace, opened in the real viewers by
scripts/check-viewers (DevTools and speedscope 1.25 in Debian's headless
chromium, driven by selenium).

speedscope puts an end before a begin at the same time, so a 0-µs torch op
in its parent's first µs (torch writes such, and so do our anchors) ended
before its parent began: "Tried to end ... Doing nothing instead". The
merge gives such ops 1 ns.

Skipped where the viewers are missing: speedscope comes from npm
(npm install --prefix /tmp/ss speedscope@1.25.0, or SPEEDSCOPE_HTML).
"""
import json
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from conftest import DFT, PY  # noqa: E402
from test_merge_torch import have_torch, merge, private_env  # noqa: E402

CHECK = os.path.join(ROOT, "scripts", "check-viewers")
SPEEDSCOPE_HTML = os.environ.get(
    "SPEEDSCOPE_HTML", "/tmp/ss/node_modules/speedscope/dist/release/index.html")

# The reproduction, as its user wrote it.
SEVEN_LINES = """\
import sys, torch
from dftrace import profiler
with profiler.profile(torch_profiler=True) as p:
    for _ in range(3):
        torch.zeros(4)
        p.step()
p.export_chrome_trace(sys.argv[1])
"""


def have_viewers():
    if not all(os.path.exists(p) for p in ("/usr/bin/chromium", "/usr/bin/chromedriver",
                                           SPEEDSCOPE_HTML)):
        return False
    return subprocess.run([PY, "-c", "import selenium"],
                          capture_output=True).returncode == 0


pytestmark = pytest.mark.skipif(not have_viewers(),
                                reason="chromium, chromedriver, selenium or speedscope missing")


def check_viewers(*paths):
    r = subprocess.run([PY, CHECK] + [str(p) for p in paths], capture_output=True,
                       text=True, timeout=600)
    print(r.stdout, r.stderr)
    return r


def seven_lines_merged(tmp_path):
    script = tmp_path / "seven.py"
    script.write_text(SEVEN_LINES)
    trace, torch_trace = tmp_path / "t.pfw.gz", tmp_path / "torch.json"
    r = subprocess.run([DFT, "-q", "-o", str(trace), "--", PY, str(script),
                        str(torch_trace)], env=private_env(tmp_path),
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    out = tmp_path / "merged.json"
    merge(["-q", "-o", str(out), str(trace)])
    return out


@pytest.mark.skipif(not have_torch(), reason="python3-torch is not installed")
def test_seven_line_reproduction_opens_clean_in_devtools_and_speedscope(tmp_path, built):
    out = seven_lines_merged(tmp_path)
    doc = json.load(open(out))
    torch_ops = [e for e in doc["traceEvents"] if e.get("ph") == "X" and "cat" not in e]
    assert any(e["name"] == "aten::zeros" for e in torch_ops)
    r = check_viewers(out)
    assert r.returncode == 0, r.stdout
    assert [l.split()[:2] for l in r.stdout.splitlines()] == [["devtools", "ok"],
                                                               ["speedscope", "ok"]]


def test_check_viewers_fails_a_mis_nested_file(tmp_path):
    """A 0-µs child at its parent's start: speedscope warns, so the check
    fails; the same child with 1 ns passes."""
    def trace(name, child_dur):
        path = tmp_path / name
        path.write_text(json.dumps({"traceEvents": [
            {"name": n, "ph": "X", "pid": 1, "tid": 1, "ts": ts, "dur": dur}
            for n, ts, dur in (("a", 5, 1), ("parent", 10, 3), ("child", 10, child_dur))]}))
        return path
    r = check_viewers(trace("zero.json", 0), trace("one-ns.json", 0.001))
    assert r.returncode == 1
    lines = r.stdout.splitlines()
    speedscope = [l for l in lines if l.startswith("speedscope")]
    assert speedscope[0].split()[:3] == ["speedscope", "FAIL", "zero.json:"], lines
    assert "Doing nothing instead" in speedscope[0]
    assert speedscope[1].split()[:2] == ["speedscope", "ok"], lines
