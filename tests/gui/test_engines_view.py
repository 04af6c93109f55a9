"""The Engines view of the monitor, as a person uses it: reached from the sidebar
and with Ctrl+6, it shows every engine announced on the ledger with its labels,
OS user, version and last seen (live or stale), what it runs now and what it
refuses, with the reason; a long list scrolls."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from a11y_support import a11y_problems
from gui_support import NOW
from monitor_support import interval_spec
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QListView, QTableView
from shell_fixtures import window_fixture  # noqa: F401
from sqlalchemy import update
from typing_support import named

from core.clock import FixedClock
from core.engine.presence import announce
from core.engine.processes import ProcessIdentity
from core.ledger.materialize import materialize
from core.ledger.models import Occurrence
from core.ledger.publish import publish
from core.ledger.states import EngineKind, OccurrenceState
from core.spec.validation import parse_spec
from core.team.actor import Actor, os_user
from core.team.placement import Placement
from scheduler_gui import version
from scheduler_gui.context import AppContext
from scheduler_gui.main_window import MainWindow
from scheduler_gui.monitor.engines_model import COLUMNS, EnginesModel
from scheduler_gui.monitor.engines_view import EnginesView

ME = os_user()
ALPHA = ProcessIdentity("alpha", 4100, None, None)
BETA = ProcessIdentity("beta", 4200, None, None)
GAMMA = ProcessIdentity("gamma", 4300, None, None)
UNTRUSTED = "published by bob, whom this engine does not trust (schedctl engine run --trust)"


def engine(ctx: AppContext, process: ProcessIdentity, kind: EngineKind = EngineKind.HEADLESS, **kw: object) -> str:
    """Announce an engine of ``process`` run by this OS user on the host of the same name."""
    placement = Placement.of(Actor(ME, process.host), **kw)  # type: ignore[arg-type]
    return announce(ctx.ledger, ctx.clock, kind, process=process, placement=placement)


def team_ledger(ctx: AppContext) -> dict[str, str]:
    """``backup`` published by bob from alpha; gamma went quiet five minutes ago; alpha (gpu=yes) and beta
    (trusting anyone) are live. Alpha runs backup's first occurrence now."""
    clock = ctx.clock
    assert isinstance(clock, FixedClock)
    with ctx.ledger.write() as session:
        publish(
            session, parse_spec(interval_spec("backup", {"argv": ["/bin/true"]})), clock, actor=Actor("bob", "alpha")
        )
        materialize(session, "backup", clock)
    ids = {"gamma": engine(ctx, GAMMA)}
    clock.set(NOW + timedelta(minutes=5))
    ids["alpha"] = engine(ctx, ALPHA, labels={"gpu": "yes"})
    ids["beta"] = engine(ctx, BETA, EngineKind.APP, trusts=("*",))
    with ctx.ledger.write() as session:
        session.execute(
            update(Occurrence)
            .where(Occurrence.schedule_id == "backup", Occurrence.nominal_local == "2027-03-01T07:05:00")
            .values(state=OccurrenceState.RUNNING, lease_owner="alpha:4100:5e5e5e5e")
        )
    return ids


def cells(model: EnginesModel, engine: int) -> dict[str, str]:
    """The engine's row by column, and the line beneath it as ``Beneath``."""
    row = {name: str(model.index(2 * engine, c).data()) for c, name in enumerate(COLUMNS)}
    return {**row, "Beneath": str(model.index(2 * engine + 1, 0).data())}


def rows_by_host(model: EnginesModel) -> dict[str, dict[str, str]]:
    return {cells(model, e)["Engine"].split(" · ")[0]: cells(model, e) for e in range(model.engine_count)}


@pytest.fixture
def opened(window: MainWindow, ctx: AppContext, qtbot) -> MainWindow:
    """The window on the team ledger, shown and active, its ledger open (its own engine not started)."""
    team_ledger(ctx)
    window.resize(1280, 800)
    window.show()
    qtbot.waitExposed(window)
    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window)
    window.start_monitor()
    qtbot.waitUntil(lambda: window.hub.state == "open", timeout=30_000)
    return window


def test_the_sidebar_opens_the_engines_view_with_each_engine(opened: MainWindow, qtbot, tmp_path: Path) -> None:
    window = opened
    monitor = named(window, "Monitor views")
    assert isinstance(monitor, QListView)
    model = monitor.model()
    row = next(r for r in range(model.rowCount()) if model.index(r, 0).data() == "Engines")
    qtbot.mouseClick(
        monitor.viewport(), Qt.MouseButton.LeftButton, pos=monitor.visualRect(model.index(row, 0)).center()
    )
    assert window.current_view() == "engines" and window.acts.view_engines.isChecked()
    table = named(window, "Engines")
    assert isinstance(table, QTableView)
    engines = table.model()
    assert isinstance(engines, EnginesModel)
    qtbot.waitUntil(lambda: engines.engine_count == 3, timeout=20_000)
    rows = rows_by_host(engines)
    assert sorted(list(rows)[:2]) == ["alpha", "beta"] and list(rows)[2] == "gamma", "live ones first"
    alpha, beta, gamma = rows["alpha"], rows["beta"], rows["gamma"]
    assert alpha["Engine"] == "alpha · schedctl" and beta["Engine"] == "beta · window"
    assert alpha["Labels"] == f"gpu=yes, host=alpha, user={ME}"
    assert beta["Labels"] == f"host=beta, user={ME}"
    assert alpha["OS user"] == beta["OS user"] == ME
    assert alpha["Version"] == version()
    assert (alpha["Status"], alpha["Last seen"]) == ("● live", "0 s ago")
    assert alpha["Trusts"] == ME and beta["Trusts"] == "anyone (*)"
    # Beneath each engine, across the table: what it runs now and what it refuses, with the reason.
    assert alpha["Beneath"] == f"Runs now: ▶ backup 2027-03-01 07:05\nRefuses backup: {UNTRUSTED}"
    assert beta["Beneath"] == "Runs nothing now\nRefuses backup: runs on an engine with host=alpha"
    assert table.columnSpan(1, 0) == len(COLUMNS)
    # The stale one is marked, in words, with how long it has been silent.
    assert (gamma["Status"], gamma["Last seen"]) == ("○ stale", "5 min ago")
    stale = engines.index(4, 1)
    assert "stopped beating" in stale.data(Qt.ItemDataRole.ToolTipRole)
    assert stale.data(Qt.ItemDataRole.AccessibleTextRole) == "Status: ○ stale"
    # Every line is shown: the line beneath an engine grows to its lines.
    assert table.rowHeight(1) >= 2 * table.fontMetrics().height()
    assert not a11y_problems(window.page("engines"))
    image = tmp_path / "engines.png"
    assert window.page("engines").grab().save(str(image))
    assert image.stat().st_size > 0


def test_ctrl_6_shows_the_engines_and_f5_reads_them_again(opened: MainWindow, ctx: AppContext, qtbot) -> None:
    window = opened
    QTest.keyClick(window, Qt.Key.Key_6, Qt.KeyboardModifier.ControlModifier)
    assert window.current_view() == "engines"
    view = window.page("engines")
    assert isinstance(view, EnginesView)
    qtbot.waitUntil(lambda: view.model.engine_count == 3, timeout=20_000)
    clock = ctx.clock
    assert isinstance(clock, FixedClock)
    clock.set(NOW + timedelta(minutes=7))
    engine(ctx, ProcessIdentity("delta", 4400, None, None), labels={"site": "lab"})
    with qtbot.waitSignal(view.model.loaded, timeout=20_000):
        QTest.keyClick(window, Qt.Key.Key_F5)
    rows = rows_by_host(view.model)
    hosts = list(rows)
    assert (hosts[0], hosts[-1]) == ("delta", "gamma"), "live ones first, then the freshest"
    assert rows["delta"]["Labels"] == f"site=lab, host=delta, user={ME}"
    assert rows["alpha"]["Status"] == "○ stale" and rows["alpha"]["Last seen"] == "2 min ago"


def test_a_long_list_of_engines_scrolls(ctx: AppContext, qtbot) -> None:
    for n in range(40):
        engine(ctx, ProcessIdentity(f"host-{n:02d}", 5000 + n, None, None))
    view = EnginesView(ctx)
    qtbot.addWidget(view)
    view.resize(1100, 400)
    view.show()
    qtbot.waitUntil(lambda: view.model.engine_count == 40, timeout=20_000)
    bar = view.table.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.maximum() > 0, timeout=5_000)
    first = view.table.visualRect(view.model.index(0, 0)).center()
    qtbot.mouseClick(view.table.viewport(), Qt.MouseButton.LeftButton, pos=first)
    QTest.keyClick(view.table, Qt.Key.Key_End, Qt.KeyboardModifier.ControlModifier)
    assert view.table.currentIndex().row() == 79
    qtbot.waitUntil(lambda: bar.value() > 0, timeout=5_000)
    last = view.table.visualRect(view.model.index(79, 0))
    assert 0 <= last.center().y() < view.table.viewport().height(), "the last engine scrolled into sight"


def test_the_model_keeps_qt_rules(ctx: AppContext, qtbot, qtmodeltester) -> None:
    team_ledger(ctx)
    model = EnginesModel(ctx)
    with qtbot.waitSignal(model.loaded, timeout=20_000):
        model.reload()
    qtmodeltester.check(model)
    assert model.rowCount() == 6 and model.columnCount() == len(COLUMNS)
    with qtbot.waitSignal(model.loaded, timeout=20_000):
        model.reload()  # the same engines: their rows change in place
    qtmodeltester.check(model)


def test_an_empty_ledger_says_how_to_get_an_engine(ctx: AppContext, qtbot) -> None:
    view = EnginesView(ctx)
    qtbot.addWidget(view)
    view.show()
    qtbot.waitUntil(lambda: view.empty_label.isVisible(), timeout=20_000)
    assert "schedctl engine run" in view.empty_label.text()
    assert not view.table.isVisible()


@pytest.mark.parametrize(
    ("kind", "shown", "beneath"),
    [
        pytest.param(
            EngineKind.APP,
            ["delta · window"],
            "Took over from an earlier engine of this window (the last stopped beating at 2027-03-01 12:00:00Z)",
            id="a_window_that_crashed_and_came_back_is_one_engine",
        ),
        pytest.param(EngineKind.HEADLESS, ["delta · schedctl", "delta · schedctl"], None, id="two_services_stay_two"),
    ],
)
def test_a_window_that_crashed_shows_its_engine_once(
    ctx: AppContext, qtbot, kind: EngineKind, shown: list[str], beneath: str | None
) -> None:
    """A window killed at noon and opened again five minutes later: its first engine stopped beating
    without retiring, and its second one is live on the same host for the same person."""
    clock = ctx.clock
    assert isinstance(clock, FixedClock)
    engine(ctx, ProcessIdentity("delta", 4400, None, None), kind)
    clock.set(NOW + timedelta(minutes=5))
    engine(ctx, ProcessIdentity("delta", 4401, None, None), kind)
    model = EnginesModel(ctx)
    with qtbot.waitSignal(model.loaded, timeout=20_000):
        model.reload()
    assert [cells(model, e)["Engine"] for e in range(model.engine_count)] == shown
    assert cells(model, 0)["Status"] == "● live"
    lines = cells(model, 0)["Beneath"].split("\n")
    assert (lines[-1] if beneath else None) == beneath
