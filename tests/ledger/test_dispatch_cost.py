"""What the dispatch of a pass costs and when it comes, counted rather than timed (both
databases): a worker started by the dispatch claims from what the dispatch read instead of
reading it again, and a pass after an outage starts what is due before it fills toward the
horizons (the far rows are written after the first claim)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import select

from core.clock import FixedClock
from core.engine import claim as claim_stage
from core.engine.engine import Engine, EngineOptions
from core.ledger.db import Ledger
from core.ledger.event_types import EventKind
from core.ledger.models import Event
from core.ledger.publish import publish
from core.spec_validation import parse_spec

from . import utc
from .engine_stages import TRUE

EVERY_MINUTE: dict[str, Any] = {
    "schema": "scheduleSpec.v1",
    "revision": 1,
    "timeZone": "UTC",
    "kind": "interval",
    "every": "PT1M",
    "anchor": "2026-03-02T00:00:00Z",
    "cutoverAt": "2026-03-02T00:00:00Z",
    "task": TRUE,
}


@contextmanager
def claimable_reads(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """Count the times what is claimable is listed (each one statement)."""
    count = [0]
    real = claim_stage.claimable

    def counted(*args: Any, **kwargs: Any) -> Any:
        count[0] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(claim_stage, "claimable", counted)
    yield count
    monkeypatch.setattr(claim_stage, "claimable", real)


def test_a_worker_claims_from_what_the_dispatch_read(
    ledger: Ledger, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Five schedules with one run due each, one worker at a time: the dispatch lists what is
    due once, and each worker lists its schedule once, after its run (for what came due
    meanwhile), not also before it."""
    clock.set(utc("2026-03-02T00:00:00Z"))
    with ledger.write() as session:
        for i in range(5):
            publish(session, parse_spec({**EVERY_MINUTE, "scheduleId": f"minutely-{i}"}), clock)
    clock.set(utc("2026-03-02T00:00:05Z"))
    engine = Engine(ledger, clock, EngineOptions(max_workers=1))
    with claimable_reads(monkeypatch) as reads:
        report = engine.run_once()
    assert report.outcomes == {"SUCCEEDED": 5}
    assert reads[0] == 1 + 5


def _events(ledger: Ledger) -> list[tuple[str, dict[str, Any]]]:
    with ledger.read() as session:
        return [(kind, data) for kind, data in session.execute(select(Event.kind, Event.data).order_by(Event.id))]


def test_a_pass_after_an_outage_dispatches_before_the_fill(ledger: Ledger, clock: FixedClock) -> None:
    """A day's horizon of a schedule behind by a week: its missed run is claimed after only the
    next hour was written; the day's rows come after the claim, in the same pass."""
    clock.set(utc("2026-03-02T00:00:00Z"))
    data = {
        **EVERY_MINUTE,
        "scheduleId": "minutely",
        "horizon": "P1D",
        "misfirePolicy": "CATCH_UP_BOUNDED",
        "maxCatchUp": 1,
        "latenessWindow": "PT15S",
    }
    with ledger.write() as session:
        publish(session, parse_spec(data), clock)
    now = utc("2026-03-09T12:00:30Z")
    clock.set(now)
    report = Engine(ledger, clock).run_once()
    assert report.outcomes == {"SUCCEEDED": 1}
    kinds = [kind for kind, _ in _events(ledger)]
    claimed = kinds.index(
        EventKind.OCCURRENCE_TRANSITIONED.value, kinds.index(EventKind.OCCURRENCES_MATERIALIZED.value)
    )
    written = [
        (i, datetime.fromisoformat(data["toUtc"].replace("Z", "+00:00")))
        for i, (kind, data) in enumerate(_events(ledger))
        if kind == EventKind.OCCURRENCES_MATERIALIZED.value
    ]
    before = [to for i, to in written if i < claimed]
    after = [to for i, to in written if i > claimed]
    assert before and max(before) <= now + timedelta(hours=1)
    assert after and max(after) >= now + timedelta(days=1)
