"""Compatibility: pydftracer's dftracer.python.dynamo, served by
dftrace.dynamo (compile, create_backend, Dynamo; events in cat "dynamo")."""

from dftrace.dynamo import CAT, Dynamo, compile, create_backend  # noqa: F401,A004

CAT_DYNAMO = CAT

__all__ = ["Dynamo", "compile", "create_backend", "CAT_DYNAMO"]
