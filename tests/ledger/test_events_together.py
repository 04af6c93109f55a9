"""An engine's write appends its events together (on PostgreSQL one INSERT of all its rows,
in its commit's pipeline): read back in the order they were appended, each with its own
instant, schedule, occurrence, kind, data and actor, on both databases."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import select

from core.ledger import events
from core.ledger.db import PIPELINE_EVENTS, Ledger
from core.ledger.models import Event
from core.ledger.states import OccurrenceState
from core.team.actor import Actor

from . import utc

_S = OccurrenceState
T = utc("2026-03-02T00:00:00Z")


def _moved(i: int, reason: str | None) -> events.OccurrenceTransitioned:
    return events.OccurrenceTransitioned(
        at=T + timedelta(seconds=i),
        schedule_id=f"s-{i % 2}",
        occurrence_id=f"occ-{i}",
        from_=_S.DISPATCHING,
        to=_S.RUNNING,
        reason=reason,
        attempt=i,
    )


def _stored(ledger: Ledger) -> list[tuple[Any, ...]]:
    with ledger.read() as session:
        return [
            tuple(row)
            for row in session.execute(
                select(
                    Event.at, Event.schedule_id, Event.occurrence_id, Event.kind, Event.data, Event.actor_user
                ).order_by(Event.id)
            )
        ]


@pytest.mark.parametrize("count", [1, 2, 7, PIPELINE_EVENTS + 1, 2_000])
def test_a_shared_writes_events_are_stored_in_the_order_appended(ledger: Ledger, count: int) -> None:
    reasons = [None, 'ünïcode ✓ and "quotes" and \\ back', "", "a\nnew line"]
    appended = [_moved(i, reasons[i % len(reasons)]) for i in range(count)]
    actor = Actor("someone", "a-host")
    with ledger.write(actor, serialize=False) as session:
        events.append(session, appended[0])
        events.append_many(session, appended[1:])  # two calls, one transaction's rows
    stored = _stored(ledger)
    assert [row[:4] for row in stored] == [(e.at, e.schedule_id, e.occurrence_id, e.kind.value) for e in appended]
    assert [row[4] for row in stored] == [events.stored_data(e) for e in appended]
    assert {row[5] for row in stored} == {"someone"}


@pytest.mark.parametrize("count", [PIPELINE_EVENTS, PIPELINE_EVENTS + 1])
def test_only_a_few_events_go_in_the_commits_pipeline(ledger: Ledger, count: int, monkeypatch: Any) -> None:
    """A batch of many events (a materialization's) is sent without the pipeline, where a
    message that large was seen to leave the driver and the server both waiting."""
    if ledger.engine.dialect.name != "postgresql":
        pytest.skip("the commit's pipeline is PostgreSQL's")
    import psycopg

    entered: list[int] = []
    pipeline = psycopg.Connection.pipeline

    def counted(self: Any) -> Any:
        entered.append(count)
        return pipeline(self)

    monkeypatch.setattr(psycopg.Connection, "pipeline", counted)
    appended = [_moved(i, None) for i in range(count)]
    with ledger.write(serialize=False) as session:
        events.append_many(session, appended)
    assert len(entered) == (1 if count <= PIPELINE_EVENTS else 0)
    assert [row[2] for row in _stored(ledger)] == [e.occurrence_id for e in appended]
