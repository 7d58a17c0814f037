"""Shared helpers for the dftrace Python package tests: build the extension
for Debian's /usr/bin/python3 into build/python, run a script under
./dftrace-bpf, and load its trace with tests/lib/trace.py."""

import os
import shutil
import subprocess
import sys
import textwrap
import time

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PKG = os.path.join(ROOT, "usdt", "python")
BUILD = os.path.join(ROOT, "build", "python")
PY = "/usr/bin/python3"
DFT = os.path.join(ROOT, "dftrace-bpf")
# The opt-in `dftracer` compatibility package, where `make` puts it: on the
# path only for the scripts that ask for it (compat=True).
COMPAT = os.path.join(BUILD, "compat")
PYTHONPATH = BUILD

sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
from trace import Trace  # noqa: E402

# Every region except the tracer's own categories and CPython's USDT probes.
SYSTEM_CATS = {"POSIX", "PROC", "IOCTL", "DEVICE", "dftracer", "python"}

# Each script waits for the tracer to attach every probe of the extension.
PRELUDE = '''\
import sys as _sys, time as _time
import dftrace as _dftrace
if _dftrace.backend != "usdt":
    _sys.exit("dftrace._usdt did not load: %s" % _dftrace.backend_reason)
_t0 = _time.monotonic()
while not _dftrace.ready():
    if _time.monotonic() - _t0 > 10:
        _sys.exit("the tracer never attached to dftrace._usdt (10 s)")
    _time.sleep(0.002)
del _t0
'''


def build():
    e = dict(os.environ)
    e.pop("DFTRACE_COMPAT", None)  # dftracer goes to COMPAT, never beside dftrace
    r = subprocess.run(
        [PY, "setup.py", "-q", "build", "--build-base", os.path.join(BUILD, "tmp"),
         "--build-lib", BUILD], cwd=PKG, capture_output=True, text=True, env=e)
    if r.returncode:
        pytest.fail("building dftrace._usdt failed:\n" + r.stdout + r.stderr)
    shutil.rmtree(COMPAT, ignore_errors=True)
    shutil.copytree(os.path.join(PKG, "dftracer"), os.path.join(COMPAT, "dftracer"),
                    ignore=shutil.ignore_patterns("__pycache__"))


@pytest.fixture(scope="session")
def built():
    if not os.path.exists(PY):
        pytest.skip("needs Debian's /usr/bin/python3")
    build()
    return BUILD


def env(pythonpath=PYTHONPATH):
    e = dict(os.environ)
    e["PYTHONPATH"] = pythonpath
    e.pop("PYTHONHOME", None)
    e.pop("DFTRACE_BPF_TRACER", None)  # set by a tracer for what it launches only
    e["PYTHONDONTWRITEBYTECODE"] = "1"
    return e


# Args every event has (the host, its nesting, the ns of its times).
EVENT_ARGS = ("hhash", "level", "p_idx", "ns10d")


def own_args(e):
    """An event's args but those every event has."""
    return {k: v for k, v in e["args"].items() if k not in EVENT_ARGS}


class Run:
    def __init__(self, trace, stdout):
        self.trace = trace
        self.stdout = stdout
        self.regions = sorted(
            (e for e in trace.xevents if e.get("cat") not in SYSTEM_CATS),
            key=lambda e: (e["pid"], e["id"]))  # ids are taken at the begin
        self.by_id = {(e["pid"], e["id"]): e for e in self.regions}

    def parent(self, e):
        return self.by_id.get((e["pid"], e["args"].get("p_idx")))

    def tree(self, with_args=True):
        """(level, cat, name, own args) of every region in begin order,
        checking each one's p_idx/level/time link to its parent."""
        out = []
        for e in self.regions:
            a = e["args"]
            p = self.parent(e)
            if a["p_idx"] == -1:
                assert a["level"] == 1, e
            else:
                assert p is not None, "p_idx of %s is not a region" % e
                assert p["args"]["level"] + 1 == a["level"], (e, p)
                assert p["ts"] <= e["ts"] and e["ts"] + e["dur"] <= p["ts"] + p["dur"], (e, p)
                assert (a.get("phase_cat"), a.get("phase")) == (p["cat"], p["name"]), (e, p)
            assert "unbalanced" not in a, e
            own = {k: v for k, v in own_args(e).items() if k not in ("phase_cat", "phase")}
            out.append((a["level"], e["cat"], e["name"], own) if with_args
                       else (a["level"], e["cat"], e["name"]))
        return out

    def cm(self):
        return [m["args"] for m in self.trace.meta if m.get("name") == "CM"]


def run_traced(tmp_path, body, prelude=True, name="script.py", timeout=60,
               compat=False, env_vars=None):
    """Run body (a Python script) under the tracer; return a Run. compat:
    the `dftracer` package on the path too; env_vars: set in the script's
    environment by `env` inside the traced command (the tracer's own
    environment stays as it is)."""
    src = (PRELUDE if prelude else "") + textwrap.dedent(body)
    script = tmp_path / name
    script.write_text(src)
    out = tmp_path / "trace.pfw"
    # A private copy of the package: the kernel raises a probe's semaphore in
    # every process mapping the file, so a tracer attached to build/python's
    # .so elsewhere (another test run) must not make this one look attached.
    lib = tmp_path / "pylib"
    shutil.copytree(os.path.join(BUILD, "dftrace"), lib / "dftrace",
                    ignore=shutil.ignore_patterns("__pycache__"))
    pythonpath = str(lib) + (os.pathsep + COMPAT if compat else "")
    cmd = [PY, str(script)]
    if env_vars:
        cmd = ["env"] + ["%s=%s" % kv for kv in env_vars.items()] + cmd
    r = subprocess.run([DFT, "-q", "-P", "-o", str(out), "--"] + cmd,
                       cwd=str(tmp_path), env=env(pythonpath), capture_output=True,
                       text=True, timeout=timeout)
    assert r.returncode == 0, "traced script failed (%d):\n%s%s" % (
        r.returncode, r.stdout, r.stderr)
    t = Trace.load(str(out))
    assert not t.errors, t.errors[:10]
    return Run(t, r.stdout)


def run_attached(cmd, trace, env=None, timeout=180):
    """Start cmd, which prints "ready ..." and waits for a line on stdin;
    attach the tracer to it with -p (writing trace), let it go once the
    trace file has appeared (it does once the probes are live), and wait
    for both. Returns the job's stdout."""
    job = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                           text=True, env=env)
    try:
        assert job.stdout.readline().startswith("ready")
        tracer = subprocess.Popen([DFT, "-q", "-o", trace, "-p", str(job.pid)])
        deadline = time.time() + 30
        while not os.path.exists(trace) and time.time() < deadline:
            assert tracer.poll() is None, "the tracer exited early"
            time.sleep(0.02)
        assert os.path.exists(trace)
        job.stdin.write("go\n")
        job.stdin.flush()
        out, _ = job.communicate(timeout=timeout)
        assert job.returncode == 0
        assert tracer.wait(timeout=60) == 0
    finally:
        if job.poll() is None:
            job.kill()
    return out
