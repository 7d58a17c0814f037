from dftrace._ai import *  # noqa: F401,F403
from dftrace._ai import AI, Profiler, ai, dft_fn, dftracer  # noqa: F401
