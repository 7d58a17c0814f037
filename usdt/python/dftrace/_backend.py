"""The probe functions: dftrace._usdt when it can be imported, no-ops otherwise.

backend is "usdt" or "noop"; reason says why the extension is missing.
"""

try:
    from . import _usdt as probes  # noqa: F401
    backend = "usdt"
    reason = None
except ImportError as e:  # not built, or built for another interpreter
    from . import _nousdt as probes  # noqa: F401
    backend = "noop"
    reason = str(e)
