"""This Tidemark's version, as its package records it.

Revisions, occurrences and engines record it (``engine_version``), so that a
ledger says which Tidemark computed what.
"""

from __future__ import annotations

import re
from functools import cache
from importlib import metadata


@cache
def tidemark_version() -> str:
    """This Tidemark's version (read once: reading package metadata takes time)."""
    try:
        return metadata.version("tidemark")
    except metadata.PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown"


_RELEASE = re.compile(r"^v?(\d+(?:\.\d+)*)(.*)$")


def version_key(version: str) -> tuple[tuple[int, ...], int, str] | None:
    """A sort key for a version text (``0.10.0`` after ``0.9.2``; ``0.2.0rc1`` before
    ``0.2.0``), or None when it has no release number (``unknown``): not comparable."""
    found = _RELEASE.match(version.strip())
    if found is None:
        return None
    numbers = tuple(int(part) for part in found.group(1).split("."))
    while len(numbers) > 1 and numbers[-1] == 0:
        numbers = numbers[:-1]  # 0.2 is 0.2.0
    rest = found.group(2).lstrip(".-_+")
    return numbers, 0 if rest and not found.group(2).startswith("+") else 1, rest


def is_newer(version: str, than: str) -> bool | None:
    """Whether ``version`` is newer than ``than`` (None when either has no release number)."""
    mine, theirs = version_key(version), version_key(than)
    if mine is None or theirs is None:
        return None
    return mine > theirs
