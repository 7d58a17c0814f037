"""torch.profiler and dftrace-bpf on one timeline (dftrace.profiler, then
`dftrace-bpf merge`).

The workload (workloads/profile_torch.py) saves a checkpoint inside
record_function("save") every step and reports each file, its bytes and
its process. After the merge, the I/O of every checkpoint saved while
torch recorded must lie inside torch's "save" region of the same process:
the clock anchors put torch's relative times on ours to within a few µs,
while the I/O sits some µs inside the region.
"""
import collections
import json
import os
import re
import shutil
import socket
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
import chrome  # noqa: E402
from conftest import BUILD, DFT, PY, env, run_attached  # noqa: E402
from trace import Trace  # noqa: E402

JOB = os.path.join(HERE, "workloads", "profile_torch.py")
MAX_ALIGN_US = 10.0


def have_torch():
    return subprocess.run([PY, "-c", "import torch"], capture_output=True).returncode == 0


pytestmark = pytest.mark.skipif(not have_torch(), reason="python3-torch is not installed")


def private_env(tmp_path):
    """The package from a private copy (a probe's semaphore is raised in
    every process mapping the file)."""
    lib = tmp_path / "pylib"
    if not lib.exists():
        shutil.copytree(os.path.join(BUILD, "dftrace"), lib / "dftrace",
                        ignore=shutil.ignore_patterns("__pycache__"))
    return env(str(lib))


def truth_of(stdout):
    return [json.loads(l) for l in stdout.splitlines() if l.startswith("{")]


def merge(args, ok=True):
    r = subprocess.run([DFT, "merge"] + args, capture_output=True, text=True, timeout=120)
    if ok:
        assert r.returncode == 0, r.stderr
    return r


def alignments(stderr):
    """The error bounds the merge reported, in µs."""
    return [float(l.split(" within ")[1].split()[0]) for l in stderr.splitlines()
            if " aligned to " in l]


def run_job(tmp_path, mode, *job_args):
    out = tmp_path / "job"
    out.mkdir()
    trace = str(tmp_path / "t.pfw.gz")
    e = private_env(tmp_path)
    cmd = [PY, JOB, str(out)] + list(job_args)
    if mode == "attach":
        stdout = run_attached(cmd + ["--wait"], trace, env=e, timeout=240)
    else:
        opts = ["--torch"] if mode == "torch" else []
        r = subprocess.run([DFT, "-q"] + opts + ["-o", trace, "--"] + cmd, env=e,
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        stdout = r.stdout
    return trace, truth_of(stdout)


def write_bytes(doc, path, pid=None):
    return sum(max(e["args"].get("ret", 0), 0) for e in doc["traceEvents"]
               if e.get("ph") == "X" and e["name"].startswith("write")
               and e.get("args", {}).get("fname") == path
               and (pid is None or e["pid"] == pid))


def io_events_of(trace, path):
    return [e for e in trace.xevents if trace.path(e) == path]


def check_rank(doc, trace, truth, rank):
    """The saves of one rank: bytes, process, and inside torch's regions."""
    ckpts = [r for r in truth if r["kind"] == "ckpt" and r["rank"] == rank]
    pid = ckpts[0]["pid"]
    for r in ckpts:
        assert write_bytes(doc, r["path"]) == r["bytes"], r["path"]
        assert write_bytes(doc, r["path"], pid) == r["bytes"], r["path"]
    recorded = [r for r in ckpts if r["recorded"]]
    assert len(recorded) == 3  # schedule(wait=1, warmup=1, active=3)
    rx = "^(%s)$" % "|".join(map(lambda r: r["path"].replace(".", r"\."), recorded))
    checked, probs = chrome.contained(doc, "save", rx)
    assert probs == []
    assert checked == sum(len(io_events_of(trace, r["path"])) for r in recorded)
    saves = [e for e in doc["traceEvents"] if e.get("name") == "save" and e["ph"] == "X"
             and e["pid"] == pid]
    assert len(saves) == len(recorded)
    return pid


@pytest.mark.parametrize("mode", ["launch", "torch", "attach"])
def test_profiler_trace_merges_with_torch_within_10us(tmp_path, mode, built):
    trace, truth = run_job(tmp_path, mode)
    torch_traces = [r["path"] for r in truth if r["kind"] == "torch_trace"]
    assert len(torch_traces) == 1 and os.path.exists(torch_traces[0])
    view = str(tmp_path / "view.json")
    # the trace recorded where torch's went: it comes in by itself
    r = merge(["-o", view, trace])
    assert len(alignments(r.stderr)) == 1
    assert all(0 <= a <= MAX_ALIGN_US for a in alignments(r.stderr)), r.stderr
    doc = chrome.load(view)
    assert chrome.shape_problems(doc) == []
    assert chrome.nesting_problems(doc) == []
    pid = check_rank(doc, Trace.load(trace), truth, 0)
    assert "process_name %d 0 python3 [%d] @%s" % (pid, pid, socket.gethostname()) \
        in chrome.names(doc)
    # torch's events are the job's process's, on tracks of their own
    torch_tids = {e["tid"] for e in doc["traceEvents"]
                  if e.get("ph") == "X" and e["name"].startswith("aten::")}
    names = chrome.names(doc)
    assert torch_tids and all(any(n.startswith("thread_name %d %d torch " % (pid, t))
                                  for n in names) for t in torch_tids)


def test_seed_spelling_and_gzip_output(tmp_path, built):
    trace, truth = run_job(tmp_path, "launch")
    torch_trace = next(r["path"] for r in truth if r["kind"] == "torch_trace")
    by_itself = str(tmp_path / "a.json")
    named = str(tmp_path / "b.json.gz")
    merge(["-q", "-o", by_itself, trace])
    r = merge(["--file-list", torch_trace, trace, "--output", named])
    assert len(alignments(r.stderr)) == 1  # given once, not twice
    with open(named, "rb") as f:
        assert f.read(2) == b"\x1f\x8b"
    a, b = chrome.load(by_itself), chrome.load(named)
    assert len(a["traceEvents"]) == len(b["traceEvents"])
    assert chrome.shape_problems(b) == []


def test_two_ranks_one_file(tmp_path, built):
    trace, truth = run_job(tmp_path, "launch", "--ranks", "2")
    view = str(tmp_path / "view.json")
    r = merge(["-o", view, trace])
    assert len(alignments(r.stderr)) == 2, r.stderr
    assert all(a <= MAX_ALIGN_US for a in alignments(r.stderr))
    doc = chrome.load(view)
    assert chrome.shape_problems(doc) == []
    assert chrome.nesting_problems(doc) == []
    t = Trace.load(trace)
    pids = [check_rank(doc, t, truth, rank) for rank in (0, 1)]
    assert pids[0] != pids[1]
    names = chrome.names(doc)
    host = socket.gethostname()
    for rank, pid in enumerate(pids):
        assert "process_name %d 0 rank %d \u00b7 python3 [%d] @%s" % (pid, rank, pid, host) \
            in names
    # each rank's torch ops are under its own process
    ops = collections.Counter(e["pid"] for e in doc["traceEvents"]
                              if e.get("ph") == "X" and e["name"] == "aten::mse_loss")
    assert set(ops) == set(pids)


def test_profiler_untraced_still_runs_torch(tmp_path, built):
    out = tmp_path / "job"
    out.mkdir()
    r = subprocess.run([PY, JOB, str(out)], env=private_env(tmp_path),
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    truth = truth_of(r.stdout)
    traces = [x["path"] for x in truth if x["kind"] == "torch_trace"]
    assert len(traces) == 1
    with open(traces[0]) as f:
        events = json.load(f)
    names = [e["name"] for e in events]
    assert names.count("save") == 3
    # no anchors when nothing listens: they exist for the merge only
    assert not [n for n in names if n.startswith("dftrace::anchor#")]
    assert all(x["bytes"] > 0 for x in truth if x["kind"] == "ckpt")


def test_profiler_schedule_matches_torch():
    code = """
import torch.profiler as tp
from dftrace import profiler
for args in [dict(wait=1, warmup=1, active=3), dict(wait=0, warmup=0, active=1),
             dict(wait=2, warmup=1, active=2, repeat=2, skip_first=3)]:
    ours, theirs = profiler.schedule(**args), tp.schedule(**args)
    assert [ours(i).name for i in range(40)] == [theirs(i).name for i in range(40)], args
print("same")
"""
    r = subprocess.run([PY, "-W", "ignore", "-c", code], env=env(BUILD),
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout == "same\n", r.stderr


def torch_self_times(doc):
    """Calls, total and self time per torch op name, from the merged file:
    by what encloses each range on its track (computed here, not by the
    summary); a range inside one of its own name is in the total once,
    as the summary counts a row."""
    by_track = collections.defaultdict(list)
    for e in doc["traceEvents"]:
        if e.get("ph") == "X" and e.get("cat") is None:
            by_track[(e["pid"], e["tid"])].append((round(e["ts"] * 1000),
                                                   round(e["dur"] * 1000), e["name"]))
    total, self_ = collections.Counter(), collections.Counter()
    calls = collections.Counter()
    for evs in by_track.values():
        evs.sort(key=lambda x: (x[0], -x[1]))
        stack = []
        for s, d, name in evs:
            while stack and stack[-1][0] <= s:
                stack.pop()
            if stack and s + d <= stack[-1][0]:
                self_[stack[-1][1]] -= d
                if stack[-1][1] == name:  # in a row of its own name: counted once
                    total[name] -= d
            stack.append((s + d, name))
            total[name] += d
            self_[name] += d
            calls[name] += 1
    return calls, total, self_


def merged_job(tmp_path):
    """The job, traced and merged: the merged file and the job's truth."""
    trace, truth = run_job(tmp_path, "launch")
    view = str(tmp_path / "view.json")
    merge(["-q", "-o", view, trace])
    return view, truth


def summary_rows(path, by):
    r = subprocess.run([DFT, "summary", "-q", "--json", "--by", by, path],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)["groupings"][0]["rows"]


def test_summary_of_a_merged_torch_trace_has_torch_ops(tmp_path, built):
    view, truth = merged_job(tmp_path)
    rows = {x["op"]: x for x in summary_rows(view, "op")}
    calls, total, self_ = torch_self_times(chrome.load(view))
    ops = [n for n in calls if n.startswith("aten::")]
    assert "aten::mse_loss" in ops and len(ops) > 5
    for name in ops:
        got = rows[name]
        assert (got["calls"], got["total_ns"], got["self_ns"]) == \
            (calls[name], total[name], self_[name]), name
    # and the job's own I/O beside them: every checkpoint's bytes
    ckpts = [x for x in truth if x["kind"] == "ckpt"]
    assert rows["write"]["bytes"] >= sum(x["bytes"] for x in ckpts)


# -- seed 002's own code: plain torch.profiler, no dftrace in the script --
SEED = os.path.join(HERE, "workloads", "seed_torch.py")
TORCHRUN = "/usr/bin/torchrun"


def run_seed(tmp_path, mode, *job_args, world=1):
    """The seed's script under the tracer: "torch" (--torch -o FILE), "dir"
    (--torch -D DIR), "import" (no --torch; the script imports dftrace),
    "torchrun" (--torch, torchrun --nproc_per_node 2 with the flags that
    get Debian's torchrun past its start). Returns (trace path, truth)."""
    out = tmp_path / "job"
    out.mkdir()
    trace = str(tmp_path / ("traces" if mode == "dir" else "t.pfw.gz"))
    cmd = [PY, SEED, str(out)] + list(job_args)
    if mode == "torchrun":
        cmd = [TORCHRUN, "--standalone", "--nproc_per_node", str(world),
               "--redirects", "2", "--tee", "2", "--log_dir", str(tmp_path / "logs"),
               SEED, str(out)] + list(job_args)
    elif world > 1:
        cmd += ["--ranks", str(world)]
    if mode == "import":
        opts, cmd = [], cmd + ["--import-dftrace"]
    else:
        opts = ["--torch"]
    where = ["-D", trace] if mode == "dir" else ["-o", trace]
    r = subprocess.run([DFT, "-q"] + opts + where + ["--"] + cmd, env=private_env(tmp_path),
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return trace, truth_of(r.stdout)


def torch_traces(tmp_path):
    d = tmp_path / "job" / "traces"
    return sorted(str(d / n) for n in os.listdir(d))


def check_seed_rank(doc, trace, truth, rank, nrecorded):
    """Each checkpoint's bytes under its process; every write of every
    checkpoint torch recorded inside torch's "save" span."""
    ckpts = [r for r in truth if r["kind"] == "ckpt" and r["rank"] == rank]
    pid = ckpts[0]["pid"]
    for r in ckpts:
        assert write_bytes(doc, r["path"], pid) == r["bytes"], r["path"]
    recorded = [r for r in ckpts if r["recorded"]]
    assert len(recorded) == nrecorded
    rx = "^(%s)$" % "|".join(re.escape(r["path"]) for r in recorded)
    checked, probs = chrome.contained(doc, "save", rx)
    assert probs == []
    assert checked == sum(len(io_events_of(trace, r["path"])) for r in recorded) > 0
    saves = [e for e in doc["traceEvents"] if e.get("name") == "save" and e["ph"] == "X"
             and e["pid"] == pid]
    assert len(saves) == nrecorded
    return pid


def merged_seed(tmp_path, trace, nranks):
    """merge with nothing but our trace: the torch traces come in by
    themselves, each aligned by its anchors."""
    view = str(tmp_path / "view.json")
    r = merge(["-o", view, trace])
    got = alignments(r.stderr)
    assert len(got) == nranks, r.stderr
    assert all(0 <= a <= MAX_ALIGN_US for a in got), r.stderr
    doc = chrome.load(view)
    assert chrome.shape_problems(doc) == []
    assert chrome.nesting_problems(doc) == []
    return doc


@pytest.mark.parametrize("mode,export", [("torch", "handler"), ("torch", "tensorboard"),
                                         ("torch", "after"), ("dir", "handler"),
                                         ("import", "handler")])
def test_seed_code_merges_unchanged(tmp_path, mode, export, built):
    trace, truth = run_seed(tmp_path, mode, "--export", export)
    doc = merged_seed(tmp_path, trace, 1)
    nrecorded = 6 if export == "after" else 3  # schedule(wait=1, warmup=1, active=3)
    check_seed_rank(doc, Trace.load(trace), truth, 0, nrecorded)


@pytest.mark.parametrize("mode", ["torch", "torchrun"])
def test_seed_code_two_ranks_merge(tmp_path, mode, built):
    if mode == "torchrun" and not os.path.exists(TORCHRUN):
        pytest.skip("no %s" % TORCHRUN)
    trace, truth = run_seed(tmp_path, mode, world=2)
    assert len(torch_traces(tmp_path)) == 2
    doc = merged_seed(tmp_path, trace, 2)
    t = Trace.load(trace)
    pids = [check_seed_rank(doc, t, truth, rank, 3) for rank in (0, 1)]
    assert pids[0] != pids[1]


def test_seed_step_context_is_the_profilers(tmp_path, built):
    """Under --torch each checkpoint's I/O carries the profiler's step (the
    optimizer stepped before the save, but prof.step() moves the step);
    torch 1.13 names step k's span ProfilerStep#(k-1)."""
    trace, truth = run_seed(tmp_path, "torch")
    t = Trace.load(trace)
    for r in (x for x in truth if x["kind"] == "ckpt"):
        steps = {e["args"].get("step") for e in io_events_of(t, r["path"])}
        assert steps == {r["step"]}, r
    doc = merged_seed(tmp_path, trace, 1)
    for r in (x for x in truth if x["kind"] == "ckpt" and x["recorded"]):
        checked, probs = chrome.contained(doc, "ProfilerStep#%d" % (r["step"] - 1),
                                          "^%s$" % re.escape(r["path"]))
        assert probs == [] and checked == len(io_events_of(t, r["path"])), r


def torch_events(path):
    with open(path) as f:
        doc = json.load(f)
    return doc["traceEvents"] if isinstance(doc, dict) else doc


def without_anchors(events):
    """(anchor names, the other events' names): an anchor's range and what
    torch records inside it (its record_function's own aten::empty) out."""
    spans = [(e["tid"], e["ts"], e["ts"] + e["dur"]) for e in events
             if e["name"].startswith("dftrace::anchor#")]
    inside = [e for e in events
              if any(t == e["tid"] and s <= e["ts"] and e["ts"] + e.get("dur", 0) <= f
                     for t, s, f in spans)]
    return ([e["name"] for e in inside if e["name"].startswith("dftrace::anchor#")],
            [e["name"] for e in events if e not in inside])


def user_view(names):
    """What of torch's events is the same run after run: which ops ran
    (not how often: aten::div_ comes 3 or 4 times), the steps and saves."""
    return (set(names), sorted(n for n in names if n.startswith("ProfilerStep#")
                               or n == "save"))


def test_seed_torch_trace_unchanged_but_anchors(tmp_path, built):
    """What torch writes: the same files and events as without dftrace,
    and our anchors (record_function "dftrace::anchor#n") only when traced."""
    def names(sub, extra, traced=False):
        job = tmp_path / sub
        job.mkdir()
        cmd = [PY, SEED, str(job)] + extra
        if traced:
            cmd = [DFT, "-q", "--torch", "-o", str(tmp_path / (sub + ".pfw")), "--"] + cmd
        r = subprocess.run(cmd, env=private_env(tmp_path), capture_output=True, text=True,
                           timeout=300)
        assert r.returncode == 0, r.stderr
        assert os.listdir(job / "traces") == ["torch-trace-0-of-1.json"]
        return without_anchors(torch_events(str(job / "traces" / "torch-trace-0-of-1.json")))

    no_anchors, plain = names("plain", [])
    assert no_anchors == []
    no_anchors, untraced = names("untraced", ["--import-dftrace"])
    assert no_anchors == [] and user_view(untraced) == user_view(plain)
    anchors, traced = names("traced", [], traced=True)
    # step 2's start, around steps 2|3 and 3|4, at step 4's end (its save)
    assert sorted(anchors) == ["dftrace::anchor#%d" % n for n in range(1, 7)]
    assert user_view(traced) == user_view(plain)


def test_summary_of_a_merged_file_puts_our_io_under_torch_save(tmp_path, built):
    """torch's ranges sit on tracks of their own in the merged file; the
    summary puts the I/O of the same thread under the innermost one open
    when it starts: each recorded checkpoint's bytes under `save`, the
    others' under no phase."""
    view, truth = merged_job(tmp_path)
    rows = collections.defaultdict(int)
    for x in summary_rows(view, "phase,file"):
        rows[(x["phase"], x["file"])] += x["bytes"]
    ckpts = [x for x in truth if x["kind"] == "ckpt"]
    assert sum(x["recorded"] for x in ckpts) == 3
    for x in ckpts:
        got = {ph: b for (ph, f), b in rows.items() if f == x["path"] and b}
        want = "-/save" if x["recorded"] else "-"
        assert got == {want: x["bytes"]}, (x, got)


def test_summary_of_a_trace_and_its_torch_trace_aligns_them_as_merge_does(tmp_path, built):
    """Given apart, a trace (system clock) and its torch trace (relative
    times) are put on one clock by the anchors, as merge does: the same
    events over the same wall time as the merged file; without anchors in
    common, a refusal that says why."""
    view, truth = merged_job(tmp_path)
    trace = str(tmp_path / "t.pfw.gz")
    torch_trace = next(x["path"] for x in truth if x["kind"] == "torch_trace")

    def headline(*paths):
        r = subprocess.run([DFT, "summary", "-q", "--json"] + list(paths),
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout)["headline"]

    apart, merged = headline(trace, torch_trace), headline(view)
    for k in ("events", "wall_ns", "io_ns", "bytes_written"):
        assert apart[k] == merged[k], k
    other = str(tmp_path / "other.pfw.gz")
    subprocess.run([DFT, "-q", "-o", other, "--", "true"], check=True, timeout=120)
    r = subprocess.run([DFT, "summary", "-q", other, torch_trace], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and "cannot align" in r.stderr, r.stderr


def test_summary_of_a_trace_and_its_torch_trace_has_one_process_as_merge_does(tmp_path, built):
    """The torch trace's events are its process's, the one the trace
    names: one row `python3 [pid]`, of the trace's rank (none here), not
    also `? [pid]` of rank 0 from the torch file's name; as in the merged
    file, and whichever input comes first."""
    view, truth = merged_job(tmp_path)
    trace = str(tmp_path / "t.pfw.gz")
    torch_trace = next(x["path"] for x in truth if x["kind"] == "torch_trace")
    pid = next(x["pid"] for x in truth if x["kind"] == "ckpt")

    def rows(*paths):
        r = subprocess.run([DFT, "summary", "-q", "--json", "--by", "process,rank"]
                           + list(paths), capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        d = json.loads(r.stdout)
        return ([(x["process"], x["rank"], x["calls"]) for x in d["groupings"][0]["rows"]],
                d["headline"]["processes"], d["headline"]["ranks"])

    merged = rows(view)
    assert [p for p, _, _ in merged[0] if p.endswith(" [%d]" % pid)] == ["python3 [%d]" % pid]
    assert rows(trace, torch_trace) == merged
    assert rows(torch_trace, trace) == merged


def test_flight_dump_merges_with_torch(tmp_path, built):
    """--flight's dump of a --torch job (the shell around it fails: the exit
    trigger) is a trace like any: it merges with the torch trace it holds."""
    out = tmp_path / "job"
    out.mkdir()
    trace = str(tmp_path / "t.pfw.gz")
    r = subprocess.run([DFT, "-q", "--torch", "--flight", "120", "--trigger", "exit",
                        "-o", trace, "--", "sh", "-c", '"$0" "$@"; exit 3', PY, JOB, str(out)],
                       env=private_env(tmp_path), capture_output=True, text=True, timeout=300)
    assert r.returncode == 3, r.stderr
    dump = str(tmp_path / "t-flight-1-exit.pfw.gz")
    assert os.path.exists(dump), r.stderr
    view = str(tmp_path / "view.json")
    m = merge(["-o", view, dump])
    assert len(alignments(m.stderr)) == 1, m.stderr
    doc = chrome.load(view)
    assert chrome.shape_problems(doc) == []
    check_rank(doc, Trace.load(dump), truth_of(r.stdout), 0)
