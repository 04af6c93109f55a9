"""Fixtures shared by the core tests: the demo specs, spec files written on the fly, and a
count of the times dateutil produced."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path

import pytest
from dateutil import rrule as du

# No test's engine arms a real wake alarm on the machine running the tests (the wake
# tests give their engines a backend of their own, with fake systemd tools on PATH).
os.environ["TIDEMARK_NO_WAKE"] = "1"

DEMO_DIR = Path(__file__).resolve().parent.parent / "resources" / "demo"


@pytest.fixture
def demo() -> Callable[[str], str]:
    """The path of a demo spec by its stem: ``demo("mel-sync")``."""

    def path(stem: str) -> str:
        found = DEMO_DIR / f"{stem}.yaml"
        assert found.is_file(), found
        return str(found)

    return path


@pytest.fixture
def spec_file(tmp_path: Path) -> Callable[..., str]:
    """Write a spec file (text or bytes) under a temporary directory and return its path."""

    def write(content: str | bytes, name: str = "spec.yaml") -> str:
        target = tmp_path / name
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content, encoding="utf-8")
        return str(target)

    return write


@pytest.fixture
def walked(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many times dateutil produced, all rules together (one number, reset by hand):
    the work of an expansion, counted instead of timed."""
    seen = [0]
    original = du.rrule._iter

    def counting(self: du.rrule) -> Iterator[datetime]:
        for when in original(self):
            seen[0] += 1
            yield when

    monkeypatch.setattr(du.rrule, "_iter", counting)
    return seen
