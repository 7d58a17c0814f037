"""--steps follows Python's step annotations: dftrace.profiler's step(),
ai.update(step=...), and, under --torch, the optimizer's steps. A script
writes known bytes in each iteration; only the active iterations' are in
the trace."""
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
from conftest import BUILD, DFT, PRELUDE, PY, env  # noqa: E402
from trace import Trace  # noqa: E402

STEPS = "1:0:2"          # wait 1, record 2, forever
ACTIVE = {1, 2, 4, 5}    # of iterations 0..5

BODY = {
    "profiler": """
        from dftrace import profiler
        with profiler.profile() as p:
            for i in range(6):
                work(i)
                p.step()
    """,
    "update": """
        from dftrace import ai
        for i in range(6):
            ai.update(step=i)
            work(i)
    """,
    "torch": """
        import torch
        w = torch.nn.Parameter(torch.ones(2))
        opt = torch.optim.SGD([w], lr=0.1)
        for i in range(6):
            work(i)
            w.sum().backward()
            opt.step()
    """,
}


def have_torch():
    return subprocess.run([PY, "-c", "import torch"], capture_output=True).returncode == 0


@pytest.mark.parametrize("how", sorted(BODY))
def test_steps_follow_python_step_annotations(tmp_path, how, built):
    if how == "torch" and not have_torch():
        pytest.skip("python3-torch is not installed")
    lib = tmp_path / "pylib"
    shutil.copytree(os.path.join(BUILD, "dftrace"), lib / "dftrace",
                    ignore=shutil.ignore_patterns("__pycache__"))
    data = tmp_path / "data"
    data.mkdir()
    script = tmp_path / "job.py"
    prelude = "" if how == "torch" else PRELUDE  # --torch waits by itself
    script.write_text(prelude + textwrap.dedent("""
        def work(i):
            with open(%r + "/iter-%%d" %% i, "wb") as f:
                f.write(b"x" * (100 + i))
    """ % str(data)) + textwrap.dedent(BODY[how]))
    trace = str(tmp_path / "t.pfw")
    opts = ["--torch"] if how == "torch" else []
    r = subprocess.run([DFT, "-q", "--steps", STEPS] + opts + ["-o", trace, "--", PY,
                       str(script)], env=env(str(lib)), capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    t = Trace.load(trace)
    assert not t.errors, t.errors[:5]
    written = {}
    for e in t.xevents:
        path = t.path(e) or ""
        if e["name"] == "write" and path.startswith(str(data)):
            written[int(path.rsplit("-", 1)[1])] = e["args"]["ret"]
    assert written == {i: 100 + i for i in ACTIVE}
