"""The occurrences view on a live ledger: an occurrence goes DUE, RUNNING and
SUCCEEDED under an engine on the fixed clock, and the table follows; the filter
bar narrows; every control can be reached and named."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from gui_support import NOW
from monitor_support import FAILING_TASK, NO_RETRY, engine, ids_in, interval_spec, put, run_at
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QComboBox, QLineEdit, QTableView

from core.engine.admin import run_now
from core.ledger.publish import pause, resume
from core.ledger.states import OccurrenceKind
from core.ledger.states import OccurrenceState as S
from scheduler_gui.context import AppContext
from scheduler_gui.monitor.ledger_watch import LedgerWatcher
from scheduler_gui.monitor.occurrences_model import NowEdgeRole, OccurrenceIdRole
from scheduler_gui.monitor.occurrences_view import OccurrencesView


def _show_only(qtbot, view: OccurrencesView, text: str) -> None:
    view.text_edit.setText(text)
    with qtbot.waitSignal(view.model.loaded, timeout=20_000):
        view.apply_filter()


def _state_of_first_row(qtbot, view: OccurrencesView) -> str:
    qtbot.waitUntil(lambda: view.model.row_at(0) is not None, timeout=20_000)
    return str(view.model.index(0, 0).data())


def test_the_table_follows_due_running_succeeded(qtbot, ctx: AppContext, tmp_path: Path) -> None:
    gate = tmp_path / "go"
    script = f"while [ ! -e {gate} ]; do sleep 0.02; done; echo finished"
    put(ctx, interval_spec("report", {"argv": ["/bin/sh", "-c", script], "timeout": "PT60S"}))
    with ctx.ledger.write() as session:
        pause(session, "report", ctx.clock, "not yet")
    watcher = LedgerWatcher(ctx, interval_ms=3_600_000)
    watcher.poll_now()
    view = OccurrencesView(ctx, watcher)
    qtbot.addWidget(view)
    eng = run_at(ctx, 5.5)  # paused: promoted to DUE, not claimed
    (occ_id,) = ids_in(ctx, "report", S.DUE)
    _show_only(qtbot, view, occ_id)
    assert view.model.rowCount() == 1
    assert _state_of_first_row(qtbot, view) == "◔ due"

    with ctx.ledger.write() as session:
        resume(session, "report", ctx.clock, "go")
    run_at(ctx, 6, eng, wait=False)
    qtbot.waitUntil(lambda: ids_in(ctx, "report", S.RUNNING) == [occ_id], timeout=20_000)
    with qtbot.waitSignal(view.model.refreshed, timeout=20_000):
        watcher.poll_now()
    assert _state_of_first_row(qtbot, view) == "▶ running"
    assert view.model.index(0, 5).data() == "▶ running"

    gate.touch()
    assert eng.wait_idle(30)
    with qtbot.waitSignal(view.model.refreshed, timeout=20_000):
        watcher.poll_now()
    assert _state_of_first_row(qtbot, view) == "✔ succeeded"
    assert view.model.index(0, 5).data() == "✔ exit 0"
    assert view.model.index(0, 4).data() == "1"
    watcher.stop()


def test_filter_bar_and_selection(qtbot, ctx: AppContext) -> None:
    put(ctx, interval_spec("backup", FAILING_TASK, retry=NO_RETRY))
    run_at(ctx, 5.5)
    view = OccurrencesView(ctx)
    qtbot.addWidget(view)
    qtbot.waitUntil(lambda: view.model.ready, timeout=20_000)
    everything = view.model.rowCount()
    # hourly from 12:05 to the horizon (a day after 12:05:30) and the chunk materialized beyond it
    assert everything == 49
    assert view.count_label.text() == "49 occurrences · 48 after now"  # 12:05 ran; 13:05 on are planned
    with qtbot.waitSignal(view.model.loaded, timeout=20_000):
        view.state_box.setCurrentIndex(view.state_box.findText("Needs attention"))
    assert view.model.rowCount() == 1
    (failed,) = ids_in(ctx, "backup", S.FAILED)
    with qtbot.waitSignal(view.occurrenceSelected, timeout=20_000) as chosen:
        view.table.selectRow(0)
    assert chosen.args == [failed]
    with qtbot.waitSignal(view.model.loaded, timeout=20_000):
        view.time_box.setCurrentIndex(view.time_box.findText("Next 24 hours"))
    assert view.model.rowCount() == 0 and view.empty_label.isVisibleTo(view)
    assert view.current_filter().position_from == ctx.clock.now()
    with qtbot.waitSignal(view.model.loaded, timeout=20_000):
        view.state_box.setCurrentIndex(0)
    assert view.model.rowCount() == 24  # 13:05 to the horizon
    with qtbot.waitSignal(view.model.loaded, timeout=20_000):
        view.time_field_box.setCurrentIndex(view.time_field_box.findData("due"))
    where = view.current_filter()
    assert (where.position_from, where.due_from, where.due_to) == (
        None,
        ctx.clock.now(),
        ctx.clock.now() + timedelta(hours=24),
    )
    assert view.model.rowCount() == 24


def test_focus_filter_and_names(qtbot, ctx: AppContext) -> None:
    view = OccurrencesView(ctx)
    qtbot.addWidget(view)
    view.show()
    qtbot.waitExposed(view)
    view.activateWindow()
    view.focus_filter()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is view.text_edit, timeout=5_000)
    controls = [w for kind in (QComboBox, QLineEdit, QTableView) for w in view.findChildren(kind)]
    assert len(controls) >= 6
    for widget in controls:
        assert widget.accessibleName(), widget
        assert widget.toolTip(), widget
    qtbot.waitUntil(lambda: view.model.ready, timeout=20_000)
    assert view.empty_label.isVisible()


def test_the_view_renders(qtbot, ctx: AppContext, tmp_path: Path) -> None:
    put(ctx, interval_spec("backup", FAILING_TASK, retry=NO_RETRY))
    eng = engine(ctx)
    for minutes in (5.5, 65.5, 125.5):
        run_at(ctx, minutes, eng)
    view = OccurrencesView(ctx)
    qtbot.addWidget(view)
    view.resize(1100, 500)
    view.show()
    qtbot.waitUntil(lambda: view.model.row_at(0, fetch=False) is not None, timeout=20_000)
    shot = tmp_path / "occurrences.png"
    assert view.grab().save(str(shot))
    assert shot.stat().st_size > 0
    assert view.model.index(0, 2).data().endswith("EST −05:00")


def _year_long_outage(ctx: AppContext) -> None:
    """An hourly heartbeat published a year before the fixture's NOW, under misfirePolicy SKIP."""
    from core.clock import FixedClock
    from core.ledger.publish import publish
    from core.spec.validation import parse_spec

    heartbeat = {
        **interval_spec("heartbeat", {"argv": ["/bin/true"], "effect": "idempotent"}),
        "timeZone": "UTC",
        "anchor": "2026-03-01T00:00:00Z",
        "misfirePolicy": "SKIP",
        "horizon": "PT3H",
    }
    with ctx.ledger.write() as session:
        publish(session, parse_spec(heartbeat), FixedClock(NOW - timedelta(days=365, hours=12)))


def test_expired_ranges_show_under_the_table_and_follow_the_filter(qtbot, ctx: AppContext) -> None:
    _year_long_outage(ctx)
    watcher = LedgerWatcher(ctx, interval_ms=3_600_000)
    watcher.poll_now()
    view = OccurrencesView(ctx, watcher)
    qtbot.addWidget(view)
    qtbot.waitUntil(lambda: view.model.ready, timeout=20_000)
    assert not view.ranges_label.isVisibleTo(view)
    run_at(ctx, 0.5)  # the engine comes back a year later: one range, recorded in one event
    with qtbot.waitSignal(view.model.refreshed, timeout=20_000):
        watcher.poll_now()  # occurrences.expired is a live event
    assert view.ranges_label.isVisibleTo(view)
    assert view.ranges_label.text() == (
        "⊘ 8,772 occurrences of heartbeat expired by misfirePolicy SKIP, 2026-03-01 00:00 … 2027-03-01 11:45 UTC"
    )
    assert "recorded as one range" in view.ranges_label.toolTip()
    with qtbot.waitSignal(view.model.loaded, timeout=20_000):
        view.state_box.setCurrentIndex(view.state_box.findText("Needs attention"))
    assert not view.ranges_label.isVisibleTo(view)
    with qtbot.waitSignal(view.model.loaded, timeout=20_000):
        view.state_box.setCurrentIndex(view.state_box.findText("Not run (skipped, expired, cancelled)"))
    assert view.ranges_label.isVisibleTo(view)
    _show_only(qtbot, view, "nothing like it")
    assert not view.ranges_label.isVisibleTo(view)
    _show_only(qtbot, view, "HEARTBEAT")
    assert view.ranges_label.isVisibleTo(view)
    with qtbot.waitSignal(view.model.loaded, timeout=20_000):
        view.time_box.setCurrentIndex(view.time_box.findText("Next 24 hours"))
    assert not view.ranges_label.isVisibleTo(view)
    watcher.stop()


def _visible_rows(view: OccurrencesView) -> range:
    """The rows a person sees without scrolling."""
    table = view.table
    first = table.rowAt(0)
    last = table.rowAt(table.viewport().height() - 1)
    return range(first, (last if last >= 0 else view.model.rowCount() - 1) + 1)


@pytest.fixture
def six_runs(ctx: AppContext) -> AppContext:
    """An hourly backup that failed every hour from 12:05 to 17:05; now is 17:05:30 and a day of runs is planned."""
    put(ctx, interval_spec("backup", FAILING_TASK, retry=NO_RETRY))
    eng = engine(ctx)
    for hour in range(6):
        run_at(ctx, 60 * hour + 5.5, eng)
    return ctx


def _shown(qtbot, ctx: AppContext) -> OccurrencesView:
    view = OccurrencesView(ctx)
    qtbot.addWidget(view)
    view.resize(1100, 300)
    view.show()
    qtbot.waitExposed(view)
    qtbot.waitUntil(lambda: view.model.ready, timeout=20_000)
    return view


def test_the_table_opens_at_now_with_the_next_due_and_the_latest_runs(qtbot, six_runs: AppContext) -> None:
    view = _shown(qtbot, six_runs)
    model = view.model
    assert (model.rowCount(), model.now_row) == (49, 43)  # newest first: 43 planned rows lie after now
    seen = _visible_rows(view)
    assert len(seen) <= 9  # a short window: the opening is not just the end of the table
    assert seen.start == 40  # three upcoming rows above the line at now, not the furthest planned one
    qtbot.waitUntil(lambda: all(model.row_at(r, fetch=False) is not None for r in seen), timeout=20_000)
    local = [model.index(r, 2).data() for r in seen]
    states = [model.index(r, 0).data() for r in seen]
    assert local[:6] == [
        "Mon 2027-03-01 15:05 EST −05:00",  # 20:05Z
        "Mon 2027-03-01 14:05 EST −05:00",
        "Mon 2027-03-01 13:05 EST −05:00",  # the next due
        "Mon 2027-03-01 12:05 EST −05:00",  # the latest run: 17:05Z
        "Mon 2027-03-01 11:05 EST −05:00",
        "Mon 2027-03-01 10:05 EST −05:00",
    ]
    assert states[:6] == ["○ planned"] * 3 + ["✖ failed"] * 3
    # A line marks now: on top of the latest run.
    assert [r for r in seen if model.index(r, 1).data(NowEdgeRole)] == [43]
    assert model.index(43, 1).data(NowEdgeRole) == "top"
    assert view.count_label.text() == "49 occurrences · 43 after now"
    # Scrolled away, Now brings the same rows back.
    view.table.scrollToTop()
    assert _visible_rows(view).start == 0
    qtbot.mouseClick(view.now_button, Qt.MouseButton.LeftButton)
    assert _visible_rows(view).start == 40
    assert view.grab().save(str(six_runs.workspace / "occurrences-at-now.png"))


def test_oldest_first_opens_at_now_too(qtbot, six_runs: AppContext) -> None:
    view = _shown(qtbot, six_runs)
    with qtbot.waitSignal(view.model.loaded, timeout=20_000):
        view.order_box.setCurrentIndex(view.order_box.findText("Oldest first"))
    model = view.model
    assert model.now_row == 6  # the six runs, then the planned ones
    assert _visible_rows(view).start == 3  # the latest three runs above the line, the next due under it
    qtbot.waitUntil(lambda: model.row_at(6, fetch=False) is not None, timeout=20_000)
    assert [model.index(r, 0).data() for r in (5, 6)] == ["✖ failed", "○ planned"]
    assert model.index(6, 0).data(NowEdgeRole) == "top"


def test_manual_runs_are_findable(qtbot, six_runs: AppContext) -> None:
    manual = run_now(six_runs.ledger, "backup", six_runs.clock, "by hand")
    view = _shown(qtbot, six_runs)
    model = view.model
    seen = _visible_rows(view)
    qtbot.waitUntil(lambda: all(model.row_at(r, fetch=False) is not None for r in seen), timeout=20_000)
    # Among the rows the table opens on, just under the line at now, and named as such.
    row = next(r for r in seen if model.index(r, 0).data(OccurrenceIdRole) == manual)
    assert row == model.now_row
    assert model.index(row, 1).data() == "backup · manual"
    assert "a person asked for this run (Run Now)" in model.index(row, 1).data(Qt.ItemDataRole.ToolTipRole)
    # And the filter bar lists manual runs alone.
    view.kind_box.setFocus()
    with qtbot.waitSignal(model.loaded, timeout=20_000):
        QTest.keyClicks(view.kind_box, "Manual")
    assert view.kind_box.currentText() == "Manual runs (Run Now)"
    assert view.current_filter().kind is OccurrenceKind.MANUAL
    assert model.rowCount() == 1
    qtbot.waitUntil(lambda: model.row_at(0, fetch=False) is not None, timeout=20_000)
    assert model.index(0, 0).data(OccurrenceIdRole) == manual
