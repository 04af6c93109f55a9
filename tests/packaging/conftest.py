"""The wheel the packaging tests look into and install: built once per session from a copy of the checkout."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

_NOT_SOURCE = (
    ".venv",
    ".git",
    "build",
    "dist",
    "*.egg-info",
    "__pycache__",
    ".*_cache",
    ".hypothesis",
    "tests",
    "bench",
)


@pytest.fixture(scope="session")
def source_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The checkout's sources, copied: setuptools leaves build/ beside them, and a stale one would hide a lost file."""
    source = tmp_path_factory.mktemp("build") / "source"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(*_NOT_SOURCE))
    return source


@pytest.fixture(scope="session")
def wheel(tmp_path_factory: pytest.TempPathFactory, source_copy: Path) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    build = tmp_path_factory.mktemp("build")
    source = shutil.copytree(source_copy, build / "source")
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out), str(source)],
        capture_output=True,
        text=True,
        check=False,
        env={"PATH": "/usr/bin:/bin", "HOME": str(build), "TMPDIR": str(build), "PIP_NO_INPUT": "1"},
        cwd=build,
    )
    assert done.returncode == 0, done.stderr
    (built,) = out.glob("tidemark-*.whl")
    return built
