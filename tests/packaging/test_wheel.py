"""The wheel `pip wheel .` builds carries every resource the app reads: demo schedules, icons, the Grafana
dashboard, migrations."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow
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


def _source_files(folder: str, pattern: str) -> set[str]:
    return {str(p.relative_to(ROOT)) for p in (ROOT / folder).rglob(pattern)}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    build = tmp_path_factory.mktemp("build")
    # Built from a copy: setuptools leaves build/ beside the sources, and a stale one would hide a lost file.
    source = build / "source"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(*_NOT_SOURCE))
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


@pytest.fixture(scope="module")
def wheel_names(wheel: Path) -> set[str]:
    with zipfile.ZipFile(wheel) as archive:
        return set(archive.namelist())


@pytest.mark.parametrize(
    ("folder", "pattern"),
    [
        ("resources/demo", "*.yaml"),
        ("resources/icons", "*.svg"),
        ("resources/grafana", "*.json"),
        ("core/ledger/migrations", "*.py"),
        ("core/ledger/migrations", "*.mako"),
    ],
    ids=["demo_schedules", "icons", "grafana_dashboard", "migrations", "migration_template"],
)
def test_the_wheel_holds_every_resource(wheel_names: set[str], folder: str, pattern: str) -> None:
    wanted = _source_files(folder, pattern)
    assert wanted, f"nothing matches {folder}/{pattern} in the source tree"
    assert wanted - wheel_names == set()


def test_the_wheel_declares_both_commands(wheel: Path, wheel_names: set[str]) -> None:
    (name,) = (n for n in wheel_names if n.endswith(".dist-info/entry_points.txt"))
    with zipfile.ZipFile(wheel) as archive:
        text = archive.read(name).decode("utf-8")
    assert "schedctl = core.cli:main" in text
    assert "scheduler-gui = scheduler_gui.app:main" in text
