"""The main window on the test context, closed without questions at the end."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PySide6.QtWidgets import QMessageBox

from scheduler_gui.context import AppContext
from scheduler_gui.main_window import MainWindow


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


def answer(monkeypatch: pytest.MonkeyPatch, reply: QMessageBox.StandardButton) -> list[str]:
    """Make every QMessageBox.question return ``reply``; returns the texts asked."""
    asked: list[str] = []

    def question(_parent: object, _title: str, text: str, *args: object, **kwargs: object) -> object:
        asked.append(text)
        return reply

    monkeypatch.setattr(QMessageBox, "question", question)
    return asked
