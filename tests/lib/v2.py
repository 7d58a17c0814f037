"""DFTracer's format v2 (DFTracer 2.1.1 and later), written from its
docs/trace_format.rst and its writer's field order, independently of
dftrace-bpf's writer: a checker of one record, and the v1 view of it that
the rest of tests/lib/trace.py reads.

    one object a line, no '[' or ']', at most 16 KiB a line
    "type" (integer) on every record: the layer, 1..11 (0 never written)
    "ph" (integer): 1 complete, 2 counter, 3 aggregated, 4 metadata
    complete:   id,name,cat,type,pid,tid,ts,dur,ph,args
    counter and
    aggregated: name,cat,type,ts,ph,pid,tid,args   (no id, no dur)
    metadata:   name,cat,type,pid,tid,ph,args      (no ts; cat dftracer)
    args.hhash: 16 hex digits, the first key of every args
    aggregated: args.dft_cnt calls; a number that varied as <f>_min, <f>_max,
                <f>_sum; one that did not, or any with dft_cnt 1, plain
                (dftrace-bpf's bytes are a lone ret_sum: the kernel keeps
                no least and most of them)
    end:        args.num_events and the objects cfg, build, used, app
"""

import re

LAYERS = {1: "DFTRACER", 2: "C_APP", 3: "LIBC_IO", 4: "HIP", 5: "HDF5",
          6: "PYTHON", 7: "PSUTIL", 8: "FINSTRUMENT", 9: "CPP_APP",
          10: "MPI", 11: "CUDA"}
COMPLETE, COUNTER, AGGREGATED, METADATA = 1, 2, 3, 4
ORDER = {
    COMPLETE: ["id", "name", "cat", "type", "pid", "tid", "ts", "dur", "ph",
               "args"],
    COUNTER: ["name", "cat", "type", "ts", "ph", "pid", "tid", "args"],
    AGGREGATED: ["name", "cat", "type", "ts", "ph", "pid", "tid", "args"],
    METADATA: ["name", "cat", "type", "pid", "tid", "ph", "args"],
}
# The layer each of dftrace-bpf's categories is written under (its choice
# where DFTracer has none; doc/trace-format.md says why).
CAT_LAYER = {"POSIX": 3, "STDIO": 3, "IOCTL": 3, "DEVICE": 3, "dftracer": 1,
             "PROC": 1, "NCCL": 10, "CUFILE": 11}
HEX16 = re.compile(r"^[0-9a-f]{16}$")
MAX_LINE = 16 * 1024
SUFFIXES = ("_min", "_max", "_sum")


def is_v2(first_obj):
    ph = first_obj.get("ph") if isinstance(first_obj, dict) else None
    return isinstance(ph, int) and not isinstance(ph, bool)


def _int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def layer_of_cat(cat):
    if cat.startswith("CUDA"):
        return 11
    return CAT_LAYER.get(cat, 6)


def check(obj, raw_len, ours=True):
    """The problems of one v2 record (strings). ours: dftrace-bpf's, whose
    layers must be the documented choices."""
    probs = []
    if raw_len > MAX_LINE:
        probs.append("line of %d bytes (v2's are at most 16 KiB)" % raw_len)
    ph, typ = obj.get("ph"), obj.get("type")
    if ph not in ORDER:
        return probs + ["ph %r is not 1..4" % (ph,)]
    if not _int(typ) or typ not in LAYERS:
        probs.append("type %r is not a layer (1..11)" % (typ,))
    keys = [k for k in obj if k != "_where"]
    want = [k for k in ORDER[ph] if k in obj]
    missing = [k for k in ORDER[ph] if k not in obj and k != "args"]
    extra = [k for k in keys if k not in ORDER[ph]]
    if missing:
        probs.append("missing %s" % ",".join(missing))
    if extra:
        probs.append("%s not in a ph %d record" % (",".join(extra), ph))
    if not missing and not extra and keys != want:
        probs.append("fields in the order %s, not DFTracer's %s"
                     % (",".join(keys), ",".join(want)))
    for k in ("id", "pid", "tid", "ts", "dur"):
        if k in obj and (not _int(obj[k]) or obj[k] < 0):
            probs.append("%s is not a non-negative integer" % k)
    args = obj.get("args")
    if args is not None:
        if not isinstance(args, dict):
            return probs + ["args is not an object"]
        first = next(iter(args), None)
        if first != "hhash" or not isinstance(args["hhash"], str) \
                or not HEX16.match(args["hhash"]):
            probs.append("args does not begin with a 16-hex-digit hhash")
    args = args or {}
    if ph == METADATA and obj.get("cat") != "dftracer":
        probs.append("metadata of cat %r (DFTracer's is dftracer)"
                     % obj.get("cat"))
    if ph == AGGREGATED:
        probs += _check_aggregated(args)
    if ours and isinstance(obj.get("cat"), str) and ph in (COMPLETE, AGGREGATED):
        want_t = layer_of_cat(obj["cat"])
        if typ != want_t:
            probs.append("cat %s has type %r, not %d" % (obj["cat"], typ, want_t))
    if ours and ph == METADATA and obj.get("name") != "CM" and typ != 1:
        probs.append("metadata %s of type %r (the tracer's own: 1)"
                     % (obj.get("name"), typ))
    if obj.get("name") == "end" and obj.get("cat") == "dftracer":
        if not _int(args.get("num_events")):
            probs.append("end without args.num_events")
        for k in ("cfg", "build", "used", "app"):
            if not isinstance(args.get(k), dict):
                probs.append("end without the object args.%s" % k)
        for k in (args.get("used") or {}):
            if k not in LAYERS.values():
                probs.append("end's used names %r, not a layer" % k)
    return probs


def _check_aggregated(args):
    probs = []
    n = args.get("dft_cnt")
    if not _int(n) or n < 1:
        return ["aggregated without a positive args.dft_cnt"]
    bases = {k[:-4] for k in args if k.endswith(SUFFIXES)}
    for b in sorted(bases):
        trio = [args.get(b + s) for s in SUFFIXES]
        if n == 1:
            probs.append("%s_min/_max/_sum with dft_cnt 1 (plain, then)" % b)
        # a sum alone: the kernel keeps no least and most of it (ret's)
        if trio[0] is None and trio[1] is None and _int(trio[2]):
            continue
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool)
                   for v in trio):
            probs.append("%s: not all of _min, _max, _sum are numbers" % b)
            continue
        lo, hi, total = trio
        if b in args:
            probs.append("%s both plain and as _min/_max/_sum" % b)
        if not (lo <= hi and lo * n <= total <= hi * n):
            probs.append("%s: min %r, max %r, sum %r of %d calls disagree"
                         % (b, lo, hi, total, n))
    return probs


def v1_view(obj):
    """The record as the v1 readers of trace.py take it: ph a letter, an
    aggregated record an X event of its summed dur with args.calls."""
    ph = obj.get("ph")
    view = dict(obj)
    view.pop("type", None)
    if ph == COMPLETE:
        view["ph"] = "X"
    elif ph == METADATA:
        view["ph"] = "M"
    elif ph == COUNTER:
        view["ph"] = "C"
    elif ph == AGGREGATED:
        args = dict(obj.get("args") or {})
        n = args.pop("dft_cnt", 1)
        view["ph"] = "X"
        view["aggregated"] = True
        view["dur"] = args.pop("dur_sum", args.pop("dur", 0) * n)
        for k in ("ret", "bytes"):
            if k + "_sum" in args:
                args[k] = args.pop(k + "_sum")
            elif k in args:
                args[k] = args[k] * n
        args["calls"] = n
        view["args"] = args
    return view
