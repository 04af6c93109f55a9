"""A PostgreSQL connection the server ends (``pg_terminate_backend``) while a ledger holds it:
found without a round trip when it is taken from the pool, begun again on a fresh one when a
serialized write finds it gone at its first statement, and never a task run twice
(docs/decisions.md, "A pooled connection checked without a round trip")."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import create_engine, event, func, select, text, update
from sqlalchemy.pool import NullPool

from core.clock import FixedClock
from core.engine import run as run_stage
from core.engine.engine import Engine, EngineOptions
from core.ledger.db import Ledger
from core.ledger.event_types import EventKind
from core.ledger.models import Attempt, Event, LedgerMeta, Occurrence
from core.ledger.publish import publish
from core.spec.validation import parse_spec

from . import utc
from .test_dispatch_cost import EVERY_MINUTE

pytestmark = pytest.mark.parametrize("ledger_url", ["postgresql"], indirect=True)  # a SQLite file does not drop


def _terminate(ledger: Ledger, where: str, params: dict[str, Any] | None = None) -> int:
    """End the ledger database's backends that ``where`` picks (waiting until they are gone),
    from a connection of no pool; how many."""
    admin = create_engine(ledger.engine.url, poolclass=NullPool)
    try:
        with admin.connect() as conn:
            found = conn.scalars(
                text(
                    "SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity "
                    f"WHERE datname = current_database() AND pid <> pg_backend_pid() AND {where}"
                ),
                params or {},
            ).all()
    finally:
        admin.dispose()
    assert all(found)
    return len(found)


@contextmanager
def pings(ledger: Ledger) -> Iterator[list[int]]:
    """Count the pings (a round trip each) sent to check a pooled connection."""
    count = [0]
    dialect = ledger.engine.dialect
    real = dialect.do_ping

    def counted(dbapi_connection: Any) -> bool:
        count[0] += 1
        return real(dbapi_connection)

    patch = pytest.MonkeyPatch()
    patch.setattr(dialect, "do_ping", counted)
    try:
        yield count
    finally:
        patch.undo()


def backlog(ledger: Ledger, clock: FixedClock, runs: int) -> Engine:
    """A schedule with ``runs`` runs due, every earlier one already run; its engine (one worker)."""
    start = utc("2026-03-02T00:00:00Z")
    clock.set(start)
    data = {**EVERY_MINUTE, "scheduleId": "backlog", "latenessWindow": "PT2H", "misfirePolicy": "CATCH_UP_ALL"}
    with ledger.write() as session:
        publish(session, parse_spec(data), clock)
    clock.set(start + timedelta(seconds=30))
    engine = Engine(ledger, clock, EngineOptions(max_workers=1))
    assert engine.run_once().outcomes == {"SUCCEEDED": 1}
    clock.set(start + timedelta(minutes=runs, seconds=30))
    return engine


def _attempts_and_deaths(ledger: Ledger) -> tuple[dict[str, int], int]:
    with ledger.read() as session:
        attempts = dict(
            (oid, int(n))
            for oid, n in session.execute(select(Attempt.occurrence_id, func.count()).group_by(Attempt.occurrence_id))
        )
        deaths = session.scalar(
            select(func.count()).where(Event.kind == EventKind.ENGINE_WORKER_DIED.value).select_from(Event)
        )
    return attempts, int(deaths or 0)


def _succeeded(ledger: Ledger) -> int:
    with ledger.read() as session:
        return int(session.scalar(select(func.count()).where(Occurrence.state == "SUCCEEDED")) or 0)


def test_connections_ended_while_tasks_run_are_replaced_without_a_ping(
    ledger: Ledger, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every task ends the engine's idle connections while it runs: each outcome and claim still
    goes through on the first try (no worker dies), no pooled connection is pinged, and every
    run has exactly one attempt."""
    engine = backlog(ledger, clock, 5)
    ended: list[int] = []
    real = run_stage.run_command

    def ending(*args: Any, **kwargs: Any) -> Any:
        ended.append(_terminate(ledger, "state = 'idle'"))
        return real(*args, **kwargs)

    monkeypatch.setattr(run_stage, "run_command", ending)
    with pings(ledger) as pinged:
        report = engine.run_once()
    assert report.outcomes == {"SUCCEEDED": 5}
    assert len(ended) == 5 and sum(ended) >= 5
    assert pinged[0] == 0
    attempts, deaths = _attempts_and_deaths(ledger)
    assert set(attempts.values()) == {1} and len(attempts) == 6
    assert deaths == 0


def test_a_connection_ended_after_its_check_fails_one_worker_who_records_the_outcome_once(
    ledger: Ledger, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server ends the connection an outcome's transaction has just taken (after its check):
    the transaction fails before it wrote anything, the worker is restarted and records the
    outcome it had in hand, and the task is not run again."""
    engine = backlog(ledger, clock, 3)
    real = run_stage.run_command
    armed: list[bool] = []

    def end_after_check(dbapi_connection: Any, _record: Any, _proxy: Any) -> None:
        if armed and armed.pop():
            _terminate(ledger, "pid = :pid", {"pid": dbapi_connection.info.backend_pid})

    def arming(*args: Any, **kwargs: Any) -> Any:
        if not runs:  # the first task's outcome takes a connection that is about to end
            armed.append(True)
        runs.append(1)
        return real(*args, **kwargs)

    runs: list[int] = []
    monkeypatch.setattr(run_stage, "run_command", arming)
    event.listen(ledger.engine, "checkout", end_after_check)  # after the ledger's own check
    try:
        report = engine.run_once()
    finally:
        event.remove(ledger.engine, "checkout", end_after_check)
    assert report.outcomes == {"SUCCEEDED": 3}
    assert len(runs) == 3 and _succeeded(ledger) == 4
    attempts, deaths = _attempts_and_deaths(ledger)
    assert set(attempts.values()) == {1}
    assert deaths == 1


def _epoch(ledger: Ledger) -> int:
    with ledger.read() as session:
        return int(session.scalar(select(LedgerMeta.execution_epoch)) or 0)


def test_a_serialized_write_begins_again_on_a_fresh_connection(ledger: Ledger) -> None:
    """A command's write whose connection the server ended just after it was checked: its first
    statement (the write lock, nothing written yet) fails, and it begins once more on a fresh
    connection; the write is made once."""
    start = _epoch(ledger)
    taken: list[int] = []

    def end_first(dbapi_connection: Any, _record: Any, _proxy: Any) -> None:
        taken.append(dbapi_connection.info.backend_pid)
        if len(taken) == 1:
            _terminate(ledger, "pid = :pid", {"pid": taken[0]})

    event.listen(ledger.engine, "checkout", end_first)
    try:
        with ledger.write() as session:
            session.execute(update(LedgerMeta).values(execution_epoch=LedgerMeta.execution_epoch + 1))
    finally:
        event.remove(ledger.engine, "checkout", end_first)
    assert len(taken) == 2 and taken[0] != taken[1]
    assert _epoch(ledger) == start + 1


def test_a_connection_idle_for_long_is_pinged_and_a_busy_one_is_not(
    ledger: Ledger, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The round trip is kept for a connection that sat in the pool longer than PING_AFTER
    (a server that went away without a word, a dropped network path), not for the next
    transaction of a busy engine."""
    from core.ledger import db as db_module

    with ledger.read() as session:
        session.execute(text("SELECT 1"))
    with pings(ledger) as pinged:
        with ledger.read() as session:
            session.execute(text("SELECT 1"))
        assert pinged[0] == 0
        monkeypatch.setattr(db_module, "PING_AFTER", -1.0)
        with ledger.read() as session:
            session.execute(text("SELECT 1"))
        assert pinged[0] == 1
