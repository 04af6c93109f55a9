"""The source distribution: built from a copy of the checkout, it carries the licence, the docs,
the tests and the benches, every file of them git knows, so that a build can be checked from it."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

_NOT_SOURCE = (".venv", ".git", "build", "dist", "*.egg-info", "__pycache__", ".*_cache", ".hypothesis")


@pytest.fixture(scope="module")
def sdist_names(tmp_path_factory: pytest.TempPathFactory) -> set[str]:
    source = shutil.copytree(
        ROOT, tmp_path_factory.mktemp("sdist") / "source", ignore=shutil.ignore_patterns(*_NOT_SOURCE)
    )
    out = source.parent / "out"
    build = f"from setuptools import build_meta; print(build_meta.build_sdist({str(out)!r}))"
    done = subprocess.run(
        [sys.executable, "-c", build],
        capture_output=True,
        text=True,
        check=False,
        cwd=source,
        env={"PATH": "/usr/bin:/bin", "HOME": str(source.parent), "TMPDIR": str(source.parent)},
    )
    assert done.returncode == 0, done.stderr
    with tarfile.open(out / done.stdout.split()[-1]) as archive:
        return {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}


def _tracked(*folders: str) -> set[str]:
    listed = subprocess.run(["git", "ls-files", *folders], capture_output=True, text=True, check=True, cwd=ROOT)
    return {name for name in listed.stdout.splitlines() if (ROOT / name).is_file()}


def test_the_sdist_carries_the_licence_docs_tests_and_benches(sdist_names: set[str]) -> None:
    assert {"LICENSE", "README.md", "Makefile", "pyproject.toml"} <= sdist_names
    wanted = _tracked("docs", "tests", "bench")
    assert {"docs/cli.md", "tests/conftest.py", "bench/preview_bench.py"} <= wanted
    assert wanted - sdist_names == set()


def test_the_licence_is_the_one_pyproject_declares() -> None:
    declared = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert 'license = { text = "MIT" }' in declared
    assert (
        (ROOT / "LICENSE").read_text(encoding="utf-8").startswith("MIT License\n\nCopyright (c) The Tidemark authors\n")
    )
