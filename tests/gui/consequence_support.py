"""The designer page on the test clock, and helpers to drive it the way a person
does and to read what its preview table shows."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QWidget

from core.recurrence.occurrence import Occurrence
from scheduler_gui.context import AppContext
from scheduler_gui.designer.panel import DesignerPanel
from scheduler_gui.preview.model import ItemRole
from scheduler_gui.workspace.document import SpecDocument


def widget_named(root: QWidget, name: str) -> QWidget:
    """The one widget under ``root`` whose accessible name is ``name``."""
    found = [w for w in root.findChildren(QWidget) if w.accessibleName() == name]
    assert len(found) == 1, f"{len(found)} widgets named {name!r}"
    return found[0]


def click(widget: QWidget) -> None:
    """A left click in the middle-left of ``widget`` (where a radio button's circle is)."""
    QTest.mouseClick(widget, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, QPoint(8, widget.height() // 2))


def table_rows(panel: DesignerPanel) -> list[Occurrence]:
    """The occurrences the preview table shows, in order (separator rows left out)."""
    model = panel.preview.model
    items = [model.index(r, 0).data(ItemRole) for r in range(model.rowCount())]
    return [item for item in items if isinstance(item, Occurrence)]


@contextmanager
def open_designer(document: SpecDocument, ctx: AppContext, qtbot: Any) -> Iterator[DesignerPanel]:
    """The designer page on ``document``, shown at about the size it has in a 1280x800 window,
    with its preview, summary and consequence lines built."""
    page = DesignerPanel(document, ctx)
    qtbot.addWidget(page)
    page.resize(970, 760)
    page.show()
    qtbot.waitExposed(page)
    settle(page, qtbot)
    try:
        yield page
    finally:
        page.shutdown()
        page.clock_changes.wait()
        page.summary.wait()


def settle(page: DesignerPanel, qtbot: Any) -> None:
    """Wait until the preview, the summary and the clock-change lines all follow the document."""

    def done() -> bool:
        latest, box = page.service.latest, page.clock_changes.latest
        if page.service.pending or page.summary.pending or page.clock_changes.pending:
            return False
        return latest is not None and latest.spec == page.document.spec and box is not None

    qtbot.waitUntil(done, timeout=20_000)
