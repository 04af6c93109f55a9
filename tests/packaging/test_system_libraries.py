"""README's apt-get line names the Debian package of every system library Qt's X11 plugin and the Qt
libraries it loads need, and that PySide6 does not ship itself (read from the files' ELF headers)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: Part of every Debian system (essential or required): never missing on a minimal one.
_BASE = {"libc.so.6", "libm.so.6", "libdl.so.2", "librt.so.1", "libpthread.so.0", "libstdc++.so.6", "libgcc_s.so.1"}
_BASE |= {"libz.so.1", "libzstd.so.1", "ld-linux-x86-64.so.2", "ld-linux-aarch64.so.1"}
#: Libraries whose package is not named by Debian's soname rule.
_PACKAGE = {"libglib-2.0.so.0": "libglib2.0-0", "libgthread-2.0.so.0": "libglib2.0-0", "libdbus-1.so.3": "libdbus-1-3"}
_LOADED = ("plugins/platforms/libqxcb.so", "lib/libQt6XcbQpa.so.6", "lib/libQt6Gui.so.6", "lib/libQt6Core.so.6")
_LOADED += ("lib/libQt6Widgets.so.6", "lib/libQt6DBus.so.6", "lib/libQt6OpenGL.so.6")


def debian_package(soname: str) -> str:
    """Debian's name for the package of a shared library (Debian policy 8.1: name, then version,
    a hyphen between them where the name ends in a digit)."""
    if soname in _PACKAGE:
        return _PACKAGE[soname]
    name, version = re.fullmatch(r"(.+)\.so\.(\d+)", soname).groups()  # type: ignore[union-attr]
    return f"{name.lower()}{'-' if name[-1].isdigit() else ''}{version}"


def _needed(path: Path) -> set[str]:
    shown = subprocess.run(["readelf", "-d", str(path)], capture_output=True, text=True, check=True).stdout
    return set(re.findall(r"\(NEEDED\)\s+Shared library: \[(.+?)\]", shown))


def _readme_packages() -> set[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    (line,) = re.findall(r"^sudo apt-get install (.+)$", readme, re.M)
    return set(line.split())


@pytest.mark.skipif(shutil.which("readelf") is None, reason="readelf (binutils) reads the ELF headers")
def test_readme_names_every_system_library_the_window_needs() -> None:
    import PySide6

    qt = Path(PySide6.__file__).parent / "Qt"
    shipped = {p.name for p in (qt / "lib").iterdir()}
    needed = set().union(*(_needed(qt / part) for part in _LOADED)) - shipped - _BASE
    assert {"libxcb-cursor.so.0", "libxkbcommon-x11.so.0"} <= needed
    assert {debian_package(name) for name in needed} - _readme_packages() == set()


@pytest.mark.parametrize(
    ("soname", "package"),
    [
        ("libxcb-cursor.so.0", "libxcb-cursor0"),
        ("libxkbcommon-x11.so.0", "libxkbcommon-x11-0"),
        ("libX11-xcb.so.1", "libx11-xcb1"),
        ("libEGL.so.1", "libegl1"),
        ("libglib-2.0.so.0", "libglib2.0-0"),
    ],
)
def test_debian_names_its_library_packages_by_soname(soname: str, package: str) -> None:
    assert debian_package(soname) == package
