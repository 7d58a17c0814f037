#!/usr/bin/env python3
"""The collective workload's truth against a merge (tests/merge.bats).

  collectives.py spread TRUTH_A TRUTH_B   the most two ranks' ends of one
                                          call were apart, in ns
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


def truth_ends(paths):
    ends = {}
    for path in paths:
        for line in open(path):
            if not line.startswith("coll\t"):
                continue
            _, rank, i, _start, end = line.split()
            ends.setdefault(int(i), {})[int(rank)] = int(end)
    assert ends and all(len(v) == 2 for v in ends.values()), ends
    return ends


def spread(a, b):
    return max(abs(v[0] - v[1]) for v in truth_ends([a, b]).values())


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
    print({"spread": spread, "gap": gap, "clock": clock, "shift": shift}[cmd](*args))
