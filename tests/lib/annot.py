#!/usr/bin/env python3
"""Check a trace's annotated phases against what an annotated program says
it did (usdt/examples/minitrain*, tests/workloads/annotate).

    annot.py check TRACE TRUTH        regions, file bytes by phase/epoch/step,
                                      parent links, nesting, iteration counts
    annot.py unbalanced TRACE TRUTH   the repair flags of unbalanced regions
    annot.py names TRACE              "cat<TAB>name" of every region, sorted

TRUTH is the program's stdout: JSON lines with "kind" region, io or
unbalanced. Prints the differences and exits 1 when there are any.
"""

import collections
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from trace import Trace  # noqa: E402

SYSTEM_CATS = {"POSIX", "PROC", "IOCTL", "DEVICE", "dftracer"}
# The program reports "read"/"write"; libc may use the vector forms.
DATA_NAMES = {"read": "read", "pread": "read", "readv": "read", "preadv": "read",
              "write": "write", "pwrite": "write", "writev": "write",
              "pwritev": "write"}


def load_truth(path):
    recs = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith("{"):
                recs.append(json.loads(line))
    return recs


def regions(trace):
    return [e for e in trace.xevents if e.get("cat") not in SYSTEM_CATS]


def diff(what, want, got):
    """want and got: lists of items, or Counters of them, which Counter()
    copies count for count (bytes are never one item a byte)."""
    want, got = collections.Counter(want), collections.Counter(got)
    if want == got:
        return []
    return ["%s differ: missing %s; unexpected %s" % (
        what, sorted((want - got).items()), sorted((got - want).items()))]


# Region args the program cannot know in advance, or that every event has.
BASE_ARGS = {"hhash", "level", "p_idx", "ns10d", "phase_cat", "phase", "epoch", "step",
             "count"}


def check_regions(trace, recs):
    """Every region, with the args it was given itself (and no others)."""
    def own(args):
        return json.dumps({k: v for k, v in args.items() if k not in BASE_ARGS},
                          sort_keys=True)
    want = [(r["pid"], r["cat"], r["name"], own(r.get("args", {})))
            for r in recs if r["kind"] == "region"]
    got = [(e["pid"], e["cat"], e["name"], own(e["args"])) for e in regions(trace)
           if "unbalanced" not in e["args"]]
    return diff("regions (pid, cat, name, own args)", want, got)


def check_io(trace, recs):
    """Bytes per (pid, op, path, phase, epoch, step): the phase is the
    innermost enclosing region as the program saw it."""
    want = collections.Counter()
    for r in recs:
        if r["kind"] == "io":
            want[(r["pid"], r["op"], r["path"], r["cat"], r["name"],
                  r["epoch"], r["step"])] += r["bytes"]
    paths = {k[2] for k in want}
    got = collections.Counter()
    for e in trace.xevents:
        a = e["args"]
        if e["name"] not in DATA_NAMES or trace.path(e) not in paths:
            continue
        if a.get("ret", 0) > 0:
            got[(e["pid"], DATA_NAMES[e["name"]], trace.path(e), a.get("phase_cat"),
                 a.get("phase"), a.get("epoch", -1), a.get("step", -1))] += a["ret"]
    return diff("bytes by (pid, op, path, phase cat, phase, epoch, step)",
                want, got)


def check_links(trace):
    """p_idx names an annotated region of the same process that encloses
    the event, one level up; level 1 has no parent."""
    probs = []
    by_id = {(e["pid"], e["id"]): e for e in regions(trace)}
    for e in trace.xevents:
        a = e["args"]
        if e.get("cat") == "dftracer":
            continue
        if a["p_idx"] == -1:
            if a["level"] != 1:
                probs.append("event %s/%s level %s without parent" % (e["pid"], e["id"], a["level"]))
            continue
        p = by_id.get((e["pid"], a["p_idx"]))
        if p is None:
            probs.append("event %s/%s: p_idx %s is not a region" % (e["pid"], e["id"], a["p_idx"]))
        elif p["args"]["level"] + 1 != a["level"] or p["tid"] != e["tid"]:
            probs.append("event %s/%s: level %s under parent level %s" % (
                e["pid"], e["id"], a["level"], p["args"]["level"]))
        elif not (p["ts"] <= e["ts"] and e["ts"] + e["dur"] <= p["ts"] + p["dur"]):
            probs.append("event %s/%s is outside its parent %s" % (e["pid"], e["id"], p["id"]))
        elif (a.get("phase_cat"), a.get("phase")) != (p["cat"], p["name"]):
            probs.append("event %s/%s: phase %s/%s but parent %s/%s" % (
                e["pid"], e["id"], a.get("phase_cat"), a.get("phase"), p["cat"], p["name"]))
    return probs[:20]


def check_nesting(trace):
    """On each thread any two X events are disjoint or one holds the other."""
    probs = []
    by_tid = collections.defaultdict(list)
    for e in trace.xevents:
        by_tid[(e["pid"], e["tid"])].append(e)
    for key, evs in by_tid.items():
        evs.sort(key=lambda e: (e["ts"], -e["dur"]))
        stack = []
        for e in evs:
            end = e["ts"] + e["dur"]
            while stack and stack[-1] <= e["ts"]:
                stack.pop()
            if stack and end > stack[-1]:
                probs.append("tid %s: event %s overlaps its enclosing event" % (key, e["id"]))
            stack.append(end)
    return probs[:20]


def check_counts(trace):
    """.iter and .block carry 1, 2, ... in order on each thread, per epoch."""
    probs = []
    seqs = collections.defaultdict(list)
    for e in sorted(regions(trace), key=lambda e: e["ts"]):
        if e["name"].endswith((".iter", ".block")):
            seqs[(e["pid"], e["tid"], e["name"], e["args"].get("epoch"))].append(
                e["args"].get("count"))
    for key, counts in seqs.items():
        if counts != list(range(1, len(counts) + 1)):
            probs.append("%s: counts %s" % (key, counts))
    return probs


def check_unbalanced(trace, recs):
    want = [(r["pid"], r["tid"], r["cat"], r["name"], r["flag"])
            for r in recs if r["kind"] == "unbalanced"]
    got = [(e["pid"], e["tid"], e["cat"], e["name"], e["args"].get("unbalanced"))
           for e in regions(trace)]
    return diff("regions (pid, tid, cat, name, flag)", want, got)


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    cmd, trace = argv[0], Trace.load(argv[1])
    probs = list(trace.errors)
    if cmd == "names":
        for c, n in sorted({(e["cat"], e["name"]) for e in regions(trace)}):
            print("%s\t%s" % (c, n))
        return 0
    recs = load_truth(argv[2])
    if cmd == "check":
        probs += (check_regions(trace, recs) + check_io(trace, recs) +
                  check_links(trace) + check_nesting(trace) + check_counts(trace))
    elif cmd == "unbalanced":
        probs += check_unbalanced(trace, recs) + check_nesting(trace)
    else:
        print("annot.py: unknown command '%s'" % cmd, file=sys.stderr)
        return 2
    for p in probs:
        print(p)
    return 1 if probs else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
