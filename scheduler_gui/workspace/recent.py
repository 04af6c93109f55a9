"""The recent files list (File ▸ Open Recent), kept in the settings store."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSettings

KEY = "files/recent"
LIMIT = 8


class RecentFiles:
    """The last :data:`LIMIT` files opened or saved, newest first, no duplicates."""

    def __init__(self, settings: QSettings) -> None:
        self._settings = settings

    def paths(self) -> list[Path]:
        raw = self._settings.value(KEY, [])
        if isinstance(raw, str):  # QSettings gives a lone string for a one-item list
            raw = [raw]
        if not isinstance(raw, list | tuple):  # nothing stored, or not a list of paths
            return []
        return [Path(p) for p in raw if p]

    def existing(self) -> list[Path]:
        return [p for p in self.paths() if p.is_file()]

    def add(self, path: Path) -> None:
        path = path.resolve()
        kept = [p for p in self.paths() if p != path]
        self._store([path, *kept][:LIMIT])

    def remove(self, path: Path) -> None:
        self._store([p for p in self.paths() if p != path.resolve()])

    def clear(self) -> None:
        self._store([])

    def _store(self, paths: list[Path]) -> None:
        self._settings.setValue(KEY, [str(p) for p in paths])
