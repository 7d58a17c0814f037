#!/usr/bin/env python3
"""The collective workload's truth against a merge (tests/merge.bats).

  collectives.py spread TRUTH_A TRUTH_B   the most two ranks' ends of one
                                          call were apart, in ns
  collectives.py bound TRUTH_A TRUTH_B    where each rank read its own clock
                                          (two hosts): the correction to B's
                                          clock its reads allow, "low high" ns
  collectives.py gap VIEW                 the same on the merged timeline
  collectives.py clock VIEW HOST          HOST's otherData.host_clocks
                                          entry: pairs correction low high
  collectives.py shift IN OUT US [PPM]    a trace's clock US ahead, and
                                          running PPM fast from its first ts
"""
import gzip
import json
import re
import sys


def truth_calls(paths):
    calls = {}
    for path in paths:
        for line in open(path):
            if not line.startswith("coll\t"):
                continue
            _, rank, i, start, end = line.split()
            calls.setdefault(int(i), {})[int(rank)] = (int(start), int(end))
    assert calls and all(len(v) == 2 for v in calls.values()), calls
    return calls


def spread(a, b):
    return max(abs(v[0][1] - v[1][1]) for v in truth_calls([a, b]).values())


def bound(a, b):
    """A call cannot end on one rank before it began on the other: rank
    0's end is past rank 1's start (B's time + the correction), and rank
    1's end past rank 0's start."""
    calls = truth_calls([a, b]).values()
    low = max(v[0][0] - v[1][1] for v in calls)
    high = min(v[0][1] - v[1][0] for v in calls)
    return "%d %d" % (low, high)


def gap(view_path):
    merged = {}
    for e in json.load(open(view_path))["traceEvents"]:
        if e.get("name") == "all_reduce" and e.get("ph") == "X":
            merged.setdefault(e["pid"], []).append(e["ts"] + e["dur"])
    a, b = merged.values()
    assert len(a) == len(b), (len(a), len(b))
    return round(max(abs(x - y) for x, y in zip(sorted(a), sorted(b))) * 1000)


def clock(view_path, host):
    clocks = {c["host"]: c for c in json.load(open(view_path))["otherData"]["host_clocks"]}
    c = clocks[host]
    return "%d %d %d %d" % (c["pairs"], c.get("correction_ns", 0), c.get("low_ns", 0),
                            c.get("high_ns", 0))


def shift(src, dst, us, ppm="0"):
    t0 = []

    def moved(m):
        ts = int(m.group(1))
        t0[:] = t0 or [ts]
        return '"ts":%d' % (ts + int(us) + round(float(ppm) * 1e-6 * (ts - t0[0])))
    with gzip.open(dst, "wt") as out:
        for line in gzip.open(src, "rt"):
            out.write(re.sub(r'"ts":(\d+)', moved, line))
    return dst


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    print({"spread": spread, "bound": bound, "gap": gap, "clock": clock, "shift": shift}[cmd](*args))
