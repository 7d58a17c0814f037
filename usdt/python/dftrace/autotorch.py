"""Phase labels for an unmodified PyTorch program (dftrace-bpf --torch).

install() arranges for torch to be patched as soon as it is imported: its
profiler hooked (dftrace.profiler.hook_torch; install(phases=False), which
`import dftrace` runs, does only that), and each patched entry point run
inside a region with DFTracer's names:

    nn.Module forward (outermost call)    compute.forward
    autograd backward                      compute.backward
    Optimizer.step                         compute.step (then the step context
                                           is the number of steps taken)
    DataLoader iteration (next batch)      dataloader.fetch
    Dataset.__getitem__                    data.item
    torch.save / torch.load                checkpoint.capture / .restart
    Tensor.to / Tensor.cuda                device.transfer
    torch.distributed collectives          comm.<collective>, args.comm_id
                                           the process group's name

DataLoader workers are named pt_data_worker and the pin-memory thread
pt_pin_memory (the kernel's comm, which the trace shows as
thread_name). The wrappers only add probes around the original calls: the
program computes exactly what it computed before.
"""
import ctypes
import functools
import importlib.abc
import importlib.machinery
import inspect
import sys
import threading

from ._backend import probes

_local = threading.local()
_PR_SET_NAME = 15


def _name_this_thread(name):
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_NAME, ctypes.c_char_p(name.encode()), 0, 0, 0)
    except (OSError, AttributeError):
        pass


def _named(loop, name):
    """loop, run in a thread (or worker process) that is named first."""
    @functools.wraps(loop)
    def named_loop(*args, **kwargs):
        _name_this_thread(name)
        return loop(*args, **kwargs)
    return named_loop


def _region(cat, name, fn, outermost=False, sync_only=False, comm_id=None):
    """fn wrapped in a cat/name region; with outermost, only the outermost
    of nested calls on a thread is a region (module calls nest deeply);
    with sync_only, a call given async_op=True is none (it returns once
    the collective is queued: merge would take its end for the
    collective's, and line hosts up on it); with comm_id, a function of
    the call's (args, kwargs), the region's args.comm_id."""
    key = "%s.%s" % (cat, name)

    def say_comm(args, kwargs):
        try:
            v = comm_id(args, kwargs)
        except Exception:  # a label must never fail the user's call
            return
        if v is not None:
            probes.arg_str("comm_id", v)

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if not probes.enabled() or (sync_only and kwargs.get("async_op")):
            return fn(*args, **kwargs)
        if outermost:
            depth = getattr(_local, key, 0)
            setattr(_local, key, depth + 1)
            if depth:
                try:
                    return fn(*args, **kwargs)
                finally:
                    setattr(_local, key, depth)
        probes.region_begin(cat, name)
        if comm_id is not None:
            say_comm(args, kwargs)
        try:
            return fn(*args, **kwargs)
        finally:
            probes.region_end(cat, name)
            if outermost:
                setattr(_local, key, 0)
    wrapper.__dftrace_wrapped__ = True
    return wrapper


def _patch(owner, attr, cat, name, **kw):
    fn = getattr(owner, attr, None)
    if fn is None or getattr(fn, "__dftrace_wrapped__", False):
        return
    setattr(owner, attr, _region(cat, name, fn, **kw))


_steps = [0]  # optimizer steps taken in this process


def _counted(step):
    """An optimizer's step() that, once done, moves the step context on:
    the next iteration is step n+1, as torch.profiler counts (and what
    --steps follows). While a profiler runs, its step() does that."""
    from . import profiler

    @functools.wraps(step)
    def counted(*args, **kwargs):
        try:
            return step(*args, **kwargs)
        finally:
            _steps[0] += 1
            if probes.enabled() and not profiler.stepping():
                probes.ctx_int("step", _steps[0])
    counted.__dftrace_wrapped__ = True
    return counted


def _patch_optimizers(torch):
    Optimizer = torch.optim.Optimizer
    init = Optimizer.__init__

    @functools.wraps(init)
    def __init__(self, *args, **kwargs):
        cls = type(self)
        if not getattr(cls.step, "__dftrace_wrapped__", False):
            cls.step = _counted(_region("compute", "step", cls.step))
        return init(self, *args, **kwargs)
    Optimizer.__init__ = __init__


def _patch_data(torch):
    from torch.utils.data import dataloader
    from torch.utils.data._utils import worker, pin_memory

    _patch(dataloader._BaseDataLoaderIter, "__next__", "dataloader", "fetch")
    init = dataloader.DataLoader.__init__

    @functools.wraps(init)
    def __init__(self, dataset, *args, **kwargs):
        if hasattr(type(dataset), "__getitem__"):
            _patch(type(dataset), "__getitem__", "data", "item")
        return init(self, dataset, *args, **kwargs)
    dataloader.DataLoader.__init__ = __init__

    worker._worker_loop = _named(worker._worker_loop, "pt_data_worker")
    pin_memory._pin_memory_loop = _named(pin_memory._pin_memory_loop, "pt_pin_memory")


# torch.distributed's functions by DFTracer's comm leaf. isend and irecv
# time the submission only; a collective given async_op=True is not
# labelled (its call is the submission, not the collective). Collectives
# that DDP's C++ reducer issues never pass through Python: not labelled.
_COLLECTIVES = {
    "send": "send", "isend": "send", "recv": "receive", "irecv": "receive",
    "barrier": "barrier", "monitored_barrier": "barrier",
    "broadcast": "bcast", "broadcast_object_list": "bcast",
    "reduce": "reduce", "all_reduce": "all_reduce",
    "gather": "gather", "gather_object": "gather",
    "all_gather": "all_gather", "all_gather_object": "all_gather",
    "all_gather_into_tensor": "all_gather", "_all_gather_base": "all_gather",
    "scatter": "scatter", "scatter_object_list": "scatter",
    "reduce_scatter": "reduce_scatter", "reduce_scatter_tensor": "reduce_scatter",
    "_reduce_scatter_base": "reduce_scatter",
    "all_to_all": "all_to_all", "all_to_all_single": "all_to_all"}


def _group_arg(fn):
    """Where fn takes its process group: (args, kwargs) -> the group given
    (None: the world's); None if fn takes none."""
    try:
        params = list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return None
    if "group" not in params:
        return None
    at = params.index("group")

    def group(args, kwargs):
        return kwargs["group"] if "group" in kwargs else args[at] if at < len(args) else None
    return group


def _group_name(dist, group):
    """A process group's name, which every rank gives it (new_group is
    called by all ranks, in one order): "0" the world's in torch 1.x."""
    c10d = dist.distributed_c10d
    if group is None or group is getattr(dist.group, "WORLD", None):
        group = c10d._get_default_group()
    name = getattr(group, "group_name", None)  # torch >= 2
    if not name:
        names = getattr(c10d, "_pg_names", None)
        if names is None:
            names = getattr(getattr(c10d, "_world", None), "pg_names", {})
        name = names.get(group)
    return str(name) if name else None


def _comm_id(dist, fn):
    """The args.comm_id of fn's calls: their process group's name."""
    group = _group_arg(fn)
    if group is None:
        return None
    return lambda args, kwargs: _group_name(dist, group(args, kwargs))


def patch_torch(torch):
    _patch(torch.nn.Module, "__call__", "compute", "forward", outermost=True)
    _patch(torch.Tensor, "backward", "compute", "backward", outermost=True)
    _patch(torch.autograd, "backward", "compute", "backward", outermost=True)
    _patch_optimizers(torch)
    _patch_data(torch)
    for mod in (torch, torch.serialization):
        _patch(mod, "save", "checkpoint", "capture", outermost=True)
        _patch(mod, "load", "checkpoint", "restart", outermost=True)
    _patch(torch.Tensor, "to", "device", "transfer", outermost=True)
    _patch(torch.Tensor, "cuda", "device", "transfer", outermost=True)
    try:
        import torch.distributed as dist
        for fn, name in _COLLECTIVES.items():
            # outermost: the object forms call the tensor ones
            _patch(dist, fn, "comm", name, outermost=True,
                   sync_only=fn not in ("isend", "irecv"),
                   comm_id=_comm_id(dist, getattr(dist, fn, None)))
    except ImportError:
        pass


# What to do once torch is imported: its profiler hooked (for any process
# that imports dftrace), its phases labelled (--torch).
_wanted = {"phases": False}


def _on_torch(torch):
    from . import profiler
    profiler.hook_torch(torch.profiler)
    if _wanted["phases"]:
        patch_torch(torch)


class _TorchFinder(importlib.abc.MetaPathFinder):
    """Hooks torch the moment its import completes."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "torch":
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None:
            return spec
        exec_module = spec.loader.exec_module

        def exec_and_patch(module):
            exec_module(module)
            _on_torch(module)
        spec.loader.exec_module = exec_and_patch
        return spec


def install(phases=True):
    """Hooks torch.profiler, and with phases labels torch's phases, now
    or when torch is imported. Safe to repeat."""
    _wanted["phases"] = _wanted["phases"] or phases
    if "torch" in sys.modules:
        _on_torch(sys.modules["torch"])
    elif not any(isinstance(f, _TorchFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _TorchFinder())
