"""What a pass with many schedules due at once (the top of the minute) does per due task,
counted rather than timed (both databases): at most ``max_workers`` worker loops, each holding
one write connection for all the schedules it takes; on SQLite every schedule's first claim is
made with another's outcome (or by the dispatch), so a run costs one write transaction; every
due task runs once; and the schedules are read again for what came due meanwhile together,
not one read each."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select

from core.clock import FixedClock
from core.engine import claim as claim_stage
from core.engine import settle
from core.engine.engine import Engine, EngineOptions
from core.ledger.db import Ledger
from core.ledger.event_types import EventKind
from core.ledger.models import Attempt, Event
from core.ledger.publish import publish
from core.spec.validation import parse_spec

from . import utc
from .test_dispatch_cost import EVERY_MINUTE


@contextmanager
def counted(monkeypatch: pytest.MonkeyPatch, calls: Counter[str], *where: tuple[Any, str]) -> Iterator[None]:
    """Count the calls of each function named (a module or class, and the name)."""
    for owner, name in where:
        real = getattr(owner, name)

        def count(*args: Any, _real: Any = real, _name: str = name, **kwargs: Any) -> Any:
            calls[_name] += 1
            return _real(*args, **kwargs)

        monkeypatch.setattr(owner, name, count)
    yield


def due_at_once(ledger: Ledger, clock: FixedClock, count: int, *more: dict[str, Any]) -> None:
    """``count`` every-minute schedules (and ``more``) published, the clock at their first run."""
    clock.set(utc("2026-03-02T00:00:00Z"))
    with ledger.write() as session:
        for data in more:
            publish(session, parse_spec(data), clock)
        for i in range(count):
            publish(session, parse_spec({**EVERY_MINUTE, "scheduleId": f"minutely-{i:02d}"}), clock)
    clock.set(utc("2026-03-02T00:00:05Z"))


@pytest.mark.parametrize(("schedules", "workers"), [(12, 1), (12, 3), (3, 4)], ids=["one_loop", "three", "few_due"])
def test_a_pass_hands_its_due_tasks_to_a_few_loops(
    ledger: Ledger, clock: FixedClock, monkeypatch: pytest.MonkeyPatch, schedules: int, workers: int
) -> None:
    due_at_once(ledger, clock, schedules)
    engine = Engine(ledger, clock, EngineOptions(max_workers=workers))
    calls: Counter[str] = Counter()
    where = [(Ledger, "writer"), (claim_stage, "claim"), (claim_stage, "claimable"), (settle, "finish")]
    with counted(monkeypatch, calls, *where):
        report = engine.run_once()
    assert report.outcomes == {"SUCCEEDED": schedules}
    assert sum(report.ran.values()) == schedules and set(report.ran.values()) == {1}
    # One held write connection per loop, not one per schedule.
    assert calls["writer"] == min(workers, schedules)
    # Each run's outcome in one transaction. What is due is listed by the dispatch, then again
    # for what came due meanwhile: by a loop for the schedule it ran last, the others together.
    assert calls["finish"] == schedules
    assert calls["claimable"] <= 1 + 2 * min(workers, schedules)
    # SQLite: no claim of its own transaction (the dispatch's claims, then each with an outcome).
    # PostgreSQL (no transaction across schedules there): the loops claim what the dispatch did not.
    alone = 0 if ledger.dialect == "sqlite" else schedules - min(workers, schedules)
    assert calls["claim"] == alone
    with ledger.read() as session:
        attempts = session.scalars(select(func.count()).select_from(Attempt)).one()
    assert attempts == schedules
    assert not engine.busy()


def test_what_came_due_meanwhile_runs_in_the_same_pass(ledger: Ledger, clock: FixedClock, tmp_path: Path) -> None:
    """A run that fails with no wait before its retry comes due again while the loop runs the
    other schedules: the schedules read again together find it, and it runs in the same pass."""
    mark = tmp_path / "failed-once"
    once = ["/bin/sh", "-c", f'test -e "{mark}" || {{ touch "{mark}"; exit 1; }}']
    flaky = {
        **EVERY_MINUTE,
        "scheduleId": "minutely-flaky",
        "task": {"argv": once, "effect": "idempotent"},
        "retry": {"maxAttempts": 2, "initialBackoff": "PT0S", "maxBackoff": "PT0S"},
    }
    due_at_once(ledger, clock, 4, flaky)
    report = Engine(ledger, clock, EngineOptions(max_workers=1)).run_once()
    assert report.ran["minutely-flaky"] == 2
    assert report.outcomes == {"SUCCEEDED": 5, "RETRY_WAIT": 1}


def test_a_failed_outcome_transaction_gives_back_the_schedule_it_claimed(
    ledger: Ledger, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The outcome's transaction fails after it claimed the next schedule's first run (here the
    claim itself raises, once): both are rolled back, the worker restarts and records its
    outcome again, and the next schedule is claimed by a loop later. Every run once, no more."""
    due_at_once(ledger, clock, 3)
    real = claim_stage.claim_in
    failed: list[str] = []

    def claim_once_failing(session: Any, ctx: Any, occurrence_id: str, *args: Any) -> Any:
        if not failed:
            failed.append(occurrence_id)
            real(session, ctx, occurrence_id, *args)  # its rows written, then the transaction fails
            raise RuntimeError("the disk went away")
        return real(session, ctx, occurrence_id, *args)

    monkeypatch.setattr(claim_stage, "claim_in", claim_once_failing)
    report = Engine(ledger, clock, EngineOptions(max_workers=1)).run_once()
    assert failed
    assert report.outcomes == {"SUCCEEDED": 3}
    with ledger.read() as session:
        per_occurrence = session.scalars(select(func.count()).select_from(Attempt).group_by(Attempt.occurrence_id))
        assert sorted(per_occurrence) == [1, 1, 1]
        died = session.scalars(
            select(func.count()).select_from(Event).where(Event.kind == EventKind.ENGINE_WORKER_DIED.value)
        ).one()
    assert died == 1


def test_a_failed_read_of_the_schedules_queued_again_reads_each_alone(
    ledger: Ledger, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The one read of the schedules queued again fails: each is read alone, as before, and
    the pass ends with every job done (none left waiting)."""
    due_at_once(ledger, clock, 3)
    real = claim_stage.claimable
    reads: list[str | None] = []

    def second_read_fails(*args: Any, **kwargs: Any) -> Any:
        reads.append(kwargs.get("schedule_id"))
        if len(reads) == 2:
            raise RuntimeError("database is locked")
        return real(*args, **kwargs)

    monkeypatch.setattr(claim_stage, "claimable", second_read_fails)
    engine = Engine(ledger, clock, EngineOptions(max_workers=1))
    report = engine.run_once()
    assert report.outcomes == {"SUCCEEDED": 3}
    assert reads[:2] == [None, None]
    assert sorted(r for r in reads[2:] if r is not None) == ["minutely-00", "minutely-01", "minutely-02"]
    assert not engine.busy() and engine.wait_idle(timeout=0)
