#!/usr/bin/env python3
"""Read dftrace-bpf traces and check them against workload ground truth.

Library
-------
    from trace import Trace
    t = Trace.load("t.pfw.gz")          # .pfw, .pfw.gz (also cut short), or a
                                        # directory of them (-D output)
    t.errors                            # format problems found while loading
    t.xevents                           # the "ph":"X" events
    t.path(ev), t.path2(ev)             # fhash / fhash2 joined to FH names

Command line (every command takes one TRACE: a file or a -D directory)
------------
    validate TRACE [--partial]          every line is JSON, hashes resolve, ...
    count TRACE [FILTER...]             number of matching X events
    names TRACE [FILTER...]             distinct event names
    bytes TRACE --by KEYS [FILTER...]   TSV: KEYS..., calls, bytes
    events TRACE --fields F,.. [FILTER] TSV of fields (name, pid, args.ret,
                                        path, path2, ...); --json for JSON
    paths TRACE [--under DIR]           FH names, one per line (JSON-quoted)
    meta TRACE NAME                     metadata lines with that name (JSON)
    lost TRACE [--op OP | --total]      per-op loss (TSV), one op, or end's
    check-nesting TRACE                 X events of each tid nest properly
    ts-span TRACE                       "FIRST LAST COUNT": the smallest and
                                        largest ts of the traced events (X,
                                        not cat dftracer), fast on big files
    check TRACE TRUTH [--under DIR] [--name N]... [--only KIND,...]
                                        compare with a workload's ground truth:
                                        events on the files it names (and
                                        with --under, on anything in DIR)
    truth-bytes TRUTH --by KEYS [...]   the same TSV as `bytes`, from TRUTH
    dfa-bytes TRACE [FILTER...]         TSV: path, bytes, as DFAnalyzer counts
                                        them (see dfa_counts)
    wait-for TRACE [FILTER...] [--timeout S] [--alive PID] [--complete]
                                        poll a growing trace for an event

FILTERs: --name N[,N..] --cat C --pid P --tid T --syscall S --path P
         --under DIR (path is DIR or below it) --ret R

Ground truth (what workloads print; see tests/workloads/workload.h) is TSV,
one record per line, first field the kind:
    io    PATH PID TID NAME SYSCALL RET [PATH2]  one syscall on a file
    spawn PID TID NAME CHILD                     a fork/clone/vfork; NAME may
                                                 list alternatives: fork|clone
    exec  PID                                    PID exec'd
    exit  PID STATUS                             process PID exited; STATUS is
                                                 the wait(2) status (exit(3)
                                                 gives 3<<8); the exit event
                                                 says it as a shell does:
                                                 args.exit_code 3, or 128+N
                                                 and args.signal N
    task  PID TID                                this task must show up
    ioctl PID TID PATH REQUEST DIR TYPE NR SIZE RET REQNAME
                                                 (DIR..SIZE "-": the request
                                                 is a plain number and the
                                                 event has no _IOC fields)
    devioctl PATH REQUEST REQNAME DEVICE KIND    the ioctl records on PATH with
                                                 REQUEST are device events:
                                                 cat DEVICE, args.device,
                                                 args.kind, args.req_name
                                                 ("-": none; DEVICE "-": an
                                                 ordinary IOCTL event)
    hostile PID HEXPATH NBYTES                   a write of NBYTES to a file
                                                 whose name has hostile bytes
    toolong PID TID HEXPATH RET                  open of a path > PATH_MAX
    mm    PID TID NAME ADDR LENGTH RET           msync/munmap of a mapping
    gpu   PID TID CAT NAME BYTES DETAIL RCAT RNAME STEP FUNC ARGS
                                                 a CUDA driver, NCCL or cuFile
                                                 call (tests/workloads/gpujob.c
                                                 says each field; checked by
                                                 gpu-check, not by `check`)
    info ...                                     free text, not checked
Paths in truth are absolute and canonical; "-" means none.
"""

import argparse
import collections
import json
import os
import re
import sys
import time
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import v2  # noqa: E402  DFTracer's format v2, read here as v1

# Operations whose args.ret is a byte count.
DATA_OPS = frozenset("""read write pread pwrite readv writev preadv pwritev
    sendfile copy_file_range splice mmap_read mmap_write
    io_uring_read io_uring_write io_uring_readv io_uring_writev
    io_uring_read_fixed io_uring_write_fixed
    aio_read aio_write aio_readv aio_writev""".split())

HEX16 = re.compile(r"^[0-9a-f]{16}$")
SURROGATE_ESC = re.compile(r"\\u[dD][89a-fA-F]")


class TraceError(Exception):
    pass


def _reject_constant(name):
    raise ValueError("not JSON: %s" % name)


def _unique_keys(pairs):
    """Readers disagree on a repeated key (first or last wins): reject it."""
    keys = [k for k, _ in pairs]
    if len(keys) != len(set(keys)):
        raise ValueError("repeated key %r" % sorted(k for k in keys if keys.count(k) > 1)[0])
    return dict(pairs)


def _has_lone_surrogate(s):
    for ch in s:
        if 0xD800 <= ord(ch) <= 0xDFFF:
            return True
    return False


def _walk_strings(obj):
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for k, v in obj.items():
            yield k
            yield from _walk_strings(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from _walk_strings(v)


def read_bytes(path):
    """The decompressed bytes of a trace file, and how it ended.

    Returns (data, info) where info has: gzip (bool), members (gzip members
    seen), truncated (the gzip stream stopped before its end), partial (the
    text does not end with a newline: its last line was cut off)."""
    with open(path, "rb") as f:
        raw = f.read()
    info = {"gzip": raw[:2] == b"\x1f\x8b", "members": 0, "truncated": False,
            "partial": False, "gzip_error": None}
    if not info["gzip"]:
        data = raw
    else:
        out = []
        rest = raw
        while rest:
            d = zlib.decompressobj(16 + zlib.MAX_WBITS)
            info["members"] += 1
            try:
                # Decompress in chunks so that what precedes a corrupt or
                # missing tail is kept.
                for i in range(0, len(rest), 65536):
                    out.append(d.decompress(rest[i:i + 65536]))
                    if d.eof:
                        break
            except zlib.error as e:
                info["truncated"] = True
                info["gzip_error"] = str(e)
                break
            if not d.eof:
                info["truncated"] = True
                break
            rest = d.unused_data
            if rest and rest[:2] != b"\x1f\x8b":
                info["gzip_error"] = "trailing garbage after gzip stream"
                break
        data = b"".join(out)
    if data and not data.endswith(b"\n"):
        info["partial"] = True
    return data, info


def _first_is_v2(line):
    try:
        return v2.is_v2(json.loads(line))
    except ValueError:
        return False


def _is_end_line(line):
    try:
        o = json.loads(line)
    except ValueError:
        return False
    return isinstance(o, dict) and o.get("name") == "end" and o.get("cat") == "dftracer"


class Trace:
    """One trace (or the merge of a -D directory of traces)."""

    def __init__(self):
        self.files = []
        self.objects = []     # every JSON object, in file order
        self.xevents = []     # "ph":"X"
        self.meta = []        # "ph":"M"
        self.fh = {}          # fhash -> path
        self.hh = {}
        self.sh = {}
        self.errors = []      # strings: "file:line: problem"
        self.complete = True  # every file ended with "]" (v2: with its end)
        self.info = {}
        self.formats = {}     # file -> "v1" or "v2"

    # -- loading ---------------------------------------------------------
    @classmethod
    def load(cls, path, partial_ok=False):
        t = cls()
        if os.path.isdir(path):
            names = sorted(n for n in os.listdir(path)
                           if n.endswith(".pfw") or n.endswith(".pfw.gz"))
            if not names:
                t.errors.append("%s: no trace files in directory" % path)
            for n in names:
                t._load_file(os.path.join(path, n), partial_ok)
        else:
            t._load_file(path, partial_ok)
        return t

    def _err(self, where, msg):
        self.errors.append("%s: %s" % (where, msg))

    def _load_file(self, path, partial_ok):
        self.files.append(path)
        data, info = read_bytes(path)
        self.info[path] = info
        name = os.path.basename(path)
        if info["members"] > 1:
            self._err(name, "%d gzip members (must be one stream)"
                      % info["members"])
        if info["gzip_error"] and not info["truncated"]:
            self._err(name, info["gzip_error"])
        lines = data.split(b"\n")
        if lines and lines[-1] == b"":
            lines.pop()
        elif lines and info["partial"]:
            lines.pop()          # cut-off last line: only up to a flush
        if not lines:
            self._err(name, "empty trace")
            self.complete = False
            return
        fmt_v2 = lines[0] != b"[" and _first_is_v2(lines[0])
        self.formats[path] = "v2" if fmt_v2 else "v1"
        if lines[0] != b"[" and not fmt_v2:
            self._err(name + ":1", "first line is not '['")
        last = lines[-1]
        if fmt_v2:  # no brackets: a whole file ends with its end record
            last = b"]" if _is_end_line(last) else last
        file_complete = not (last != b"]" or info["truncated"]
                             or info["partial"])
        if not file_complete:
            self.complete = False
            if not partial_ok:
                self._err(name, "trace does not end with ']' (%s)" %
                          ("gzip stream cut short" if info["truncated"]
                           else "last line cut off" if info["partial"]
                           else "last line %r" % last[:60]))
        local_fh = {}
        local_other = set()   # HH and SH hashes seen so far in this file
        ids = collections.defaultdict(set)
        n_x, ends = 0, []
        for no, raw in enumerate(lines, 1):
            where = "%s:%d" % (name, no)
            if raw in (b"[", b"]"):
                if fmt_v2:
                    self._err(where, "%r in a v2 trace" % raw.decode())
                    continue
                if raw == b"]" and no != len(lines):
                    self._err(where, "']' before the last line")
                if raw == b"[" and no != 1:
                    self._err(where, "'[' after the first line")
                continue
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                self._err(where, "invalid UTF-8: %s" % e)
                continue
            try:
                obj = json.loads(text, parse_constant=_reject_constant,
                                 object_pairs_hook=_unique_keys)
            except ValueError as e:
                self._err(where, "invalid JSON: %s: %r" % (e, text[:200]))
                continue
            if not isinstance(obj, dict):
                self._err(where, "not a JSON object")
                continue
            if (SURROGATE_ESC.search(text) and
                    any(_has_lone_surrogate(s) for s in _walk_strings(obj))):
                self._err(where, "string with a lone UTF-16 surrogate")
            if fmt_v2:
                for p in v2.check(obj, len(raw)):
                    self._err(where, p)
                if obj.get("ph") == v2.COUNTER:
                    continue  # a time series sample, not an event
                obj = v2.v1_view(obj)
            obj["_where"] = where
            self.objects.append(obj)
            ph = obj.get("ph")
            args = obj.get("args")
            if ph == "M":
                self.meta.append(obj)
                if not isinstance(args, dict):
                    self._err(where, "metadata without args")
                    continue
                table = {"FH": self.fh, "HH": self.hh,
                         "SH": self.sh}.get(obj.get("name"))
                if table is not None:
                    val, nm = args.get("value"), args.get("name")
                    if not isinstance(val, str) or not HEX16.match(val):
                        self._err(where, "hash is not 16 hex digits: %r"
                                  % (val,))
                    if not isinstance(nm, str):
                        self._err(where, "hash name is not a string")
                    if not isinstance(args.get("hhash"), str):
                        self._err(where, "%s line without args.hhash (DFTracer "
                                  "writes it)" % obj.get("name"))
                    if obj["name"] == "FH":
                        if val in local_fh:
                            if local_fh[val] != nm:
                                self._err(where, "FH %s names two paths: "
                                          "%r and %r" % (val, local_fh[val],
                                                         nm))
                            else:
                                self._err(where, "FH %s written twice" % val)
                        local_fh[val] = nm
                    else:
                        local_other.add(val)
                    table[val] = nm
            elif ph == "X":
                self._check_x(obj, where, local_fh, local_other, ids)
                self.xevents.append(obj)
                if obj.get("cat") != "dftracer":
                    n_x += 1
                elif obj.get("name") == "end":
                    ends.append(obj)
            else:
                self._err(where, "unknown ph %r" % (ph,))
        # a finished file has one end event counting the X events before it
        if file_complete:
            if len(ends) != 1:
                self._err(name, "%d end events (want 1)" % len(ends))
            else:
                ne = (ends[0].get("args") or {}).get("num_events")
                if ne != n_x:
                    self._err(name, "end args.num_events is %r, the file has "
                              "%d X events" % (ne, n_x))

    def _check_x(self, ev, where, local_fh, local_other, ids):
        for k in ("name", "cat"):
            if not isinstance(ev.get(k), str):
                self._err(where, "%s is not a string" % k)
        for k in ("pid", "tid", "ts", "dur"):
            if not isinstance(ev.get(k), int) or isinstance(ev.get(k), bool):
                self._err(where, "%s is not an integer" % k)
        if isinstance(ev.get("dur"), int) and ev["dur"] < 0:
            self._err(where, "negative dur")
        args = ev.get("args")
        if args is not None and not isinstance(args, dict):
            self._err(where, "args is not an object")
            return
        args = args or {}
        # every X event of a process has an id of its own, start and end too
        # (not v2's aggregated records: an id is a complete record's)
        i = ev.get("id")
        if ev.get("aggregated") and i is None:
            pass
        elif not isinstance(i, int) or i < 1:
            self._err(where, "id is not a positive integer")
        elif i in ids[ev.get("pid")]:
            self._err(where, "id %d repeated in pid %s"
                      % (i, ev.get("pid")))
        else:
            ids[ev.get("pid")].add(i)
        # ns10d, D…DSS: the duration and the start's 10-ns digits, ending in
        # the µs that ts + dur says
        f = args.get("ns10d")
        if f is not None and (not isinstance(f, int) or isinstance(f, bool) or f < 0):
            self._err(where, "ns10d is not a non-negative integer")
        elif f is not None and isinstance(ev.get("ts"), int) and isinstance(ev.get("dur"), int):
            d, s = divmod(f, 100)
            if (ev["ts"] * 1000 + s * 10 + d * 10) // 1000 != ev["ts"] + ev["dur"]:
                self._err(where, "ns10d %d ends outside ts + dur's µs" % f)
        for k in ("fhash", "fhash2"):
            if k in args:
                h = args[k]
                if not isinstance(h, str) or not HEX16.match(h):
                    self._err(where, "%s is not 16 hex digits" % k)
                elif h not in local_fh:
                    self._err(where, "%s %s has no FH line before it" % (k, h))
        for k, h in args.items():
            if k in ("fhash", "fhash2") or not k.endswith("hash"):
                continue
            if not isinstance(h, str) or not HEX16.match(h):
                self._err(where, "%s is not 16 hex digits" % k)
            elif h not in local_other:
                self._err(where, "%s %s has no HH/SH line before it" % (k, h))
        for fk, hk in (("fname", "fhash"), ("fname2", "fhash2")):
            if fk in args and hk in args and args[hk] in local_fh:
                if (args[fk] != local_fh[args[hk]]
                        and not args.get(fk + "_truncated")):
                    self._err(where, "%s %r differs from its FH %r"
                              % (fk, args[fk], local_fh[args[hk]]))

    # -- queries ---------------------------------------------------------
    def path(self, ev):
        h = (ev.get("args") or {}).get("fhash")
        return self.fh.get(h) if h is not None else None

    def path2(self, ev):
        h = (ev.get("args") or {}).get("fhash2")
        return self.fh.get(h) if h is not None else None

    def end_event(self):
        ends = [e for e in self.xevents
                if e.get("cat") == "dftracer" and e.get("name") == "end"]
        return ends[-1] if ends else None

    def lost_by_op(self):
        lost = collections.Counter()
        for m in self.meta:
            if m.get("name") == "lost_events":
                a = m.get("args") or {}
                lost[a.get("name")] += int(a.get("value", 0))
        return lost

    def total_lost(self):
        """Sum of the end events' args.lost (one per file with -D)."""
        ends = [e for e in self.xevents
                if e.get("cat") == "dftracer" and e.get("name") == "end"]
        if not ends:
            return None
        return sum(int((e.get("args") or {}).get("lost", 0)) for e in ends)


def field(trace, ev, name):
    """A field of an event: top-level key, args.KEY, path or path2."""
    if name == "path":
        return trace.path(ev)
    if name == "path2":
        return trace.path2(ev)
    if name.startswith("args."):
        return (ev.get("args") or {}).get(name[5:])
    return ev.get(name)


def under(path, d):
    if path is None:
        return False
    d = d.rstrip("/")
    return path == d or path.startswith(d + "/")


def add_filter_args(p):
    p.add_argument("--name", action="append", default=[],
                   help="event name(s), comma-separated or repeated")
    p.add_argument("--cat", help="category(ies), comma-separated")
    p.add_argument("--pid", type=int)
    p.add_argument("--tid", type=int)
    p.add_argument("--syscall")
    p.add_argument("--path", help="exact path (FH name)")
    p.add_argument("--under", help="path is DIR or inside it")
    p.add_argument("--ret", type=int)
    p.add_argument("--all", action="store_true",
                   help="include dftracer start/end events")


def names_of(a):
    out = set()
    for n in a.name:
        out.update(x for x in n.split(",") if x)
    return out


def select(trace, a):
    names = names_of(a)
    for ev in trace.xevents:
        if ev.get("cat") == "dftracer" and not a.all:
            continue
        if names and ev.get("name") not in names:
            continue
        if a.cat is not None and ev.get("cat") not in a.cat.split(","):
            continue
        if a.pid is not None and ev.get("pid") != a.pid:
            continue
        if a.tid is not None and ev.get("tid") != a.tid:
            continue
        args = ev.get("args") or {}
        if a.syscall is not None and args.get("syscall") != a.syscall:
            continue
        if a.ret is not None and args.get("ret") != a.ret:
            continue
        if a.path is not None and trace.path(ev) != a.path:
            continue
        if a.under is not None and not under(trace.path(ev), a.under):
            continue
        yield ev


def dfa_counts(ev):
    """DFAnalyzer's rule for bytes (dfanalyzer/main.py, where it builds
    the size column): a POSIX event whose name has "write", or "read" but
    not "readdir", and whose args.ret is positive. Written apart from
    DATA_OPS on purpose: it is the reader's rule, not ours."""
    name = ev.get("name") or ""
    ret = (ev.get("args") or {}).get("ret")
    return (ev.get("cat") == "POSIX" and isinstance(ret, int) and ret > 0
            and ("write" in name or ("read" in name and "readdir" not in name)))


def fmt(v):
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (dict, list)):
        return json.dumps(v, sort_keys=True)
    return str(v)


def byte_rows(rows, keys):
    """rows: iterable of (dict of key->value, name, ret).  Returns sorted TSV
    lines: keys..., calls, bytes (bytes: sum of positive ret of data ops)."""
    agg = collections.OrderedDict()
    for vals, name, ret in rows:
        k = tuple(fmt(vals[x]) for x in keys)
        c = agg.setdefault(k, [0, 0])
        c[0] += 1
        if name in DATA_OPS and isinstance(ret, int) and ret > 0:
            c[1] += ret
    return sorted("\t".join(k + (str(c[0]), str(c[1])))
                  for k, c in agg.items())


def trace_byte_rows(trace, evs, keys):
    def gen():
        for ev in evs:
            vals = {k: field(trace, ev, k) for k in keys}
            yield vals, ev.get("name"), (ev.get("args") or {}).get("ret")
    return byte_rows(gen(), keys)


# -- ground truth --------------------------------------------------------
def load_truth(path):
    recs = collections.defaultdict(list)
    with open(path, "rb") as f:
        for no, raw in enumerate(f.read().split(b"\n"), 1):
            if not raw.strip():
                continue
            parts = raw.decode("utf-8", "surrogateescape").split("\t")
            recs[parts[0]].append(parts[1:])
    return recs


def truth_io(recs):
    """io records as dicts with the same keys as trace fields."""
    out = []
    for r in recs.get("io", []):
        path, pid, tid, name, sc, ret = r[:6]
        out.append({"path": None if path == "-" else path,
                    "path2": (None if len(r) < 7 or r[6] == "-" else r[6]),
                    "pid": int(pid), "tid": int(tid), "name": name,
                    "args.syscall": sc, "args.ret": int(ret)})
    return out


def truth_byte_rows(ios, keys):
    return byte_rows(((io, io["name"], io["args.ret"]) for io in ios), keys)


def io_filter(rows, names, d):
    for r in rows:
        if names and r["name"] not in names:
            continue
        if d is not None and not (under(r["path"], d) or
                                  under(r.get("path2"), d)):
            continue
        yield r


IOC_DIRS = {"none": 0, "n": 0, "w": 1, "write": 1, "r": 2, "read": 2,
            "rw": 3, "wr": 3, "read|write": 3, "write|read": 3,
            "readwrite": 3}


def norm_int(v, kind=None):
    """Numbers that a tracer may print as ints, hex strings, or (for the
    ioctl direction / type) symbolic strings."""
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, str):
        s = v.strip()
        if kind == "dir" and s.lower() in IOC_DIRS:
            return IOC_DIRS[s.lower()]
        if kind == "type" and len(s) == 1:
            return ord(s)
        try:
            return int(s, 0)
        except ValueError:
            return None
    return None


def check(trace, recs, d=None, names=(), only=None):
    """Compare a trace with ground truth; returns a list of problems.
    only: the record kinds to check (default: all)."""
    if only:
        recs = {k: v for k, v in recs.items() if k in only}
    probs = []
    x = [e for e in trace.xevents if e.get("cat") != "dftracer"]
    names = set(names)

    # io: exact calls and bytes per (path, path2, pid, tid, name, syscall),
    # and no extra events on those files.
    keys = ["path", "path2", "pid", "tid", "name", "args.syscall"]
    ios = [r for r in io_filter(truth_io(recs), names, None)
           if r["path"] is not None or r["path2"] is not None]
    if ios or d is not None:
        want = truth_byte_rows(ios, keys)
        truth_paths = ({r["path"] for r in ios} | {r["path2"] for r in ios})
        truth_paths.discard(None)
        # the trace's events on the truth's files, and on anything under d
        evs = [e for e in x
               if (not names or e.get("name") in names)
               and (trace.path(e) in truth_paths
                    or trace.path2(e) in truth_paths
                    or (d is not None and (under(trace.path(e), d) or
                                           under(trace.path2(e), d))))]
        got = trace_byte_rows(trace, evs, keys)
        if want != got:
            probs.append("io totals differ (- truth, + trace; columns: %s, "
                         "calls, bytes):" % ",".join(keys))
            ws, gs = set(want), set(got)
            for line in want:
                if line not in gs:
                    probs.append("  - " + shorten(line))
            for line in got:
                if line not in ws:
                    probs.append("  + " + shorten(line))
        # the ret of every call, not just the sums
        wr = collections.Counter((r["path"], r["pid"], r["tid"], r["name"],
                                  r["args.ret"]) for r in ios)
        gr = collections.Counter((trace.path(e), e.get("pid"), e.get("tid"),
                                  e.get("name"),
                                  (e.get("args") or {}).get("ret"))
                                 for e in evs)
        if wr != gr and want == got:
            probs.append("io return values differ: missing %s, extra %s" % (
                sorted(wr - gr, key=str)[:10], sorted(gr - wr, key=str)[:10]))

    by_pid_name = collections.defaultdict(list)
    for e in x:
        by_pid_name[(e.get("pid"), e.get("name"))].append(e)

    for pid, tid, name, child in recs.get("spawn", []):
        alts = name.split("|")
        hits = [e for a in alts for e in by_pid_name[(int(pid), a)]
                if (e.get("args") or {}).get("ret") == int(child)]
        if len(hits) != 1:
            others = [(e.get("name"), (e.get("args") or {}).get("ret"))
                      for a in ("fork", "clone", "vfork")
                      for e in by_pid_name[(int(pid), a)]]
            probs.append("spawn: pid %s %s -> child %s: %d matching events "
                         "(want 1); pid %s has fork/clone/vfork events %s"
                         % (pid, name, child, len(hits), pid,
                            sorted(others, key=str)[:20]))
        elif hits[0].get("tid") != int(tid):
            probs.append("spawn: child %s made by tid %s, trace says tid %s"
                         % (child, tid, hits[0].get("tid")))
    for (pid,) in (r[:1] for r in recs.get("exec", [])):
        if not by_pid_name[(int(pid), "exec")]:
            probs.append("exec: no exec event for pid %s" % pid)
    for pid, code in (r[:2] for r in recs.get("exit", [])):
        evs = by_pid_name[(int(pid), "exit")]
        got = [((e.get("args") or {}).get("exit_code"),
                (e.get("args") or {}).get("signal")) for e in evs]
        if shell_status(int(code)) not in got:
            probs.append("exit: pid %s exited with wait status %s; its exit "
                         "events have (exit_code, signal) %s, want %s"
                         % (pid, code, got, shell_status(int(code))))
    tids = {(e.get("pid"), e.get("tid")) for e in x}
    for pid, tid in (r[:2] for r in recs.get("task", [])):
        if (int(pid), int(tid)) not in tids:
            probs.append("task: no event from pid %s tid %s" % (pid, tid))
    for pid, tid, name, addr, length, ret in (r[:6] for r in
                                              recs.get("mm", [])):
        hits = [e for e in by_pid_name[(int(pid), name)]
                if e.get("tid") == int(tid)
                and norm_int((e.get("args") or {}).get("addr")) == int(addr, 0)]
        if len(hits) != 1:
            probs.append("mm: %d %s events of %s by %s/%s (want 1)"
                         % (len(hits), name, addr, pid, tid))
            continue
        a = hits[0].get("args") or {}
        if (norm_int(a.get("length")), a.get("ret")) != (int(length),
                                                          int(ret)):
            probs.append("mm: %s %s: length %r ret %r, want %s %s"
                         % (name, addr, a.get("length"), a.get("ret"),
                            length, ret))
    probs += check_ioctls(trace, x, recs.get("ioctl", []),
                          recs.get("devioctl", []))
    for pid, hexpath, nbytes in (r[:3] for r in recs.get("hostile", [])):
        probs += check_hostile(trace, x, int(pid), bytes.fromhex(hexpath),
                               int(nbytes))
    probs += check_toolong(trace, x, recs.get("toolong", []))
    return cap(probs)


def shorten(line, n=300):
    """A TSV line for display: long fields cut in the middle, control
    characters escaped."""
    out = []
    for f in line.split("\t"):
        if len(f) > n:
            f = "%s...[%d chars]...%s" % (f[:60], len(f), f[-60:])
        out.append(f)
    return json.dumps("\t".join(out), ensure_ascii=False)[1:-1]


def cap(probs, n=25):
    """At most n problems of each kind (the text before the first ':')."""
    out, seen = [], collections.Counter()
    for p in probs:
        k = p.split(":", 1)[0] if not p.startswith("  ") else "  "
        seen[k] += 1
        if seen[k] <= n:
            out.append(p)
        elif seen[k] == n + 1:
            out.append("%s: ... (more like this left out)" % k.strip())
    return out


def check_ioctls(trace, x, recs, devrecs=()):
    """Every ioctl of the recorded tasks, exactly, with its decoding."""
    if not recs:
        return []
    probs = []
    device = {(r[0], int(r[1], 16)): r[2:5] for r in devrecs}
    tasks = {(int(r[0]), int(r[1])) for r in recs}
    evs = [e for e in x if e.get("name") == "ioctl"
           and (e.get("pid"), e.get("tid")) in tasks]

    def key(pid, tid, path, req, ret):
        return (int(pid), int(tid), path, req, int(ret))
    want = collections.Counter(key(r[0], r[1], r[2], int(r[3], 16), r[8])
                               for r in recs)
    got = collections.Counter(
        key(e["pid"], e["tid"], trace.path(e),
            norm_int((e.get("args") or {}).get("request")),
            (e.get("args") or {}).get("ret", 0)) for e in evs)
    if want != got:
        probs.append("ioctl calls differ (pid, tid, path, request, ret): "
                     "missing %s; unexpected %s"
                     % (sorted(want - got, key=str), sorted(got - want,
                                                            key=str)))
    for r in recs:
        pid, tid, path, req, dr, ty, nr, size, ret, reqname = r[:10]
        req = int(req, 16)
        cands = [e for e in evs if e["pid"] == int(pid)
                 and e["tid"] == int(tid) and trace.path(e) == path
                 and norm_int((e.get("args") or {}).get("request")) == req]
        if not cands:
            continue
        e, a = cands[0], cands[0].get("args") or {}
        want_f = {"dir": dr, "type": ty, "nr": nr, "size": size}
        for k, v in want_f.items():
            if v == "-":  # a plain number: no _IOC fields
                if k in a:
                    probs.append("ioctl %s (0x%x) on %s: args.%s present, "
                                 "want none" % (reqname, req, path, k))
                continue
            v = int(v)
            got_v = norm_int(a.get(k), k)
            if got_v != v:
                probs.append("ioctl %s (0x%x) on %s: args.%s is %r, want %d"
                             % (reqname, req, path, k, a.get(k), v))
        if not (isinstance(a.get("request"), str)
                and a["request"].lower().startswith("0x")):
            probs.append("ioctl 0x%x: request %r is not a \"0x...\" string"
                         % (req, a.get("request")))
        dev = device.get((path, req))
        if dev:
            probs += check_device_ioctl(e, path, req, *dev)
            continue
        if e.get("cat") != "IOCTL":
            probs.append("ioctl 0x%x on %s: cat %r, want IOCTL"
                         % (req, path, e.get("cat")))
        if "req_name" in a and a["req_name"] != reqname:
            probs.append("ioctl 0x%x: req_name %r, want %r"
                         % (req, a.get("req_name"), reqname))
    return probs


def check_device_ioctl(e, path, req, reqname, device, kind):
    """An ioctl on an accelerator node: category, class, kind and name."""
    a = e.get("args") or {}
    none = "-"
    want = {"cat": "IOCTL" if device == none else "DEVICE",
            "args.device": None if device == none else device,
            "args.kind": None if kind == none else kind,
            "args.req_name": None if reqname == none else reqname}
    got = {"cat": e.get("cat"), "args.device": a.get("device"),
           "args.kind": a.get("kind"), "args.req_name": a.get("req_name")}
    return ["ioctl 0x%x on %s: %s is %r, want %r" % (req, path, k, got[k], v)
            for k, v in want.items() if got[k] != v]


TS_RE = re.compile(rb'"ts":([0-9]+)')


def ts_span(path):
    """(first, last, count) of the ts of traced events; a regex scan, not
    a JSON parse, for traces of millions of lines."""
    data, _ = read_bytes(path)
    first, last, n = None, None, 0
    for line in data.split(b"\n"):
        if b'"ph":"X"' not in line or b'"cat":"dftracer"' in line:
            continue
        m = TS_RE.search(line)
        if m:
            ts = int(m.group(1))
            first = ts if first is None else min(first, ts)
            last = ts if last is None else max(last, ts)
            n += 1
    return first or 0, last or 0, n


def shell_status(status):
    """(exit_code, signal) of a wait(2) status, as a shell reports them."""
    if status & 0x7f:
        return 128 + (status & 0x7f), status & 0x7f
    return (status >> 8) & 0xff, None


def valid_runs(b):
    """The maximal runs of b that are valid UTF-8, decoded."""
    s = b.decode("utf-8", "replace")
    return [p for p in s.split("\ufffd") if p]


def check_hostile(trace, x, pid, path, nbytes):
    cands = [e for e in x if e.get("pid") == pid and e.get("name") == "write"
             and (e.get("args") or {}).get("ret") == nbytes]
    if len(cands) != 1:
        return ["hostile: %d write events of %d bytes by pid %d (want 1)"
                % (len(cands), nbytes, pid)]
    got = trace.path(cands[0])
    if got is None:
        return ["hostile: the write has no FH path"]
    runs = valid_runs(path)
    pos = 0
    for run in runs:
        i = got.find(run, pos)
        if i < 0:
            return ["hostile: FH name %r lacks %r (after position %d)"
                    % (got, run, pos)]
        pos = i + len(run)
    if not got.startswith(runs[0]) or not got.endswith(runs[-1]):
        return ["hostile: FH name %r does not begin with %r and end with %r"
                % (got, runs[0], runs[-1])]
    return []


def check_toolong(trace, x, recs):
    """Opens of paths longer than PATH_MAX: each failed with ret and has
    fname_truncated true and an fname that is a prefix of the path."""
    if not recs:
        return []
    tasks = {(int(r[0]), int(r[1])) for r in recs}
    rets = {int(r[3]) for r in recs}
    evs = [e for e in x if e.get("name") == "open"
           and (e.get("pid"), e.get("tid")) in tasks
           and (e.get("args") or {}).get("ret") in rets
           and (e.get("args") or {}).get("fname_truncated") is not False]
    probs = []
    for pid, tid, hexpath, ret in (r[:4] for r in recs):
        path = bytes.fromhex(hexpath)
        why = []
        for e in evs:
            a = e.get("args") or {}
            if (e["pid"], e["tid"], a.get("ret")) != (int(pid), int(tid),
                                                     int(ret)):
                continue
            if a.get("fname_truncated") is not True:
                why.append("fname_truncated is %r"
                           % (a.get("fname_truncated"),))
                continue
            fname = a.get("fname")
            if not isinstance(fname, str):
                why.append("no args.fname (run with -P)")
                continue
            fb = fname.encode("utf-8", "surrogateescape")
            if not (0 < len(fb) <= 4096 and path.startswith(fb)):
                why.append("fname of %d bytes is not a prefix of the path"
                           % len(fb))
                continue
            evs.remove(e)
            break
        else:
            probs.append("toolong: no open by %s/%s with ret %s, "
                         "fname_truncated true and a prefix fname for the "
                         "path of %d bytes (%s)"
                         % (pid, tid, ret, len(path),
                            "; ".join(why) or "no open event with that ret"))
    return probs


# -- nesting ---------------------------------------------------------------
def check_nesting(trace):
    """X events on one tid must nest: any two are disjoint or one contains
    the other (touching ends are allowed)."""
    probs = []
    by_tid = collections.defaultdict(list)
    for e in trace.xevents:
        if e.get("cat") == "dftracer":
            continue
        by_tid[(e.get("pid"), e.get("tid"))].append(e)
    for (pid, tid), evs in sorted(by_tid.items(), key=str):
        evs.sort(key=lambda e: (e["ts"], -e["dur"]))
        stack = []
        for e in evs:
            s, t = e["ts"], e["ts"] + e["dur"]
            while stack and stack[-1][1] <= s:
                stack.pop()
            if stack and t > stack[-1][1]:
                o = stack[-1][2]
                probs.append("tid %s: %s [%d,%d] overlaps %s [%d,%d]"
                             % (tid, e.get("name"), s, t, o.get("name"),
                                o["ts"], o["ts"] + o["dur"]))
                continue
            stack.append((s, t, e))
    return probs


GPU_CATS = ("CUDA_DRIVER_API", "NCCL", "CUFILE")


def probed_functions(gpu_h):
    """The functions bpf/gpu.h's table names: the first argument of each
    X(...) or helper macro inside DFT_GPU_CALLS."""
    text = open(gpu_h).read()
    table = text[text.index("#define DFT_GPU_CALLS(X)"):]
    table = table[:table.index("\n\n")]
    return set(re.findall(r"\(X, (\w+)", table) + re.findall(r"\bX\((\w+),", table))


def gpu_detail(trace, e):
    """What gpujob's DETAIL says of an event: kernel, copy kind, the
    communicator's rank, or the file."""
    a = e.get("args") or {}
    if "kernel" in a:
        return a["kernel"]
    if "copy_kind" in a:
        return a["copy_kind"]
    if "comm_rank" in a or "comm_size" in a:
        return "rank=%s,nranks=%s" % (a.get("comm_rank", "-"), a.get("comm_size", "-"))
    return fmt(trace.path(e))


def gpu_bytes(e):
    a = e.get("args") or {}
    if "bytes" in a:
        return str(a["bytes"])
    if "api" in a and a["api"].startswith("cuFile"):
        return str(a.get("ret"))
    return "-"


def gpu_check(trace, recs, probed):
    """Every probed call of the truth is one GPU event of the trace with
    the same pid, tid, cat, name, bytes, detail, enclosing region and
    step; and no other."""
    regions = {}
    for e in trace.xevents:
        if e.get("cat") not in GPU_CATS + ("POSIX", "dftracer") and "id" in e:
            regions[(e.get("pid"), e["id"])] = e
    got = collections.Counter()
    for e in trace.xevents:
        a = e.get("args") or {}
        if e.get("cat") not in GPU_CATS and not str(a.get("api", "")).startswith("cuFile"):
            continue
        r = regions.get((e.get("pid"), a.get("p_idx")))
        got[(str(e["pid"]), str(e["tid"]), e["cat"], e["name"], gpu_bytes(e),
             gpu_detail(trace, e), r["cat"] if r else "-", r["name"] if r else "-",
             fmt(a.get("step")))] += 1
    want = collections.Counter()
    for r in recs.get("gpu", []):
        if r[9] in probed:
            want[tuple(r[:9])] += 1
    probs = []
    for k in sorted(set(want) | set(got)):
        if want[k] != got[k]:
            probs.append("%s: want %d, got %d" % ("\t".join(k), want[k], got[k]))
    return probs, sum(want.values())


def pid_running(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


# -- command line ------------------------------------------------------------
def main(argv=None):
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)

    p = sub.add_parser("validate", help="check the file's format")
    p.add_argument("trace")
    p.add_argument("--partial", action="store_true",
                   help="accept a trace cut short (no final ']')")

    for cmd in ("count", "names", "bytes", "dfa-bytes", "events", "wait-for"):
        p = sub.add_parser(cmd)
        p.add_argument("trace")
        add_filter_args(p)
        if cmd == "bytes":
            p.add_argument("--by", default="path,pid,tid,name")
        if cmd == "events":
            p.add_argument("--fields", default="name,pid,tid,path,args.ret")
            p.add_argument("--json", action="store_true")
        if cmd == "wait-for":
            p.add_argument("--timeout", type=float, default=20)
            p.add_argument("--min", type=int, default=1,
                           help="wait for at least this many events")
            p.add_argument("--alive", type=int,
                           help="give up as soon as this pid has exited")
            p.add_argument("--complete", action="store_true",
                           help="wait until the trace ends with ']'")

    p = sub.add_parser("paths")
    p.add_argument("trace")
    p.add_argument("--under")

    p = sub.add_parser("meta")
    p.add_argument("trace")
    p.add_argument("meta_name")

    p = sub.add_parser("lost")
    p.add_argument("trace")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--op")
    g.add_argument("--total", action="store_true")

    p = sub.add_parser("check-nesting")
    p.add_argument("trace")

    p = sub.add_parser("ts-span")
    p.add_argument("trace")

    p = sub.add_parser("check")
    p.add_argument("trace")
    p.add_argument("truth")
    p.add_argument("--under")
    p.add_argument("--name", action="append", default=[])
    p.add_argument("--only", help="record kinds to check, comma-separated")

    p = sub.add_parser("gpu-check")
    p.add_argument("trace")
    p.add_argument("truth")
    p.add_argument("--table", required=True, help="bpf/gpu.h: the probed calls")

    p = sub.add_parser("truth-bytes")
    p.add_argument("truth")
    p.add_argument("--by", default="path,pid,tid,name")
    p.add_argument("--under")
    p.add_argument("--name", action="append", default=[])

    a = ap.parse_args(argv)
    out = sys.stdout

    if a.cmd == "truth-bytes":
        keys = [k if k in ("path", "path2", "pid", "tid", "name") else
                ("args." + k if not k.startswith("args.") else k)
                for k in a.by.split(",")]
        rows = io_filter(truth_io(load_truth(a.truth)), names_of(a), a.under)
        for line in truth_byte_rows(rows, keys):
            print(line)
        return 0

    if a.cmd == "wait-for":
        deadline = time.monotonic() + a.timeout
        while True:
            if os.path.exists(a.trace):
                try:
                    t = Trace.load(a.trace, partial_ok=True)
                    if (sum(1 for _ in select(t, a)) >= a.min
                            and (t.complete or not a.complete)):
                        return 0
                except OSError:
                    pass
            if a.alive is not None and not pid_running(a.alive):
                print("trace.py: pid %d exited before the event showed in %s"
                      % (a.alive, a.trace), file=sys.stderr)
                return 1
            if time.monotonic() > deadline:
                print("trace.py: timed out waiting for the event in %s"
                      % a.trace, file=sys.stderr)
                return 1
            time.sleep(0.1)

    if a.cmd == "ts-span":
        print("%d %d %d" % ts_span(a.trace))
        return 0

    partial = getattr(a, "partial", False) or a.cmd != "validate"
    t = Trace.load(a.trace, partial_ok=partial)

    if a.cmd == "validate":
        for e in t.errors:
            print(e, file=out)
        if t.errors:
            print("invalid: %d problems" % len(t.errors), file=out)
            return 1
        print("ok: %d events, %d metadata, %s" % (
            len(t.xevents), len(t.meta),
            "complete" if t.complete else "partial"), file=out)
        return 0
    # other commands work on what loads, but say when lines were bad
    bad = [e for e in t.errors if "invalid JSON" in e or "UTF-8" in e]
    for e in bad[:5]:
        print("trace.py: warning: %s" % e, file=sys.stderr)

    if a.cmd == "count":
        print(sum(1 for _ in select(t, a)))
    elif a.cmd == "names":
        for n in sorted({e.get("name") for e in select(t, a)}):
            print(n)
    elif a.cmd == "bytes":
        keys = a.by.split(",")
        for line in trace_byte_rows(t, select(t, a), keys):
            print(line)
    elif a.cmd == "gpu-check":
        probs, n = gpu_check(t, load_truth(a.truth), probed_functions(a.table))
        for line in cap(probs):
            print(line)
        if probs:
            return 1
        print("ok: %d calls" % n)
    elif a.cmd == "dfa-bytes":
        agg = collections.Counter()
        for e in select(t, a):
            if dfa_counts(e):
                agg[fmt(t.path(e))] += e["args"]["ret"]
        for path in sorted(agg):
            print("%s\t%d" % (path, agg[path]))
    elif a.cmd == "events":
        fields = a.fields.split(",")
        for e in select(t, a):
            vals = [field(t, e, f) for f in fields]
            if a.json:
                print(json.dumps(dict(zip(fields, vals))))
            else:
                print("\t".join(fmt(v) for v in vals))
    elif a.cmd == "paths":
        for p in sorted(set(t.fh.values()), key=str):
            if a.under is None or under(p, a.under):
                print(json.dumps(p))
    elif a.cmd == "meta":
        for m in t.meta:
            if m.get("name") == a.meta_name:
                print(json.dumps({k: v for k, v in m.items()
                                  if k != "_where"}))
    elif a.cmd == "lost":
        lost = t.lost_by_op()
        if a.total:
            print(fmt(t.total_lost()))
        elif a.op:
            print(lost.get(a.op, 0))
        else:
            for op in sorted(lost, key=str):
                print("%s\t%d" % (op, lost[op]))
    elif a.cmd == "check-nesting":
        probs = check_nesting(t)
        for p in probs[:50]:
            print(p)
        if probs:
            print("%d nesting problems" % len(probs))
            return 1
        print("ok: %d events nest" % len(t.xevents))
    elif a.cmd == "check":
        probs = check(t, load_truth(a.truth), a.under, names_of(a),
                      set(a.only.split(",")) if a.only else None)
        for p in probs:
            print(p)
        if probs:
            return 1
        print("ok")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:
        sys.exit(1)
    except (OSError, TraceError) as e:
        print("trace.py: %s" % e, file=sys.stderr)
        sys.exit(2)
