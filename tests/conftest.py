"""Fixtures shared by the core tests: the demo specs and spec files written on the fly."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

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
