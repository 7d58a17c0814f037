"""dftrace (usdt/python): DFTracer's AI logging API on dftrace-bpf's USDT
probes. Every example of shared/reference dftracer-ai-logging.rst is run
under the tracer and checked against the trace: names, cats, counts, args
and the parent links (p_idx/level) to the enclosing region."""

import os
import subprocess

import pytest

from conftest import PY, PKG, Run, env, run_traced  # noqa: F401

pytestmark = pytest.mark.usefixtures("built")


def needs_root():
    if os.geteuid() != 0:
        pytest.skip("the tracer needs root")


@pytest.fixture(autouse=True)
def _root():
    needs_root()


def C(level, cat, name, **args):
    return (level, cat, name, args)


def test_usage_example(tmp_path):
    """The "Usage" block: decorators, with, .iter nested three deep."""
    r = run_traced(tmp_path, '''
        from dftrace import ai, dftracer

        class Loss:
            def backward(self):
                pass

        @ai.compute.forward
        def forward(model, x):
            return model(x)

        @ai.compute.backward
        def backward(model, loss):
            with ai.comm.all_reduce:
                loss.backward()

        @ai.compute
        def compute(model, x, optimizer):
            loss = forward(model, x)
            backward(model, loss)

        @ai.data.preprocess
        def preprocess(data):
            return data

        @ai.dataloader.fetch
        def transfer_to_gpu(batch, device):
            return batch

        @ai.pipeline.train
        def train(model, dataloader, optimizer, device, num_epoch):
            for epoch in ai.pipeline.epoch.iter(range(num_epoch)):
                for batch in ai.dataloader.fetch.iter(dataloader):
                    x, y = transfer_to_gpu(batch, device)
                    compute(model, x, optimizer)

        df_logger = dftracer.initialize_log("unused.pfw", None, -1)
        preprocess([1])
        train(lambda x: Loss(), [(1, 2), (3, 4)], None, "cpu", 2)
        df_logger.finalize()
    ''')
    want = [C(1, "data", "preprocess"), C(1, "pipeline", "train")]
    for e in (1, 2):
        want.append(C(2, "pipeline", "epoch.iter", count=e))
        want.append(C(2, "pipeline", "epoch.block", count=e))
        for b in (1, 2):
            want += [C(3, "dataloader", "fetch.iter", count=b),
                     C(3, "dataloader", "fetch.block", count=b),
                     C(4, "dataloader", "fetch"),
                     C(4, "compute", "compute"),
                     C(5, "compute", "forward"),
                     C(5, "compute", "backward"),
                     C(6, "comm", "all_reduce")]
    # N elements, N waits: the last, exhausting one is no event (pydftracer)
    assert r.tree() == want


def test_decorator_and_context_manager_with_and_without_args(tmp_path):
    r = run_traced(tmp_path, '''
        from dftrace import ai

        @ai.compute.forward
        def forward(model, x):
            return model(x)

        @ai.compute.forward(args={"arg1": "value1", "arg2": "value2"})
        def forward_args(model, x):
            return model(x)

        assert forward(lambda x: x + 1, 1) == 2
        assert forward_args(lambda x: x * 3, 2) == 6
        with ai.compute.forward:
            loss = 1
        with ai.compute.forward(args={"arg1": "value1", "arg2": 2, "f": 0.5}):
            loss = 2
        try:
            with ai.compute.backward:
                raise KeyError("x")
        except KeyError:
            pass
    ''')
    assert r.tree() == [
        C(1, "compute", "forward"),
        C(1, "compute", "forward", arg1="value1", arg2="value2"),
        C(1, "compute", "forward"),
        C(1, "compute", "forward", arg1="value1", arg2=2, f="0.5"),
        C(1, "compute", "backward"),
    ]


def test_iter_and_update(tmp_path):
    """The "Updating Arguments" block: update() on forward reaches forward's
    events only; counts restart at 1 per .iter()."""
    r = run_traced(tmp_path, '''
        from dftrace import ai

        @ai.compute.forward
        def forward(model, x):
            return x

        num_epoch, dataloader = 2, ["a", "b", "c"]
        for epoch in ai.pipeline.epoch.iter(range(num_epoch)):
            for step, batch in ai.dataloader.fetch.iter(enumerate(dataloader)):
                ai.compute.forward.update(epoch=epoch, step=step)
                forward(None, batch)
    ''')
    want = []
    for e in range(2):
        want += [C(1, "pipeline", "epoch.iter", count=e + 1),
                 C(1, "pipeline", "epoch.block", count=e + 1)]
        for s in range(3):
            want += [C(2, "dataloader", "fetch.iter", count=s + 1),
                     C(2, "dataloader", "fetch.block", count=s + 1),
                     C(3, "compute", "forward", epoch=e, step=s)]
    assert r.tree() == want


def test_iter_options_break_and_disabled(tmp_path):
    r = run_traced(tmp_path, '''
        from dftrace import ai
        for i in ai.data.item.iter(range(5)):
            if i == 1:
                break
        list(ai.data.preprocess.iter([1, 2], include_iter=False))
        list(ai.data.preprocess.iter([1], include_block=False, iter_name="wait"))
        ai.data.disable()
        list(ai.data.item.iter(range(3)))
    ''')
    assert r.tree() == [
        C(1, "data", "item.iter", count=1), C(1, "data", "item.block", count=1),
        C(1, "data", "item.iter", count=2), C(1, "data", "item.block", count=2),
        C(1, "data", "preprocess.block", count=1), C(1, "data", "preprocess.block", count=2),
        C(1, "data", "wait", count=1),  # one element, one wait (pydftracer)
    ]


def test_init_events(tmp_path):
    """Constructor hooking and the "Init event" block: <name>.init."""
    r = run_traced(tmp_path, '''
        from dftrace import ai

        class MyDataset:
            @ai.data.item.init
            def __init__(self, n):
                self.n = n

        class Checkpoint:
            @ai.checkpoint.init
            def __init__(self):
                pass

        @ai.compute.init
        def setup():
            pass

        assert MyDataset(3).n == 3
        Checkpoint()
        with ai.checkpoint.init:
            pass
        setup()
        assert ai.data.item.init is ai.data.item.init
    ''')
    assert r.tree() == [C(1, "data", "item.init"), C(1, "checkpoint", "checkpoint.init"),
                        C(1, "checkpoint", "checkpoint.init"), C(1, "compute", "compute.init")]


def test_disable_enable(tmp_path):
    r = run_traced(tmp_path, '''
        from dftrace import ai

        def each(tag):
            for cat in ("compute", "data", "dataloader", "comm", "device", "checkpoint", "pipeline"):
                node = getattr(ai, cat)
                with node(args={"tag": tag}):
                    pass
            with ai.comm.all_to_all(args={"tag": tag}):
                pass

        ai.disable()
        each("all off")
        ai.compute.enable()
        ai.comm.enable()
        each("compute+comm")
        ai.compute.disable()
        ai.data.disable(); ai.dataloader.disable(); ai.comm.disable()
        ai.device.disable(); ai.pipeline.disable()
        each("off again")
        ai.compute.enable(); ai.data.enable(); ai.dataloader.enable(); ai.comm.enable()
        ai.device.enable(); ai.pipeline.enable()
        each("cats on, checkpoint off")
        ai.enable()
        each("all on")
    ''')
    cats = ["compute", "data", "dataloader", "comm", "device", "checkpoint", "pipeline"]
    want = [C(1, "compute", "compute", tag="compute+comm"), C(1, "comm", "comm", tag="compute+comm"),
            C(1, "comm", "all_to_all", tag="compute+comm")]
    want += [C(1, c, c, tag="cats on, checkpoint off") for c in cats if c != "checkpoint"]
    want.append(C(1, "comm", "all_to_all", tag="cats on, checkpoint off"))
    want += [C(1, c, c, tag="all on") for c in cats] + [C(1, "comm", "all_to_all", tag="all on")]
    assert r.tree() == want


def test_force_enable_disable(tmp_path):
    """The "Force Enable or Disable" block, verbatim but for the bodies."""
    r = run_traced(tmp_path, '''
        from dftrace import ai

        ai.compute.disable()

        @ai.compute.forward(enable=True)
        def forward(model, x):
            return x

        forward(None, 1)
        with ai.compute.backward(enable=True):
            pass
        with ai.compute.backward:                 # disabled: nothing
            pass

        ai.compute.enable()

        @ai.compute.forward(enable=False)
        def forward2(model, x):
            return x

        forward2(None, 1)
        with ai.compute.backward(enable=False):
            pass
        with ai.compute.backward:
            pass
        ai.compute.disable()
        forward(None, 2)                          # still forced on
    ''')
    assert r.tree(with_args=False) == [
        (1, "compute", "forward"), (1, "compute", "backward"),
        (1, "compute", "backward"), (1, "compute", "forward")]


def test_call_order_caveat(tmp_path):
    """@x.init without parentheses follows a later disable(); @x.init()
    made its own instance before it and is not reached by it."""
    r = run_traced(tmp_path, '''
        from dftrace import ai

        class Tracked:
            @ai.checkpoint.init
            def __init__(self):
                pass

        class Untracked:
            @ai.checkpoint.init()
            def __init__(self):
                pass

        @ai.checkpoint.capture(args={"k": 1})
        def capture():
            pass

        ai.checkpoint.disable()
        Tracked()
        Untracked()
        capture()
        ai.checkpoint.enable()
        ai.checkpoint.update(epoch=7)             # update() still reaches it
        Tracked()
        capture()
    ''')
    assert r.tree() == [
        C(1, "checkpoint", "checkpoint.init"),
        C(1, "checkpoint", "capture", k=1),
        C(1, "checkpoint", "checkpoint.init", epoch=7),
        C(1, "checkpoint", "capture", epoch=7, k=1)]


def test_hook_style(tmp_path):
    """The SessionRunHook block: start()/stop() and ai.update(step=)."""
    r = run_traced(tmp_path, '''
        from dftrace import ai

        class Hook:
            def begin(self):
                ai.pipeline.epoch.start()
            def end(self, session):
                ai.pipeline.epoch.stop()
            def before_run(self, global_step):
                ai.update(step=global_step)
                ai.compute.start()
            def after_run(self):
                ai.compute.stop()

        h = Hook()
        h.begin()
        for gs in (10, 11, 12):
            h.before_run(gs)
            with ai.comm.barrier:
                pass
            h.after_run()
        h.end(None)
        with ai.device.transfer:                  # ai.update reached every node
            pass
    ''')
    # a region takes its args when it ends, as pydftracer: the epoch, open
    # across the three steps, ends labelled with the last
    want = [C(1, "pipeline", "epoch", step=12)]
    for gs in (10, 11, 12):
        want += [C(2, "compute", "compute", step=gs), C(3, "comm", "barrier", step=gs)]
    want.append(C(1, "device", "transfer", step=12))
    assert r.tree() == want


def test_derivation(tmp_path):
    r = run_traced(tmp_path, '''
        from dftrace import ai

        class Dataset:
            def __getitem__(self, idx):
                with ai.data.preprocess:
                    pass
                return idx

        @ai.data.preprocess.derive(name="collate")
        def collate(batch):
            return batch

        profiler_collate = ai.data.preprocess.derive(name="collate")

        def collate_fn(batch):
            with profiler_collate:
                return collate(batch)

        ds = Dataset()
        collate_fn([ds[0], ds[1]])
        profiler_collate.update(epoch=1)
        collate_fn([ds[2]])
        ai.data.preprocess.update(epoch=2)
        collate_fn([ds[3]])
        deep = profiler_collate.derive("pad")
        with deep:
            pass
        ai.data.disable()
        collate_fn([])
        with deep:
            pass
    ''')
    assert r.tree() == [
        C(1, "data", "preprocess"), C(1, "data", "preprocess"),
        C(1, "data", "preprocess.collate"), C(2, "data", "preprocess.collate"),
        C(1, "data", "preprocess"),
        C(1, "data", "preprocess.collate", epoch=1), C(2, "data", "preprocess.collate", epoch=1),
        C(1, "data", "preprocess", epoch=2),
        C(1, "data", "preprocess.collate", epoch=2), C(2, "data", "preprocess.collate", epoch=2),
        C(1, "data", "preprocess.collate.pad", epoch=2)]


def test_metadata_mode(tmp_path):
    """Regular mode: epoch.block counts 1..3; metadata mode: CM
    epoch.start/epoch.end marks with microsecond timestamps, no region."""
    r = run_traced(tmp_path, '''
        from dftrace import ai
        num_epochs, num_steps = 3, 2
        for epoch in ai.pipeline.epoch.iter(range(num_epochs)):
            for step in range(num_steps):
                pass
        for epoch in range(num_epochs):
            ai.pipeline.epoch.start(metadata=True)
            for step in range(num_steps):
                pass
            ai.pipeline.epoch.stop(metadata=True)
    ''')
    assert [(e["name"], e["args"]["count"]) for e in r.regions if e["name"] == "epoch.block"] == \
        [("epoch.block", 1), ("epoch.block", 2), ("epoch.block", 3)]
    assert all(e["name"] in ("epoch.iter", "epoch.block") for e in r.regions)
    cm = r.cm()
    assert [m["name"] for m in cm] == ["epoch.start", "epoch.end"] * 3
    vals = [int(m["value"]) for m in cm]
    assert vals == sorted(vals)
    last = max(e["ts"] + e["dur"] for e in r.regions)
    assert vals[0] >= last - 1


def test_io_correlation(tmp_path):
    """File bytes read inside `with ai.data.item:` and written inside
    @ai.checkpoint.capture carry that phase, and the epoch and step that
    update() gave the region (the whole tree, or one node)."""
    data = tmp_path / "sample.bin"
    data.write_bytes(os.urandom(12345))
    r = run_traced(tmp_path, '''
        import os
        from dftrace import ai

        @ai.checkpoint.capture
        def save(path, n):
            with open(path, "wb") as f:
                f.write(b"x" * n)
                f.flush()
                os.fsync(f.fileno())

        ai.update(epoch=4)
        ai.data.item.update(step=7)
        with ai.data.item:
            with open(%r, "rb", buffering=0) as f:
                n = len(f.read())
        save(%r, 65536)
        print(n)
    ''' % (str(data), str(tmp_path / "ckpt.bin")))
    assert r.stdout.strip() == "12345"
    got = {}
    for e in r.trace.xevents:
        p = r.trace.path(e)
        if e["cat"] == "POSIX" and e["name"] in ("read", "write") and p and \
                os.path.basename(p) in ("sample.bin", "ckpt.bin") and e["args"].get("ret", 0) > 0:
            a = e["args"]
            k = (e["name"], os.path.basename(p), a.get("phase_cat"), a.get("phase"),
                 a.get("epoch"), a.get("step"))
            got[k] = got.get(k, 0) + a["ret"]
            par = r.parent(e)
            assert par is not None, e
            assert (par["cat"], par["name"]) == (a["phase_cat"], a["phase"])
    assert got == {("read", "sample.bin", "data", "item", 4, 7): 12345,
                   ("write", "ckpt.bin", "checkpoint", "capture", 4, None): 65536}
    assert r.tree() == [C(1, "data", "item", epoch=4, step=7),
                        C(1, "checkpoint", "capture", epoch=4)]


def test_pydftracer_compat_script(tmp_path):
    """An unmodified pydftracer-style script (dftracer.logger imports,
    initialize_log/finalize, dft_fn) runs and gives the expected events."""
    r = run_traced(tmp_path, '''
        from dftracer.logger import ai, dftracer, dft_fn
        from dftracer.python import ai as ai2

        assert ai is ai2
        df_logger = dftracer.initialize_log(logfile="trace.pfw", data_dir=None, process_id=-1)

        io = dft_fn("IO_APP", "load")

        class Model:
            @dft_fn("APP").log_init
            def __init__(self):
                pass

            @dft_fn("APP").log
            def predict(self, x):
                return x

        @io.log
        def load():
            return 1

        @ai.compute.step
        def step():
            pass

        m = Model()
        load()
        for x in io.iter([1, 2]):
            m.predict(x)
        with dft_fn("APP", "block", step=5):
            step()
        df_logger.finalize()
    ''', compat=True)
    assert r.tree() == [
        C(1, "APP", "Model.__init__"), C(1, "IO_APP", "load"),
        C(1, "IO_APP", "loop.iter", step=1), C(1, "IO_APP", "loop.yield", step=1),
        C(2, "APP", "Model.predict"),
        C(1, "IO_APP", "loop.iter", step=2), C(1, "IO_APP", "loop.yield", step=2),
        C(2, "APP", "Model.predict"),
        C(1, "APP", "block", step=5), C(2, "compute", "step")]


def test_context_is_process_wide(tmp_path):
    """dftrace.context(): ctx_* probes, an arg of every later event, I/O too."""
    r = run_traced(tmp_path, '''
        import dftrace
        from dftrace import ai
        dftrace.context(epoch=3, run="r1")
        with ai.compute.step:
            open("/proc/self/stat").read()
        dftrace.clear_context("run")
        with ai.compute.step:
            pass
        dftrace.context(run="r2")
        dftrace.clear_context()                   # every user key, not epoch/step
        with ai.compute.step:
            pass
        dftrace.clear_context("epoch")
        with ai.compute.step:
            pass
    ''')
    assert r.tree() == [C(1, "compute", "step", epoch=3, run="r1"),
                        C(1, "compute", "step", epoch=3), C(1, "compute", "step", epoch=3),
                        C(1, "compute", "step")]


def test_untraced_and_fallback(tmp_path):
    """Without a tracer enabled() is False and annotated code runs; without
    the extension the no-op backend says so and the code still runs."""
    script = tmp_path / "s.py"
    script.write_text('''
import dftrace
from dftrace import ai, dft_fn, dftracer
print(dftrace.backend, ai.backend, dftrace.enabled())
@ai.compute.forward
def f(x): return x + 1
@ai.compute.forward(args={"a": 1}, enable=True)
def g(x): return x * 2
with ai.data.item(args={"x": 1}):
    pass
ai.pipeline.epoch.start(metadata=True); ai.pipeline.epoch.stop(metadata=True)
ai.compute.start(); ai.compute.stop()
assert [v for v in ai.dataloader.fetch.iter(range(3))] == [0, 1, 2]
assert f(1) == 2 and g(2) == 4 and f.__name__ == "f"
ai.update(step=1, args={"k": "v"})
assert ai.compute.forward.args == {"step": 1, "k": "v"}
d = ai.data.preprocess.derive("collate")
assert d.name == "preprocess.collate" and d.cat == "data" and d is ai.data.preprocess.derive("collate")
assert ai.data.item.init.name == "item.init" and ai.compute.init.name == "compute.init"
dftracer.initialize_log(None, None, -1).finalize()
''')
    for path, want in ((os.path.join(os.path.dirname(PKG), "..", "build", "python"), "usdt usdt False"),
                       (PKG, "noop noop False")):
        r = subprocess.run([PY, str(script)], env=env(os.path.abspath(path)),
                           capture_output=True, text=True, timeout=30)
        assert r.returncode == 0, r.stderr
        assert r.stdout.strip() == want


def test_user_keys_never_repeat_the_writers_keys(tmp_path):
    """Context and region args named like the keys the tracer writes itself
    on the same events (count, level, phase; and for the context, which
    also lands on I/O events, fd and ret) are renamed user_<key>: no JSON
    object repeats a key (the trace checker rejects one that does)."""
    r = run_traced(tmp_path, '''
        from dftrace import ai
        ai.context(count=3, fd=9, level="x", epoch=2)
        with ai.compute.forward(args={"count": 5, "ret": 1, "phase": "p"}):
            with open("/etc/hostname", "rb") as f:
                f.read()
    ''')
    fwd = [e for e in r.trace.xevents if e["name"] == "forward"]
    assert len(fwd) == 1
    a = fwd[0]["args"]
    assert (a["user_count"], a["ret"], a["user_phase"], a["user_fd"], a["user_level"],
            a["epoch"]) == (5, 1, "p", 9, "x", 2)
    reads = [e for e in r.trace.xevents if e["name"] == "read"
             and r.trace.path(e) == "/etc/hostname"]
    assert reads and all(e["args"]["user_count"] == 3 and e["args"]["phase"] == "forward"
                         and "count" in e["args"] for e in reads)


def test_pydftracer_parity_iter_counts_and_args_at_end(tmp_path):
    """Where the reference text is silent, pydftracer v2.0.3 is the standard:
    .iter() over N elements gives N .iter events (no event for the last,
    exhausting wait), and a region carries the args it has when it ends, so
    update(epoch=, step=) inside a fetch.block labels that block and the
    enclosing epoch.block and train."""
    r = run_traced(tmp_path, '''
        from dftrace import ai

        @ai.pipeline.train
        def train():
            for epoch in ai.pipeline.epoch.iter(range(2)):
                for step in ai.dataloader.fetch.iter(range(3)):
                    ai.update(epoch=epoch, step=step)
        train()
    ''')
    want = [C(1, "pipeline", "train", epoch=1, step=2)]
    for e in range(2):
        want += [C(2, "pipeline", "epoch.iter", count=e + 1,
                   **({"epoch": e - 1, "step": 2} if e else {})),
                 C(2, "pipeline", "epoch.block", count=e + 1, epoch=e, step=2)]
        for s in range(3):
            before = (e, s - 1) if s else ((e - 1, 2) if e else None)
            want += [C(3, "dataloader", "fetch.iter", count=s + 1,
                       **({"epoch": before[0], "step": before[1]} if before else {})),
                     C(3, "dataloader", "fetch.block", count=s + 1, epoch=e, step=s)]
    assert r.tree() == want
