"""dftrace: DFTracer's AI logging API (ai, dft_fn, dftracer) on dftrace-bpf's
USDT probes.

    from dftrace import ai

    @ai.compute.forward
    def forward(model, x): ...

Run the program under `dftrace-bpf -- python3 prog.py`; untraced, every
annotation is a no-op costing well under a microsecond. ai.backend is
"usdt" when the probe extension (dftrace._usdt) loaded, "noop" otherwise
(ai.backend_reason says why).

Importing it hooks torch.profiler (now, or when torch is imported): a
plain torch.profiler.profile then records the clock anchors and trace
paths that `dftrace-bpf merge` needs, as dftrace.profiler does.
"""

from ._ai import AI, Profiler, ai, clear_context, context, dft_fn, dftracer
from ._backend import backend, probes as _probes, reason as backend_reason
from . import autotorch as _autotorch

# A plain torch.profiler.profile gets dftrace.profiler's anchors and
# records (dftrace.profiler.hook_torch), so that its trace merges.
_autotorch.install(phases=False)

enabled = _probes.enabled
ready = _probes.ready  # every probe attached (wait for this before tracing)

__all__ = ["ai", "dft_fn", "dftracer", "AI", "Profiler", "context",
           "clear_context", "enabled", "ready", "backend", "backend_reason"]
