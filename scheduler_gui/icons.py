"""The bundled SVG icons (``resources/icons``), drawn in the palette's text colour
so they read in light and dark themes, at several sizes so they stay crisp."""

from __future__ import annotations

from functools import cache

from PySide6.QtCore import QByteArray
from PySide6.QtGui import QGuiApplication, QIcon, QPixmap

from core.desktop.bundled import icon_dir

ICON_DIR = icon_dir()
_SIZES = (16, 24, 32, 48, 64)


def _colour() -> str:
    app = QGuiApplication.instance()
    if isinstance(app, QGuiApplication):
        return QGuiApplication.palette().windowText().color().name()
    return "#202020"


@cache
def _icon(name: str, colour: str) -> QIcon:
    path = ICON_DIR / f"{name}.svg"
    try:
        text = path.read_text(encoding="utf-8").replace("currentColor", colour)
    except OSError:
        return QIcon()
    result = QIcon()
    for size in _SIZES:
        sized = text.replace('width="24" height="24"', f'width="{size}" height="{size}"', 1)
        pixmap = QPixmap()
        if pixmap.loadFromData(QByteArray(sized.encode("utf-8")), "SVG"):
            result.addPixmap(pixmap)
    return result


def icon(name: str) -> QIcon:
    """The icon ``name`` (``save``, ``publish``…), or an empty icon when it is missing."""
    return _icon(name, _colour())


def app_icon() -> QIcon:
    return QIcon(str(ICON_DIR / "tidemark.svg"))
