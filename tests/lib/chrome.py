#!/usr/bin/python3
"""Checks of `dftrace-bpf merge` output: the Chrome Trace Event Format as
the viewers read it.

    chrome.py validate OUT          strict JSON, the shape of every event,
                                    nesting by Perfetto's rule
    chrome.py names OUT             process and thread names: pid tid name
    chrome.py contained OUT OUTER FNAME_RE
                                    every X event whose args.fname matches
                                    FNAME_RE lies wholly inside the X event
                                    named OUTER of its process nearest to
                                    it; prints how many were checked
    chrome.py check-io OUT TRUTH --under DIR
                                    every io record of a workload's ground
                                    truth (tests/lib/trace.py) on a path
                                    under DIR is an event of the merged
                                    file, path on the event itself
    chrome.py events OUT [--name N] [--cat C] [--pid P]
                                    one JSON line per matching event
"""
import argparse
import collections
import gzip
import json
import os
import re
import sys


def _reject_constant(name):
    raise ValueError("not JSON: %s" % name)


def _unique_keys(pairs):
    d = {}
    for k, v in pairs:
        if k in d:
            raise ValueError("duplicate key %r" % k)
        d[k] = v
    return d


def load(path):
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    # Strict: ASCII or valid UTF-8, no NaN/Infinity, no duplicate keys.
    text = raw.decode("utf-8")
    return json.loads(text, parse_constant=_reject_constant,
                      object_pairs_hook=_unique_keys)


def _is_num(v):
    return type(v) in (int, float)


def shape_problems(doc):
    probs = []
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        return ["not a {\"traceEvents\": [...]} object"]
    for i, e in enumerate(doc["traceEvents"]):
        where = "event %d (%s)" % (i, str(e)[:120])
        if not isinstance(e, dict):
            probs.append(where + ": not an object")
            continue
        ph = e.get("ph")
        if not isinstance(ph, str) or len(ph) != 1:
            probs.append(where + ": no ph")
        if type(e.get("pid")) is not int or type(e.get("tid")) is not int:
            probs.append(where + ": pid and tid must be integers")
        if not isinstance(e.get("name"), str):
            probs.append(where + ": no name")
        if ph == "M":
            if not isinstance(e.get("args", {}).get("name"), str):
                probs.append(where + ": metadata without args.name")
            continue
        if not _is_num(e.get("ts")) or e["ts"] < 0:
            probs.append(where + ": ts must be a number >= 0")
        if ph == "X" and (not _is_num(e.get("dur")) or e["dur"] < 0):
            probs.append(where + ": X without a dur >= 0")
        if ph == "i" and e.get("s") not in ("g", "p", "t"):
            probs.append(where + ": instant event without a scope")
        if "args" in e and not isinstance(e["args"], dict):
            probs.append(where + ": args is not an object")
    return probs


# Times in the file are µs with up to three decimals: compare in ns.
def _ns(v):
    return round(v * 1000)


def nesting_problems(doc):
    """Perfetto's rule: on one thread, a slice that starts inside another
    must end inside it too (slices sorted by start, longer first)."""
    probs = []
    by_thread = collections.defaultdict(list)
    for e in doc["traceEvents"]:
        if e.get("ph") == "X":
            by_thread[(e["pid"], e["tid"])].append((_ns(e["ts"]), _ns(e["dur"]), e))
    for (pid, tid), evs in by_thread.items():
        evs.sort(key=lambda x: (x[0], -x[1]))
        stack = []
        for s, d, e in evs:
            t = s + d
            while stack and stack[-1][1] <= s:
                stack.pop()
            if stack and t > stack[-1][1]:
                o = stack[-1][2]
                probs.append("pid %d tid %d: %s [%d, %d] ns ends after its parent "
                             "%s [%d, %d]" % (pid, tid, e["name"], s, t, o["name"],
                                               stack[-1][0], stack[-1][1]))
                continue
            stack.append((s, t, e))
    return probs


def names(doc):
    out = []
    for e in doc["traceEvents"]:
        if e.get("ph") == "M" and e["name"] in ("process_name", "thread_name"):
            out.append("%s %d %d %s" % (e["name"], e["pid"], e["tid"], e["args"]["name"]))
    return out


def contained(doc, outer, fname_re):
    """(checked, problems): each X event whose args.fname matches fname_re
    against the X event named outer of its process nearest to it."""
    rx = re.compile(fname_re)
    outers = collections.defaultdict(list)
    for e in doc["traceEvents"]:
        if e.get("ph") == "X" and e["name"] == outer:
            outers[e["pid"]].append((_ns(e["ts"]), _ns(e["ts"]) + _ns(e["dur"])))
    checked, probs = 0, []
    for e in doc["traceEvents"]:
        if e.get("ph") != "X" or not rx.search(str(e.get("args", {}).get("fname", ""))):
            continue
        s, t = _ns(e["ts"]), _ns(e["ts"]) + _ns(e["dur"])
        checked += 1
        if not outers[e["pid"]]:
            probs.append("%s %s: no %s in process %d" % (e["name"], e["args"]["fname"],
                                                       outer, e["pid"]))
            continue
        os_, ot = min(outers[e["pid"]], key=lambda o: max(o[0] - s, t - o[1], 0))
        if s < os_ or t > ot:
            probs.append("%s %s [%d, %d] ns is not inside %s [%d, %d] ns (%+d, %+d)"
                         % (e["name"], e["args"]["fname"], s, t, outer, os_, ot,
                            s - os_, ot - t))
    return checked, probs


def io_problems(doc, truth_path, under):
    """The io records of truth (trace.py's TSV) under a directory against
    the merged events: same name, pid, tid, syscall, ret and fname, as a
    multiset."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import trace
    want = collections.Counter()
    for io in trace.truth_io(trace.load_truth(truth_path)):
        if io["path"] and (io["path"] == under or io["path"].startswith(under + "/")):
            want[(io["name"], io["pid"], io["tid"], io["args.syscall"], io["args.ret"],
                  io["path"])] += 1
    got = collections.Counter()
    for e in doc["traceEvents"]:
        a = e.get("args", {})
        if e.get("ph") == "X" and str(a.get("fname", "")).startswith(under):
            # events of no syscall (mmap_read, io_uring_*): "-" in the truth
            got[(e["name"], e["pid"], e["tid"], a.get("syscall", "-"), a.get("ret"),
                 a["fname"])] += 1
    probs = ["missing %s x%d" % (k, n) for k, n in (want - got).items()]
    if not want:
        probs.append("no io records under %s in %s" % (under, truth_path))
    return probs


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("validate")
    p.add_argument("path")
    p = sub.add_parser("names")
    p.add_argument("path")
    p = sub.add_parser("contained")
    p.add_argument("path")
    p.add_argument("outer")
    p.add_argument("fname_re")
    p = sub.add_parser("check-io")
    p.add_argument("path")
    p.add_argument("truth")
    p.add_argument("--under", required=True)
    p = sub.add_parser("events")
    p.add_argument("path")
    p.add_argument("--name")
    p.add_argument("--cat")
    p.add_argument("--pid", type=int)
    a = ap.parse_args(argv)
    try:
        doc = load(a.path)
    except (OSError, ValueError) as e:
        print("%s: %s" % (a.path, e))
        return 1
    if a.cmd == "validate":
        probs = shape_problems(doc)
        probs += nesting_problems(doc) if not probs else []
        for p in probs[:25]:
            print(p)
        if not probs:
            print("ok: %d events" % len(doc["traceEvents"]))
        return 1 if probs else 0
    if a.cmd == "names":
        print("\n".join(names(doc)))
        return 0
    if a.cmd == "check-io":
        probs = io_problems(doc, a.truth, a.under)
        for p in probs[:25]:
            print(p)
        return 1 if probs else 0
    if a.cmd == "contained":
        n, probs = contained(doc, a.outer, a.fname_re)
        for p in probs:
            print(p)
        print("checked %d" % n)
        return 1 if probs or not n else 0
    for e in doc["traceEvents"]:
        if ((a.name is None or e.get("name") == a.name) and
                (a.cat is None or e.get("cat") == a.cat) and
                (a.pid is None or e.get("pid") == a.pid)):
            print(json.dumps(e, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
