"""The health charts over the demo ledger (the real engine over a simulated day
with a failing task, a hanging one and an outage), and over an empty ledger."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from core.clock import FixedClock
from core.ledger.queries import list_schedules
from core.ledger.states import OccurrenceState as S
from scheduler_gui.context import AppContext
from scheduler_gui.monitor.demo_ledger import demo_specs, populate_demo_ledger
from scheduler_gui.monitor.health import HealthView


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
