"""Needs attention for a schedule the engines hold (its pinned zone rules were damaged in
the ledger): a card names it and why, counted in the badge, and leaves once a corrected
revision is published."""

from __future__ import annotations

from monitor_support import engine, put
from sqlalchemy import update

from core.ledger.models import Revision
from scheduler_gui.context import AppContext
from scheduler_gui.monitor.attention import AttentionView

SID = "pinned-report"


def _daily(revision: int = 1) -> dict:
    return {
        "schema": "scheduleSpec.v1",
        "scheduleId": SID,
        "revision": revision,
        "timeZone": "Europe/Paris",
        "tzdbPolicy": "PIN",
        "rule": "FREQ=DAILY;BYHOUR=2;BYMINUTE=30",
        "start": "2027-01-01T00:00:00",
        "gapPolicy": "SKIP",
        "foldPolicy": "FIRST_ONLY",
        "task": {"argv": ["/bin/true"]},
    }


def _loaded(qtbot, view: AttentionView) -> None:
    with qtbot.waitSignal(view.loaded, timeout=20_000):
        view.reload()


def test_a_held_schedule_waits_in_needs_attention_until_republished(qtbot, ctx: AppContext) -> None:
    put(ctx, _daily())
    with ctx.ledger.write() as session:
        session.execute(update(Revision).values(tzif=b"TZif2" + b"\0" * 39))  # counts of nothing: refused
    engine(ctx).run_once()
    view = AttentionView(ctx)
    qtbot.addWidget(view)
    view.show()
    _loaded(qtbot, view)
    assert list(view.held_cards) == [SID]
    card = view.held_cards[SID]
    assert card.accessibleName() == f"held by the engines: {SID}"
    assert card.what.text().startswith("Held by the engines: revision 1: the pinned rules of Europe/Paris cannot")
    assert card.what.text().endswith("; publish a corrected revision")
    assert view.count == 1 and view.heading.text() == "Needs attention (1)"
    put(ctx, _daily(revision=2))
    _loaded(qtbot, view)
    assert view.held_cards == {} and view.count == 0
