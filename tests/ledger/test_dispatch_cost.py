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
from sqlalchemy import event, select

from core.clock import FixedClock
from core.engine import claim as claim_stage
from core.engine.engine import Engine, EngineOptions
from core.ledger import db as db_module
from core.ledger import prepared as prepared_module
from core.ledger.db import Ledger
from core.ledger.event_types import EventKind
from core.ledger.models import Event
from core.ledger.publish import publish
from core.spec.validation import parse_spec

from . import utc
from .engine_stages import TRUE
from .test_pass_cost import MINUTELY

#: Every minute from 2026-03-02 00:00 UTC, a true task.
EVERY_MINUTE: dict[str, Any] = {
    **MINUTELY,
    "anchor": "2026-03-02T00:00:00Z",
    "cutoverAt": "2026-03-02T00:00:00Z",
    "task": TRUE,
}


#: Statements one more due run costs at most: PostgreSQL (a round trip each: BEGIN, those sent
#: through SQLAlchemy or past it on the driver's connection, the shared write lock when it goes
#: alone, a pooled connection's ping, and the commit's pipeline as one), SQLite (every statement
#: on the connection, its transaction's and savepoint's too). PostgreSQL's run: BEGIN, the shared
#: lock with the schedule's row, the outcome with the next claim in one statement, the pipeline
#: (was five: the next claim apart; seven before that: the ping, and the lock apart from the row).
#: SQLite's: BEGIN IMMEDIATE, the outcome, the attempt's end, the claim, its attempt row, three
#: events' rows, COMMIT (was twelve: a held writer's busy_timeout set and set back around BEGIN).
PER_RUN = {"postgresql": 4, "sqlite": 10}


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
    due once, and after the runs the five schedules are listed again together, once (for what
    came due meanwhile), not each before its run nor each after it."""
    clock.set(utc("2026-03-02T00:00:00Z"))
    with ledger.write() as session:
        for i in range(5):
            publish(session, parse_spec({**EVERY_MINUTE, "scheduleId": f"minutely-{i}"}), clock)
    clock.set(utc("2026-03-02T00:00:05Z"))
    engine = Engine(ledger, clock, EngineOptions(max_workers=1))
    with claimable_reads(monkeypatch) as reads:
        report = engine.run_once()
    assert report.outcomes == {"SUCCEEDED": 5}
    assert reads[0] == 1 + 1


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


@contextmanager
def statements_sent(ledger: Ledger) -> Iterator[list[str]]:
    """Every statement sent to the server (PostgreSQL, through SQLAlchemy or in a commit's
    pipeline) or to SQLite (traced on its connections, prepared statements included)."""
    sent: list[str] = []
    if ledger.dialect == "sqlite":

        def traced(dbapi_connection: Any, _record: Any, _proxy: Any) -> None:
            dbapi_connection.set_trace_callback(sent.append)

        event.listen(ledger.engine, "checkout", traced)
        try:
            yield sent
        finally:
            event.remove(ledger.engine, "checkout", traced)
        return

    def before(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        sent.append(statement)

    def alone(conn: Any, *_args: Any) -> None:  # before the ledger's own hook takes the lock
        shared = conn.info.get(db_module._UNLOCKED)
        if shared is not None and not shared.locked:
            sent.append("-- the shared write lock, alone")

    run_shared = db_module.run_shared

    def past_sqlalchemy(session: Any, shared: Any, sql: str, params: Any) -> Any:
        if not shared.locked:
            sent.append("-- the shared write lock, alone")
        sent.append(sql)
        return run_shared(session, shared, sql, params)

    def begun(_conn: Any) -> None:
        sent.append("BEGIN")

    dialect = ledger.engine.dialect
    ping = dialect.do_ping

    def pinged(dbapi_connection: Any) -> bool:
        sent.append("-- a pooled connection's ping")
        return ping(dbapi_connection)

    real = db_module.flush_events

    def flushed(session: Any) -> None:
        shared = db_module.shared_write(session)
        if shared is not None and (shared.rows or shared.deferred):
            sent.append("-- the commit's pipeline")
        real(session)

    event.listen(ledger.engine, "before_cursor_execute", before)
    event.listen(ledger.engine, "before_cursor_execute", alone, insert=True)
    event.listen(ledger.engine, "begin", begun)
    patch = pytest.MonkeyPatch()
    patch.setattr(db_module, "flush_events", flushed)
    patch.setattr(dialect, "do_ping", pinged)
    patch.setattr(db_module, "run_shared", past_sqlalchemy)
    patch.setattr(prepared_module, "run_shared", past_sqlalchemy)
    try:
        yield sent
    finally:
        patch.undo()
        event.remove(ledger.engine, "before_cursor_execute", before)
        event.remove(ledger.engine, "before_cursor_execute", alone)
        event.remove(ledger.engine, "begin", begun)


def _counted_pass(ledger: Ledger, engine: Engine, runs: int) -> int:
    """A pass of ``engine`` that runs ``runs`` due runs; the statements it sent."""
    with statements_sent(ledger) as sent:
        report = engine.run_once()
    assert report.outcomes == {"SUCCEEDED": runs}
    return len(sent)


def test_each_run_of_a_backlog_sends_a_bounded_number_of_statements(ledger: Ledger, clock: FixedClock) -> None:
    """What one more due run costs an engine's worker (its claim with its attempt row and event,
    its outcome with the attempt's end and events, in one transaction), counted on each database:
    the pass's own statements cancel out between a backlog of 10 and one of 30."""
    start = utc("2026-03-02T00:00:00Z")
    clock.set(start)
    data = {
        **EVERY_MINUTE,
        "scheduleId": "backlog",
        "horizon": "PT1H",
        "latenessWindow": "PT2H",
        "misfirePolicy": "CATCH_UP_ALL",
    }
    with ledger.write() as session:
        publish(session, parse_spec(data), clock)
    clock.set(start + timedelta(seconds=30))
    engine = Engine(ledger, clock)
    assert engine.run_once().outcomes == {"SUCCEEDED": 1}  # materialized far ahead: the next passes only run
    clock.set(start + timedelta(minutes=10, seconds=30))
    ten = _counted_pass(ledger, engine, 10)
    clock.set(start + timedelta(minutes=40, seconds=30))
    thirty = _counted_pass(ledger, engine, 30)
    assert (thirty - ten) / 20 <= PER_RUN[ledger.dialect], (ten, thirty)
    assert (thirty - ten) / 20 > PER_RUN[ledger.dialect] - 1, (ten, thirty)  # pinned, not just bounded
