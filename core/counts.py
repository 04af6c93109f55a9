"""Counts in words for people: ``1 run``, ``2 runs``, ``12,345 occurrences``.

Every number a person reads beside a noun goes through :func:`counted`, so the
noun agrees with the number and thousands are separated.
"""

from __future__ import annotations

__all__ = ["counted", "times"]


def counted(n: int, one: str, many: str | None = None) -> str:
    """``n`` and its noun: ``1 run``, ``0 runs``, ``1,200 runs``; ``many`` for irregular plurals."""
    return f"{n:,} {one}" if n == 1 else f"{n:,} {many if many is not None else one + 's'}"


def times(n: int) -> str:
    """How often: ``once``, ``twice``, ``3 times``, ``1,000 times``."""
    return {1: "once", 2: "twice"}.get(n, f"{n:,} times")
