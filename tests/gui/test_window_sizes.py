"""The window at the sizes people have: it works down to 1024x640, where the designer's forms stack
and scroll, the preview keeps enough rows, and the status bar gives up whole words, never half of one."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QPoint
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QComboBox, QStyle, QStyleOptionComboBox, QWidget
from shell_fixtures import window_fixture  # noqa: F401

from scheduler_gui.elide import whole_words
from scheduler_gui.main_window import MainWindow
from scheduler_gui.status_bar import StatusLabel


def _at(window: MainWindow, qtbot: Any, width: int, height: int) -> None:
    window.resize(width, height)
    window.show()
    qtbot.waitExposed(window)
    QApplication.processEvents()


def _inside(widget: QWidget, area: QWidget) -> bool:
    """The whole of ``widget`` lies within ``area`` (nothing of it cut off at the right or the bottom)."""
    top_left = widget.mapTo(area, QPoint(0, 0))
    return top_left.x() + widget.width() <= area.width() and top_left.y() + widget.height() <= area.height()


@pytest.mark.parametrize(
    ("size", "compact", "rows_of_toolbar", "least_rows"),
    [
        pytest.param((1024, 640), True, 2, 5, id="1024x640"),
        pytest.param((1280, 800), False, 1, 7, id="1280x800"),
    ],
)
def test_the_designer_fits_the_window(
    window: MainWindow, qtbot: Any, size: tuple[int, int], compact: bool, rows_of_toolbar: int, least_rows: int
) -> None:
    _at(window, qtbot, *size)
    assert (window.width(), window.height()) == size  # nothing holds the window wider or taller
    designer = window.designer
    panel = designer.preview
    qtbot.waitUntil(lambda: panel.model.occurrence_count() > 0, timeout=10_000)
    # Short: the title and the summary scroll with the settings; narrow: "Clock changes" goes under "When".
    assert designer.compact is compact
    assert designer.side_by_side.stacked is compact
    assert panel.toolbar_rows.stacked is (rows_of_toolbar == 2)
    for control in (panel.from_choice, panel.count_spin, panel.next_button, panel.zone_choice, panel.export_button):
        assert _inside(control, panel), control.accessibleName()
    table = panel.table
    shown = table.rowAt(table.viewport().height() - 1)
    assert shown + 1 >= least_rows or (shown == -1 and panel.model.rowCount() >= least_rows)


def test_the_monitor_fits_1024_and_the_status_bar_keeps_whole_words(window: MainWindow, qtbot: Any) -> None:
    with qtbot.waitSignal(window.hub.ledgerReady, timeout=30_000):
        window.start_monitor()
    window.show_view("occurrences")
    _at(window, qtbot, 1024, 640)
    assert window.width() == 1024
    labels = [w for w in window.statusBar().findChildren(StatusLabel) if w.isVisible()]
    assert labels
    for label in labels:
        assert _inside(label, window.statusBar()), label.objectName()
        shown = label.shown_text()
        assert shown == label.text() or (shown.endswith("…") and label.text().startswith(shown[:-1].rstrip()))
        if shown != label.text():  # the words kept are whole: the next character of the text is a gap
            kept = shown[:-1]
            assert label.text()[len(kept)] in " ·:", (shown, label.text())
        assert label.accessibleName() == label.text()  # a screen reader hears all of it


def _edit_room(box: QComboBox) -> int:
    """The width a combo box gives its text (without its arrow and frame)."""
    option = QStyleOptionComboBox()
    box.initStyleOption(option)
    field = box.style().subControlRect(
        QStyle.ComplexControl.CC_ComboBox, option, QStyle.SubControl.SC_ComboBoxEditField, box
    )
    return field.width()


def test_the_occurrences_sort_and_time_boxes_show_their_whole_text_at_1024(window: MainWindow, qtbot: Any) -> None:
    """ "by scheduled time" and "Oldest first" are read whole at 1024x640, whichever is chosen."""
    from scheduler_gui.monitor.occurrences_view import OccurrencesView

    with qtbot.waitSignal(window.hub.ledgerReady, timeout=30_000):
        window.start_monitor()
    window.show_view("occurrences")
    _at(window, qtbot, 1024, 640)
    assert window.width() == 1024
    view = window.findChild(OccurrencesView)
    assert view is not None and view.isVisible()
    for box in (view.time_field_box, view.order_box):
        for choice in range(box.count()):
            box.setCurrentIndex(choice)
            QApplication.processEvents()
            text = box.currentText()
            assert box.fontMetrics().horizontalAdvance(text) <= _edit_room(box), (box.accessibleName(), text)
            assert _inside(box, view), box.accessibleName()
    for box in (view.schedule_box, view.state_box, view.time_box, view.kind_box):  # their first choice too
        box.setCurrentIndex(0)
        assert box.fontMetrics().horizontalAdvance(box.currentText()) <= _edit_room(box), box.accessibleName()


@pytest.mark.parametrize(
    ("room", "expected"),
    [
        pytest.param(100, "Next backup: Wed 2027-03-03 09:00 −03:00 · 12:00Z", id="fits"),
        pytest.param(31, "Next backup: Wed 2027-03-03…", id="whole_words"),
        pytest.param(16, "Next backup…", id="drops_the_colon_before_the_dots"),
        pytest.param(3, "Next…", id="first_word_at_least"),
    ],
)
def test_whole_words(room: int, expected: str) -> None:
    text = "Next backup: Wed 2027-03-03 09:00 −03:00 · 12:00Z"
    assert whole_words(text, room, len) == expected


@pytest.mark.parametrize(("width", "stacked"), [(1024, True), (1280, False)], ids=["1024x640", "1280x800"])
def test_the_business_days_and_the_holiday_matches_are_not_cut_off(
    window: MainWindow, qtbot: Any, width: int, stacked: bool
) -> None:
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QCheckBox, QLineEdit

    window.open_path(window.ctx.workspace / "invoice-month-end.yaml", ask=False)
    _at(window, qtbot, width, 640 if stacked else 800)
    designer = window.designer
    qtbot.mouseClick(designer.business_section.button, Qt.MouseButton.LeftButton)
    box = designer.business_days
    use = next(w for w in box.findChildren(QCheckBox) if w.accessibleName() == "Use a business calendar")
    use.click()
    search = next(w for w in box.findChildren(QLineEdit) if w.accessibleName() == "Public holidays: search")
    search.setFocus()
    QTest.keyClicks(search, "united")
    QApplication.processEvents()
    matches = box.picker.matches
    assert matches.isVisible() and matches.count() > 5
    assert box.columns is not None and box.columns.stacked is stacked
    assert designer.settings_area.horizontalScrollBar().maximum() == 0  # nothing cut off at the right
    room = matches.viewport().width()
    assert all(matches.fontMetrics().horizontalAdvance(matches.item(i).text()) < room for i in range(matches.count()))


def test_the_sidebar_cuts_its_second_lines_at_whole_words_at_1024(
    window: MainWindow, qtbot: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each schedule's second line ("next …", a summary) is drawn as it fits: whole, or its first
    whole words and "…", never a word cut in two."""
    import scheduler_gui.workspace.sidebar as sidebar_module

    drawn: list[tuple[str, str]] = []

    def spied(text: str, room: int, advance: Any) -> str:
        shown = whole_words(text, room, advance)
        drawn.append((text, shown))
        return shown

    monkeypatch.setattr(sidebar_module, "whole_words", spied)
    _at(window, qtbot, 1024, 640)
    window.grab()  # paints the sidebar at this size
    assert drawn, "the sidebar drew no second line"
    cut = [(text, shown) for text, shown in drawn if shown != text]
    for text, shown in drawn:
        assert shown == text or (shown.endswith("…") and text.startswith(shown[:-1]))
    for text, shown in cut:
        assert text[len(shown) - 1] in " ·:", (shown, text)


def _whole_words_of(shown: str, text: str) -> bool:
    """``shown`` is ``text``, or its first whole words and "…" (the next character of ``text`` a gap)."""
    if shown == text:
        return True
    kept = shown.removesuffix("…")
    return shown.endswith("…") and text.startswith(kept) and text[len(kept) : len(kept) + 1] in (" ", "·", ":")


def test_a_long_message_shows_whole_words_at_1024_and_all_of_it_at_1600(
    window: MainWindow, qtbot: Any, tmp_path: Path
) -> None:
    """A file copied in a file manager has another file's id, so it can be neither saved nor
    published: at 1024 px the status bar says so in its first whole words and "…", all of it in the
    tooltip; widened to 1600 px while it shows, the same message is whole; narrowed, it gives up words."""
    with qtbot.waitSignal(window.hub.ledgerReady, timeout=30_000):
        window.start_monitor()
    workspace = window.ctx.workspace
    twin = workspace / "daily-ops-copy.yaml"
    shutil.copyfile(workspace / "daily-ops-summary.yaml", twin)  # copied in a file manager: same id
    window.open_path(twin, ask=False)
    _at(window, qtbot, 1024, 640)
    assert not window.acts.publish.isEnabled()
    bar = window.messages
    message = bar.currentMessage()
    assert message == (
        "Cannot save while the schedule has a problem: scheduleId: “daily-ops-summary” is already the id of "
        "daily-ops-summary.yaml in the workspace."
    )
    label = bar.label
    assert (label.toolTip(), label.accessibleDescription(), label.accessibleName()) == (message, message, message)
    for width, height, whole in ((1024, 640, False), (1600, 900, True), (1024, 640, False)):
        _at(window, qtbot, width, height)
        shown = label.shown_text()
        assert (shown == message) is whole, (width, shown)
        assert _whole_words_of(shown, message), (width, shown)
        assert label.fontMetrics().horizontalAdvance(shown) <= label.contentsRect().width()
        assert _inside(label, bar)
        assert not window.next_label.isVisible()  # the toolbar says it; the message has its room
        assert bar.currentMessage() == message
        window.grab().save(str(tmp_path / f"message-{width}.png"))


@pytest.mark.parametrize(
    ("label", "badge", "room", "expected"),
    [
        pytest.param("Inbox sync (always hangs)", " (3)", 40, "Inbox sync (always hangs) (3)", id="fits"),
        pytest.param("Inbox sync (always hangs)", " (3)", 28, "Inbox sync (always… (3)", id="badge_kept_whole"),
        pytest.param("Inbox sync (always hangs)", "", 15, "Inbox sync…", id="no_badge"),
        pytest.param("Inbox sync (always hangs)", " (1,204)", 12, "Inbox… (1,204)", id="first_word_at_least"),
    ],
)
def test_a_schedule_title_gives_up_words_but_keeps_its_attention_count(
    label: str, badge: str, room: int, expected: str
) -> None:
    """The sidebar's first line at 1024 px: "Inbox sync (always hangs) (3" was cut in the count."""
    from scheduler_gui.workspace.sidebar import title_text

    assert title_text(label, badge, room, len) == expected
