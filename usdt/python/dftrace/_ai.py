"""DFTracer's AI logging API (dftracer.logger.ai) on dftrace-bpf's USDT probes.

A node (ai.compute.forward, ...) is a region {"cat": <category>, "name":
<node>}: region_begin(cat, name, count) ... region_end(cat, name, count),
with the node's args (update(), decorator/context-manager args=) sent with
arg_int/arg_str right after the begin, so that I/O inside sees them, and
again right before the end: as in pydftracer, a region carries the args
it has when it ends (an update() inside a block labels the blocks around
it). The tracer gives them to that region only. Nothing is prepared unless
a tracer is attached (probes.enabled(), the region_begin semaphore):
untraced, an event costs an attribute load and one C call.
"""

import functools

from ._backend import backend, probes as _p, reason as backend_reason
from ._tree import TREE as _TREE

_on = _p.enabled
_begin = _p.region_begin
_end = _p.region_end
_meta = _p.meta
_aint = _p.arg_int
_astr = _p.arg_str

_I64_MIN, _I64_MAX = -(1 << 63), (1 << 63) - 1

ROOT_NAME = ROOT_CAT = "ai_root"

# A region end with this count drops the region: the last wait of an
# iteration, which found no element, is no event (pydftracer logs N .iter
# events for N elements).
_DISCARD = -1


def _send(args):
    """Args of the region just begun: ints as int, anything else as str()."""
    for k, v in args.items():
        if type(v) is int and _I64_MIN <= v <= _I64_MAX:
            _aint(k, v)
        else:
            _astr(str(k), str(v))


def _collect(epoch=None, step=None, image_idx=None, image_size=None, args=None):
    out = {}
    if epoch is not None:
        out["epoch"] = epoch
    if step is not None:
        out["step"] = step
    if image_idx is not None:
        out["image_idx"] = image_idx
    if image_size is not None:
        out["image_size"] = image_size
    if args:
        for k, v in args.items():
            out[str(k)] = v
    return out


class Profiler:
    """One node of the tree; also what dft_fn and derive() return.

    Decorator (@node, @node(args=...)), context manager (with node:,
    with node(args=...):), iterable wrapper (node.iter(it)), hooks
    (node.start()/stop(), metadata=True for CM marks), constructor hook
    (node.init), update(), derive(), enable()/disable().
    """

    def __init__(self, cat, name=None, enable=True, args=None):
        self._cat = str(cat)
        self._name = str(name) if name else self._cat
        self._enabled = bool(enable)
        self._args = dict(args) if args else {}
        self._children = {}
        self._stack = []  # per `with`/start(): whether the begin was sent

    # -- identity -------------------------------------------------------
    @property
    def cat(self):
        return self._cat

    @property
    def name(self):
        return self._name

    @property
    def enabled(self):
        return self._enabled

    @property
    def args(self):
        """The args every event of this node carries (a copy)."""
        return dict(self._effective())

    def __repr__(self):
        return "<%s cat=%r name=%r%s>" % (type(self).__name__, self._cat, self._name,
                                         "" if self._enabled else " disabled")

    def _effective(self):
        return self._args

    def _open(self, name, count):
        """Begin a region of this node (only called while traced)."""
        _begin(self._cat, name, count)
        a = self._effective()
        if a:
            _send(a)

    def _close(self, name, count):
        """End a region of this node, with its args as they are now."""
        a = self._effective()
        if a:
            _send(a)
        _end(self._cat, name, count)

    # -- decorator ------------------------------------------------------
    def __call__(self, fn=None, *, enable=None, epoch=None, step=None,
                 image_idx=None, image_size=None, args=None):
        extra = _collect(epoch, step, image_idx, image_size, args)
        if fn is not None and enable is None and not extra:
            # @node: this very node, so a later disable()/enable() applies.
            return self._wrap(fn)
        # @node(...) / node(...): a new instance, its enable state fixed
        # now (DFTracer's caveat: a later disable() does not reach it).
        inst = _Instance(self, self._enabled if enable is None else enable, extra)
        return inst if fn is None else inst._wrap(fn)

    def _wrap(self, f, name=None):
        prof = self
        name = name or self._name

        @functools.wraps(f)
        def wrapper(*a, **k):
            if prof._enabled and _on():
                prof._open(name, 0)
                try:
                    return f(*a, **k)
                finally:
                    prof._close(name, 0)
            return f(*a, **k)

        wrapper.__dftrace__ = self
        return wrapper

    # -- context manager and hooks -------------------------------------
    def __enter__(self):
        if self._enabled and _on():
            self._open(self._name, 0)
            self._stack.append(True)
        else:
            self._stack.append(False)
        return self

    def __exit__(self, exc_type=None, exc=None, tb=None):
        if self._stack and self._stack.pop():
            self._close(self._name, 0)
        return False

    def start(self, metadata=False):
        if metadata:
            if self._enabled and _on():
                _meta(self._cat, self._name, 0)
        else:
            self.__enter__()

    def stop(self, metadata=False):
        if metadata:
            if self._enabled and _on():
                _meta(self._cat, self._name, 1)
        else:
            self.__exit__(None, None, None)

    def reset(self):
        """Close whatever start() left open on this node."""
        while self._stack:
            self.__exit__(None, None, None)

    # -- iteration ------------------------------------------------------
    def iter(self, iterable, *, include_block=True, include_iter=True,
             iter_name=None, block_name=None):
        """Yield from iterable: <name>.iter is the wait for each element,
        <name>.block the loop body; both carry the 1-based count. N
        elements give N of each: the last wait, which finds none, is
        dropped, as pydftracer does."""
        base = self._name
        iname = iter_name or (base if base.endswith(".iter") else base + ".iter")
        bname = block_name or (base if base.endswith(".block") else base + ".block")
        return self._iterate(iterable, iname, bname, "count", include_iter,
                             include_block)

    def _counted_args(self, key, count):
        a = dict(self._effective())
        a[key] = count
        return a

    def _open_counted(self, name, key, count):
        """Begin a region whose 1-based count is the arg `key`."""
        if key == "count":
            self._open(name, count)
            return
        _begin(self._cat, name, 0)
        _send(self._counted_args(key, count))

    def _close_counted(self, name, key, count):
        if key == "count":
            self._close(name, count)
            return
        _send(self._counted_args(key, count))
        _end(self._cat, name, 0)

    def _iterate(self, iterable, iname, bname, key, include_iter, include_block):
        it = iter(iterable)
        count = 0
        while True:
            count += 1
            traced = self._enabled and _on()
            if traced and include_iter:
                self._open_counted(iname, key, count)
                try:
                    v = next(it)
                except StopIteration:
                    _end(self._cat, iname, _DISCARD)
                    return
                except BaseException:
                    _end(self._cat, iname, count)
                    raise
                self._close_counted(iname, key, count)
            else:
                try:
                    v = next(it)
                except StopIteration:
                    return
            if traced and include_block:
                self._open_counted(bname, key, count)
                try:
                    yield v
                finally:
                    self._close_counted(bname, key, count)
            else:
                yield v

    # -- tree -----------------------------------------------------------
    def _child(self, key, name):
        c = self._children.get(key)
        if c is None:
            c = Profiler(self._cat, name, self._enabled, self._args)
            self._children[key] = c
        return c

    @property
    def init(self):
        """The constructor-hook node "<name>.init" (ai.data.item.init is
        "item.init", ai.checkpoint.init "checkpoint.init")."""
        n = self._name + ".init"
        return self._child(n, n)

    def derive(self, name):
        """A child "<name>.<child>" in this node's category, with this
        node's args; it follows this node's update/enable/disable."""
        n = "%s.%s" % (self._name, name)
        return self._child(n, n)

    def update(self, epoch=None, step=None, image_idx=None, image_size=None,
               args=None):
        """Args of every later event of this node and its whole subtree."""
        extra = _collect(epoch, step, image_idx, image_size, args)
        if extra:
            self._apply(extra)
        return self

    def _apply(self, extra):
        self._args.update(extra)
        for c in self._children.values():
            c._apply(extra)

    def enable(self):
        self._set_enabled(True)

    def disable(self):
        self._set_enabled(False)

    def _set_enabled(self, on):
        self._enabled = on
        for c in self._children.values():
            c._set_enabled(on)


class _Instance(Profiler):
    """What node(...) returns: same cat/name, its own args and a fixed enable
    state; it still sees the node's update()s."""

    def __init__(self, base, enable, extra):
        Profiler.__init__(self, base._cat, base._name, enable, extra)
        self._base = base

    def _effective(self):
        base = self._base._effective()
        if not self._args:
            return base
        a = dict(base)
        a.update(self._args)
        return a


class AI(Profiler):
    """The root: ai.compute, ai.data, ai.dataloader, ai.comm, ai.device,
    ai.checkpoint, ai.pipeline and their children."""

    backend = backend
    backend_reason = backend_reason

    def __init__(self, enable=True):
        Profiler.__init__(self, ROOT_CAT, ROOT_NAME, enable)
        for cat, names in _TREE.items():
            node = Profiler(cat, cat, enable)
            for n in names:
                setattr(node, n, node._child(n, n))
            setattr(self, cat, node)
            self._children[cat] = node

    def update(self, epoch=None, step=None, image_idx=None, image_size=None,
               args=None):
        """As every node's update(); the root's epoch and step are also
        the process's context (every later event carries them, I/O too),
        and its step is the step annotation that --steps follows."""
        Profiler.update(self, epoch, step, image_idx, image_size, args)
        if _on():
            for k, v in (("epoch", epoch), ("step", step)):
                if type(v) is int and _I64_MIN <= v <= _I64_MAX:
                    _p.ctx_int(k, v)
        return self

    @staticmethod
    def context(**kw):
        """Process-wide context (ctx_int/ctx_str): an arg of every later
        event of the process, I/O included; None clears a key."""
        context(**kw)

    @staticmethod
    def clear_context(key=None):
        _p.ctx_clear(key)


def context(**kw):
    for k, v in kw.items():
        if v is None:
            _p.ctx_clear(k)
        elif type(v) is int and _I64_MIN <= v <= _I64_MAX:
            _p.ctx_int(k, v)
        else:
            _p.ctx_str(k, str(v))


def clear_context(key=None):
    _p.ctx_clear(key)


class dft_fn(Profiler):
    """DFTracer's dft_fn(cat, name): decorator (.log, .log_init, .log_static),
    context manager, .iter, update()."""

    def __init__(self, cat, name=None, epoch=None, step=None, image_idx=None,
                 image_size=None, enable=True):
        Profiler.__init__(self, cat, name or cat, enable,
                          _collect(epoch, step, image_idx, image_size))
        self._named = bool(name)

    def log(self, func):
        return self._wrap(func, self._name if self._named else func.__qualname__)

    log_static = log

    def log_init(self, init):
        return self._wrap(init, self._name if self._named else init.__qualname__)

    def iter(self, iterable, name="loop", iter_name="step", *,  # noqa: A003
             include_block=True, include_iter=True):
        """pydftracer's dft_fn.iter: <name>.iter is the wait for each element
        (N elements, N waits), <name>.yield the loop body;
        both carry the 1-based count as the int arg iter_name, with this
        dft_fn's own args. include_iter/include_block=False leave out one
        of the two."""
        name = str(name)
        return self._iterate(iterable, name + ".iter", name + ".yield",
                             str(iter_name), include_iter, include_block)


class dftracer:
    """pydftracer's dftracer: initialize_log()/finalize() are accepted; the
    trace is written by dftrace-bpf, not by this process."""

    _instance = None

    def __init__(self, logfile=None, data_dir=None, process_id=-1):
        self.logfile = logfile
        self.data_dir = data_dir
        self.process_id = process_id

    @classmethod
    def initialize_log(cls, logfile=None, data_dir=None, process_id=-1, *a, **kw):
        cls._instance = cls(logfile, data_dir, process_id)
        return cls._instance

    @classmethod
    def get_instance(cls):
        if cls._instance is None:
            cls._instance = cls()
        return cls._instance

    @staticmethod
    def get_time():
        import time
        return time.time_ns() // 1000

    def enter_event(self):
        pass

    def exit_event(self):
        pass

    def log_event(self, *a, **kw):
        pass

    def log_metadata_event(self, *a, **kw):
        pass

    def finalize(self):
        pass


ai = AI()
