"""The health charts over the demo ledger (the real engine over a simulated day
with a failing task, a hanging one and an outage), and over an empty ledger."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from gui_support import NOW
from hypothesis import given, settings
from hypothesis import strategies as st
from monitor_support import engine, interval_spec, put, run_at
from PySide6.QtCharts import QAbstractAxis, QCategoryAxis, QValueAxis
from PySide6.QtCore import Qt

from core.clock import FixedClock
from core.ledger.queries import list_schedules
from core.ledger.states import OccurrenceState as S
from scheduler_gui.context import AppContext
from scheduler_gui.monitor.demo_ledger import demo_specs, populate_demo_ledger
from scheduler_gui.monitor.health import (
    DURATION_STEPS,
    MOST_TICKS,
    HealthView,
    count_label,
    count_steps,
    duration_label,
    ticks,
)


def _loaded(qtbot, view: HealthView) -> None:
    with qtbot.waitSignal(view.loaded, timeout=30_000):
        view.reload()


def test_demo_ledger_and_its_health(qtbot, ctx: AppContext, clock: FixedClock, tmp_path: Path) -> None:
    start = clock.now()
    populate_demo_ledger(ctx, days=1)
    assert clock.now() == start + timedelta(days=1)
    with ctx.ledger.read() as session:
        counts = {s.schedule_id: dict(s.counts) for s in list_schedules(session)}
    assert set(counts) == {s.schedule_id for s in demo_specs()}
    assert counts["nightly-backup"].get(S.FAILED, 0) >= 3
    assert counts["inbox-sync"].get(S.UNKNOWN_EFFECT, 0) >= 1
    assert counts["hourly-fallback"].get(S.SUCCEEDED, 0) >= 15
    assert counts["hourly-fallback"].get(S.MISFIRE_EXPIRED, 0) == 4  # the five-hour outage: the newest ran late

    view = HealthView(ctx)
    qtbot.addWidget(view)
    _loaded(qtbot, view)
    h = view.latest
    assert h is not None
    assert (h.end - h.start, len(h.misfires)) == (timedelta(days=3), 72)
    assert sum(h.attempts["FAILED"]) == counts["nightly-backup"][S.FAILED]
    assert sum(h.attempts["UNKNOWN_EFFECT"]) == counts["inbox-sync"][S.UNKNOWN_EFFECT]
    assert sum(h.misfires) == sum(c.get(S.MISFIRE_EXPIRED, 0) for c in counts.values())
    assert h.oldest_unresolved_now is not None and h.oldest_unresolved_now > 0
    assert all(d.seconds < 3600 for d in h.delays)
    assert "waiting for a person, the oldest for" in view.summary.text()
    for chart in (view.delay_chart, view.attempts_chart, view.misfire_chart, view.oldest_chart):
        assert len(chart.series()) == 1
    view.resize(1280, 800)
    assert view.grab().save(str(tmp_path / "health.png"))


@pytest.mark.parametrize("label", ["Last 24 hours", "Last 7 days"])
def test_an_empty_ledger_has_flat_charts(qtbot, ctx: AppContext, label: str) -> None:
    view = HealthView(ctx)
    qtbot.addWidget(view)
    with qtbot.waitSignal(view.loaded, timeout=30_000):
        view.range_box.setCurrentIndex(view.range_box.findText(label))
    h = view.latest
    assert h is not None and dict(h.attempts) == {} and h.delays == ()
    assert set(h.oldest_unresolved) == {None} and h.oldest_unresolved_now is None
    assert "0 attempts" in view.summary.text() and "0 waiting for a person" in view.summary.text()
    assert view.range_box.accessibleName() and view.range_box.toolTip()


@pytest.mark.parametrize(
    ("top", "labels"),
    [
        pytest.param(0.0, ["0", "1 ms"], id="nothing_yet"),
        pytest.param(0.8, ["0", "200 ms", "400 ms", "600 ms", "800 ms"], id="under_a_second"),
        pytest.param(2.2, ["0", "500 ms", "1 s", "1.5 s", "2 s", "2.5 s"], id="two_seconds"),
        pytest.param(4.0, ["0", "1 s", "2 s", "3 s", "4 s"], id="four_seconds"),
        pytest.param(95.0, ["0", "30 s", "1 min", "1 min 30 s", "2 min"], id="a_minute_and_a_half"),
        pytest.param(2700.0, ["0", "10 min", "20 min", "30 min", "40 min", "50 min"], id="a_late_catch_up"),
        pytest.param(5400.0, ["0", "15 min", "30 min", "45 min", "1 h", "1 h 15 min", "1 h 30 min"], id="ninety_min"),
        pytest.param(172800.0, ["0", "12 h", "1 d", "1 d 12 h", "2 d"], id="two_days"),
    ],
)
def test_duration_ticks_follow_the_data_range(top: float, labels: list[str]) -> None:
    assert [duration_label(v) for v in ticks(top, DURATION_STEPS)] == labels


@pytest.mark.parametrize(
    ("top", "labels"),
    [
        pytest.param(0, ["0", "1"], id="empty"),
        pytest.param(3, ["0", "1", "2", "3"], id="three"),
        pytest.param(7, ["0", "2", "4", "6", "8"], id="seven"),
        pytest.param(130, ["0", "50", "100", "150"], id="a_hundred_and_thirty"),
    ],
)
def test_count_ticks_are_whole_numbers(top: float, labels: list[str]) -> None:
    assert [count_label(v) for v in ticks(top, count_steps())] == labels


@settings(max_examples=300, deadline=None)
@given(top=st.floats(min_value=0, max_value=30 * 86400, allow_nan=False))
def test_tick_labels_never_repeat(top: float) -> None:
    """Whatever the data's range: ticks start at 0, cover it in at most six steps, and read apart."""
    for steps, label in ((DURATION_STEPS, duration_label), (count_steps(), count_label)):
        marks = ticks(top, steps)
        texts = [label(v) for v in marks]
        assert marks[0] == 0 and marks[-1] >= top and 2 <= len(marks) <= MOST_TICKS + 1
        assert len(set(texts)) == len(texts), texts


def _labels(axis: QAbstractAxis) -> list[str]:
    """The tick labels an axis draws (a value axis: its ticks through its printf format)."""
    if isinstance(axis, QCategoryAxis):
        return list(axis.categoriesLabels())
    assert isinstance(axis, QValueAxis)
    n = axis.tickCount()
    values = [axis.min() + i * (axis.max() - axis.min()) / (n - 1) for i in range(n)]
    return [axis.labelFormat().replace("%.0f", f"{v:.0f}") for v in values]


def test_the_charts_label_every_tick_apart(qtbot, ctx: AppContext, clock: FixedClock, tmp_path: Path) -> None:
    """Two runs each started a second after they were due: the delay axis reads 0, 200 ms ... 1 s, where it
    used to read "0 s, 0 s, 1 s, 2 s"."""
    put(ctx, interval_spec("quick", {"argv": ["/bin/true"], "effect": "idempotent"}))
    eng = engine(ctx)
    run_at(ctx, 5 + 1 / 60, eng)
    run_at(ctx, 65 + 1 / 60, eng)
    clock.set(NOW + timedelta(minutes=70))
    view = HealthView(ctx)
    qtbot.addWidget(view)
    with qtbot.waitSignal(view.loaded, timeout=30_000):
        view.range_box.setCurrentIndex(view.range_box.findText("Last 24 hours"))
    assert view.latest is not None and sorted(d.seconds for d in view.latest.delays) == [1.0, 1.0]
    (delay_axis,) = view.delay_chart.axes(Qt.Orientation.Vertical)
    assert len(set(_labels(delay_axis))) == len(_labels(delay_axis)), _labels(delay_axis)
    assert _labels(delay_axis) == ["0", "200 ms", "400 ms", "600 ms", "800 ms", "1 s"]
    for chart in (view.attempts_chart, view.misfire_chart, view.oldest_chart):
        (axis,) = chart.axes(Qt.Orientation.Vertical)
        texts = _labels(axis)
        assert len(set(texts)) == len(texts), (chart.title(), texts)
    (count_axis,) = view.attempts_chart.axes(Qt.Orientation.Vertical)
    assert _labels(count_axis) == ["0", "1"]  # one attempt an hour: whole numbers only
    view.resize(1280, 800)
    assert view.grab().save(str(tmp_path / "health-ticks.png"))
