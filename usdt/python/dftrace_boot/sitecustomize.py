"""Loaded at interpreter start-up by dftrace-bpf --torch (it puts this
directory first on PYTHONPATH): labels PyTorch's phases, then runs the
sitecustomize this one shadows, if any."""
import importlib.machinery
import importlib.util
import os
import sys

_here = os.path.dirname(os.path.abspath(__file__))

try:
    from dftrace import autotorch
    autotorch.install()
except Exception as e:  # never break the user's program
    sys.stderr.write("dftrace-bpf --torch: no phase labels: %s\n" % e)

_others = [p for p in sys.path if os.path.abspath(p or ".") != _here]
_spec = importlib.machinery.PathFinder.find_spec("sitecustomize", _others)
if _spec is not None and _spec.loader is not None:
    _spec.loader.exec_module(importlib.util.module_from_spec(_spec))
