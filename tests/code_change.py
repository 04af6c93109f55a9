"""A next Tidemark that computes otherwise, without installing one: patch the
materializer's expansion (``core.ledger.materialize.iter_rows``) for one test."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

import pytest


def _patch(monkeypatch: pytest.MonkeyPatch, change: Callable[[Any], None]) -> None:
    module = sys.modules["core.ledger.materialize"]  # core.ledger's name is the function
    real = module.iter_rows

    def changed(*args: Any, **kwargs: Any) -> Iterator[Any]:
        for row in real(*args, **kwargs):
            change(row)
            yield row

    monkeypatch.setattr(module, "iter_rows", changed)


def reword_gaps(monkeypatch: pytest.MonkeyPatch) -> None:
    """The next Tidemark words a DST gap's reason otherwise."""

    def reword(row: Any) -> None:
        if row.reason is not None:
            row.reason = row.reason.replace("does not exist", "is never on the clock")

    _patch(monkeypatch, reword)


def an_hour_late(monkeypatch: pytest.MonkeyPatch) -> None:
    """The next Tidemark resolves every run an hour later than the last did."""

    def late(row: Any) -> None:
        if row.resolved is not None:
            row.resolved += timedelta(hours=1)

    _patch(monkeypatch, late)
