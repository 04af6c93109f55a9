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
