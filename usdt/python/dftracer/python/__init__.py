"""Compatibility: pydftracer's import paths (dftracer.logger,
dftracer.python) served by dftrace's USDT-based implementation.

    from dftracer.python import ai, dft_fn, dftracer
    from dftracer.python import dynamo, Dynamo, create_backend
    from dftracer.python.dynamo import create_backend
    from dftracer.python import initialize, finalize, get_time

The trace is written by dftrace-bpf, not by this process: initialize()
and finalize() are accepted like dftracer.initialize_log() and
finalize(); get_time() is the wall clock in microseconds, the trace's
time base.
"""

from dftrace import ai, dft_fn, dftracer  # noqa: F401

from . import dynamo  # noqa: F401  (torch is imported only when used)
from .dynamo import Dynamo, create_backend  # noqa: F401


def initialize(log_file=None, data_dirs=None, process_id=-1):
    """pydftracer's initialize(): accepted, like dftracer.initialize_log()."""
    dftracer.initialize_log(log_file, data_dirs, process_id)


def finalize():
    """pydftracer's finalize(): accepted, like dftracer's finalize()."""
    dftracer.get_instance().finalize()


def get_time():
    """Microseconds since the epoch (the trace's ts unit and clock)."""
    return dftracer.get_time()


__all__ = ["ai", "dft_fn", "dftracer", "dynamo", "Dynamo", "create_backend",
           "initialize", "finalize", "get_time"]
