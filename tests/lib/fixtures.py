#!/usr/bin/python3
"""Traces other tools write, for the merge's tests, with what they hold.

    fixtures.py dftracer OUT --shape bracket|commas|bare [--v1] [--rank R]
                         [--host H] [--pid P]
        a trace as DFTracer/pydftracer writes it (shared/reference/
        dftracer-trace-format.md): "[" then one event per line, without
        commas (bracket), with commas and the closing "]" (commas), or the
        lines alone (bare); v2 hex hashes, or v1 integers with --v1.
    fixtures.py overlap OUT
        compute regions and I/O calls on several threads and processes, in
        DFTracer's format, written in order of end as tracers write them;
        prints the unoverlapped I/O and I/O time they make, in ns.
    fixtures.py kineto OUT --pid P --rank R --start-us US [--base]
        a Kineto trace ({"traceEvents": [...]}) of one op aten::mm at
        START_US: with --base, times relative to baseTimeNanoseconds (as
        Kineto writes since 2024-04); else absolute µs (before).
    fixtures.py folded FULL FOLDED
        the same 1,011 preads twice: one event each (FULL), and as one
        total as --profile writes it (FOLDED: args.calls, args.hist);
        prints each call's bucket's bounds and middle, for the min, max,
        p50 and p99 of the full trace.
    fixtures.py hostile-strings PFW TORCH
        a trace (DFTracer's shape) and a Kineto trace whose strings hold a
        NUL, control bytes, invalid UTF-8, invalid escapes and a lone
        surrogate, in names, cats, keys, values, nested values, file paths,
        thread names and marks, and numbers JSON has not (01, 1.): all of
        which the readers take; prints the X events in them.
    fixtures.py recorded-torch OUT PATH...
        a trace (DFTracer's shape, pid 7, one read) that recorded each
        PATH as its torch trace, as dftrace.profiler does.
    fixtures.py many DIR N [--big K]
        N small traces in DIR (trace-I.pfw, DFTracer's shape), one process
        each with 4 I/O calls: a -D directory of a big job, for the merge;
        and K gzipped ones of 24,000 calls, 4.7 MB unzipped (big-I.pfw.gz).

Each prints the facts a test checks as one JSON line.
"""
import argparse
import gzip
import json
import sys

T0 = 1753123070000000  # µs since the epoch


def dftracer(a):
    def h(n):
        return n if a.v1 else "%016x" % n

    pid = a.pid
    files = {"/data/train/img_%d.npz" % i: 1000 + i for i in range(2)}
    ev = [{"name": "HH", "cat": "dftracer", "pid": pid, "tid": pid, "ph": "M",
           "args": {"name": a.host, "value": h(77)}},
          {"name": "PR", "cat": "dftracer", "pid": pid, "tid": pid, "ph": "M",
           "args": {"name": "rank", "value": str(a.rank)}},
          {"name": "process_name", "cat": "dftracer", "pid": pid, "tid": pid, "ph": "M",
           "args": {"name": "train.py"}}]
    for path, fh in files.items():
        ev.append({"name": "FH", "cat": "dftracer", "pid": pid, "tid": pid, "ph": "M",
                   "args": {"name": path, "value": h(fh)}})
    xs, idx, ts = [], 1, T0 + 10
    xs.append({"id": idx, "name": "forward", "cat": "compute", "pid": pid, "tid": pid,
               "ts": ts, "dur": 500, "ph": "X",
               "args": {"hhash": h(77), "level": 1, "p_idx": -1, "epoch": 1, "step": 1}})
    for path, fh in files.items():
        for name, ret in (("open", 3), ("read", 4096), ("close", 0)):
            idx += 1
            ts += 20
            # reads on a thread of their own
            tid = pid + 1 if name == "read" else pid
            xs.append({"id": idx, "name": name, "cat": "POSIX", "pid": pid, "tid": tid,
                       "ts": ts, "dur": 5, "ph": "X",
                       "args": {"hhash": h(77), "level": 2, "p_idx": 1, "ret": ret,
                                "fhash": h(fh)}})
    for i in range(a.small):  # 4 KiB reads of the first file, after the rest
        idx += 1
        ts += 20
        xs.append({"id": idx, "name": "read", "cat": "POSIX", "pid": pid, "tid": pid,
                   "ts": ts, "dur": 10, "ph": "X",
                   "args": {"hhash": h(77), "level": 1, "p_idx": -1, "ret": 4096,
                            "fhash": h(1000)}})
    cm = {"name": "CM", "cat": "dftracer", "pid": pid, "tid": pid, "ph": "M",
          "args": {"name": "epoch.start", "value": str(T0 + 5)}}
    lines = [json.dumps(e, separators=(",", ":")) for e in ev + [cm] + xs]
    with open(a.out, "w") as f:
        if a.shape == "bracket":
            f.write("[\n" + "\n".join(lines) + "\n")
        elif a.shape == "commas":
            f.write("[\n" + ",\n".join(lines) + "\n]\n")
        else:
            f.write("\n".join(lines) + "\n")
    print(json.dumps({"x": len(xs), "t0_us": T0 + 5, "reads": {p: 4096 for p in files},
                      "cm_us": T0 + 5, "forward_us": T0 + 10}))


def overlap(a):
    """(pid, tid, cat, name, start, end, parent) in µs from T0; the I/O
    uncovered by compute of its own process is given beside each call."""
    ev = [  # compute on the main thread, I/O on others partly inside it
        (100, 100, "compute", "forward", 1000, 1100, None),
        (100, 101, "POSIX", "read", 1050, 1150, None),    # 50 uncovered
        (100, 100, "POSIX", "write", 1200, 1210, None),   # 10
        (100, 100, "compute", "backward", 1300, 1400, None),
        (100, 102, "POSIX", "read", 1250, 1350, None),    # 50
        (100, 101, "POSIX", "read", 1320, 1330, None),    # 0
        # another process's compute covers nothing of this one's
        (200, 200, "POSIX", "read", 1000, 1100, None),    # 100
        # nested compute, and a call inside its parent
        (100, 100, "compute", "forward", 2000, 2100, None),
        (100, 100, "compute", "step", 2010, 2020, 8),  # in id 8
        (100, 103, "POSIX", "read", 2050, 2150, None),    # 50
    ]
    lines, ids = [], {}
    for i, (pid, tid, cat, name, s, e, parent) in enumerate(ev, 1):
        ids[i] = (pid, s, e)
    order = sorted(range(len(ev)), key=lambda i: (ev[i][5], -ev[i][4]))
    for i in order:
        pid, tid, cat, name, s, e, parent = ev[i]
        args = {"hhash": "0000000000000001", "level": 2 if parent else 1,
                "p_idx": parent if parent else -1}
        if cat == "POSIX":
            args["ret"] = 10
        lines.append(json.dumps({"id": i + 1, "name": name, "cat": cat, "pid": pid,
                                 "tid": tid, "ts": T0 + s, "dur": e - s, "ph": "X",
                                 "args": args}, separators=(",", ":")))
    with open(a.out, "w") as f:
        f.write("[\n" + "\n".join(lines) + "\n]\n")
    io = [x for x in ev if x[2] == "POSIX"]
    print(json.dumps({"unoverlapped_io_ns": 260000,
                      "io_ns": sum(e - s for _, _, _, _, s, e, _ in io) * 1000}))


def nested(a):
    """A region in a region, calls inside both, as a trace writes them
    (children first; µs from T0):
      train/step [0, 100) id 1 > data/fetch [10, 50) id 2 > read /a
      [20, 30) id 3, read /a [35, 40) id 4; train/step > write /b [60, 80)
      id 5; and a second process's read /c [0, 20) with no region."""
    ev = [(3, "read", "POSIX", 20, 30, 2, "/a", "data", "fetch"),
          (4, "read", "POSIX", 35, 40, 2, "/a", "data", "fetch"),
          (2, "fetch", "data", 10, 50, 1, None, None, None),
          (5, "write", "POSIX", 60, 80, 1, "/b", "train", "step"),
          (1, "step", "train", 0, 100, -1, None, None, None)]
    lines = [json.dumps({"name": "FH", "cat": "dftracer", "pid": 1, "tid": 1, "ph": "M",
                         "args": {"name": f, "value": "%016x" % n}})
             for n, f in ((1, "/a"), (2, "/b"), (3, "/c"))]
    for i, name, cat, s, e, parent, f, pcat, phase in ev:
        args = {"hhash": "0000000000000001", "p_idx": parent}
        if f:
            args.update(ret=100, fhash="%016x" % {"/a": 1, "/b": 2}[f], phase_cat=pcat,
                        phase=phase)
        lines.append(json.dumps({"id": i, "name": name, "cat": cat, "pid": 1, "tid": 1,
                                 "ts": T0 + s, "dur": e - s, "ph": "X", "args": args}))
    lines.append(json.dumps({"id": 1, "name": "read", "cat": "POSIX", "pid": 2, "tid": 2,
                             "ts": T0, "dur": 20, "ph": "X",
                             "args": {"p_idx": -1, "ret": 7, "fhash": "%016x" % 3}}))
    with open(a.out, "w") as out:
        out.write("[\n" + "\n".join(lines) + "\n]\n")


def kineto(a):
    doc = {"schemaVersion": 1,
           "distributedInfo": {"backend": "gloo", "rank": a.rank, "world_size": 2},
           "traceEvents": [
               {"ph": "M", "name": "process_name", "pid": a.pid, "tid": 0,
                "args": {"name": "python3"}},
               {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": a.pid,
                "tid": a.pid, "ts": None, "dur": 3.5, "args": {}}]}
    start_ns = a.start_us * 1000 + 345
    rel = start_ns
    if a.base:
        doc["baseTimeNanoseconds"] = start_ns - 12345
        rel = 12345
    # as Kineto's fmtTs writes it, "µs.ns" in text: a double would round
    # absolute µs
    doc["traceEvents"][1]["ts"] = "TS"
    text = json.dumps(doc).replace('"TS"', "%d.%03d" % (rel // 1000, rel % 1000))
    with open(a.out, "w") as f:
        f.write(text)
    print(json.dumps({"mm_ns": start_ns}))


def folded(a):
    """Durations in whole µs, so that the full trace has them exactly: a
    body of 1 to 50 µs, a tail of 3 ms and one call of 33.9 ms."""
    durs = [1 + i * 7 % 50 for i in range(1000)] + [3000] * 10 + [33900]
    pid, ts, full = 4242, T0, []
    for d in durs:
        full.append({"id": len(full) + 1, "name": "pread", "cat": "POSIX", "pid": pid,
                     "tid": pid, "ts": ts, "dur": d, "ph": "X",
                     "args": {"level": 1, "p_idx": -1, "ret": 4096, "fname": "/data/a"}})
        ts += d + 1
    ns = [d * 1000 for d in durs]
    hist = {}
    for v in ns:
        b = min(v.bit_length() - 1, 31)
        hist[b] = hist.get(b, 0) + 1
    total = {"id": 1, "name": "pread", "cat": "POSIX", "pid": pid, "tid": pid, "ts": T0,
             "dur": sum(durs), "ph": "X",
             "args": {"level": 1, "p_idx": -1, "ret": 4096 * len(durs), "folded": "profile",
                      "calls": len(durs), "errors": 0, "span_ns": (ts - 1 - T0) * 1000,
                      "hist": " ".join("%d:%d" % kv for kv in sorted(hist.items())),
                      "fname": "/data/a"}}
    for out, evs in ((a.full, full), (a.folded, [total])):
        with open(out, "w") as f:
            f.write("[\n" + "\n".join(json.dumps(e, separators=(",", ":")) for e in evs)
                    + "\n")

    def bucket(v):
        b = v.bit_length() - 1
        lo, hi = 1 << b, (2 << b) - 1
        return {"value": v, "lo": lo, "hi": hi, "mid": lo + (hi - lo) // 2}

    s = sorted(ns)
    rank = lambda q: s[max(1, -(-len(s) * q // 100)) - 1]  # noqa: E731
    print(json.dumps({"calls": len(ns), "total_ns": sum(ns), "min": bucket(s[0]),
                      "max": bucket(s[-1]), "p50": bucket(rank(50)),
                      "p99": bucket(rank(99))}))


def hostile_strings(a):
    bad = [b"nul\x00", b"ctl\x01\x1b[2J\x7f", b"utf8\xff\xc3\x28\xed\xa0\x80",
           b"esc\\q\\x41\\u12G4", b"lone\\ud800", b"ok\\u00e9\\n"]
    ts = b"%d" % (T0 + 10)

    def q(s):
        return b'"' + s + b'"'

    lines = [b'{"name":"FH","cat":"dftracer","pid":7,"tid":7,"ph":"M","args":{"name":'
             + q(b"/data/" + bad[2] + bad[1]) + b',"value":"00000000000000aa"}}',
             b'{"name":"thread_name","cat":"dftracer","pid":7,"tid":8,"ph":"M","args":{"name":'
             + q(bad[1]) + b'}}',
             b'{"name":"CM","cat":"dftracer","pid":7,"tid":7,"ph":"M","args":{"name":'
             + q(bad[0]) + b',"value":"' + ts + b'"}}']
    for i, s in enumerate(bad):
        args = (b'{"ret":01,"x":1.,"fhash":"00000000000000aa",' + q(b"k" + s) + b":" + q(s)
                + b',"nested":{"a":[' + q(s) + b',-0,{' + q(s) + b':[]}]}}')
        lines.append(b'{"id":%d,"name":' % (i + 1) + q(b"read" + s) + b',"cat":' + q(s)
                     + b',"pid":7,"tid":8,"ts":' + ts + b',"dur":1,"ph":"X","args":' + args
                     + b"}")
    with open(a.pfw, "wb") as f:
        f.write(b"\n".join(lines) + b"\n")
    ops = [b'{"ph":"X","cat":' + q(s) + b',"name":' + q(b"aten::" + s) + b',"pid":9,"tid":9,'
           b'"ts":' + ts + b',"dur":2,' + q(b"k" + s) + b':[' + q(s) + b'],"args":{'
           + q(s) + b':' + q(s) + b'}}' for s in bad]
    with open(a.torch, "wb") as f:
        f.write(b'{"traceEvents":[' + b",".join(ops) + b']}')
    print(json.dumps({"x": 2 * len(bad)}))


def recorded_torch(a):
    ev = [{"id": 1, "name": "read", "cat": "POSIX", "pid": 7, "tid": 7, "ts": T0, "dur": 5,
           "ph": "X", "args": {"level": 1, "p_idx": -1, "ret": 10, "fname": "/data/a"}}]
    for i, path in enumerate(a.paths):
        ev.append({"id": i + 2, "name": "torch_trace", "cat": "dftrace.profiler", "pid": 7,
                   "tid": 7, "ts": T0 + 10 + i, "dur": 0, "ph": "X",
                   "args": {"level": 1, "p_idx": -1, "path0": path}})
    with open(a.out, "w") as f:
        f.write("\n".join(json.dumps(e, separators=(",", ":")) for e in ev) + "\n")
    print(json.dumps({"x": len(ev)}))


def many(a):
    def trace(pid, calls):
        ev = [{"name": "process_name", "cat": "dftracer", "pid": pid, "tid": pid, "ph": "M",
               "args": {"name": "rank%d" % pid}}]
        for k in range(calls):
            name = ("open", "read", "read", "close")[k % 4]
            ev.append({"id": k + 1, "name": name, "cat": "POSIX", "pid": pid, "tid": pid,
                       "ts": T0 + pid * 10 + k, "dur": 1, "ph": "X",
                       "args": {"level": 1, "p_idx": -1, "ret": 4096 if name == "read" else 0,
                                "fname": "/data/%d/a-long-enough-file-name.npz" % pid}})
        return "\n".join(json.dumps(e, separators=(",", ":")) for e in ev) + "\n"

    for i in range(a.n):
        with open("%s/trace-%d.pfw" % (a.dir, i), "w") as f:
            f.write(trace(100000 + i, 4))
    for i in range(a.big):
        with gzip.open("%s/big-%d.pfw.gz" % (a.dir, i), "wt", compresslevel=1) as f:
            f.write(trace(200000 + i, 24000))
    print(json.dumps({"events": 4 * a.n + 24000 * a.big, "processes": a.n + a.big}))


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("dftracer")
    p.add_argument("out")
    p.add_argument("--shape", choices=("bracket", "commas", "bare"), default="bracket")
    p.add_argument("--v1", action="store_true")
    p.add_argument("--rank", type=int, default=3)
    p.add_argument("--host", default="node07")
    p.add_argument("--pid", type=int, default=4242)
    p.add_argument("--small", type=int, default=0, help="more 4 KiB reads of img_0")
    p = sub.add_parser("overlap")
    p.add_argument("out")
    p = sub.add_parser("nested")
    p.add_argument("out")
    p = sub.add_parser("kineto")
    p.add_argument("out")
    p.add_argument("--pid", type=int, required=True)
    p.add_argument("--rank", type=int, default=1)
    p.add_argument("--start-us", type=int, required=True)
    p.add_argument("--base", action="store_true")
    p = sub.add_parser("folded")
    p.add_argument("full")
    p.add_argument("folded")
    p = sub.add_parser("hostile-strings")
    p.add_argument("pfw")
    p.add_argument("torch")
    p = sub.add_parser("recorded-torch")
    p.add_argument("out")
    p.add_argument("paths", nargs="+")
    p = sub.add_parser("many")
    p.add_argument("dir")
    p.add_argument("n", type=int)
    p.add_argument("--big", type=int, default=0)
    a = ap.parse_args()
    {"dftracer": dftracer, "kineto": kineto, "overlap": overlap, "folded": folded,
     "nested": nested,
     "many": many, "hostile-strings": hostile_strings,
     "recorded-torch": recorded_torch}[a.cmd](a)
    return 0


if __name__ == "__main__":
    sys.exit(main())
