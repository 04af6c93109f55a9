"""The wheel `pip wheel .` builds carries every resource the app reads: demo schedules, icons, the Grafana
dashboard, migrations."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: A source folder and the name the wheel installs it under (pyproject's package-dir).
INSTALLED_AS = {"resources": "tidemark_resources"}

pytestmark = pytest.mark.slow


def _source_files(folder: str, pattern: str) -> set[str]:
    """The files as the wheel names them."""
    top, _, rest = folder.partition("/")
    installed = Path(INSTALLED_AS.get(top, top), rest)
    return {str(installed / p.relative_to(ROOT / folder)) for p in (ROOT / folder).rglob(pattern)}


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
