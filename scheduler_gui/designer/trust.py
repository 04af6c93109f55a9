"""Trust for spec files that came from elsewhere.

A spec carries a command, and opening a file someone sent must not be enough
to run it. Before a task from a file can be test-run (or published), the person
sees its command, working folder and environment variable *names* and says
they trust it. Trust is remembered per sha256 of the file's bytes in the
settings store, so a changed file asks again.

Trusted without asking: documents created in the app (no file yet), files the
app saved from a document the person created or trusted, and the demo
templates (by their content, wherever the copy lives). Saving a document that
came from an untrusted file does not trust it: its task still came from
elsewhere.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QSettings, QTimer, Signal
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from core.desktop.bundled import demo_dir
from scheduler_gui.a11y import accessible
from scheduler_gui.status_style import ORANGE
from scheduler_gui.workspace.document import SpecDocument

DEMO_DIR = demo_dir()
_PREFIX = "trust/sha256"


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@lru_cache(maxsize=1)
def demo_digests() -> frozenset[str]:
    """Digests of the bundled demo templates: these count as trusted wherever they are copied."""
    return frozenset(digest(p.read_bytes()) for p in DEMO_DIR.glob("*.y*ml") if p.is_file())


class TrustStore:
    """Which spec file contents the person trusts, remembered in ``settings``."""

    def __init__(self, settings: QSettings) -> None:
        self._settings = settings

    def is_trusted_digest(self, value: str) -> bool:
        if value in demo_digests():
            return True
        return str(self._settings.value(f"{_PREFIX}/{value}", "")) == "trusted"

    def trust_digest(self, value: str) -> None:
        self._settings.setValue(f"{_PREFIX}/{value}", "trusted")
        self._settings.sync()

    def is_trusted_file(self, path: str | Path) -> bool:
        """True when the file's current bytes are trusted; an unreadable file is not."""
        try:
            data = Path(path).read_bytes()
        except OSError:
            return False
        return self.is_trusted_digest(digest(data))

    def trust_file(self, path: str | Path) -> str | None:
        """Trust the file's current bytes; returns their digest (None when it cannot be read)."""
        try:
            value = digest(Path(path).read_bytes())
        except OSError:
            return None
        self.trust_digest(value)
        return value

    def document_trusted(self, document: SpecDocument) -> bool:
        """A document without a file was made here; one with a file is as trusted as its bytes."""
        return document.path is None or self.is_trusted_file(document.path)

    def needs_trust(self, document: SpecDocument) -> bool:
        """True when the document carries a task from a file nobody trusted yet."""
        return document.value("task") is not None and not self.document_trusted(document)


class TrustKeeper(QObject):
    """Follows one document: remembers the files the app saves from trusted content.

    ``changed`` fires whenever the answer of :meth:`needs_trust` may have changed.
    """

    changed = Signal()

    def __init__(self, document: SpecDocument, store: TrustStore, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._doc = document
        self.store = store
        self._owned = store.document_trusted(document)
        self._replaced = False
        document.changed.connect(self._on_changed)
        document.pathChanged.connect(self._file_event)
        # A bound method, not a lambda: Qt drops it with the keeper (the publish check's keeper is short-lived).
        document.dirtyChanged.connect(self._on_dirty)

    def needs_trust(self) -> bool:
        return self.store.needs_trust(self._doc)

    def trust(self) -> None:
        """The person trusts the document's file as it is on disk now."""
        if self._doc.path is not None:
            self.store.trust_file(self._doc.path)
        self._owned = True
        self.changed.emit()

    def _on_changed(self) -> None:
        if self._doc.undo_stack.count() == 0 and not self._doc.dirty:
            # New content replaced the document (a load): judge it afresh.
            self._replaced = True
            self._owned = self.store.document_trusted(self._doc)
        self.changed.emit()

    def _on_dirty(self, dirty: bool) -> None:
        if not dirty:  # saved (or undone back to the file's content)
            self._file_event()

    def _file_event(self, *_: Any) -> None:
        # A load emits pathChanged before changed; wait until the whole sequence is over.
        QTimer.singleShot(0, self, self._after_file_event)

    def _after_file_event(self) -> None:
        if self._replaced:
            self._replaced = False
            self.changed.emit()
            return
        path = self._doc.path
        if path is not None and self._owned and not self._doc.dirty:
            self.store.trust_file(path)  # saved by the app from content the person made or trusted
        self.changed.emit()


def _mono(widget: QWidget) -> None:
    widget.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))


def task_facts(document: SpecDocument) -> tuple[list[str], str, list[str]]:
    """The task's argv, working folder (or a word for none) and environment variable names."""
    argv = document.value("task.argv") or []
    cwd = document.value("task.cwd") or "(the engine's own folder)"
    env = document.value("task.env") or {}
    names = sorted(str(k) for k in env) if isinstance(env, dict) else []
    return [str(a) for a in argv] if isinstance(argv, list) else [str(argv)], str(cwd), names


class TrustPrompt(QFrame):
    """A banner showing what the file would run, with a button to trust it."""

    trusted = Signal()

    def __init__(self, keeper: TrustKeeper, document: SpecDocument, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._keeper = keeper
        self._doc = document
        self.setObjectName("trustPrompt")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setStyleSheet(f"QFrame#trustPrompt {{ border: 2px solid {ORANGE}; border-radius: 4px; }}")
        self.setAccessibleName("Trust this file")
        layout = QVBoxLayout(self)
        self.heading = QLabel(
            "<b>⚠ This file came from elsewhere.</b> Check what its task runs before running or publishing it.", self
        )
        self.heading.setWordWrap(True)
        layout.addWidget(self.heading)
        self.details = QPlainTextEdit(self)
        self.details.setReadOnly(True)
        accessible(
            self.details,
            "What the task would run",
            "The command (one argument per line), working folder and environment variable names",
        )
        self.details.setMaximumHeight(120)
        _mono(self.details)
        layout.addWidget(self.details)
        row = QHBoxLayout()
        row.addStretch(1)
        self.trust_button = QPushButton("I trust this file", self)
        accessible(
            self.trust_button,
            "I trust this file",
            "Allow this task to be test-run and published. Remembered for these exact file contents only.",
        )
        self.trust_button.clicked.connect(self._trust)
        row.addWidget(self.trust_button)
        layout.addLayout(row)
        keeper.changed.connect(self.refresh)
        self.refresh()

    def refresh(self) -> None:
        self.setVisible(self._keeper.needs_trust())
        argv, cwd, names = task_facts(self._doc)
        lines = ["Command (each argument as given, no shell):"] + [f"  {a}" for a in argv]
        lines.append(f"Working folder: {cwd}")
        lines.append("Environment: " + (", ".join(names) if names else "(none)"))
        self.details.setPlainText("\n".join(lines))

    def _trust(self) -> None:
        self._keeper.trust()
        self.trusted.emit()


class TrustDialog(QDialog):
    """The same question as a dialog, for actions outside the designer (publishing)."""

    def __init__(self, keeper: TrustKeeper, document: SpecDocument, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Trust this schedule's task?")
        self.setAccessibleName("Trust this schedule's task?")
        layout = QVBoxLayout(self)
        self.prompt = TrustPrompt(keeper, document, self)
        self.prompt.trust_button.hide()
        layout.addWidget(self.prompt)
        buttons = QDialogButtonBox(self)
        trust = buttons.addButton("I trust this file", QDialogButtonBox.ButtonRole.AcceptRole)
        accessible(
            trust,
            "I trust this file",
            "Allow this task to run and be published; remembered for these exact file contents only",
        )
        cancel = buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        accessible(cancel, "Cancel", "Do not run or publish this task")
        buttons.accepted.connect(self._accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)

    def _accept(self) -> None:
        self.prompt._trust()
        self.accept()


def ensure_trusted(document: SpecDocument, settings: QSettings, parent: QWidget | None = None) -> bool:
    """True when the document's task may run or be published, asking the person if needed."""
    keeper = TrustKeeper(document, TrustStore(settings))
    try:
        if not keeper.needs_trust():
            return True
        return TrustDialog(keeper, document, parent).exec() == QDialog.DialogCode.Accepted
    finally:
        keeper.deleteLater()
