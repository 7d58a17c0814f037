"""Under `dftrace-bpf -- python3 script.py` the tracer exports
DFTRACE_BPF_TRACER=<its pid>, and importing dftrace waits until its probes
are live: annotations made right after `from dftrace import ai` reach the
trace without the scripts' ready() loop (no PRELUDE here). The wait gives
up as soon as that process is gone, or after 5 s; without the variable, or
with a malformed one, there is none."""

import os
import shutil
import subprocess
import threading
import time

import pytest

from conftest import BUILD, PY, env, run_traced

pytestmark = pytest.mark.usefixtures("built")

SCRIPT = '''
    import os
    from dftrace import ai
    with ai.pipeline.train:
        with open(%r, "rb", buffering=0) as f:
            n = len(f.read())
    print(n, os.environ.get("DFTRACE_BPF_TRACER"))
'''


def needs_root():
    if os.geteuid() != 0:
        pytest.skip("the tracer needs root")


def check_train_and_read(tmp_path, env_vars=None):
    data = tmp_path / "sample.bin"
    data.write_bytes(os.urandom(4321))
    r = run_traced(tmp_path, SCRIPT % str(data), prelude=False, env_vars=env_vars)
    n, tracer = r.stdout.split()
    assert n == "4321"
    assert tracer != "None", "the tracer did not export DFTRACE_BPF_TRACER"
    assert r.tree() == [(1, "pipeline", "train", {})], \
        "the annotation right after the import was lost (DFTRACE_BPF_TRACER=%s)" % tracer
    train = r.regions[0]
    reads = [e for e in r.trace.xevents if e["cat"] == "POSIX" and e["name"] == "read"
             and r.trace.path(e) == str(data) and e["args"].get("ret", 0) > 0]
    assert sum(e["args"]["ret"] for e in reads) == 4321
    for e in reads:
        assert (e["args"]["phase_cat"], e["args"]["phase"]) == ("pipeline", "train")
        assert r.parent(e) is train


def test_import_waits_for_the_tracer_that_launched_it(tmp_path):
    """The tracer exports DFTRACE_BPF_TRACER itself: `from dftrace import
    ai` then at once `with ai.pipeline.train:` around a read."""
    needs_root()
    check_train_and_read(tmp_path)


def test_import_waits_while_the_named_process_lives(tmp_path):
    """The Python side alone: the variable set inside the traced command,
    naming this (live) test process."""
    needs_root()
    check_train_and_read(tmp_path, {"DFTRACE_BPF_TRACER": str(os.getpid())})


def untraced_import(tmp_path, value):
    """Import a private copy of dftrace (no tracer attached to it) with
    DFTRACE_BPF_TRACER=value (None: unset); the seconds it waited."""
    lib = tmp_path / "pylib"
    if not lib.exists():
        shutil.copytree(os.path.join(BUILD, "dftrace"), lib / "dftrace",
                        ignore=shutil.ignore_patterns("__pycache__"))
    e = env(str(lib))
    if value is not None:
        e["DFTRACE_BPF_TRACER"] = value
    t0 = time.monotonic()
    r = subprocess.run([PY, "-c", "import dftrace, dftrace._backend as b\n"
                        "assert dftrace.backend == 'usdt', dftrace.backend_reason\n"
                        "print(b.waited)"],
                       env=e, capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    return float(r.stdout), time.monotonic() - t0


def test_no_wait_without_a_valid_variable(tmp_path):
    for value in (None, "", "abc", "12x", " 1", "-1", "0", "+1", "\u0661"):
        waited, _ = untraced_import(tmp_path, value)
        assert waited == 0.0, value


def test_wait_ends_when_the_tracer_is_gone(tmp_path):
    dead = subprocess.Popen(["true"])
    dead.wait()
    waited, took = untraced_import(tmp_path, str(dead.pid))
    assert waited < 0.5 and took < 5
    # a process that exits (and is reaped) 0.5 s into the wait
    sleeper = subprocess.Popen(["sleep", "0.5"])
    reaper = threading.Thread(target=sleeper.wait)
    reaper.start()
    try:
        waited, took = untraced_import(tmp_path, str(sleeper.pid))
    finally:
        reaper.join()
    assert 0.2 < waited < 3, waited


def test_wait_gives_up_after_its_timeout(tmp_path):
    """A live process that never attaches: the wait ends at its timeout
    (5 s on import; a short one here)."""
    lib = tmp_path / "pylib"
    shutil.copytree(os.path.join(BUILD, "dftrace"), lib / "dftrace",
                    ignore=shutil.ignore_patterns("__pycache__"))
    r = subprocess.run([PY, "-c", "import os, time\n"
                        "from dftrace import _backend as b\n"
                        "assert b.WAIT_TIMEOUT == 5.0\n"
                        "t0 = time.monotonic()\n"
                        "ok = b.wait_for_tracer(lambda: False, os.getppid(), timeout=0.3)\n"
                        "print(ok, time.monotonic() - t0)\n"
                        "print(b.wait_for_tracer(lambda: True, 1 << 30))"],
                       env=env(str(lib)), capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    first, second = r.stdout.splitlines()
    ok, took = first.split()
    assert ok == "False" and 0.3 <= float(took) < 2
    assert second == "True"  # ready at once: no look at the pid
