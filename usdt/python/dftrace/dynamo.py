"""Graph-node tracing for PyTorch, as pydftracer's Dynamo integration.

    from dftrace import dynamo
    class Net(torch.nn.Module):
        @dynamo.compile
        def forward(self, x): ...

    from dftrace.dynamo import create_backend
    model = torch.compile(model, backend=create_backend(name="net", epoch=1))

Every executed graph node is an event in cat "dynamo", named
"module.<path>" (call_module), "function.<name>" (call_function; aten
overloads keep their suffix, e.g. function.relu.default) or
"method.<name>" (call_method), with args grad_enabled, and the epoch,
step, image_idx, image_size and name given.

Where torch has torch.compile it is used; otherwise (Debian 12's torch
1.13) the module or function is captured with torch.fx.symbolic_trace and
the same interpreter runs it, so the API is the same.
"""
import functools

from ._backend import probes

CAT = "dynamo"


def _node_name(node, gm):
    target = node.target
    if node.op == "call_module":
        return "module.%s" % target
    if node.op == "call_method":
        return "method.%s" % target
    name = getattr(target, "__name__", None) or str(target)
    overload = getattr(target, "_overloadname", None)  # aten OpOverload
    if overload and not name.endswith("." + overload):
        name = "%s.%s" % (name, overload)
    return "function.%s" % name


class Dynamo:
    """Tracer settings: the args every node event carries."""

    def __init__(self, name=None, epoch=None, step=None, image_idx=None,
                 image_size=None, enable=True, autograd=True):
        self.name, self.epoch, self.step = name, epoch, step
        self.image_idx, self.image_size = image_idx, image_size
        self.enable, self.autograd = enable, autograd

    # -- running a graph ------------------------------------------------
    def _emit_args(self, torch):
        probes.arg_int("grad_enabled", int(torch.is_grad_enabled()))
        for key in ("epoch", "step", "image_idx"):
            value = getattr(self, key)
            if value is not None:
                probes.arg_int(key, int(value))
        if self.image_size is not None:
            probes.arg_str("image_size", str(self.image_size))
        if self.name is not None:
            probes.arg_str("name", str(self.name))

    def interpret(self, gm):
        """A callable that runs gm node by node, each node an event."""
        import torch
        import torch.fx

        tracer = self

        class Interpreter(torch.fx.Interpreter):
            def run_node(self, n):
                if n.op not in ("call_module", "call_function", "call_method") or \
                        not tracer.enable or not probes.enabled():
                    return super().run_node(n)
                name = _node_name(n, gm)
                probes.region_begin(CAT, name)
                tracer._emit_args(torch)
                try:
                    return super().run_node(n)
                finally:
                    probes.region_end(CAT, name)

        def run(*args):
            return Interpreter(gm).run(*args)
        return run

    def backend(self, gm, example_inputs=None):
        """A torch.compile backend (also usable directly on an FX graph)."""
        import torch
        if self.autograd and hasattr(torch, "compile"):
            try:
                from torch._dynamo.backends.common import aot_autograd
            except ImportError:
                aot_autograd = None
            if aot_autograd is not None:
                return aot_autograd(fw_compiler=lambda g, _: self.interpret(g),
                                    bw_compiler=lambda g, _: self.interpret(g))(
                                        gm, example_inputs)
        return self.interpret(gm)

    # -- the decorator ----------------------------------------------------
    def compile(self, fn):
        """@compile on a Module's forward, or on a plain function."""
        import torch
        if hasattr(torch, "compile"):
            compiled = torch.compile(fn, backend=self.backend)
            return functools.wraps(fn)(compiled)
        return self._fx_compile(fn)

    def _fx_compile(self, fn):
        import torch.fx
        graphs = {}
        capturing = set()

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            owner = args[0] if args and isinstance(args[0], __import__("torch").nn.Module) else None
            key = id(owner) if owner is not None else None
            # symbolic_trace calls forward again: let that call through
            if key in capturing or kwargs:
                return fn(*args, **kwargs)
            if key not in graphs:
                capturing.add(key)
                try:
                    graphs[key] = self.interpret(
                        torch.fx.symbolic_trace(owner) if owner is not None
                        else torch.fx.symbolic_trace(fn))
                finally:
                    capturing.discard(key)
            return graphs[key](*(args[1:] if owner is not None else args))
        return wrapper


_default = Dynamo()


def compile(fn):  # noqa: A001 - pydftracer's name
    return _default.compile(fn)


def create_backend(name=None, epoch=None, step=None, image_idx=None,
                   image_size=None, enable=True, autograd=True):
    """A torch.compile backend that traces every graph node it runs."""
    return Dynamo(name=name, epoch=epoch, step=step, image_idx=image_idx,
                  image_size=image_size, enable=enable, autograd=autograd).backend
