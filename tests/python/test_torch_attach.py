"""An unmodified PyTorch job: attach with -p, and launch with --torch.

The job (workloads/train_torch.py) reports the files it read and the
checkpoints it wrote; the trace must account every byte to the right file
and process: DataLoader worker processes read the samples, the main
process writes the checkpoints.
"""
import collections
import json
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
from trace import Trace  # noqa: E402
import annot  # noqa: E402
from conftest import run_attached  # noqa: E402

DFT = os.path.join(ROOT, "dftrace-bpf")
PY = "/usr/bin/python3"
JOB = os.path.join(HERE, "workloads", "train_torch.py")


def have_torch():
    return subprocess.run([PY, "-c", "import torch"], capture_output=True).returncode == 0


pytestmark = pytest.mark.skipif(not have_torch(), reason="python3-torch is not installed")


def truth_of(stdout):
    return [json.loads(l) for l in stdout.splitlines() if l.startswith("{")]


def read_bytes_by_path_pid(trace, paths):
    got = collections.Counter()
    for e in trace.xevents:
        if e["name"] in ("read", "pread", "readv", "preadv") and trace.path(e) in paths:
            got[(trace.path(e), e["pid"])] += max(e["args"]["ret"], 0)
    return got


def write_bytes(trace, path, pid):
    return sum(max(e["args"]["ret"], 0) for e in trace.xevents
               if e["name"] in ("write", "pwrite", "writev", "pwritev")
               and trace.path(e) == path and e["pid"] == pid)


def check_job(trace, truth):
    assert not trace.errors, trace.errors[:5]
    main = next(r["pid"] for r in truth if r["kind"] == "main")
    samples = {r["path"]: r for r in truth if r["kind"] == "sample"}
    got = read_bytes_by_path_pid(trace, set(samples))
    per_path = collections.Counter()
    for (path, pid), n in got.items():
        per_path[path] += n
        assert pid != main, "the main process read %s: workers should" % path
    for path, r in samples.items():
        assert per_path[path] == r["bytes"] * r["reads"], path
    workers = {pid for (_, pid) in got}
    assert len(workers) >= 2
    for r in truth:
        if r["kind"] == "ckpt":
            assert write_bytes(trace, r["path"], main) == r["bytes"], r["path"]
    assert annot.check_nesting(trace) == []
    return main, workers


def test_attach_to_running_job(tmp_path):
    trace = str(tmp_path / "t.pfw.gz")
    out = run_attached([PY, JOB, str(tmp_path / "job"), "2", "--wait"], trace)
    check_job(Trace.load(trace), truth_of(out))


def regions(trace, cat, name, pid=None):
    return [e for e in trace.xevents if e.get("cat") == cat and e["name"] == name
            and (pid is None or e["pid"] == pid)]


def test_torch_launch_labels_phases_without_changing_results(tmp_path):
    plain = subprocess.run([PY, JOB, str(tmp_path / "plain"), "2"], capture_output=True,
                           text=True, timeout=180)
    assert plain.returncode == 0, plain.stderr
    trace = str(tmp_path / "t.pfw.gz")
    run = subprocess.run([DFT, "-q", "--torch", "-o", trace, "--", PY, JOB,
                          str(tmp_path / "job"), "2"], capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr
    assert "no phase labels" not in run.stderr
    truth, base = truth_of(run.stdout), truth_of(plain.stdout)
    losses = [r["value"] for r in truth if r["kind"] == "loss"]
    assert losses == [r["value"] for r in base if r["kind"] == "loss"]

    t = Trace.load(trace)
    main, workers = check_job(t, truth)
    batches, epochs = len(losses), 2
    samples = [r for r in truth if r["kind"] == "sample"]
    for name in ("forward", "backward", "step"):
        assert len(regions(t, "compute", name, main)) == batches, name
    # one fetch per batch, plus the one that ends each epoch's loop
    assert len(regions(t, "dataloader", "fetch", main)) == batches + epochs
    items = regions(t, "data", "item")
    assert len(items) == len(samples) * epochs
    assert {e["pid"] for e in items} <= workers
    assert len(regions(t, "checkpoint", "capture", main)) == epochs

    # I/O is correlated with its phase
    sample_paths = {r["path"] for r in samples}
    for e in t.xevents:
        if e["name"] == "read" and t.path(e) in sample_paths and e["args"]["ret"] > 0:
            assert (e["args"].get("phase_cat"), e["args"].get("phase")) == ("data", "item")
    ckpts = {r["path"] for r in truth if r["kind"] == "ckpt"}
    for e in t.xevents:
        if e["name"].startswith("write") and t.path(e) in ckpts:
            assert (e["args"].get("phase_cat"), e["args"].get("phase")) == ("checkpoint", "capture")

    names = {(m["pid"], m["args"]["name"]) for m in t.meta if m.get("name") == "thread_name"}
    for w in workers:
        assert (w, "pt_data_worker") in names
    assert annot.check_links(t) == []


def test_torch_launch_labels_collectives(tmp_path):
    job = os.path.join(HERE, "workloads", "collectives.py")
    (tmp_path / "plain").mkdir()
    (tmp_path / "traced").mkdir()
    plain = subprocess.run([PY, job, str(tmp_path / "plain")], capture_output=True,
                           text=True, timeout=120)
    assert plain.returncode == 0, plain.stderr
    trace = str(tmp_path / "t.pfw")
    run = subprocess.run([DFT, "-q", "--torch", "-o", trace, "--", PY, job,
                          str(tmp_path / "traced")],
                         capture_output=True, text=True, timeout=180)
    assert run.returncode == 0, run.stderr
    assert run.stdout == plain.stdout  # same results
    t = Trace.load(trace)
    got = sorted((e["name"], e["args"].get("comm_id")) for e in t.xevents
                 if e.get("cat") == "comm")
    # the object forms are one region each, not nested around the tensor
    # ones; each names its process group, the world's or the one made
    assert got == [("all_gather", "0"), ("all_gather", "0"), ("all_reduce", "0"),
                   ("all_reduce", "1"), ("barrier", "0"), ("bcast", "0"), ("bcast", "0"),
                   ("bcast", "1")]


def test_torch_launch_fetch_holds_the_main_process_queue_reads(tmp_path):
    trace = str(tmp_path / "t.pfw.gz")
    run = subprocess.run([DFT, "-q", "--torch", "-o", trace, "--", PY, JOB,
                          str(tmp_path / "job"), "1"], capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr
    t = Trace.load(trace)
    main = next(r["pid"] for r in truth_of(run.stdout) if r["kind"] == "main")
    # batches come from the workers through pipes/sockets, read inside fetch
    reads = [e for e in t.xevents if e["pid"] == main and e["name"] == "read"
             and e["args"].get("phase") == "fetch"]
    assert reads
    assert all(t.path(e).startswith(("pipe:", "socket:")) for e in reads)
