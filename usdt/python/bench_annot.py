#!/usr/bin/env python3
"""ns per call: a bare function vs the same function decorated with
@ai.compute.forward vs `with ai.compute.forward:` around the call, and
ai.dataloader.fetch.iter per element, and dftrace.profiler's step().

    PYTHONPATH=build/python /usr/bin/python3 usdt/python/bench_annot.py [N]
    PYTHONPATH=build/python ./dftrace-bpf -q -o /dev/null -- /usr/bin/python3 usdt/python/bench_annot.py --traced

With --traced it first waits (up to 10 s) for the tracer to attach.
"""

import os
import sys
import time

# The source tree next to this script has no built extension: look there last.
_here = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _here] + [_here]

import dftrace  # noqa: E402
from dftrace import ai  # noqa: E402


def bare(x):
    return x


@ai.compute.forward
def decorated(x):
    return x


def ctx(x):
    with ai.compute.forward:
        return bare(x)


def timeit(fn, n):
    best = None
    for _ in range(5):
        t0 = time.perf_counter_ns()
        for i in range(n):
            fn(i)
        dt = (time.perf_counter_ns() - t0) / n
        best = dt if best is None or dt < best else best
    return best


def time_iter(n):
    best = None
    for _ in range(5):
        t0 = time.perf_counter_ns()
        for _ in ai.dataloader.fetch.iter(range(n)):
            pass
        t1 = time.perf_counter_ns()
        for _ in range(n):
            pass
        t2 = time.perf_counter_ns()
        dt = ((t1 - t0) - (t2 - t1)) / n
        best = dt if best is None or dt < best else best
    return best


def time_profiler_step(n):
    """dftrace.profiler's step() (no torch): the step context, and the
    anchor check that finds nothing to do."""
    from dftrace import profiler
    best = None
    with profiler.profile() as p:
        for _ in range(5):
            t0 = time.perf_counter_ns()
            for _ in range(n):
                p.step()
            dt = (time.perf_counter_ns() - t0) / n
            best = dt if best is None or dt < best else best
    return best


def main():
    nums = [a for a in sys.argv[1:] if a.isdigit()]
    n = int(nums[0]) if nums else 200000
    if "--traced" in sys.argv and not _wait(10):
        sys.exit("bench_annot: --traced, but no tracer attached in 10 s")
    print("backend %s, %s" % (dftrace.backend, "traced" if dftrace.enabled() else "untraced"))
    b = timeit(bare, n)
    d = timeit(decorated, n)
    c = timeit(ctx, n)
    it = time_iter(n)
    print("bare call            %8.1f ns/call" % b)
    print("@ai.compute.forward  %8.1f ns/call  (+%.1f)" % (d, d - b))
    print("with ai.compute...   %8.1f ns/call  (+%.1f)" % (c, c - b))
    print(".iter() per element  %8.1f ns/elem  (over a bare for loop)" % it)
    print("profiler step()      %8.1f ns/step" % time_profiler_step(n))
    return 0


def _wait(timeout):
    t = time.time()
    while not dftrace.enabled():
        if time.time() - t > timeout:
            return False
        time.sleep(0.005)
    return True


if __name__ == "__main__":
    sys.exit(main())
