"""Checks of merge and summary at a job's scale against the generator's
own records (tests/workloads/ranktraces.c: "rank R HOST EVENTS CALLS
BYTES" a line).

  scale.py merged MERGED TRUTH SKEW_US
      The merged file line by line (merge writes an event a line): every
      X event once (its pid and args.event_id), in time order; each rank's
      events (named by its shard) all there, its bytes the truth's; each
      host's clock correction -H * SKEW_US ms to the ns, inside its bounds.
      Prints one line of figures; exits 1 with the first fault.
  scale.py rows SUMMARY_JSON TRUTH
      summary --json --by rank: each rank's calls (the steps' events) and
      bytes as generated.
"""
import json
import sys


def truth(path):
    ranks = {}
    for line in open(path):
        kind, rank, host, events, calls, nbytes = line.rstrip("\n").split("\t")
        if kind == "rank":
            ranks[int(rank)] = (host, int(events), int(calls), int(nbytes))
    return ranks


def fail(msg):
    print("scale.py: " + msg)
    sys.exit(1)


def merged(path, truth_path, skew_us):
    want = truth(truth_path)
    seen, per_pid, rank_of = set(), {}, {}
    last_ts, n, meta = None, 0, None
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n").rstrip(",")
            if not line.startswith('{"name"'):
                if line.startswith('"otherData"'):
                    meta = json.loads("{" + line[:-1] + "}")["otherData"]
                continue
            e = json.loads(line)
            if e.get("ph") != "X":
                continue
            key = (e["pid"], e["args"]["event_id"])
            if key in seen:
                fail("event %s twice" % (key,))
            seen.add(key)
            if last_ts is not None and e["ts"] < last_ts:
                fail("event %s at %s, after one at %s" % (key, e["ts"], last_ts))
            last_ts = e["ts"]
            n += 1
            got = per_pid.setdefault(e["pid"], [0, 0])
            got[0] += 1
            if e["name"] == "pread":
                got[1] += e["args"]["ret"]
                rank_of[e["pid"]] = int(e["args"]["fname"].rsplit("-", 1)[1])
    steps = sum(w[1] - 2 for w in want.values())
    if n != steps:
        fail("%d X events, want %d" % (n, steps))
    if sorted(rank_of.values()) != sorted(want):
        fail("the ranks' processes are not one each")
    for pid, (events, nbytes) in per_pid.items():
        r = rank_of[pid]
        if events != want[r][1] - 2 or nbytes != want[r][3]:
            fail("rank %d: %d events %d bytes, want %d %d" %
                 (r, events, nbytes, want[r][1] - 2, want[r][3]))
    fits = {h["host"]: h for h in meta["host_clocks"]}
    hosts = {w[0] for w in want.values()}
    if set(fits) != hosts:
        fail("host_clocks names %d hosts, want %d" % (len(fits), len(hosts)))
    worst = 0
    for host, h in fits.items():
        truth_ns = -int(host.split("-")[1]) * skew_us * 1000
        corr = h.get("correction_ns", 0)
        if not h.get("reference") and not h["low_ns"] <= truth_ns <= h["high_ns"]:
            fail("%s: bound [%d, %d] without the truth %d" %
                 (host, h["low_ns"], h["high_ns"], truth_ns))
        ref = [x for x in fits.values() if x.get("reference")][0]
        ref_ns = -int(ref["host"].split("-")[1]) * skew_us * 1000
        worst = max(worst, abs(corr - (truth_ns - ref_ns)))
    if worst > 1000:
        fail("a correction %d ns off the truth" % worst)
    print("%d events once, in order; %d ranks exact; %d hosts' clocks within %d ns" %
          (n, len(want), len(fits), worst))


def rows(path, truth_path):
    want = truth(truth_path)
    d = json.load(open(path))
    got = {int(r["rank"]): (r["calls"], r["bytes"]) for r in d["groupings"][0]["rows"]}
    exp = {r: (w[1] - 2, w[3]) for r, w in want.items()}
    if got != exp:
        bad = sorted(r for r in set(got) | set(exp) if got.get(r) != exp.get(r))
        fail("rank %d: %s, want %s" % (bad[0], got.get(bad[0]), exp.get(bad[0])))
    print("%d ranks exact" % len(got))


if __name__ == "__main__":
    if sys.argv[1] == "merged":
        merged(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    elif sys.argv[1] == "rows":
        rows(sys.argv[2], sys.argv[3])
    else:
        fail("unknown check '%s'" % sys.argv[1])
