"""The monitor's Qt models: pytest-qt's model tester on each, and the
occurrences model paging a 20,000-row ledger at its start, middle and end,
filtering, evicting pages and following new rows live."""

from __future__ import annotations

import pytest
from gui_support import NOW
from monitor_support import FAILING_TASK, NO_RETRY, interval_spec, put, run_at
from PySide6.QtCore import Qt

from core.engine.admin import run_now
from core.ledger.materialize import materialize
from core.ledger.occurrence_pages import Order
from core.ledger.queries import OccurrenceFilter, ScheduleSummary, list_occurrences
from core.ledger.states import OccurrenceState as S
from core.ledger.states import ScheduleState
from core.team.actor import Actor, os_user
from scheduler_gui.context import AppContext
from scheduler_gui.monitor.ledger_watch import LedgerWatcher
from scheduler_gui.monitor.occurrences_model import OccurrenceIdRole, OccurrencesModel
from scheduler_gui.monitor.schedules_model import MarksRole, SchedulesModel, counts_text

ROWS = 20_160  # every minute for 14 days


@pytest.fixture
def big(ctx: AppContext) -> AppContext:
    """A ledger holding 20,160 occurrences of a once-a-minute schedule."""
    put(ctx, interval_spec("minutely", {"argv": ["/bin/true"]}, every="PT1M", horizon="P14D"))
    with ctx.ledger.write() as session:
        while materialize(session, "minutely", ctx.clock, max_rows=50_000).more:
            pass
    return ctx


def _all_ids(ctx: AppContext, where: OccurrenceFilter | None = None) -> list[str]:
    with ctx.ledger.read() as session:
        rows = list_occurrences(session, where, limit=100_000).rows
    return [r.occurrence_id for r in rows][::-1]  # newest first


def _loaded(qtbot, model: OccurrencesModel) -> None:
    with qtbot.waitSignal(model.loaded, timeout=20_000):
        model.reload()


def _row_id(qtbot, model: OccurrencesModel, row: int) -> str:
    if model.row_at(row) is None:
        qtbot.waitUntil(lambda: model.row_at(row, fetch=False) is not None, timeout=20_000)
    found = model.row_at(row)
    assert found is not None
    return found.occurrence.occurrence_id


def test_pages_at_start_middle_and_end(qtbot, big: AppContext) -> None:
    expected = _all_ids(big)
    assert len(expected) == ROWS
    model = OccurrencesModel(big)
    _loaded(qtbot, model)
    assert model.rowCount() == ROWS
    # Never everything: the page around now only. Every row but 12:00's is after now, so now
    # falls just above the last row, and the page holding the three rows above it is read.
    assert model.now_row == ROWS - 1 and expected[ROWS - 1].startswith("occ-")
    assert model.cached_pages() == [(ROWS - 1 - 3) // 100]
    for row in (0, 99, 100, ROWS // 2, ROWS // 2 + 1, ROWS - 101, ROWS - 1):
        assert _row_id(qtbot, model, row) == expected[row], row
    assert model.index(ROWS - 1, 0).data(OccurrenceIdRole) == expected[-1]
    assert len(model.cached_pages()) <= 6


def test_unloaded_rows_say_so_and_ask_for_their_page(qtbot, big: AppContext) -> None:
    model = OccurrencesModel(big)
    _loaded(qtbot, model)
    index = model.index(15_000, 0)
    assert index.data() == "…"
    with qtbot.waitSignal(model.pageLoaded, timeout=20_000) as arrived:
        pass
    assert arrived.args == [150]
    assert index.data().endswith("planned")


def test_oldest_first_and_filters(qtbot, big: AppContext) -> None:
    model = OccurrencesModel(big)
    with qtbot.waitSignal(model.loaded, timeout=20_000):
        model.set_order(Order.OLDEST_FIRST)
    expected = _all_ids(big)[::-1]
    assert [_row_id(qtbot, model, r) for r in (0, ROWS - 1)] == [expected[0], expected[-1]]
    wanted = expected[12_345]
    with qtbot.waitSignal(model.loaded, timeout=20_000):
        model.set_filter(OccurrenceFilter(text=wanted[-10:].upper()))
    assert model.rowCount() == 1 and _row_id(qtbot, model, 0) == wanted
    with qtbot.waitSignal(model.loaded, timeout=20_000):
        model.set_filter(OccurrenceFilter(states=frozenset({S.FAILED})))
    assert model.rowCount() == 0


def test_pages_are_evicted(qtbot, big: AppContext) -> None:
    model = OccurrencesModel(big, page_size=50, max_pages=3)
    _loaded(qtbot, model)
    for row in (1_000, 5_000, 9_000, 13_000, 17_000):
        _row_id(qtbot, model, row)
    assert len(model.cached_pages()) == 3
    assert model.cached_pages() == [180, 260, 340]


def test_occurrences_model_passes_the_model_tester(qtbot, qtmodeltester, big: AppContext) -> None:
    model = OccurrencesModel(big, page_size=500)
    _loaded(qtbot, model)
    qtmodeltester.check(model)
    model.wait()


def test_new_rows_are_followed_without_a_reset(qtbot, ctx: AppContext) -> None:
    put(ctx, interval_spec("backup", FAILING_TASK, retry=NO_RETRY))
    watcher = LedgerWatcher(ctx, interval_ms=3_600_000)
    watcher.poll_now()
    model = OccurrencesModel(ctx)
    model.follow(watcher)
    run_at(ctx, 5.5)  # materializes a day and runs 12:05
    watcher.poll_now()
    with qtbot.waitSignal(model.loaded, timeout=20_000):
        model.reload()
    before = model.rowCount()
    resets, inserted = [], []
    model.modelReset.connect(lambda: resets.append(1))
    model.rowsInserted.connect(lambda _p, first, last: inserted.append((first, last)))
    new_id = run_now(ctx.ledger, "backup", ctx.clock, "by hand")
    with qtbot.waitSignal(model.refreshed, timeout=20_000):
        watcher.poll_now()
    assert model.rowCount() == before + 1
    assert resets == [] and len(inserted) == 1
    ids = [_row_id(qtbot, model, r) for r in range(model.rowCount())]
    assert new_id in ids
    watcher.stop()


def test_schedules_model(qtbot, qtmodeltester, ctx: AppContext) -> None:
    put(ctx, interval_spec("backup", FAILING_TASK, retry=NO_RETRY))
    put(ctx, interval_spec("fine", {"argv": ["/bin/true"]}))
    run_at(ctx, 5.5)
    run_at(ctx, 65.5)
    model = SchedulesModel(ctx)
    with qtbot.waitSignal(model.loaded, timeout=20_000):
        model.reload()
    qtmodeltester.check(model)
    assert model.rowCount() == 2
    backup, fine = (model.row_at(0), model.row_at(1))
    assert backup is not None and fine is not None
    assert model.index(0, 4).data() == "✖ failed"
    assert model.index(1, 4).data() == "✔ succeeded"
    assert model.index(0, 6).data(MarksRole) == ["FAILED", "FAILED"]
    assert model.index(0, 5).data().startswith("✖ 2")
    assert "EST" in model.index(0, 2).data() and model.index(0, 3).data() == "2027-03-01 14:05Z"
    model.wait()


def test_schedules_view_draws_sparklines_and_selects(qtbot, ctx: AppContext, tmp_path) -> None:
    from PySide6.QtGui import QColor

    from scheduler_gui.monitor.schedules_view import SchedulesView
    from scheduler_gui.status_style import VERMILLION

    put(ctx, interval_spec("backup", FAILING_TASK, retry=NO_RETRY))
    run_at(ctx, 5.5)
    view = SchedulesView(ctx)
    qtbot.addWidget(view)
    view.resize(1300, 200)
    view.show()
    qtbot.waitUntil(lambda: view.model.rowCount() == 1, timeout=20_000)
    image = view.grab().toImage()
    assert view.grab().save(str(tmp_path / "schedules.png"))
    rect = view.table.visualRect(view.model.index(0, 6))
    cell = rect.translated(view.table.viewport().mapTo(view, rect.topLeft()) - rect.topLeft())
    colours = {
        image.pixelColor(x, y).name()
        for x in range(cell.left(), cell.left() + 30)
        for y in range(cell.top(), cell.bottom())
    }
    assert QColor(VERMILLION).name().lower() in colours  # the failed run's mark
    with qtbot.waitSignal(view.scheduleSelected, timeout=5_000) as chosen:
        view.table.selectRow(0)
    assert chosen.args == ["backup"]
    assert view.table.accessibleName() and view.table.toolTip()


def _summary(counts: dict[S, int], uncounted: int) -> ScheduleSummary:
    return ScheduleSummary(
        "heartbeat", None, "UTC", "interval", ScheduleState.ACTIVE, 1, 1, None, None, NOW, counts, None, uncounted
    )


@pytest.mark.parametrize(
    ("counts", "uncounted", "text"),
    [
        pytest.param({S.SUCCEEDED: 3}, 0, "✔ 3", id="no_range"),
        pytest.param({S.SUCCEEDED: 3, S.MISFIRE_EXPIRED: 8772}, 0, "✔ 3 · ⊘ 8,772", id="counted_range_in_count"),
        pytest.param({S.SUCCEEDED: 3}, 1, "✔ 3 · ⊘ 0 + a range", id="uncounted_range"),
        pytest.param({S.MISFIRE_EXPIRED: 2}, 2, "⊘ 2 + 2 ranges", id="two_uncounted_ranges"),
        pytest.param({S.SUCCEEDED: 1, S.CANCELLED: 12345}, 0, "✔ 1 · ⊘ 12,345", id="others_with_thousands"),
    ],
)
def test_schedule_counts_say_a_range(counts: dict[S, int], uncounted: int, text: str) -> None:
    assert counts_text(_summary(counts, uncounted)) == text


def test_a_schedule_no_live_engine_runs_says_it_waits(
    qtbot, ctx: AppContext, monkeypatch: pytest.MonkeyPatch, tmp_path
) -> None:
    """Published from alpha, with only an engine on beta live: the State column says it waits, and why."""
    from core.engine.presence import announce
    from core.ledger.states import EngineKind
    from core.team.placement import Placement
    from scheduler_gui.monitor.schedules_view import SchedulesView

    monkeypatch.setenv("TIDEMARK_HOSTNAME", "alpha")
    put(ctx, interval_spec("backup", {"argv": ["/bin/true"]}))
    announce(ctx.ledger, ctx.clock, EngineKind.APP, placement=Placement.of(Actor(os_user(), "beta")))
    model = SchedulesModel(ctx)
    with qtbot.waitSignal(model.loaded, timeout=20_000):
        model.reload()
    line = "waiting for an engine with host=alpha; none seen on this ledger"
    assert model.index(0, 1).data() == "◌ waiting"
    assert model.index(0, 1).data(Qt.ItemDataRole.ToolTipRole) == f"No engine runs it now: {line}"
    assert model.index(0, 1).data(Qt.ItemDataRole.AccessibleTextRole) == f"● active, {line}"
    view = SchedulesView(ctx)
    qtbot.addWidget(view)
    view.resize(1300, 160)
    view.show()
    qtbot.waitUntil(lambda: view.model.rowCount() == 1, timeout=20_000)
    assert view.grab().save(str(tmp_path / "waiting.png"))
    view.model.wait()
    announce(ctx.ledger, ctx.clock, EngineKind.HEADLESS, placement=Placement.of(Actor(os_user(), "alpha")))
    with qtbot.waitSignal(model.loaded, timeout=20_000):
        model.reload()
    assert model.index(0, 1).data() == "● active"
    model.wait()


def test_counts_in_the_window_have_thousands_separators(qtbot) -> None:
    """A busy ledger's counts read as people write them: 12,345, not 12345."""
    from PySide6.QtWidgets import QMainWindow, QToolBar

    from scheduler_gui.monitor.states import HubState
    from scheduler_gui.status_bar import StatusLine
    from scheduler_gui.workspace.sidebar import MonitorListModel

    monitor = MonitorListModel()
    monitor.set_attention(12345)
    attention = next(
        monitor.index(r, 0) for r in range(monitor.rowCount()) if "Attention" in monitor.index(r, 0).data()
    )
    assert attention.data() == "Attention  ⚠ 12,345"
    assert attention.data(Qt.ItemDataRole.ToolTipRole).endswith("(12,345 waiting)")

    class Hub:
        state = HubState.OPEN
        attention = 12345

        def count(self, state: str) -> int:
            return 1234567

    window = QMainWindow()
    qtbot.addWidget(window)
    line = StatusLine(window, QToolBar(window))
    line.show_counts(Hub())  # type: ignore[arg-type]
    assert line.counts_label.text() == "1,234,567 due · 12,345 need attention"
