"""numpy.memmap reads under --torch: the pages a Dataset reads through a
mapping are mmap_read events in the phase that read them (data.item),
and they add up to the file."""
import json
import os
import subprocess

import pytest

from conftest import DFT, PY, Trace

JOB = os.path.join(os.path.dirname(__file__), "workloads", "memmap_job.py")


def have(module):
    return subprocess.run([PY, "-c", "import " + module], capture_output=True).returncode == 0


@pytest.mark.skipif(not (have("torch") and have("numpy")),
                    reason="needs python3-torch and python3-numpy")
def test_memmap_reads_are_in_the_item_phase(tmp_path):
    trace = str(tmp_path / "t.pfw.gz")
    run = subprocess.run([DFT, "-q", "--torch", "-o", trace, "--", PY, JOB, str(tmp_path)],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    truth = json.loads(run.stdout.splitlines()[-1])
    t = Trace.load(trace)
    reads = [e for e in t.xevents if e["name"] == "mmap_read" and t.path(e) == truth["path"]]
    assert sum(e["args"]["ret"] for e in reads) == truth["size"]
    assert sum(e["args"]["pages"] for e in reads) * 4096 == truth["size"]
    for e in reads:
        assert (e["args"].get("phase_cat"), e["args"].get("phase")) == ("data", "item"), e
    # every page once: the job read each page in its own item
    items = [e for e in t.xevents if e.get("cat") == "data" and e["name"] == "item"]
    assert len(items) == truth["size"] // 4096
