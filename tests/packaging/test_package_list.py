"""pyproject's list of packages is every package folder of the checkout, and resources/ is installed under
a name Tidemark owns (a top-level ``resources`` would clash with other distributions in one environment)."""

from __future__ import annotations

import tomllib
from pathlib import Path

from setuptools import find_namespace_packages

from core.desktop.bundled import PACKAGE, SOURCE_FOLDER, bundled_root

ROOT = Path(__file__).resolve().parents[2]
CONFIG = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]


def test_every_package_folder_is_listed() -> None:
    wanted = ["core*", "scheduler_gui*", f"{SOURCE_FOLDER}*"]
    found = find_namespace_packages(ROOT, include=wanted, exclude=["*.__pycache__"])
    mapped = {name: PACKAGE + name[len(SOURCE_FOLDER) :] for name in found if name.split(".")[0] == SOURCE_FOLDER}
    installed = {mapped.get(name, name) for name in found}
    assert set(CONFIG["packages"]) == installed


def test_resources_are_installed_under_tidemarks_own_name() -> None:
    assert CONFIG["package-dir"] == {PACKAGE: SOURCE_FOLDER}
    assert PACKAGE.startswith("tidemark")
    assert not any(name.split(".")[0] == "resources" for name in CONFIG["packages"])


def test_the_installed_folder_wins_over_one_named_resources(tmp_path: Path) -> None:
    (tmp_path / "resources" / "demo").mkdir(parents=True)  # another distribution's, in the same site-packages
    assert bundled_root(tmp_path) == tmp_path / "resources"
    (tmp_path / PACKAGE / "demo").mkdir(parents=True)
    assert bundled_root(tmp_path) == tmp_path / PACKAGE
