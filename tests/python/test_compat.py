"""The opt-in `dftracer` compatibility package (pydftracer's import paths):
what shared/reference dftracer-dynamo-integration.txt and pydftracer's API
reference import from it, run under the tracer and checked against the
trace; and that nothing puts it on the path unless asked (--torch
included)."""

import os
import subprocess

import pytest

from conftest import BUILD, COMPAT, DFT, PY, env, own_args, run_traced

pytestmark = pytest.mark.usefixtures("built")


def needs_root():
    if os.geteuid() != 0:
        pytest.skip("the tracer needs root")


def have_torch():
    return subprocess.run([PY, "-c", "import torch"], capture_output=True).returncode == 0


def C(level, cat, name, **args):
    return (level, cat, name, args)


def dynamo_tree(r):
    return [(e["name"], own_args(e)) for e in r.regions if e["cat"] == "dynamo"]


def test_dynamo_import_paths(tmp_path):
    """The reference's imports (`from dftracer.python import dftracer,
    dynamo`, `from dftracer.python.dynamo import create_backend`,
    `from dftracer.python import Dynamo`) without importing torch, then its
    three examples: @dynamo.compile, create_backend, a custom Dynamo."""
    needs_root()
    if not have_torch():
        pytest.skip("python3-torch is not installed")
    r = run_traced(tmp_path, '''
        import sys
        from dftracer.python import dftracer, dynamo
        from dftracer.python.dynamo import create_backend
        from dftracer.python import Dynamo, create_backend as create_backend2
        import dftrace.dynamo
        assert "torch" not in sys.modules
        assert create_backend is create_backend2 is dftrace.dynamo.create_backend
        assert Dynamo is dftrace.dynamo.Dynamo

        import torch
        df_logger = dftracer.initialize_log("dynamo_trace.pfw", "/tmp/data", -1)

        class SimpleModel(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = torch.nn.Conv2d(3, 4, 3, 1)
                self.fc = torch.nn.Linear(4 * 3 * 3, 2)

            @dynamo.compile
            def forward(self, x):
                x = self.conv(x)
                x = torch.nn.functional.relu(x)
                x = torch.nn.functional.max_pool2d(x, 2)
                x = x.view(x.size(0), -1)
                x = self.fc(x)
                return x

        model = SimpleModel()
        sample = torch.randn(1, 3, 8, 8)
        assert model(sample).shape == (1, 2)

        class Plain(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = torch.nn.Linear(3, 3)

            def forward(self, x):
                return torch.relu(self.lin(x))

        backend = create_backend(name="resnet50", epoch=1, step=100, enable=True,
                                 autograd=False)
        x = torch.randn(1, 3)
        if hasattr(torch, "compile"):
            compiled = torch.compile(Plain(), backend=backend)
        else:  # Debian's torch 1.13: the backend runs an FX graph
            compiled = backend(torch.fx.symbolic_trace(Plain()), [x])
        with torch.no_grad():
            compiled(x)

        dynamo_tracer = Dynamo(name="resnet50", epoch=1, step=100, image_idx=42,
                               image_size=(224, 224), enable=True)

        @dynamo_tracer.compile
        def forward(x):
            return torch.relu(x) * 2

        assert torch.equal(forward(torch.ones(2)), torch.full((2,), 2.0))
        df_logger.finalize()
    ''', compat=True, timeout=300)
    got = dynamo_tree(r)
    assert [n for n, _ in got[:6]] == ["module.conv", "function.relu", "function.max_pool2d",
                                       "method.size", "method.view", "module.fc"]
    assert all(a == {"grad_enabled": 1} for _, a in got[:6])
    assert [n for n, _ in got[6:8]] == ["module.lin", "function.relu"]
    for _, a in got[6:8]:
        assert a == {"grad_enabled": 0, "epoch": 1, "step": 100, "name": "resnet50"}
    assert [n for n, _ in got[8:]] == ["function.relu", "function.mul"]
    for _, a in got[8:]:
        assert a == {"grad_enabled": 1, "epoch": 1, "step": 100, "image_idx": 42,
                     "image_size": "(224, 224)", "name": "resnet50"}


def test_initialize_finalize_get_time(tmp_path):
    """pydftracer's functions: initialize()/finalize() are accepted (the
    tracer writes the trace), get_time() is microseconds on the trace's
    clock: a region lies between two get_time() calls around it."""
    needs_root()
    r = run_traced(tmp_path, '''
        import time
        from dftracer.python import ai, initialize, finalize, get_time
        initialize("trace.pfw", None, -1)
        initialize(log_file=None, data_dirs=None, process_id=-1)
        t0 = get_time()
        with ai.compute.step:
            time.sleep(0.02)
        t1 = get_time()
        now = time.time()
        finalize()
        assert isinstance(t0, int)
        assert abs(t1 / 1e6 - now) < 1, (t1, now)
        print(t0, t1)
    ''', compat=True)
    t0, t1 = map(int, r.stdout.split())
    assert 20000 <= t1 - t0 < 2000000  # microseconds: 20 ms slept
    assert r.tree() == [C(1, "compute", "step")]
    e = r.regions[0]
    slack = 2000  # the trace's wall-clock mapping of the kernel's clock
    assert t0 - slack <= e["ts"] and e["ts"] + e["dur"] <= t1 + slack
    assert e["dur"] >= 20000


def test_dft_fn_iter_pydftracer_parameters(tmp_path):
    """dft_fn.iter(iterable, name="loop", iter_name="step"): <name>.iter
    waits and <name>.yield bodies, the 1-based count as the int arg
    iter_name, with the dft_fn's own args; include_block/include_iter."""
    needs_root()
    r = run_traced(tmp_path, '''
        from dftracer.python import dft_fn

        io = dft_fn("IO_APP", "load", epoch=3)
        assert list(io.iter([10, 20])) == [10, 20]
        for x in io.iter(["a", "b"], name="batches", iter_name="batch"):
            with dft_fn("APP", "inner"):
                pass
        for x in io.iter([1], "pos", "idx"):
            pass
        assert list(io.iter([1, 2], name="waits", include_block=False)) == [1, 2]
        assert list(io.iter([5], name="counted", iter_name="count")) == [5]
    ''', compat=True)
    want = []
    for s in (1, 2):
        want += [C(1, "IO_APP", "loop.iter", epoch=3, step=s),
                 C(1, "IO_APP", "loop.yield", epoch=3, step=s)]
    # N elements, N waits: the exhausting wait is no event, as pydftracer
    for b in (1, 2):
        want += [C(1, "IO_APP", "batches.iter", epoch=3, batch=b),
                 C(1, "IO_APP", "batches.yield", epoch=3, batch=b),
                 C(2, "APP", "inner")]
    want += [C(1, "IO_APP", "pos.iter", epoch=3, idx=1), C(1, "IO_APP", "pos.yield", epoch=3, idx=1)]
    want += [C(1, "IO_APP", "waits.iter", epoch=3, step=s) for s in (1, 2)]
    want += [C(1, "IO_APP", "counted.iter", epoch=3, count=1),
             C(1, "IO_APP", "counted.yield", epoch=3, count=1)]
    assert r.tree() == want


def test_compat_is_opt_in(tmp_path):
    """`make` puts `dftracer` in build/python/compat: build/python alone
    (what --torch adds) has no `dftracer`; adding compat/ gives it."""
    assert os.path.isdir(os.path.join(COMPAT, "dftracer", "python"))
    script = tmp_path / "s.py"
    script.write_text(
        "import importlib.util, dftrace\n"
        "s = importlib.util.find_spec('dftracer')\n"
        "print(s is not None and s.submodule_search_locations[0])\n")
    r = subprocess.run([PY, str(script)], env=env(BUILD), capture_output=True,
                       text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "False"
    r = subprocess.run([PY, str(script)], env=env(BUILD + os.pathsep + COMPAT),
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == os.path.join(COMPAT, "dftracer")


def torch_launch(tmp_path, trace, code, e):
    """`dftrace-bpf --torch -- python3 -c code`; its stdout."""
    r = subprocess.run([DFT, "-q", "--torch", "-o", str(tmp_path / trace), "--", PY, "-c", code],
                       cwd=str(tmp_path), env=e, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_torch_launch_does_not_expose_compat(tmp_path):
    """--torch puts build/python on the path, not the compat package; a
    user who wants it names build/python/compat in PYTHONPATH."""
    needs_root()
    e = env(BUILD)
    del e["PYTHONPATH"]
    e.pop("DFTRACE_PYTHON_DIR", None)
    code = ("import importlib.util, dftrace\n"
            "print(dftrace.__file__)\n"
            "print(importlib.util.find_spec('dftracer'))\n")
    out = torch_launch(tmp_path, "t.pfw", code, e)
    assert out.splitlines() == [os.path.join(BUILD, "dftrace", "__init__.py"), "None"]
    e["PYTHONPATH"] = COMPAT
    code = ("from dftracer.python import ai, dft_fn, dftracer\n"
            "import dftracer.python\n"
            "print(dftracer.python.__file__)\n")
    out = torch_launch(tmp_path, "t2.pfw", code, e)
    assert out.strip() == os.path.join(COMPAT, "dftracer", "python", "__init__.py")
