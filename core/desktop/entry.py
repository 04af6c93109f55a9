"""Tidemark in the desktop's applications menu: the XDG files, written and removed.

``scheduler-gui --install-desktop-entry`` writes, under the user's data folder
(``$XDG_DATA_HOME``, else ``~/.local/share``):

- ``applications/<APP_ID>.desktop`` (the launcher, starting this installation's ``scheduler-gui``),
- ``icons/hicolor/scalable/apps/<APP_ID>.svg`` and ``icons/hicolor/<N>x<N>/apps/<APP_ID>.png``,
- ``metainfo/<APP_ID>.metainfo.xml`` (AppStream: what software centres show).

"Start with my session" (the Engine menu) writes ``autostart/<APP_ID>.desktop``
under ``$XDG_CONFIG_HOME`` (else ``~/.config``): the session then starts
``scheduler-gui --minimized``, whose engine starts with it.

``--uninstall-desktop-entry`` removes exactly those files, and the folders the
install made that are empty again. The PNGs are drawn by the window's side
(Qt renders the SVG); this module only knows names and text.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

#: Reverse-DNS id: the .desktop file's name, the icon's name, the AppStream id, the Wayland app id.
APP_ID = "io.github.tidemark.Tidemark"
#: The class of the window's WM_CLASS on X11: Qt names it after the application's name
#: (``QCoreApplication.applicationName()``, which the window sets to this), the instance after the program.
WM_CLASS = "Tidemark"
#: The hicolor sizes a PNG is written for (the SVG covers the rest).
PNG_SIZES = (16, 32, 48, 64, 128, 256)
#: The flag the session's autostart entry starts the window with.
MINIMIZED_FLAG = "--minimized"
#: Characters that oblige an Exec argument to be quoted (Desktop Entry Specification, "The Exec key").
_RESERVED = set(" \t\n\"'\\><~|&;$*?#()`")


class DesktopEntryError(Exception):
    """The entry could not be written or removed: one line for the person."""


def data_home(env: Mapping[str, str]) -> Path:
    """``$XDG_DATA_HOME`` when set to an absolute path, else ``~/.local/share`` (XDG Base Directory)."""
    given = env.get("XDG_DATA_HOME", "")
    if given and Path(given).is_absolute():
        return Path(given)
    return Path(env.get("HOME") or Path.home()) / ".local" / "share"


def config_home(env: Mapping[str, str]) -> Path:
    """``$XDG_CONFIG_HOME`` when set to an absolute path, else ``~/.config``."""
    given = env.get("XDG_CONFIG_HOME", "")
    if given and Path(given).is_absolute():
        return Path(given)
    return Path(env.get("HOME") or Path.home()) / ".config"


@dataclass(frozen=True)
class EntryFiles:
    """Where each file of the entry goes under one data folder."""

    root: Path

    @property
    def desktop(self) -> Path:
        return self.root / "applications" / f"{APP_ID}.desktop"

    @property
    def svg(self) -> Path:
        return self.root / "icons" / "hicolor" / "scalable" / "apps" / f"{APP_ID}.svg"

    def png(self, size: int) -> Path:
        return self.root / "icons" / "hicolor" / f"{size}x{size}" / "apps" / f"{APP_ID}.png"

    @property
    def metainfo(self) -> Path:
        return self.root / "metainfo" / f"{APP_ID}.metainfo.xml"

    def all(self) -> list[Path]:
        return [self.desktop, self.svg, *(self.png(size) for size in PNG_SIZES), self.metainfo]


def this_scheduler_gui() -> Path:
    """The ``scheduler-gui`` of this installation: beside the running interpreter, else on PATH."""
    beside = Path(sys.executable).parent / "scheduler-gui"
    if beside.is_file():
        return beside.absolute()
    found = shutil.which("scheduler-gui")
    if found:
        return Path(found).absolute()
    return beside.absolute()


def exec_argument(arg: str) -> str:
    """One Exec argument, quoted and escaped as the Desktop Entry Specification asks."""
    if not arg or any(ch in _RESERVED for ch in arg):
        escaped = "".join("\\" + ch if ch in '"`$\\' else ch for ch in arg)
        arg = f'"{escaped}"'
    # The value itself is a string: its backslashes are escaped once more.
    return _string_value(arg).replace("%", "%%")


def _string_value(text: str) -> str:
    return text.replace("\\", "\\\\")


def desktop_text(program: Path, *, extra_args: tuple[str, ...] = (), autostart: bool = False) -> str:
    """The ``.desktop`` file that starts ``program`` (the menu's launcher, or the session's autostart entry)."""
    command = " ".join(exec_argument(a) for a in (str(program), *extra_args))
    lines = [
        "[Desktop Entry]",
        "Type=Application",
        "Version=1.4",  # the newest the validators of Debian 12 know; nothing here needs 1.5
        "Name=Tidemark",
        "GenericName=Schedule Designer",
        "Comment=Design schedules and watch them run",
        f"Exec={command}",
        f"TryExec={_string_value(str(program))}",
        f"Icon={APP_ID}",
        "Terminal=false",
        "Categories=Office;ProjectManagement;",
        "Keywords=schedule;cron;timer;calendar;jobs;tasks;",
        "StartupNotify=true",
        f"StartupWMClass={WM_CLASS}",
    ]
    if autostart:
        lines.append("X-GNOME-Autostart-enabled=true")
    return "\n".join(lines) + "\n"


def metainfo_text() -> str:
    """AppStream metainfo for software centres (``appstreamcli validate`` checks it)."""
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<component type="desktop-application">
  <id>{APP_ID}</id>
  <metadata_license>CC0-1.0</metadata_license>
  <project_license>MIT</project_license>
  <name>Tidemark</name>
  <summary>Design schedules and watch them run</summary>
  <description>
    <p>
      Tidemark is a desktop schedule designer and monitor that tells the truth about time:
      it shows when each task will run across daylight-saving changes, runs them with an
      embedded engine, and records every occurrence in a ledger.
    </p>
  </description>
  <launchable type="desktop-id">{APP_ID}.desktop</launchable>
  <provides>
    <binary>scheduler-gui</binary>
    <binary>schedctl</binary>
  </provides>
  <categories>
    <category>Office</category>
  </categories>
  <content_rating type="oars-1.1"/>
</component>
"""


def install(root: Path, program: Path, svg: bytes, pngs: Mapping[int, bytes]) -> list[Path]:
    """Write the entry's files under ``root``; the files written, or :class:`DesktopEntryError`."""
    files = EntryFiles(root)
    contents: list[tuple[Path, bytes]] = [
        (files.desktop, desktop_text(program).encode("utf-8")),
        (files.svg, svg),
        *((files.png(size), pngs[size]) for size in PNG_SIZES),
        (files.metainfo, metainfo_text().encode("utf-8")),
    ]
    written: list[Path] = []
    try:
        for path, data in contents:
            _write(path, data)
            written.append(path)
    except OSError as exc:
        _take_back(written, root)
        raise DesktopEntryError(f"cannot write under {root}: {_reason(exc)}") from None
    return written


def uninstall(root: Path) -> list[Path]:
    """Remove the entry's files under ``root`` and the folders left empty by it; the files removed."""
    removed: list[Path] = []
    for path in EntryFiles(root).all():
        try:
            path.unlink()
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise DesktopEntryError(f"cannot remove {path}: {_reason(exc)}") from None
        removed.append(path)
        _prune_empty(path.parent, root)
    return removed


def _take_back(written: list[Path], root: Path) -> None:
    """Remove what a failed install wrote, so a half entry is not left in the menu."""
    for path in written:
        path.unlink(missing_ok=True)
        _prune_empty(path.parent, root)


def autostart_file(config_root: Path) -> Path:
    """The session's autostart entry for Tidemark (XDG Autostart Specification)."""
    return config_root / "autostart" / f"{APP_ID}.desktop"


def autostart_enabled(config_root: Path) -> bool:
    return autostart_file(config_root).is_file()


def set_autostart(config_root: Path, program: Path, on: bool) -> None:
    """Write (``on``) or remove the autostart entry that starts ``program --minimized``; :class:`DesktopEntryError`."""
    path = autostart_file(config_root)
    try:
        if on:
            _write(path, desktop_text(program, extra_args=(MINIMIZED_FLAG,), autostart=True).encode("utf-8"))
        else:
            path.unlink(missing_ok=True)
    except OSError as exc:
        raise DesktopEntryError(f"cannot {'write' if on else 'remove'} {path}: {_reason(exc)}") from None


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    part = path.with_name(path.name + ".part")
    part.write_bytes(data)
    os.replace(part, path)


def _prune_empty(folder: Path, stop: Path) -> None:
    while folder != stop and stop in folder.parents:
        try:
            folder.rmdir()
        except OSError:
            return
        folder = folder.parent


def _reason(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__
