#!/usr/bin/python3
"""What `dftrace-bpf summary` must say about a trace, computed another way:
straight from the events (tests/lib/trace.py's loader), in Python, with
exact percentiles. The summary's JSON is compared with it.

    expect.py check TRACE SUMMARY_JSON [--by op|phase|file]
        every row of the summary (and no more) with exact calls, total,
        self, avg, min, max, bytes; p50/p99 within the sketch's 0.8%; the
        headline's events, I/O time, bytes, files and processes
"""
import argparse
import collections
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from trace import Trace  # noqa: E402

IO_CATS = {"POSIX", "STDIO"}
OTHER_CATS = {"PROC", "IOCTL", "DEVICE"}
# and what no syscall shows whole: mappings, io_uring, AIO
READ = {"read", "pread", "readv", "preadv", "fread", "mmap_read", "io_uring_read",
        "io_uring_readv", "io_uring_read_fixed", "aio_read", "aio_readv"}
WRITE = {"write", "pwrite", "writev", "pwritev", "fwrite", "mmap_write", "io_uring_write",
         "io_uring_writev", "io_uring_write_fixed", "aio_write", "aio_writev"}
COPY = {"sendfile", "copy_file_range", "splice"}
SKIP_CATS = {"dftracer", "dftrace.profiler"}


def span_ns(e):
    """start and end in ns, with dftrace-bpf's args.ns10d (D…DSS, 10 ns)."""
    ns = e.get("args", {}).get("ns10d")
    if not isinstance(ns, int):
        return e["ts"] * 1000, (e["ts"] + e["dur"]) * 1000
    d, s = divmod(ns, 100)
    start = e["ts"] * 1000 + s * 10
    return start, start + d * 10


def is_region(e):
    c = e.get("cat", "")
    return c not in IO_CATS and c not in OTHER_CATS


def key_of(t, e, by):
    a = e.get("args", {})
    if by == "op":  # a cuFile call in compatibility mode: its api ("cuFileWrite")
        api = a.get("api", "")
        return api if e.get("cat") == "CUFILE" and len(api) > 6 and api.startswith("cuFile") else e["name"]
    if by == "file":
        return t.path(e) or a.get("fname") or "-"
    if by == "phase":
        if is_region(e):
            return "%s/%s" % (e.get("cat", ""), e["name"])
        return "%s/%s" % (a["phase_cat"], a["phase"]) if "phase" in a else "-"
    raise ValueError(by)


def quantile(values, q):
    values = sorted(values)
    return values[max(0, math.ceil(q * len(values)) - 1)]


def expected(t, by):
    events = [e for e in t.xevents if e.get("cat") not in SKIP_CATS]
    rows = collections.defaultdict(lambda: {"durs": [], "total": 0, "self": 0, "bytes": 0})
    dur, where = {}, {}
    for e in events:
        s, end = span_ns(e)
        k = key_of(t, e, by)
        r = rows[k]
        r["durs"].append(end - s)
        r["total"] += end - s
        r["self"] += end - s
        a = e.get("args", {})
        if e["name"] in READ | WRITE | COPY and e.get("cat") in IO_CATS:
            r["bytes"] += max(a.get("ret", 0), 0)
        dur[(e["pid"], e["id"])] = end - s
        where[(e["pid"], e["id"])] = k
    # a child (region or call, by p_idx) gives its time back to its
    # parent's Self; where both are in one row, that row's Total holds it
    # once, in the parent's duration
    for e in events:
        p = e.get("args", {}).get("p_idx", -1)
        if p >= 0 and (e["pid"], p) in where:
            d, parent = dur[(e["pid"], e["id"])], where[(e["pid"], p)]
            rows[parent]["self"] -= d
            if parent == where[(e["pid"], e["id"])]:
                rows[parent]["total"] -= d
    return rows


def headline(t):
    events = [e for e in t.xevents if e.get("cat") not in SKIP_CATS]
    io = [e for e in events if e.get("cat") in IO_CATS]
    h = {"events": len(events),
         "io_ns": sum(span_ns(e)[1] - span_ns(e)[0] for e in io),
         "bytes_read": sum(max(e["args"].get("ret", 0), 0) for e in io if e["name"] in READ),
         "bytes_written": sum(max(e["args"].get("ret", 0), 0) for e in io if e["name"] in WRITE),
         "files": len({t.path(e) for e in io if t.path(e)}),
         "processes": len({e["pid"] for e in events})}
    return h


def check(trace, summary, by):
    t = Trace.load(trace)
    got = json.load(open(summary))
    probs = []
    want_h = headline(t)
    for k, v in want_h.items():
        if got["headline"][k] != v:
            probs.append("headline %s: got %s, want %s" % (k, got["headline"][k], v))
    want = expected(t, by)
    rows = {r[by]: r for r in got["groupings"][0]["rows"]}
    if set(rows) != set(want):
        probs.append("rows differ: missing %s, unexpected %s"
                     % (sorted(set(want) - set(rows))[:10], sorted(set(rows) - set(want))[:10]))
    for k, w in want.items():
        r = rows.get(k)
        if not r:
            continue
        exact = {"calls": len(w["durs"]), "total_ns": w["total"], "self_ns": w["self"],
                 "avg_ns": sum(w["durs"]) // len(w["durs"]),
                 "min_ns": min(w["durs"]), "max_ns": max(w["durs"]), "bytes": w["bytes"]}
        for f, v in exact.items():
            if r[f] != v:
                probs.append("%s %s: got %s, want %s" % (k, f, r[f], v))
        for f, q in (("p50_ns", 0.5), ("p99_ns", 0.99)):
            v = quantile(w["durs"], q)
            if abs(r[f] - v) > max(0.008 * v, 0.5):
                probs.append("%s %s: got %s, want %s within 0.8%%" % (k, f, r[f], v))
    return probs


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("check")
    p.add_argument("trace")
    p.add_argument("summary")
    p.add_argument("--by", default="op")
    a = ap.parse_args()
    probs = check(a.trace, a.summary, a.by)
    for p in probs[:30]:
        print(p)
    return 1 if probs else 0


if __name__ == "__main__":
    sys.exit(main())
