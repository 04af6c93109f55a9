"""The designer page as a widget among Qt's: its own parts do not hide what QWidget gives it."""

from __future__ import annotations

from consequence_support import open_designer, widget_named
from PySide6.QtWidgets import QScrollArea

from scheduler_gui.context import AppContext
from scheduler_gui.workspace.document import SpecDocument


def test_the_settings_area_leaves_qwidget_scroll_alone(document: SpecDocument, ctx: AppContext, qtbot) -> None:
    """The forms' scroll area has a name of its own: ``QWidget.scroll`` still moves the page's pixels."""
    with open_designer(document, ctx, qtbot) as page:
        page.scroll(0, 0)  # the scroll area once took this name: "'QScrollArea' object is not callable"
        area = widget_named(page, "Schedule settings")
        assert isinstance(area, QScrollArea)
        assert area is page.settings_area
