"""Crash safety: the unsaved document is copied to the settings folder after a
few seconds without edits, and offered back when the app starts again.

One autosave at a time (the window edits one document at a time): the YAML
text, and beside it the file it belongs to, if any. The text is what saving
would write (:meth:`SpecDocument.to_yaml`): the opened file's own text with the
edits in it, comments included.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QObject, QSettings, QTimer

from scheduler_gui.workspace.document import SpecDocument

#: Milliseconds without edits before the unsaved document is written.
IDLE_MS = 3000


def autosave_dir(settings: QSettings) -> Path:
    """``autosave/`` beside the settings file."""
    return Path(settings.fileName()).resolve().parent / "autosave"


@dataclass(frozen=True)
class Recovered:
    """An autosave found at start: the text, and the file it was a change of (None for a new one)."""

    text: str
    original: Path | None
    saved_at: str


class Autosaver(QObject):
    """Writes ``document`` to the autosave folder once edits pause; clears it when saved or discarded."""

    def __init__(self, settings: QSettings, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._dir = autosave_dir(settings)
        self._doc: SpecDocument | None = None
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(IDLE_MS)
        self._timer.timeout.connect(self.write_now)

    @property
    def text_file(self) -> Path:
        return self._dir / "document.yaml"

    @property
    def meta_file(self) -> Path:
        return self._dir / "document.json"

    def set_idle_ms(self, msecs: int) -> None:
        """How long edits must pause before the document is written."""
        self._timer.setInterval(msecs)

    def watch(self, document: SpecDocument) -> None:
        """Follow ``document`` (the one shown) instead of the previous one."""
        if self._doc is not None:
            self._doc.changed.disconnect(self._on_changed)
            self._doc.dirtyChanged.disconnect(self._on_dirty)
        self._doc = document
        document.changed.connect(self._on_changed)
        document.dirtyChanged.connect(self._on_dirty)

    def _on_changed(self) -> None:
        self._timer.start()

    def _on_dirty(self, dirty: bool) -> None:
        if not dirty:
            self._timer.stop()
            self.clear()

    def write_now(self, stamp: str = "") -> None:
        """Write the document now if it has unsaved changes."""
        self._timer.stop()
        doc = self._doc
        if doc is None or not doc.dirty:
            return
        try:
            self._dir.mkdir(parents=True, exist_ok=True)
            self.text_file.write_text(doc.to_yaml(), encoding="utf-8")
            meta = {"original": str(doc.path) if doc.path else None, "savedAt": stamp}
            self.meta_file.write_text(json.dumps(meta), encoding="utf-8")
        except OSError:
            # Best effort: a full disk must not interrupt editing; saving will say why.
            return

    def clear(self) -> None:
        self.text_file.unlink(missing_ok=True)
        self.meta_file.unlink(missing_ok=True)

    def pending(self) -> Recovered | None:
        """The autosave left by a session that ended without saving, if any."""
        try:
            text = self.text_file.read_text(encoding="utf-8")
        except OSError:
            return None
        original: Path | None = None
        saved_at = ""
        try:
            meta = json.loads(self.meta_file.read_text(encoding="utf-8"))
            original = Path(meta["original"]) if meta.get("original") else None
            saved_at = str(meta.get("savedAt") or "")
        except (OSError, ValueError, KeyError, TypeError):
            pass
        return Recovered(text, original, saved_at) if text.strip() else None
