"""The probe functions: dftrace._usdt when it can be imported, no-ops otherwise.

backend is "usdt" or "noop"; reason says why the extension is missing.

Under `dftrace-bpf -- cmd` the tracer attaches this extension's probes only
once it has seen the library mapped (milliseconds after the import), so the
first annotations would be lost; it exports DFTRACE_BPF_TRACER=<its pid> to
the command, and the import waits here until every probe is live
(_usdt.ready()), giving up as soon as that process no longer attaches
probes (it is gone, or its name is no longer "dftrace-bpf": it renames
itself when it stops tracing) or after WAIT_TIMEOUT seconds. Without the
variable (or with a malformed one) there is no wait at all.
"""

import os
import time

TRACER_ENV = "DFTRACE_BPF_TRACER"
WAIT_TIMEOUT = 2.0  # seconds, in all: attaching takes milliseconds
TRACER_COMM = "dftrace-bpf"  # the tracer's name while it attaches probes
WAIT_STEP = 0.001   # seconds between looks

waited = 0.0  # seconds this import spent waiting for the tracer


def tracer_pid(environ=os.environ):
    """The pid in DFTRACE_BPF_TRACER, or None when absent or malformed."""
    v = environ.get(TRACER_ENV, "")
    if not v.isascii() or not v.isdigit():
        return None
    pid = int(v)
    return pid if pid > 0 else None


def _alive(pid):
    """pid is a tracer that still attaches probes."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # it exists, owned by someone else (root)
        pass
    except OSError:
        return False
    try:
        with open("/proc/%d/comm" % pid) as f:
            return f.read().strip() == TRACER_COMM
    except OSError:
        return False


def wait_for_tracer(ready, pid, timeout=WAIT_TIMEOUT, step=WAIT_STEP):
    """Sleep in steps until ready() is true; False as soon as process pid
    no longer exists or once timeout seconds have passed."""
    deadline = time.monotonic() + timeout
    while not ready():
        if not _alive(pid) or time.monotonic() >= deadline:
            return False
        time.sleep(step)
    return True


try:
    from . import _usdt as probes  # noqa: F401
    backend = "usdt"
    reason = None
except ImportError as e:  # not built, or built for another interpreter
    from . import _nousdt as probes  # noqa: F401
    backend = "noop"
    reason = str(e)
else:
    _pid = tracer_pid()
    if _pid is not None:
        _t0 = time.monotonic()
        wait_for_tracer(probes.ready, _pid)
        waited = time.monotonic() - _t0
        del _t0
    del _pid
