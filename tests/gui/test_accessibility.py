"""What a screen reader says: every control of the window, its monitor pages and its
dialogs has an accessible name that matches its visible label and a description;
row labels are the buddies of their fields; Tab goes in reading order."""

from __future__ import annotations

from collections.abc import Iterator
from types import SimpleNamespace

import pytest
from a11y_support import a11y_problems, controls, heading, labelled
from monitor_support import FAILING_TASK, NO_RETRY, interval_spec, put, run_at
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QComboBox, QDialog, QListView, QTabBar, QWidget
from shell_fixtures import window_fixture  # noqa: F401
from typing_support import named

from core.ledger.publish import publish
from scheduler_gui.context import AppContext
from scheduler_gui.main_window import MainWindow

KINDS = ("Interval", "After completion", "Calendar")


#: Names of controls the walk must have met: one from each part it opens (so a walk that missed a
#: part, or found nothing at all, cannot pass).
MET = {
    "Title",
    "Kind",
    "At",
    "At (minutes past the hour)",
    "Every: how many",
    "From (anchor)",
    "Delay: how many",
    "First run",
    "Missing time (clocks jump forward): Skip it",
    "Run",
    "Stop after",
    "Each wait ×",
    "Preview rows",
    "Timeline",
    "Machine off from",
    "Occurrences",
    "Note for the decision",
    "Health range",
    "Schedules",
    "Occurrences that would change",
    "Note",
    "To (excluded)",
}
BUSINESS = "Business days — off · public holidays, weekend, closed dates"
TASK = "Task — command · folder · environment · timeout"
RECOVERY = "When things go wrong — misfire · overlap · retry · jitter · alerts"
TABS = "Preview, timeline and what-if tabs"


class Problems:
    """What every walk found: each problem once, in the order found, and the names of the controls met."""

    def __init__(self) -> None:
        self.seen: dict[str, None] = {}
        self.met: set[str] = set()

    def walk(self, root: QWidget) -> None:
        for line in a11y_problems(root):
            self.seen.setdefault(line)
        self.met.update(w.accessibleName() for w in controls(root))

    def report(self) -> str:
        return "\n".join(self.seen)


def choose(qtbot, combo: QComboBox, text: str) -> None:
    """Pick ``text`` in ``combo`` as a person does: click it open, arrow to the item, press Enter."""
    qtbot.mouseClick(combo, Qt.MouseButton.LeftButton)
    view = combo.view()
    qtbot.waitUntil(view.isVisible)
    target = combo.findText(text)
    while view.currentIndex().row() != target:
        key = Qt.Key.Key_Down if view.currentIndex().row() < target else Qt.Key.Key_Up
        qtbot.keyClick(view, key)
    qtbot.keyClick(view, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: not view.isVisible())
    assert combo.currentText() == text


def tab_bar(window: MainWindow) -> QTabBar:
    """The designer's tab bar (Preview, Timeline, What-if)."""
    assert window.designer is not None
    bar = window.designer.findChild(QTabBar)
    assert bar is not None
    return bar


def open_sections(qtbot, window: MainWindow) -> None:
    """Click the headings "Task ▸" and "When things go wrong ▸" (their fields are built now)."""
    for words in ("Task ▸", "When things go wrong ▸"):
        qtbot.mouseClick(heading(window, words), Qt.MouseButton.LeftButton)
    assert window.designer is not None
    qtbot.waitUntil(window.designer.recovery.isVisible)


def click_tab(qtbot, window: MainWindow, title: str) -> QWidget:
    """Click the designer's tab ``title``; the view in it, once shown."""
    bar = tab_bar(window)
    index = next(i for i in range(bar.count()) if bar.tabText(i) == title)
    qtbot.mouseClick(bar, Qt.MouseButton.LeftButton, pos=bar.tabRect(index).center())
    assert window.designer is not None
    view = window.designer.tabs.currentWidget()
    qtbot.waitUntil(lambda: view.layout().count() > 0 and view.layout().itemAt(0).widget().isVisible())
    return view


def click_monitor(qtbot, window: MainWindow, label: str) -> QWidget:
    """Click ``label`` under MONITOR in the sidebar; the page it shows."""
    view = named(window, "Monitor views")
    assert isinstance(view, QListView)
    model = view.model()
    row = next(r for r in range(model.rowCount()) if str(model.index(r, 0).data()).startswith(label))
    rect = view.visualRect(model.index(row, 0))
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    return window.stack.currentWidget()


@pytest.fixture
def shown(window: MainWindow, qtbot) -> MainWindow:
    """The window at its default size, shown and active (so that keys reach it)."""
    window.resize(1280, 800)
    window.show()
    qtbot.waitExposed(window)
    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window)
    return window


@pytest.fixture
def monitored(shown: MainWindow, ctx: AppContext, qtbot) -> Iterator[MainWindow]:
    """The window on a ledger with a failed run (a card on Attention) and its own schedule published."""
    window = shown
    put(ctx, interval_spec("backup", FAILING_TASK, retry=NO_RETRY))
    run_at(ctx, 5.5)
    spec = window.document.spec
    assert spec is not None
    with ctx.ledger.write() as session:
        publish(session, spec, ctx.clock)
    window.start_monitor()
    qtbot.waitUntil(lambda: window.hub.state == "open", timeout=30_000)
    qtbot.waitUntil(window.acts.pause_schedule.isEnabled, timeout=30_000)
    yield window


def test_every_control_is_named_described_and_labelled(monitored: MainWindow, qtbot, monkeypatch) -> None:
    import scheduler_gui.monitor.publish_dialog as publish_dialog
    import scheduler_gui.monitor.schedule_actions as schedule_actions

    window = monitored
    problems = Problems()
    # Found the way a sighted person finds them (by their words and labels), so that the walk reaches
    # every part even where the names are wrong, and reports them all.
    open_sections(qtbot, window)
    for title in ("Timeline", "What-if", "Preview"):
        click_tab(qtbot, window, title)
    problems.walk(window)

    for label in ("Occurrences", "Attention", "Health", "Schedules", "Engines"):
        page = click_monitor(qtbot, window, label)
        if label == "Attention":
            qtbot.waitUntil(lambda page=page: bool(page.cards), timeout=30_000)
        problems.walk(window)

    # The dialogs, opened from the window's actions, each walked while it is up and then closed.
    walked: list[str] = []

    def walk_and_close(dialog: QDialog) -> bool:
        dialog.show()
        qtbot.waitExposed(dialog)
        problems.walk(dialog)
        walked.append(dialog.windowTitle())
        dialog.reject()
        return False

    def publish_exec(dialog: QDialog) -> int:
        assert dialog.wait()
        qtbot.waitUntil(dialog.publish_button.isEnabled, timeout=30_000)  # the diff is shown
        walk_and_close(dialog)
        return 0

    monkeypatch.setattr(schedule_actions, "_run", walk_and_close)
    monkeypatch.setattr(publish_dialog.PublishDialog, "exec", publish_exec)
    window.show_view("designer")
    for act in (
        window.acts.publish,
        window.acts.pause_schedule,
        window.acts.disable_schedule,
        window.acts.run_now,
        window.acts.backfill,
    ):
        act.trigger()
    assert walked == [
        "Publish daily-ops-summary",
        "Pause daily-ops-summary",
        "Disable daily-ops-summary",
        "Run daily-ops-summary now",
        "Backfill daily-ops-summary",
    ]

    # Each kind of schedule, switched the way a person does.
    kind = labelled(window, "Kind")
    assert isinstance(kind, QComboBox)
    for words in KINDS:
        choose(qtbot, kind, words)
        problems.walk(window)

    assert not problems.seen, f"{len(problems.seen)} controls a screen reader cannot use:\n{problems.report()}"
    assert problems.met >= MET, f"the walk never met {sorted(MET - problems.met)}"


def test_the_trust_and_closing_questions_are_named(window: MainWindow, qtbot) -> None:
    """The question before publishing a task from elsewhere, and the one when closing with tasks running."""
    from scheduler_gui.designer.trust import TrustDialog, TrustKeeper, TrustStore
    from scheduler_gui.monitor.close_guard import CloseGuardDialog

    keeper = TrustKeeper(window.document, TrustStore(window.ctx.settings), window)
    trust = TrustDialog(keeper, window.document, window)
    running = SimpleNamespace(tasks_running=2, ctx=SimpleNamespace(ledger_url=None))
    guard = CloseGuardDialog(running, window, installed=lambda: False)
    problems = Problems()
    for dialog in (trust, guard):
        qtbot.addWidget(dialog)
        problems.walk(dialog)
    assert not problems.seen, problems.report()
    assert problems.met >= {"What the task would run", "I trust this file", "Cancel", "Wait for them"}


#: Tab from the title of the demo schedule (daily at 02:30 in New York) with the task and recovery
#: sections open: the identity, the "When" box top to bottom, the clock changes, each section's
#: heading then its fields, the tab bar and the preview's controls. Radio buttons of one group are
#: one stop (the chosen one; arrows move between them).
READING_ORDER = [
    "Title",
    "Id",
    "Kind",
    "Repeats: how many",
    "Repeats: unit",
    *("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"),
    "At",
    "Add another time of day",
    "Starts",
    "Starts: pick a day",
    "Zone",
    "Zone: show all time zones",
    "Zone rules",
    "Ends: never",
    "Except",
    "Except (date to skip)",
    "Except (date to skip): pick a day",
    "Add the date to skip",
    "RRULE",
    "Missing time (clocks jump forward): Skip it",
    "Repeated time (clocks fall back): First only",
    BUSINESS,
    TASK,
    "Run",
    "Command: add",
    "Command: remove",
    "Command: down",
    "In folder",
    "Browse for the working folder",
    "Environment variables",
    "Environment: add",
    "Environment: remove",
    "Stop after",
    "Runs on: This machine (where it is published from)",
    "Effect",
    "Check with",
    "Verify probe: add",
    "Test run",
    "Test run: output",
    RECOVERY,
    "Wake this computer for each run",
    "After an outage",
    "Newest (how many missed runs to make up)",
    "Missed when late by",
    "Never run if older than",
    "Then",
    "Attempts at most",
    "First wait",
    "Each wait ×",
    "Longest wait",
    "Start up to",
    "Alerts: The ledger's default routes",
    TABS,
    "From",
    "Rows",
    "Next transition",
    "Also in",
    "Also in: show all time zones",
    "Also in: remove the second zone",
    "Export",
    "Preview rows",
]


def tab_through(qtbot, window: MainWindow, start: QWidget, stops: int) -> list[str]:
    """Press Tab ``stops`` times from ``start``; the accessible names of the widgets focused, ``start`` first."""
    start.setFocus()
    qtbot.waitUntil(start.hasFocus)
    names = []
    for _ in range(stops):
        focused = QApplication.focusWidget()
        assert focused is not None and window.isAncestorOf(focused)
        names.append(focused.accessibleName())
        QTest.keyClick(focused, Qt.Key.Key_Tab)
    return names


def test_tab_goes_in_reading_order(shown: MainWindow, qtbot) -> None:
    window = shown
    # Opened now, the sections' fields are built after everything else: they still come in their place.
    for name in (TASK, RECOVERY):
        qtbot.mouseClick(named(window, name), Qt.MouseButton.LeftButton)
    assert window.designer is not None
    qtbot.waitUntil(window.designer.recovery.isVisible)
    names = tab_through(qtbot, window, named(window, "Title"), len(READING_ORDER) + 1)
    assert names[:-1] == READING_ORDER
    assert names[-1] == "Schedules"  # then out of the designer, to the sidebar


@pytest.mark.parametrize(
    ("tab", "stops"),
    [("Timeline", ["Timeline", "Fit timeline"]), ("What-if", ["Machine off from"])],
)
def test_a_tab_built_late_is_read_after_the_tab_bar(shown: MainWindow, qtbot, tab: str, stops: list[str]) -> None:
    window = shown
    click_tab(qtbot, window, tab)
    names = tab_through(qtbot, window, named(window, TABS), len(stops) + 1)
    assert names == [TABS, *stops]
