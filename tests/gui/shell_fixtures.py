"""The main window on the test context, closed without questions at the end."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QMessageBox

from scheduler_gui.context import AppContext
from scheduler_gui.main_window import MainWindow
from scheduler_gui.workspace.zone import ZoneQuestion


@pytest.fixture(name="window")
def window_fixture(ctx: AppContext, qtbot, monkeypatch: pytest.MonkeyPatch) -> Iterator[MainWindow]:
    # A dialog left open would hang the run: every test that expects one patches it.
    def unexpected(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"unexpected dialog: {args[1:3]}")

    monkeypatch.setattr(QMessageBox, "warning", unexpected)
    monkeypatch.setattr(QMessageBox, "question", unexpected)  # answer() replaces it where one is expected
    w = MainWindow(ctx)
    w.open_initial()
    yield w
    # Closed here, after the edits are marked saved, so the unsaved-changes guard stays quiet.
    if w.document is not None:
        w.document.undo_stack.setClean()
        w.document.clear_field_problems()
    w.close()
    w.deleteLater()


def keep_zones(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Keep the zone whenever a new schedule's first save asks about it; returns the texts asked."""
    asked: list[str] = []

    def kept(box: ZoneQuestion) -> bool:
        asked.append(box.text())
        return True

    monkeypatch.setattr(ZoneQuestion, "kept", kept)
    return asked


def when_modal(kind: type, act: Callable[[Any], bool | None], looks: int = 1500) -> None:
    """Run ``act`` on the next modal window of type ``kind`` once it shows; ``act`` returning False
    means "not ready yet, look again". Gives up after ``looks`` looks (30 s)."""

    def look(left: int = looks) -> None:
        found = QApplication.activeModalWidget()
        if isinstance(found, kind):
            try:
                if act(found) is not False:
                    return
            except BaseException:
                found.reject()  # a failed check must not leave the window waiting on its dialog
                raise
        if left > 0:
            QTimer.singleShot(20, lambda: look(left - 1))

    QTimer.singleShot(0, look)


def answer(monkeypatch: pytest.MonkeyPatch, reply: QMessageBox.StandardButton) -> list[str]:
    """Make every QMessageBox.question return ``reply``; returns the texts asked."""
    asked: list[str] = []

    def question(_parent: object, _title: str, text: str, *args: object, **kwargs: object) -> object:
        asked.append(text)
        return reply

    monkeypatch.setattr(QMessageBox, "question", question)
    return asked
