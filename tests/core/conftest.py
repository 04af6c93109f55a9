"""Fixtures of the core suite."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from core.cli import main

#: schedctl run in-process: (exit status, stdout, stderr).
Run = Callable[..., tuple[int, str, str]]


@pytest.fixture
def run(capsys: pytest.CaptureFixture[str]) -> Run:
    """Run schedctl in-process: (exit status, stdout, stderr)."""

    def go(*argv: str) -> tuple[int, str, str]:
        status = main(list(argv))
        out, err = capsys.readouterr()
        return status, out, err

    return go


@pytest.fixture(params=["fast", "general"])
def expansion_path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The test once through the fast path (date arithmetic, where the rule allows it) and once
    through the general one (dateutil's rrule for every rule): both must give the same rows."""
    if request.param == "general":
        monkeypatch.setattr("core.recurrence.expand.fast_rule", lambda compiled: None)
    return str(request.param)
