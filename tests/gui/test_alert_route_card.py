"""Needs attention for an alert route that keeps failing: one card per route however many
alerts wait for it, counted once in the badge, and gone when its alerts are delivered."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import update

from core.ledger.models import AlertOutbox
from scheduler_gui.context import AppContext
from scheduler_gui.monitor.attention import AttentionView

ROUTE = "https://hooks.example.com/tm"
AT = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def _alert(occurrence_id: str, attempts: int) -> AlertOutbox:
    return AlertOutbox(
        occurrence_id=occurrence_id,
        schedule_id="backup",
        kind="FAILED",
        route=ROUTE,
        data={"scheduleId": "backup"},
        created_at=AT,
        attempts=attempts,
        next_try_at=AT,
        last_error="HTTP 503 Service Unavailable",
    )


def _loaded(qtbot, view: AttentionView) -> None:
    with qtbot.waitSignal(view.loaded, timeout=20_000):
        view.reload()


def test_a_failing_route_is_one_card_until_its_alerts_get_through(qtbot, ctx: AppContext) -> None:
    with ctx.ledger.write() as session:
        session.add_all([_alert("occ-1", 3), _alert("occ-2", 5), _alert("occ-3", 1)])
    view = AttentionView(ctx)
    qtbot.addWidget(view)
    view.show()
    _loaded(qtbot, view)
    assert list(view.route_cards) == [ROUTE]
    card = view.route_cards[ROUTE]
    assert card.accessibleName() == f"alerts not delivered: {ROUTE}"
    assert card.what.text().startswith(f"{ROUTE}: 2 alerts wait; the last try said: HTTP 503 Service Unavailable.")
    assert card.what.text().endswith(f"schedctl alerts test {ROUTE}")
    assert view.count == 1 and view.heading.text() == "Needs attention (1)"
    with ctx.ledger.write() as session:
        session.execute(update(AlertOutbox).values(delivered_at=AT, next_try_at=None))
    _loaded(qtbot, view)
    assert view.route_cards == {} and view.count == 0
