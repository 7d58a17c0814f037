"""dftrace: DFTracer's AI logging API on dftrace-bpf's USDT probes.

    pip install ./usdt/python                       # from the repository root
    DFTRACE_COMPAT=1 pip install ./usdt/python      # also the `dftracer` package
                                                    # (pydftracer's import paths)
    python3 setup.py build_ext --inplace            # in place, for PYTHONPATH use

Needs a C compiler and the Python headers (python3-dev); the project's
include/ is found next to this file, or in DFTRACE_INCLUDE. Only setuptools
is needed: offline, add --no-build-isolation --no-index so that pip uses the
installed one.
"""

import os

from setuptools import Extension, setup

here = os.path.dirname(os.path.abspath(__file__))
incs = [d for d in (os.environ.get("DFTRACE_INCLUDE"),
                    os.path.join(here, "..", "..", "include"),
                    "/usr/local/include", "/usr/include")
        if d and os.path.exists(os.path.join(d, "dftrace", "usdt.h"))]

packages = ["dftrace"]
if os.environ.get("DFTRACE_COMPAT", "") not in ("", "0"):
    packages += ["dftracer", "dftracer.logger", "dftracer.python"]

setup(
    name="dftrace",
    version="0.1.0",
    description="DFTracer AI logging API (ai, dft_fn) on dftrace-bpf USDT probes",
    license="LGPL-2.1-only OR BSD-2-Clause",
    packages=packages,
    ext_modules=[Extension(
        "dftrace._usdt", ["dftrace/_usdt.c"],
        include_dirs=incs[:1],
        extra_compile_args=["-O2", "-std=gnu11", "-Wall", "-Wextra",
                            "-Wno-missing-field-initializers"],
    )],
    python_requires=">=3.7",
    zip_safe=False,
)
