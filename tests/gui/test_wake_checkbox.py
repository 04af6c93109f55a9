"""The designer's "Wake this computer for each run": ticked by a click, undone like any edit,
said in the summary (whether this computer can be woken) and in the preview's Why column."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QCheckBox

from core.desktop.wake.alarms import CannotWake
from scheduler_gui.context import AppContext
from scheduler_gui.designer import summary
from scheduler_gui.designer.panel import DesignerPanel
from scheduler_gui.preview.model import Column
from scheduler_gui.workspace.document import SpecDocument
from tests.gui.consequence_support import click, open_designer, settle, widget_named

NAME = "Wake this computer for each run"
CANNOT = (
    "This machine cannot be woken for runs: there is no systemd user session; missed runs follow the misfire policy."
)


def _why(page: DesignerPanel, row: int) -> str:
    model = page.preview.model
    return str(model.index(row, model.column_of(Column.WHY)).data())


def test_ticking_wake_writes_it_says_it_and_undoes(
    document: SpecDocument, ctx: AppContext, qtbot, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(summary, "host_backend", lambda: CannotWake("there is no systemd user session"))
    with open_designer(document, ctx, qtbot) as page:
        page.recovery_section.set_open(True)
        box = widget_named(page, NAME)
        assert isinstance(box, QCheckBox) and not box.isChecked()
        assert CANNOT not in page.summary.plain_text()
        click(box)
        assert document.value("wakeSystem") is True and box.isChecked()
        settle(page, qtbot)
        qtbot.waitUntil(lambda: CANNOT in page.summary.plain_text(), timeout=10_000)
        # 02:30 in New York: the machine wakes 30 s before (EST in winter).
        qtbot.waitUntil(lambda: "wakes this machine at 02:29:30 EST" in _why(page, 0), timeout=10_000)
        assert document.undo_stack.undoText() == NAME
        document.undo_stack.undo()
        assert document.value("wakeSystem") is None and not box.isChecked()
        settle(page, qtbot)
        qtbot.waitUntil(lambda: CANNOT not in page.summary.plain_text(), timeout=10_000)
        assert "wakes" not in _why(page, 0)
