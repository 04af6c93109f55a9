"""This Tidemark's version, as its package records it.

Revisions, occurrences and engines record it (``engine_version``), so that a
ledger says which Tidemark computed what.
"""

from __future__ import annotations

from functools import cache
from importlib import metadata


@cache
def tidemark_version() -> str:
    """This Tidemark's version (read once: reading package metadata takes time)."""
    try:
        return metadata.version("tidemark")
    except metadata.PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown"
