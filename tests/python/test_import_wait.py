"""Under `dftrace-bpf -- python3 script.py` the tracer exports
DFTRACE_BPF_TRACER=<its pid>, and importing dftrace waits until its probes
are live: annotations made right after `from dftrace import ai` reach the
trace without the scripts' ready() loop (no PRELUDE here). The wait gives
up as soon as that process no longer attaches probes (it is gone, or no
longer named "dftrace-bpf"), or after 2 s; without the variable, or with a
malformed one, there is none."""

import os
import shutil
import subprocess
import threading
import time

import pytest

from conftest import BUILD, DFT, PY, env, run_traced

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


def fake_tracer(tmp_path, seconds):
    """A process named like the tracer while it attaches probes (a copy of
    sleep called dftrace-bpf), for the Python side alone."""
    exe = tmp_path / "dftrace-bpf"
    if not exe.exists():
        shutil.copy(shutil.which("sleep"), exe)
    p = subprocess.Popen([str(exe), str(seconds)])
    for _ in range(500):  # its name is set once it has exec'd
        try:
            with open("/proc/%d/comm" % p.pid) as f:
                if f.read().strip() == "dftrace-bpf":
                    return p
        except OSError:
            pass
        time.sleep(0.002)
    raise AssertionError("the fake tracer never got its name")


def test_import_waits_while_the_named_tracer_attaches(tmp_path):
    """The Python side alone: the variable set inside the traced command,
    naming a live process called dftrace-bpf."""
    needs_root()
    tracer = fake_tracer(tmp_path, 60)
    try:
        check_train_and_read(tmp_path, {"DFTRACE_BPF_TRACER": str(tracer.pid)})
    finally:
        tracer.kill()
        tracer.wait()


def test_no_wait_once_the_tracer_has_stopped_tracing(tmp_path):
    """dftrace-bpf -d 1 stops tracing (and renames itself) but lives on,
    waiting for the command: a later import does not wait for it."""
    needs_root()
    lib = tmp_path / "pylib"
    shutil.copytree(os.path.join(BUILD, "dftrace"), lib / "dftrace",
                    ignore=shutil.ignore_patterns("__pycache__"))
    r = subprocess.run([DFT, "-q", "-d", "1", "-o", str(tmp_path / "t.pfw"), "--",
                        "sh", "-c", 'sleep 1.5; exec "$0" -c "$1"', PY,
                        "import dftrace._backend as b; print(b.waited)"],
                       env=env(str(lib)), capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert float(r.stdout) < 0.2, r.stdout


def test_no_wait_for_a_process_that_is_not_the_tracer(tmp_path):
    waited, _ = untraced_import(tmp_path, str(os.getpid()))
    assert waited < 0.2, waited


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
    # a tracer that exits (and is reaped) 0.5 s into the wait
    sleeper = fake_tracer(tmp_path, 0.5)
    reaper = threading.Thread(target=sleeper.wait)
    reaper.start()
    try:
        waited, took = untraced_import(tmp_path, str(sleeper.pid))
    finally:
        reaper.join()
    assert 0.2 < waited < 3, waited


def test_wait_gives_up_after_its_timeout(tmp_path):
    """A live tracer that never attaches: the wait ends at its timeout
    (2 s on import; a short one here)."""
    lib = tmp_path / "pylib"
    shutil.copytree(os.path.join(BUILD, "dftrace"), lib / "dftrace",
                    ignore=shutil.ignore_patterns("__pycache__"))
    tracer = fake_tracer(tmp_path, 60)
    try:
        r = subprocess.run([PY, "-c", "import os, sys, time\n"
                            "from dftrace import _backend as b\n"
                            "assert b.WAIT_TIMEOUT == 2.0\n"
                            "t0 = time.monotonic()\n"
                            "ok = b.wait_for_tracer(lambda: False, int(sys.argv[1]), timeout=0.3)\n"
                            "print(ok, time.monotonic() - t0)\n"
                            "print(b.wait_for_tracer(lambda: True, 1 << 30))",
                            str(tracer.pid)],
                           env=env(str(lib)), capture_output=True, text=True, timeout=30)
    finally:
        tracer.kill()
        tracer.wait()
    assert r.returncode == 0, r.stderr
    first, second = r.stdout.splitlines()
    ok, took = first.split()
    assert ok == "False" and 0.3 <= float(took) < 2
    assert second == "True"  # ready at once: no look at the pid
