"""What a pass with many schedules due at once (the top of the minute) does per due task,
counted rather than timed (both databases): at most ``max_workers`` worker loops, each holding
one write connection for all the schedules it takes; on SQLite every schedule's first claim is
made with another's outcome (or by the dispatch), so a run costs one write transaction; and
every due task runs once, its schedule read again once after it."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from sqlalchemy import func, select

from core.clock import FixedClock
from core.engine import claim as claim_stage
from core.engine import settle
from core.engine.engine import Engine, EngineOptions
from core.ledger.db import Ledger
from core.ledger.models import Attempt
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


@pytest.mark.parametrize(("schedules", "workers"), [(12, 1), (12, 3), (3, 4)], ids=["one_loop", "three", "few_due"])
def test_a_pass_hands_its_due_tasks_to_a_few_loops(
    ledger: Ledger, clock: FixedClock, monkeypatch: pytest.MonkeyPatch, schedules: int, workers: int
) -> None:
    clock.set(utc("2026-03-02T00:00:00Z"))
    with ledger.write() as session:
        for i in range(schedules):
            publish(session, parse_spec({**EVERY_MINUTE, "scheduleId": f"minutely-{i:02d}"}), clock)
    clock.set(utc("2026-03-02T00:00:05Z"))
    engine = Engine(ledger, clock, EngineOptions(max_workers=workers))
    calls: Counter[str] = Counter()
    where = [(Ledger, "writer"), (claim_stage, "claim"), (claim_stage, "claimable"), (settle, "finish")]
    with counted(monkeypatch, calls, *where):
        report = engine.run_once()
    assert report.outcomes == {"SUCCEEDED": schedules}
    assert sum(report.ran.values()) == schedules and set(report.ran.values()) == {1}
    # One held write connection per loop, not one per schedule.
    assert calls["writer"] == min(workers, schedules)
    # Each run's outcome in one transaction; each schedule listed by the dispatch, then once again.
    assert calls["finish"] == schedules
    assert calls["claimable"] == 1 + schedules
    # SQLite: no claim of its own transaction (the dispatch's claims, then each with an outcome).
    # PostgreSQL (no transaction across schedules there): the loops claim what the dispatch did not.
    alone = 0 if ledger.dialect == "sqlite" else schedules - min(workers, schedules)
    assert calls["claim"] == alone
    with ledger.read() as session:
        attempts = session.scalars(select(func.count()).select_from(Attempt)).one()
    assert attempts == schedules
    assert not engine.busy()
