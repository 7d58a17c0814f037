#!/usr/bin/env python3
"""Check --flight's dumps against what tests/workloads/flight reports.

    flight.py window DUMP TRUTH DIR       the dump of a slow step: its I/O
                                          exact, the steps in its window
                                          exact, nothing older
    flight.py older DUMP                  events that ended before the
                                          window (none allowed)

The workload's "step S BEGIN END" records are CLOCK_MONOTONIC ns; the
dump's times are wall-clock µs: the two are lined up by this process's
own reading of both clocks. Prints what is wrong and exits 1.
"""

import collections
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from trace import Trace, load_truth, under  # noqa: E402

# A step's I/O is done within this of its begin, and whether a step
# within this of the window's start is in the dump is not asserted.
MARGIN_US = 250000


def flight_record(t):
    recs = [e for e in t.xevents
            if e.get("name") == "flight" and e.get("cat") == "dftracer"]
    if len(recs) != 1:
        sys.exit("%d flight records, want 1" % len(recs))
    return recs[0]


def load(path):
    t = Trace.load(path)
    if t.errors:
        sys.exit("\n".join(t.errors[:20]))
    return t


def user_events(t):
    return [e for e in t.xevents if e.get("cat") != "dftracer"]


def window_from(rec):
    return rec["args"]["window_from"]


def cmd_older(path):
    t = load(path)
    start = window_from(flight_record(t))
    old = [e for e in user_events(t) if e["ts"] + e["dur"] < start]
    for e in old[:10]:
        print("ended before the window (%d): %s" % (start, e))
    return 1 if old else 0


def dump_bytes(t, d):
    """(path, name) -> [calls, bytes] of the dump's I/O under d."""
    got = collections.defaultdict(lambda: [0, 0])
    for e in user_events(t):
        p = t.path(e)
        if not under(p, d):
            continue
        row = got[(p, e["name"])]
        row[0] += 1
        ret = (e.get("args") or {}).get("ret")
        if e["name"] in ("pread", "pwrite") and isinstance(ret, int) and ret > 0:
            row[1] += ret
    return got


def step_want(d, s):
    path = "%s/step-%02d.dat" % (d, s)
    return {(path, "open"): [1, 0], (path, "pwrite"): [1, 1000 + s],
            (path, "pread"): [1, 1000 + s], (path, "close"): [1, 0]}


def cmd_window(path, truth, d):
    t = load(path)
    rec = flight_record(t)
    args = rec["args"]
    start = rec["ts"] - args["window_s"] * 1000000
    offset_us = (time.time_ns() - time.monotonic_ns()) // 1000
    got = dump_bytes(t, d)
    probs = []
    slow = args.get("trigger_step")
    if args.get("reason") != "slow-step" or slow is None:
        probs.append("not a slow-step dump: %s" % args)
    inside = outside = 0
    for s, begin, _ in load_truth(truth).get("step", []):
        s, begin_us = int(s), int(begin) // 1000 + offset_us
        want = step_want(d, s)
        have = {k: v for k, v in got.items() if k[0] == next(iter(want))[0]}
        if s == slow or begin_us >= start + MARGIN_US:
            inside += 1
            if have != want:
                probs.append("step %d (in the window): got %s, want %s" % (s, have, want))
        elif begin_us < start - MARGIN_US:
            outside += 1
            if have:
                probs.append("step %d (before the window): got %s" % (s, have))
    if not inside or not outside:
        probs.append("steps in the window %d, before it %d: want both" % (inside, outside))
    for p in probs[:20]:
        print(p)
    return 1 if probs else 0


def main(argv):
    if len(argv) == 2 and argv[0] == "older":
        return cmd_older(argv[1])
    if len(argv) == 4 and argv[0] == "window":
        return cmd_window(*argv[1:])
    sys.exit(__doc__)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]) or 0)
