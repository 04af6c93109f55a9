"""Tidemark on the desktop: the applications menu (``--install-desktop-entry``, Help > Add to
Applications Menu) and the session's autostart (Engine > Start with My Session).

The files and their text are core's (:mod:`core.desktop.entry`); this side only
draws the icon's PNGs from its SVG, which needs Qt.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QSignalBlocker, Qt
from PySide6.QtGui import QAction, QImage, QPainter

from core.desktop.entry import (
    PNG_SIZES,
    DesktopEntryError,
    autostart_enabled,
    config_home,
    data_home,
    install,
    set_autostart,
    this_scheduler_gui,
    uninstall,
)
from scheduler_gui.icons import ICON_DIR

APP_SVG = ICON_DIR / "tidemark.svg"


def render_pngs(svg: bytes, sizes: tuple[int, ...] = PNG_SIZES) -> dict[int, bytes]:
    """The SVG drawn as a square PNG at each size, transparent around it."""
    from PySide6.QtSvg import QSvgRenderer  # only here: the window's start does not need it

    renderer = QSvgRenderer(QByteArray(svg))
    result: dict[int, bytes] = {}
    for size in sizes:
        image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
        image.fill(Qt.GlobalColor.transparent)
        painter = QPainter(image)
        renderer.render(painter)
        painter.end()
        data = QByteArray()
        buffer = QBuffer(data)
        buffer.open(QIODevice.OpenModeFlag.WriteOnly)
        image.save(buffer, "PNG")  # type: ignore[call-overload]  # the stubs say bytes; PySide6 takes str
        buffer.close()
        result[size] = bytes(data.data())
    return result


def install_desktop_entry(env: Mapping[str, str]) -> list[Path]:
    """Write the launcher, icons and metainfo under the user's data folder; the files written."""
    svg = APP_SVG.read_bytes()
    return install(data_home(env), this_scheduler_gui(), svg, render_pngs(svg))


def uninstall_desktop_entry(env: Mapping[str, str]) -> list[Path]:
    """Remove exactly the files :func:`install_desktop_entry` writes; the files removed."""
    return uninstall(data_home(env))


def add_to_applications_menu() -> str:
    """Install the entry for Help ▸ Add to Applications Menu; the sentence that says what happened."""
    try:
        written = install_desktop_entry(os.environ)
    except DesktopEntryError as exc:
        return f"Could not add Tidemark to the applications menu: {exc}"
    return f"Added Tidemark to the applications menu ({written[0]})"


def follow_session_start(action: QAction, say: Callable[[str], None]) -> None:
    """Engine ▸ Start with My Session: checked while the autostart entry exists; toggling writes or removes it."""
    action.setChecked(autostart_enabled(config_home(os.environ)))

    def toggled(on: bool) -> None:
        try:
            set_autostart(config_home(os.environ), this_scheduler_gui(), on)
        except DesktopEntryError as exc:
            with QSignalBlocker(action):
                action.setChecked(not on)
            say(f"Could not change how Tidemark starts: {exc}")
            return
        if on:
            say("Tidemark will start minimized, with its engine, when you log in")
        else:
            say("Tidemark will no longer start when you log in")

    action.toggled.connect(toggled)
