"""The main window: the workspace in the sidebar, views, undo and redo through
the actions, remembered geometry, and the ledger's state in the status bar."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import QMessageBox
from shell_fixtures import answer, keep_zones, window_fixture  # noqa: F401
from typing_support import named, retype

from core.ledger.publish import publish
from core.ledger.queries import ScheduleSummary
from core.ledger.states import OccurrenceState, ScheduleState
from core.time.zones import tzdb_version
from scheduler_gui import version
from scheduler_gui.context import AppContext
from scheduler_gui.main_window import MainWindow
from scheduler_gui.monitor.states import ShutdownMode
from scheduler_gui.workspace.folder import SpecEntry, list_specs
from scheduler_gui.workspace.sidebar import MonitorListModel, ScheduleListModel, fmt_next, schedule_rows


def test_window_lists_the_workspace_schedules(window: MainWindow, ctx: AppContext) -> None:
    rows = window.sidebar.schedules.rows()
    assert sorted(row.path.name for row in rows) == sorted(p.name for p in ctx.workspace.glob("*.yaml"))
    labels = {row.label: row for row in rows}
    # The label is the schedule's title; the id and the file's name are in the tooltip.
    assert labels["Heartbeat"].path.name == "interval-15min.yaml"
    assert "Id heartbeat-15min" in labels["Heartbeat"].tooltip and "interval-15min.yaml" in labels["Heartbeat"].tooltip
    assert labels["Heartbeat"].kind == "interval" and labels["Melbourne weekly sync"].kind == "calendar"
    assert window.size().width() == 1280 and window.size().height() == 800
    # The first file opens in the designer, clean, and the title names it.
    assert window.document is not None and window.document.path is not None
    assert window.windowTitle() == f"Tidemark — {window.document.path.name}"
    assert window.current_view() == "designer"


def test_sidebar_models_pass_the_model_tester(window: MainWindow, qtmodeltester) -> None:
    qtmodeltester.check(window.sidebar.schedules)
    qtmodeltester.check(window.sidebar.monitor)


def test_empty_workspace_says_what_to_do(tmp_path: Path, clock, qtbot) -> None:
    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    empty = tmp_path / "empty"
    empty.mkdir()
    ctx = AppContext(clock=clock, workspace=empty, ledger_url=f"sqlite:///{tmp_path / 'l.db'}", settings=settings)
    w = MainWindow(ctx)
    qtbot.addWidget(w)
    w.open_initial()
    assert w.sidebar.schedules.rowCount() == 0
    assert not w.sidebar.empty.isHidden() and w.sidebar.schedule_view.isHidden()
    assert "template" in w.sidebar.empty_button.text().lower()
    # With nothing to open, a blank schedule is ready to edit.
    assert w.document is not None and w.document.path is None and w.document.valid
    w.designer.shutdown()


def test_sidebar_rows_join_the_ledger(ctx: AppContext) -> None:
    entries = list_specs(ctx.workspace)
    summary = ScheduleSummary(
        schedule_id="daily-ops-summary",
        title="Operating summary",
        time_zone="America/New_York",
        kind="calendar",
        state=ScheduleState.ACTIVE,
        active_revision=1,
        gate_version=1,
        cursor_utc=None,
        note=None,
        updated_at=datetime(2027, 3, 1, tzinfo=UTC),
        counts={OccurrenceState.UNKNOWN_EFFECT: 1, OccurrenceState.FAILED: 1, OccurrenceState.SUCCEEDED: 4},
        next_due_at=datetime(2027, 3, 2, 7, 30, tzinfo=UTC),
    )
    rows = {r.label: r for r in schedule_rows(entries, {"daily-ops-summary": summary})}
    daily = rows["Operating summary"]
    assert daily.attention == 2 and daily.look.glyph == "⚠"
    assert daily.next_run == "Tue 03-02 02:30 EST · 07:30Z"
    assert daily.third_line == "next Tue 03-02 02:30 EST · 07:30Z"
    assert "Next run Tue 2027-03-02 02:30 EST −05:00 · 07:30Z" in daily.tooltip
    assert "Revision 1" in daily.tooltip
    assert rows["Melbourne weekly sync"].look.word == "not published"
    assert rows["Melbourne weekly sync"].next_run is None


def test_unreadable_spec_is_listed_with_its_problem(ctx: AppContext) -> None:
    (ctx.workspace / "broken.yaml").write_text("scheduleId: [unclosed\n", encoding="utf-8")
    rows = {r.label: r for r in schedule_rows(list_specs(ctx.workspace), {})}
    assert rows["broken"].problem is not None and "YAML" in rows["broken"].problem
    assert rows["broken"].second_line == "cannot be read"


@pytest.mark.parametrize(
    ("key", "shortcut"),
    [
        ("undo", "Ctrl+Z"),
        ("redo", "Ctrl+Shift+Z"),
        ("save", "Ctrl+S"),
        ("open", "Ctrl+O"),
        ("new", "Ctrl+N"),
        ("refresh", "F5"),
        ("filter", "Ctrl+F"),
        ("publish", "Ctrl+Return"),
        ("redo", "Ctrl+Y"),
        ("quit", "Ctrl+Q"),
        ("run_now", "Ctrl+Shift+R"),
        ("pause_schedule", "Ctrl+Shift+P"),
        ("engine_toggle", "Ctrl+Shift+E"),
    ],
    ids=lambda v: str(v),
)
def test_shortcuts(window: MainWindow, key: str, shortcut: str) -> None:
    act = getattr(window.acts, key)
    assert shortcut in [s.toString() for s in act.shortcuts()]


def test_every_action_has_a_tooltip(window: MainWindow) -> None:
    for act in window.acts.all():
        assert act.toolTip() and act.toolTip() != act.text().replace("&", ""), act.text()


def test_undo_redo_through_the_actions(window: MainWindow, qtbot) -> None:
    doc = window.document
    assert doc is not None
    assert not window.acts.undo.isEnabled()
    doc.set_value("timeZone", "Europe/Paris")
    assert window.acts.undo.isEnabled() and "timeZone" in window.acts.undo.toolTip()
    assert window.windowTitle().endswith(" ●")
    window.acts.undo.trigger()
    assert doc.value("timeZone") == "America/New_York"
    assert not window.windowTitle().endswith(" ●")
    assert window.acts.redo.isEnabled()
    window.acts.redo.trigger()
    assert doc.value("timeZone") == "Europe/Paris"


def test_undo_follows_the_open_document(window: MainWindow, ctx: AppContext) -> None:
    first = window.document
    assert first is not None
    first.set_value("title", "changed")
    first.undo_stack.setClean()
    assert window.open_path(ctx.workspace / "mel-sync.yaml")
    assert window.document is not first
    assert not window.acts.undo.isEnabled()
    window.document.set_value("title", "Sync")
    window.acts.undo.trigger()
    assert window.document.value("title") == "Melbourne weekly sync"


def test_switching_schedule_in_sidebar_asks_when_dirty(window: MainWindow, monkeypatch, qtbot) -> None:
    asked = answer(monkeypatch, QMessageBox.StandardButton.Cancel)
    doc = window.document
    doc.set_value("title", "edited")
    row = window.sidebar.schedules.row_of(doc.path.parent / "mel-sync.yaml")
    index = window.sidebar.schedules.index(row, 0)
    window.sidebar.schedule_view.activated.emit(index)
    assert len(asked) == 1 and "daily-ops-summary.yaml" in asked[0]
    assert window.document is doc and doc.value("title") == "edited"
    answer(monkeypatch, QMessageBox.StandardButton.Discard)
    window.sidebar.schedule_view.activated.emit(index)
    assert window.document.path.name == "mel-sync.yaml"


def test_closing_with_a_half_typed_field_asks_first(window: MainWindow, monkeypatch, qtbot) -> None:
    """Unfinished text in a field is not in the document, but it is the person's work: closing asks."""
    asked = answer(monkeypatch, QMessageBox.StandardButton.Cancel)
    window.show()
    doc = window.document
    assert not doc.dirty
    at = named(window.designer, "At")
    retype(qtbot, at, "25:61")
    assert not doc.dirty and doc.field_problems
    window.close()
    assert len(asked) == 1 and "25:61" in asked[0] and "cannot be saved" in asked[0]
    assert window.isVisible() and at.text() == "25:61"
    answer(monkeypatch, QMessageBox.StandardButton.Discard)
    window.close()
    assert not window.isVisible()


def test_closing_with_a_refused_value_but_nothing_typed_does_not_ask(window: MainWindow, ctx, qtbot) -> None:
    """A file whose id another file has opens with that problem shown, but closing loses nothing typed."""
    window.show()
    twin = ctx.workspace / "twin.yaml"
    twin.write_text((ctx.workspace / "mel-sync.yaml").read_text(encoding="utf-8"), encoding="utf-8")
    assert window.open_path(twin)
    doc = window.document
    assert doc.blocking() is not None and doc.blocking().key == "scheduleId"
    assert doc.unfinished_fields == [] and not window.acts.save.isEnabled()
    window.close()  # no question: the window fixture fails on one
    assert not window.isVisible()


def test_views_switch_and_tabs_follow(window: MainWindow) -> None:
    for view in ("timeline", "whatif", "preview"):
        window.show_view(view)
        assert window.current_view() == "designer"
        assert window.designer.current_tab() == view
    window.show_view("health")
    assert window.current_view() == "health" and window.acts.view_health.isChecked()
    assert not window.acts.view_designer.isChecked()
    with pytest.raises(ValueError, match="no view"):
        window.show_view("nowhere")


def test_geometry_and_splitter_are_restored(ctx: AppContext, qtbot) -> None:
    first = MainWindow(ctx)
    qtbot.addWidget(first)
    first.resize(700, 500)
    first.splitter.setSizes([320, 680])
    first.save_settings()
    sizes = first.splitter.sizes()
    second = MainWindow(ctx)
    qtbot.addWidget(second)
    assert (second.width(), second.height()) == (700, 500)
    assert second.splitter.sizes() == sizes


def test_ledger_opens_after_the_window_and_fills_the_status_bar(window: MainWindow, qtbot) -> None:
    assert window.hub.state == "closed"
    assert "opening" in window.ledger_label.text()
    with qtbot.waitSignal(window.hub.ledgerReady, timeout=30_000):
        window.start_monitor()
    assert window.ledger_label.text().startswith("Ledger ")
    assert window.ledger_label.text() == "Ledger ledger.db"  # the whole path is in the tooltip
    assert window.ctx.ledger.where in window.ledger_label.toolTip()
    assert window.tzdata_label.text().startswith("tzdata 20")
    assert "need attention" in window.counts_label.text()


def test_locked_or_damaged_ledger_is_reported_and_designer_works(tmp_path: Path, clock, qtbot, monkeypatch) -> None:
    bad = tmp_path / "not-a-ledger.db"
    bad.write_bytes(b"this is not sqlite at all" * 100)
    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    ctx = AppContext(clock=clock, workspace=workspace, ledger_url=str(bad), settings=settings)
    w = MainWindow(ctx)
    qtbot.addWidget(w)
    w.open_initial()
    with qtbot.waitSignal(w.hub.ledgerFailed, timeout=30_000) as blocker:
        w.start_monitor()
    message = blocker.args[0]
    assert str(bad) in message and "not a Tidemark ledger" in message
    assert "cannot be used" in w.ledger_label.text() and w.ledger_label.toolTip() == message
    w.show_view("occurrences")
    shown = w.stack.currentWidget()
    assert "cannot be used" in shown.text()
    # The designer still edits and saves.
    w.show_view("designer")
    w.document.set_value("title", "still works")
    keep_zones(monkeypatch)  # an empty workspace opens a new schedule: its first save asks about its zone
    assert w.save_as(workspace / "still.yaml")
    assert (workspace / "still.yaml").read_text(encoding="utf-8").count("still works") == 1
    # Once the file is out of the way, F5 tries again and the monitor comes back.
    bad.unlink()
    with qtbot.waitSignal(w.hub.ledgerReady, timeout=30_000):
        w.acts.refresh.trigger()
    assert w.hub.state == "open" and "cannot be used" not in w.ledger_label.text()
    assert w.stack.currentWidget() is w.designer
    w.show_view("occurrences")
    assert not hasattr(w.stack.currentWidget(), "text") or "cannot be used" not in w.stack.currentWidget().text()
    w.hub.shutdown(ShutdownMode.STOP)
    w.designer.shutdown()


def test_attention_badge(window: MainWindow, qtmodeltester) -> None:
    model: MonitorListModel = window.sidebar.monitor
    window.hub.attentionChanged.emit(3)
    row = next(
        i for i in range(model.rowCount()) if model.data(model.index(i, 0), MonitorListModel.KeyRole) == "attention"
    )
    text = model.data(model.index(row, 0), Qt.ItemDataRole.DisplayRole)
    assert "Attention" in text and "3" in text
    assert "3 need attention" not in window.counts_label.text() or window.hub.state == "open"
    qtmodeltester.check(model)


def test_schedule_model_roles(window: MainWindow) -> None:
    model = window.sidebar.schedules
    index = model.index(0, 0)
    assert Path(model.data(index, ScheduleListModel.PathRole)).is_file()
    assert model.data(index, Qt.ItemDataRole.ToolTipRole)
    assert model.data(index, Qt.ItemDataRole.AccessibleTextRole)
    assert model.data(model.index(99, 0)) is None


def test_window_renders(window: MainWindow, tmp_path: Path, qtbot) -> None:
    window.show()
    qtbot.waitExposed(window)
    window.designer.service.refresh_now()
    window.designer.service.wait()
    image = window.grab().toImage()
    assert image.width() == 1280
    colours = {image.pixel(x, y) for x in range(0, 1280, 40) for y in range(0, 800, 40)}
    assert len(colours) > 3


@pytest.mark.parametrize(
    ("zone", "instant", "full", "compact"),
    [
        (
            "America/New_York",
            datetime(2027, 3, 14, 7, 0, tzinfo=UTC),
            "Sun 2027-03-14 03:00 EDT −04:00 · 07:00Z",
            "Sun 03-14 03:00 EDT · 07:00Z",
        ),
        (
            "Australia/Lord_Howe",
            datetime(2026, 10, 3, 12, 0, tzinfo=UTC),
            "Sat 2026-10-03 22:30 +10:30 · 12:00Z",
            "Sat 10-03 22:30 +10:30 · 12:00Z",
        ),
        (
            "America/Sao_Paulo",
            datetime(2027, 3, 3, 12, 0, tzinfo=UTC),
            "Wed 2027-03-03 09:00 −03:00 · 12:00Z",
            "Wed 03-03 09:00 −03:00 · 12:00Z",
        ),
    ],
    ids=["new_york_after_spring_gap", "lord_howe_half_hour", "sao_paulo_numeric_abbreviation"],
)
def test_next_run_text(zone: str, instant: datetime, full: str, compact: str) -> None:
    assert fmt_next(instant, zone) == full
    assert fmt_next(instant, zone, compact=True) == compact


def test_entry_label_falls_back_to_the_file_name(tmp_path: Path) -> None:
    assert SpecEntry(tmp_path / "x.yaml", None, None, None).label == "x"


class FakeEngine:
    """Stands in for the embedded engine: tasks still running, shutdown recorded."""

    state = "running"
    tasks_running = 2

    def __init__(self) -> None:
        self.modes: list[str] = []

    def shutdown(self, mode: str) -> None:
        self.modes.append(mode)


def test_schedules_page_opens_the_occurrences_of_a_schedule(window: MainWindow, qtbot, monkeypatch) -> None:
    with qtbot.waitSignal(window.hub.ledgerReady, timeout=30_000):
        window.start_monitor()
    window.acts.view_schedules.trigger()
    assert window.current_view() == "schedules" and window.acts.view_schedules.isChecked()
    chosen: list[str | None] = []
    monkeypatch.setattr(window.page("occurrences").view, "set_schedule", chosen.append)
    window.page("schedules").scheduleSelected.emit("mel-sync")
    assert window.current_view() == "occurrences" and chosen == ["mel-sync"]


@pytest.mark.parametrize(("choice", "closes"), [(None, False), ("detach", True), ("wait", True)])
def test_close_asks_what_to_do_with_running_tasks(window: MainWindow, monkeypatch, choice, closes: bool) -> None:
    import scheduler_gui.monitor.close_guard as close_guard

    engine = FakeEngine()
    window.hub.engine = engine
    monkeypatch.setattr(close_guard, "ask_on_close", lambda host, parent: choice)
    window.show()
    assert window.close() is closes
    assert engine.modes == ([choice] if closes else [])
    window.hub.engine = None


def test_monitor_wiring_once_the_ledger_is_open(window: MainWindow, qtbot, monkeypatch) -> None:
    assert not window.acts.publish.isEnabled()  # no ledger yet
    with qtbot.waitSignal(window.hub.ledgerReady, timeout=30_000):
        window.start_monitor()
    assert window.acts.publish.isEnabled()
    assert window.hub.watcher is not None and window.hub.engine is not None
    assert window.acts.engine_toggle.isEnabled() and window.acts.engine_toggle.text() == "Start &Engine"
    assert window.engine_label.text().startswith("Engine ○ stopped")
    # Ctrl+F opens the occurrences view and hands the focus to its filter.
    page = window.page("occurrences")
    focused: list[bool] = []
    monkeypatch.setattr(page.view, "focus_filter", lambda: focused.append(True))
    window.acts.filter.trigger()
    assert window.current_view() == "occurrences" and focused == [True]
    assert page.detail is not None
    # F5 reloads what is shown.
    refreshed: list[bool] = []
    monkeypatch.setattr(page.view, "refresh", lambda: refreshed.append(True))
    window.acts.refresh.trigger()
    assert refreshed == [True]


def test_autostart_setting(window: MainWindow, ctx: AppContext, qtbot) -> None:
    assert window.engine_autostart  # on by default
    window.acts.engine_autostart.setChecked(False)
    second = MainWindow(ctx)
    qtbot.addWidget(second)
    assert not second.engine_autostart and not second.acts.engine_autostart.isChecked()


def test_first_start_seeds_the_ledger_and_the_sidebar_shows_it(window: MainWindow, qtbot) -> None:
    with qtbot.waitSignal(window.hub.ledgerReady, timeout=60_000):
        window.start_monitor(seed=True)
    rows = {r.label: r for r in window.sidebar.schedules.rows()}
    daily = rows["Operating summary"]
    assert daily.look.word == "active" and daily.look.glyph == "●"
    # Published, not yet materialized: the next run comes from the published rule at once.
    assert daily.next_run == "Tue 03-02 02:30 EST · 07:30Z" and "Revision 1" in daily.tooltip
    assert "not materialized yet" in daily.tooltip
    # What the engine's first pass does; the watcher's events make the sidebar read the summaries again.
    from core.ledger import materialize_all

    with window.ctx.ledger.write() as session:
        materialize_all(session, window.ctx.clock)
    with qtbot.waitSignal(window.hub.summariesChanged, timeout=30_000):
        window.hub.refresh_summaries()
    daily = next(r for r in window.sidebar.schedules.rows() if r.label == "Operating summary")
    assert "not materialized yet" not in daily.tooltip
    # The next run in the schedule's zone with its abbreviation, and in UTC: 2027-03-02 02:30 EST.
    assert daily.next_run == "Tue 03-02 02:30 EST · 07:30Z"
    assert window.engine_label.text() == "Engine ○ stopped · next Mon 03-01 06:00 CST · 12:00Z"
    assert window.next_label.text() == "Next heartbeat-15min: Mon 2027-03-01 06:00 CST −06:00 · 12:00Z"


def test_publish_and_schedule_actions_open_their_dialogs(window: MainWindow, qtbot, monkeypatch) -> None:
    import scheduler_gui.monitor.publish_dialog as publish_dialog
    import scheduler_gui.monitor.schedule_actions as schedule_actions

    with qtbot.waitSignal(window.hub.ledgerReady, timeout=30_000):
        window.start_monitor()
    opened: list[tuple[str, object]] = []

    class FakeDialog:
        def __init__(self, ctx, spec, parent, *, source_file) -> None:
            assert source_file == window.document.path  # the revision records the file published
            opened.append(("publish", spec.schedule_id))

        def exec(self) -> int:
            return 0

    monkeypatch.setattr(publish_dialog, "PublishDialog", FakeDialog)
    monkeypatch.setattr(schedule_actions, "pause", lambda ctx, sid, parent: opened.append(("pause", sid)) or False)
    window.acts.publish.trigger()
    window.acts.pause_schedule.trigger()  # not published yet: Pause is off and opens nothing
    assert opened == [("publish", "daily-ops-summary")]
    spec = window.document.spec
    assert spec is not None
    with window.ctx.ledger.write() as session:
        publish(session, spec, window.ctx.clock)
    window.hub.refresh_summaries()
    qtbot.waitUntil(window.acts.pause_schedule.isEnabled, timeout=30_000)
    window.acts.pause_schedule.trigger()
    assert opened == [("publish", "daily-ops-summary"), ("pause", "daily-ops-summary")]


def test_publish_asks_for_trust_and_stops_when_refused(window: MainWindow, qtbot, monkeypatch) -> None:
    import scheduler_gui.designer.trust as trust
    import scheduler_gui.monitor.publish_dialog as publish_dialog

    with qtbot.waitSignal(window.hub.ledgerReady, timeout=30_000):
        window.start_monitor()
    asked: list[str] = []
    monkeypatch.setattr(trust, "ensure_trusted", lambda doc, settings, parent: asked.append(doc.display_name) or False)
    monkeypatch.setattr(publish_dialog, "PublishDialog", lambda *a: pytest.fail("published an untrusted task"))
    window.acts.publish.trigger()
    assert asked == ["daily-ops-summary.yaml"]
    assert "not trusted" in window.statusBar().currentMessage()


def test_sidebar_is_keyboard_navigable(window: MainWindow, qtbot, monkeypatch) -> None:
    answer(monkeypatch, QMessageBox.StandardButton.Discard)
    view = window.sidebar.schedule_view
    window.show()
    qtbot.waitExposed(window)
    view.setFocus()
    first = window.document.path
    assert view.currentIndex().data(ScheduleListModel.PathRole) == str(first)
    qtbot.keyClick(view, Qt.Key.Key_Up)  # "Operating summary" is below "Month-end invoice" (by title)
    qtbot.keyClick(view, Qt.Key.Key_Return)
    assert window.document.path != first
    assert view.currentIndex().data(ScheduleListModel.PathRole) == str(window.document.path)


def test_shell_widgets_have_names_and_tooltips(window: MainWindow) -> None:
    named = [
        window.sidebar.schedule_view,
        window.sidebar.monitor_view,
        window.sidebar.empty_button,
        window.engine_label,
        window.engine_status,
        window.next_label,
        window.ledger_label,
        window.tzdata_label,
        window.counts_label,
        window.designer.task_section.button,
        window.designer.recovery_section.button,
    ]
    for widget in named:
        assert widget.accessibleName() and widget.toolTip(), widget.objectName()
    tabs = window.designer.tabs
    assert all(tabs.tabToolTip(i) for i in range(tabs.count()))


def test_fold_sections_open_and_close(window: MainWindow) -> None:
    section = window.designer.task_section
    assert not section.is_open and section.content.isHidden() and section.button.text().startswith("Task ▸")
    section.button.click()
    assert section.is_open and not section.content.isHidden() and section.button.text() == "Task ▾"


def test_opening_a_file_from_a_monitor_view_shows_the_designer(window: MainWindow, ctx: AppContext) -> None:
    window.show_view("attention")
    assert window.open_path(ctx.workspace / "mel-sync.yaml")
    assert window.current_view() == "designer" and window.stack.currentWidget() is window.designer
    assert window.acts.view_designer.isChecked()


def test_summary_reads_do_not_pile_up(window: MainWindow, qtbot, qapp) -> None:
    with qtbot.waitSignal(window.hub.ledgerReady, timeout=30_000):
        window.start_monitor()
    got: list[int] = []
    window.hub.summariesChanged.connect(lambda s: got.append(len(s)))
    for _ in range(5):
        window.hub.refresh_summaries()
    # One read now, one more for everything asked while it ran.
    qtbot.waitUntil(lambda: len(got) == 2, timeout=30_000)
    window.hub.wait()
    qapp.processEvents()
    assert len(got) == 2


@pytest.mark.parametrize(
    ("state", "words", "tip"),
    [
        ("running", "Engine ● running", "Pause the embedded engine"),
        ("paused", "Engine ◐ paused", "Start the embedded engine"),
        ("other-engine", "Engine ◎ another engine dispatches", "engine pid 42 on vm, seen 3 s ago"),
        ("error", "Engine ⚠ error", "last error: the ledger is locked"),
    ],
    ids=["running", "paused", "other_engine", "error"],
)
def test_engine_states_in_words(window: MainWindow, state: str, words: str, tip: str) -> None:
    class Engine:
        next_due = None
        next_due_schedule = None
        last_error = "the ledger is locked"

        def describe_other(self) -> str | None:
            return "engine pid 42 on vm, seen 3 s ago" if state == "other-engine" else None

    Engine.state = state
    window.hub.engine = Engine()
    try:
        window._update_engine()
        assert window.engine_status.text() == words
        assert window.engine_label.text().startswith(words)
        assert tip in window.acts.engine_toggle.toolTip() and tip in window.engine_label.toolTip()
        assert window.acts.engine_toggle.text() == ("Pause &Engine" if state == "running" else "Start &Engine")
    finally:
        window.hub.engine = None


def test_designer_layout_carries_over_to_the_next_file_and_the_next_start(
    window: MainWindow, ctx: AppContext, qtbot
) -> None:
    window.designer.show_tab("timeline")
    window.designer.task_section.set_open(True)
    assert window.open_path(ctx.workspace / "mel-sync.yaml")
    assert window.designer.current_tab() == "timeline" and window.designer.task_section.is_open
    assert not window.designer.recovery_section.is_open
    window.designer.recovery_section.set_open(True)
    window.save_settings()
    second = MainWindow(ctx)
    qtbot.addWidget(second)
    second.open_initial()
    assert second.document.path.name == "mel-sync.yaml"  # the last file open
    assert second.designer.current_tab() == "timeline"
    assert second.designer.task_section.is_open and second.designer.recovery_section.is_open
    second.designer.shutdown()


def test_folded_sections_are_built_when_first_opened(window: MainWindow) -> None:
    task = window.designer.task_section
    assert not task.built
    editor = window.designer.task_editor  # asking for it builds it, still folded
    assert task.built and editor.isHidden() and not task.is_open
    task.set_open(True)
    assert not editor.isHidden() and type(editor).__name__ == "TaskEditor"
    assert type(window.designer.recovery).__name__ == "RecoveryPanel"


def test_a_file_that_needs_trust_opens_with_its_task_showing(window: MainWindow, tmp_path: Path) -> None:
    foreign = tmp_path / "foreign.yaml"
    demo = (window.ctx.workspace / "mel-sync.yaml").read_text(encoding="utf-8")
    foreign.write_text(demo.replace("revision: 1", "revision: 7"), encoding="utf-8")  # not the demo's bytes
    assert not window.designer.task_section.is_open
    assert window.open_path(foreign)
    assert window.designer.task_section.is_open
    prompt = window.designer.task_editor.trust_prompt
    assert prompt.isVisibleTo(window.designer)  # the banner with what it runs and the trust button
    assert window.open_path(window.ctx.workspace / "mel-sync.yaml")  # a trusted demo: left as it was
    assert window.designer.task_section.is_open
    window.designer.task_section.set_open(False)
    assert window.open_path(window.ctx.workspace / "mel-sync.yaml", ask=False)
    assert not window.designer.task_section.is_open


def test_about_names_the_version_the_zone_data_and_the_ledger(window: MainWindow, monkeypatch) -> None:
    shown: list[str] = []
    monkeypatch.setattr(QMessageBox, "about", lambda _parent, _title, text: shown.append(text))
    window.about()
    assert shown and shown[0].startswith(f"Tidemark {version()}\n")
    assert f"tzdata {tzdb_version()}" in shown[0] and "Ledger: " in shown[0]
