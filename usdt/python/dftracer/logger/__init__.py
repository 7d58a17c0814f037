"""Compatibility: pydftracer's import paths (dftracer.logger,
dftracer.python) served by dftrace's USDT-based implementation."""

from dftrace import ai, dft_fn, dftracer  # noqa: F401

__all__ = ["ai", "dft_fn", "dftracer"]
