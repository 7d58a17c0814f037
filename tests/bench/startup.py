#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Start-up of the tracer, for make bench:
  startup.py TRACER RUNS cmd   its exec to the first traced event of
                               `-- true` (the command's exec), from the trace
  startup.py TRACER RUNS pid   with -p on a busy process: its exec to
                               tracing begun (--pid-file put in place)
Prints "min median max" in ms, and the load part (the summary's "load:")."""
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TRACEPY = os.path.join(HERE, "..", "lib", "trace.py")
LOOP = os.path.join(HERE, "..", "..", "build", "bench", "ioloop")


def load_ms(stderr):
    m = re.search(r"^load: ([0-9.]+) (s|ms|us)", stderr, re.M)
    return float(m.group(1)) * {"s": 1e3, "ms": 1, "us": 1e-3}[m.group(2)] if m else float("nan")


def to_first_event(tracer, tmp):
    trace = os.path.join(tmp, "t.pfw")
    t0 = time.time_ns()
    p = subprocess.run([tracer, "-o", trace, "--", "true"], capture_output=True, text=True)
    first = subprocess.run([sys.executable, TRACEPY, "ts-span", trace], capture_output=True,
                           text=True, check=True).stdout.split()[0]
    return int(first) / 1e3 - t0 / 1e6, load_ms(p.stderr)


def to_tracing(tracer, tmp, busy):
    pidfile = os.path.join(tmp, "pid")
    if os.path.exists(pidfile):
        os.unlink(pidfile)
    t0 = time.monotonic_ns()
    p = subprocess.Popen([tracer, "-p", str(busy.pid), "-d", "0.2", "--pid-file", pidfile,
                          "-o", os.path.join(tmp, "p.pfw")],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    while not os.path.exists(pidfile) and p.poll() is None:
        time.sleep(0.0002)
    took = (time.monotonic_ns() - t0) / 1e6
    _, err = p.communicate()
    return took, load_ms(err)


def main():
    tracer, runs, what = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    with tempfile.TemporaryDirectory() as tmp:
        busy = None
        if what == "pid":
            data = os.path.join(tmp, "data")
            with open(data, "wb") as f:
                f.write(os.urandom(1 << 20))
            busy = subprocess.Popen([LOOP, "lseek", data, str(10 ** 12)], stdout=subprocess.DEVNULL)
        try:
            got = [to_first_event(tracer, tmp) if what == "cmd" else to_tracing(tracer, tmp, busy)
                   for _ in range(runs)]
        finally:
            if busy:
                busy.kill()
                busy.wait()
    ms = sorted(g[0] for g in got)
    loads = sorted(g[1] for g in got)
    print("%.1f %.1f %.1f %.1f" % (ms[0], statistics.median(ms), ms[-1], statistics.median(loads)))


if __name__ == "__main__":
    main()
