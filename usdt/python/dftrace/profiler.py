"""dftrace.profiler: torch.profiler.profile's shape, for dftrace-bpf.

    from dftrace import profiler

    with profiler.profile(schedule=profiler.schedule(wait=1, warmup=1, active=3),
                          torch_profiler=True) as p:
        for batch in loader:
            train(batch)
            p.step()

step() marks steps through the step annotation (every later event of the
process carries args.step, as DFT_USDT_SET_STEP does). Asked to
(torch_profiler=True, or torch_profiler=<a torch.profiler.profile>), the
same schedule runs torch.profiler, and our trace records two things its
trace lacks:

  - clock anchors: a region {"cat": "dftrace.profiler", "name": "anchor"}
    with count n around torch's record_function("dftrace::anchor#n"), at
    the start and end of each recorded step, so that `dftrace-bpf merge`
    can put torch's relative times on our clock (each anchor bounds the
    offset; several bound it to a few µs);
  - where each torch trace went: a region "torch_trace" whose args path0,
    path1... hold its absolute path (an arg holds 127 bytes), so that
    `dftrace-bpf merge t.pfw.gz` finds it by itself.

It and a region "rank" at start() carry rank and world_size when known (torch.distributed, or RANK and
WORLD_SIZE in the environment): the merge names processes after them.
Untraced (no dftrace-bpf attached) nothing of this is sent: step() costs a
method call and what torch's own step costs.

A plain torch.profiler.profile gets the same (hook_torch, which `import
dftrace` and --torch install): anchors at start(), around each step()
and at stop() while torch records, the step context, and a record of
every trace its export_chrome_trace wrote (from on_trace_ready,
tensorboard_trace_handler or the user's own call). Nothing else of
torch's changes: the files it writes are the ones it wrote, with the
anchors' record_function ranges in them.
"""

import enum
import functools
import itertools
import os

from ._backend import probes as _p

CAT = "dftrace.profiler"
ANCHOR = "anchor"
TORCH_TRACE = "torch_trace"
RANK = "rank"
TORCH_ANCHOR_PREFIX = "dftrace::anchor#"
_PATH_CHUNK = 120  # bytes of a path per arg (an arg string holds 127)
# One count for every profile of the process: the merge pairs anchors of
# a process by n, so two profiles must never both send anchor #1.
_anchor_count = itertools.count(1)
# Profiles started and not stopped: while one runs its step() sets the step
# context, and --torch's optimizer count leaves it alone (an optimizer
# step mid-iteration would move the step before the profiler does).
_running = [0]


def stepping():
    """Whether a profile (ours or a hooked torch one) owns the step context."""
    return _running[0] > 0


class ProfilerAction(enum.Enum):
    """torch.profiler.ProfilerAction's values."""
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


_RECORDING = ("RECORD", "RECORD_AND_SAVE")


def schedule(*, wait, warmup, active, repeat=0, skip_first=0):
    """torch.profiler.schedule's cycle: skip skip_first steps, then wait,
    warm up and record active steps, repeat times (0: until the end).
    Returns step -> ProfilerAction."""
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise ValueError("schedule: wait, warmup, repeat and skip_first must be "
                         ">= 0 and active > 0")
    cycle = wait + warmup + active

    def schedule_fn(step):
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if repeat > 0 and step // cycle >= repeat:
            return ProfilerAction.NONE
        at = step % cycle
        if at < wait:
            return ProfilerAction.NONE
        if at < wait + warmup:
            return ProfilerAction.WARMUP
        return (ProfilerAction.RECORD if at < cycle - 1
                else ProfilerAction.RECORD_AND_SAVE)

    return schedule_fn


def _always_record(step):
    return ProfilerAction.RECORD


def rank_and_world():
    """(rank, world_size) of this process, -1 where unknown."""
    try:
        import torch.distributed as dist
        if dist.is_available() and dist.is_initialized():
            return dist.get_rank(), dist.get_world_size()
    except ImportError:
        pass
    try:
        return int(os.environ["RANK"]), int(os.environ.get("WORLD_SIZE", "-1"))
    except (KeyError, ValueError):
        return -1, -1


def _mark_args(extra=None):
    rank, world = rank_and_world()
    if rank >= 0:
        _p.arg_int("rank", rank)
    if world > 0:
        _p.arg_int("world_size", world)
    for k, v in (extra or {}).items():
        _p.arg_str(k, v)


def anchor():
    """A region of ours around a record_function of torch's, both named
    after n: the merge's clock anchor. Nothing else runs inside ours,
    since its length is how far off the anchor may be."""
    if not _p.enabled():
        return
    import torch
    enter = torch.ops.profiler._record_function_enter
    leave = torch.ops.profiler._record_function_exit
    n = next(_anchor_count)
    name = TORCH_ANCHOR_PREFIX + str(n)
    _p.region_begin(CAT, ANCHOR, n)
    leave(enter(name, None))
    _p.region_end(CAT, ANCHOR, n)


def mark_rank():
    """The region "rank": who this process is, for the merge's names."""
    if _p.enabled():
        _p.region_begin(CAT, RANK, 0)
        _mark_args()
        _p.region_end(CAT, RANK, 0)


def record_torch_trace(path):
    """Records in the trace where a torch.profiler trace file went."""
    if not _p.enabled():
        return
    path = os.path.abspath(path)
    parts = {"path%d" % i: path[at:at + _PATH_CHUNK]
             for i, at in enumerate(range(0, len(path), _PATH_CHUNK))}
    _p.region_begin(CAT, TORCH_TRACE, 0)
    _mark_args(parts)
    _p.region_end(CAT, TORCH_TRACE, 0)


class profile:
    """A context manager shaped like torch.profiler.profile.

    schedule: step -> ProfilerAction (schedule() above, or torch's);
    default: every step is recorded.
    on_trace_ready(prof): called at the end of each recorded cycle, as
    torch calls it (with torch running, prof is the torch profiler).
    torch_profiler: False; True to run torch.profiler.profile on the same
    schedule (activities default to CPU; other keyword arguments go to
    it); or a torch.profiler.profile to drive (its schedule and
    on_trace_ready are used).
    trace_dir: where torch traces go when on_trace_ready writes none
    (torch-trace-<rank>-of-<world>.<n>.json).
    """

    def __init__(self, *, schedule=None, on_trace_ready=None, torch_profiler=False,
                 trace_dir=".", activities=None, **torch_kwargs):
        self.step_num = 0
        self.trace_dir = trace_dir
        self.traces = []  # torch trace files recorded so far
        self._saving = False
        self._exported = []
        self._torch = None
        self._scheduled = schedule is not None
        if torch_profiler is True:
            import torch.profiler as tp
            self._schedule = schedule or _always_record
            self._user_ready = on_trace_ready
            self._torch = tp.profile(
                activities=activities or [tp.ProfilerActivity.CPU],
                schedule=self._torch_schedule if schedule else None,
                on_trace_ready=self._trace_ready, **torch_kwargs)
        elif torch_profiler:
            self._torch = torch_profiler
            self._schedule = self._from_torch
            self._scheduled = torch_profiler.schedule.__name__ != "_default_schedule_fn"
            self._user_ready = torch_profiler.on_trace_ready
            torch_profiler.on_trace_ready = self._trace_ready
        else:
            self._schedule = schedule or _always_record
            self._user_ready = on_trace_ready
        if self._torch is not None:
            self._torch._dftrace_driven = True  # hook_torch leaves it to us

    def _torch_schedule(self, step):
        """Ours, in torch's enum (torch compares actions by identity)."""
        import torch.profiler as tp
        return tp.ProfilerAction[self._schedule(step).name]

    def _from_torch(self, step):
        return ProfilerAction[self._torch.schedule(step).name]

    @property
    def current_action(self):
        return self._schedule(self.step_num)

    @property
    def torch(self):
        """The torch.profiler.profile driven, or None."""
        return self._torch

    def _recording(self):
        return self._torch is not None and self.current_action.name in _RECORDING

    def _anchor(self):
        if self._recording():
            anchor()

    # -- torch.profiler.profile's interface -----------------------------
    def __enter__(self):
        self.start()
        return self

    def __exit__(self, exc_type, exc, tb):
        self.stop()
        return False

    def start(self):
        if self._torch is not None:
            self._torch.start()
        _running[0] += 1
        _p.ctx_int("step", self.step_num)
        mark_rank()
        self._anchor()

    def stop(self):
        self._anchor()
        if self._torch is not None:
            self._torch.stop()
        _running[0] -= 1
        _p.ctx_clear("step")

    def step(self):
        """The next step begins."""
        self._anchor()
        self.step_num += 1
        _p.ctx_int("step", self.step_num)
        if self._torch is not None:
            self._torch.step()
        elif (self._schedule(self.step_num - 1) == ProfilerAction.RECORD_AND_SAVE
              and self._user_ready):
            self._user_ready(self)
        self._anchor()

    def export_chrome_trace(self, path):
        """torch's export_chrome_trace, recorded in our trace."""
        self._torch.export_chrome_trace(path)
        self.traces.append(os.path.abspath(path))
        record_torch_trace(path)

    def key_averages(self, *a, **kw):
        return self._torch.key_averages(*a, **kw)

    # -- where torch's traces go -----------------------------------------
    def _trace_ready(self, prof):
        """torch's on_trace_ready: the user's, watching which files it
        exports; ours when it exports none."""
        exported = []
        real = prof.export_chrome_trace

        def watched(path):
            real(path)
            exported.append(path)

        prof.export_chrome_trace = watched
        try:
            if self._user_ready:
                self._user_ready(prof)
        finally:
            del prof.export_chrome_trace
        for path in exported:
            self.traces.append(os.path.abspath(path))
            record_torch_trace(path)
        # As torch does, a profile with neither a schedule nor a handler
        # leaves the export to its user (export_chrome_trace after the
        # block); otherwise a cycle nobody exported would be lost.
        if not exported and (self._user_ready or self._scheduled):
            self._save(prof)

    def _save(self, prof):
        rank, world = rank_and_world()
        name = "torch-trace-%d-of-%d.%d.json" % (max(rank, 0), max(world, 1),
                                                 len(self.traces))
        path = os.path.join(self.trace_dir, name)
        prof.export_chrome_trace(path)
        self.traces.append(os.path.abspath(path))
        record_torch_trace(path)


# -- a plain torch.profiler.profile ---------------------------------------
def _recording(prof):
    return prof.current_action.name in _RECORDING


def _plain(method):
    """method of torch.profiler.profile, doing what dftrace.profiler's
    does around it unless a dftrace.profiler drives this profile."""
    def wrap(around):
        @functools.wraps(method)
        def hooked(self, *args, **kwargs):
            if self.__dict__.get("_dftrace_driven"):
                return method(self, *args, **kwargs)
            return around(self, lambda: method(self, *args, **kwargs))
        hooked.__dftrace_wrapped__ = True
        return hooked
    return wrap


def _start(self, call):
    call()
    _running[0] += 1
    _p.ctx_int("step", self.step_num)
    mark_rank()
    if _recording(self):
        anchor()


def _step(self, call):
    if _recording(self):
        anchor()
    call()
    _p.ctx_int("step", self.step_num)
    if _recording(self):
        anchor()


def _stop(self, call):
    if _recording(self):
        anchor()
    call()
    _running[0] -= 1
    _p.ctx_clear("step")


def hook_torch(tp):
    """Hooks torch.profiler (tp) so that a plain profile does what
    dftrace.profiler.profile does. Safe to repeat."""
    cls = tp.profile
    if getattr(cls.step, "__dftrace_wrapped__", False):
        return
    for name, around in (("start", _start), ("step", _step), ("stop", _stop)):
        setattr(cls, name, _plain(getattr(cls, name))(around))
    export = cls.export_chrome_trace

    @functools.wraps(export)
    def export_chrome_trace(self, path, *args, **kwargs):
        ret = export(self, path, *args, **kwargs)
        if not self.__dict__.get("_dftrace_driven"):
            record_torch_trace(path)
        return ret
    export_chrome_trace.__dftrace_wrapped__ = True
    cls.export_chrome_trace = export_chrome_trace
