"""A pass over a long backlog writes it in bounded transactions, committed one by one,
so that another command's write (a pause) gets in between them (both databases)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

from sqlalchemy import func, select

from core.clock import FixedClock
from core.engine import plan
from core.engine.engine import Engine, EngineOptions
from core.ledger.db import Ledger, open_ledger
from core.ledger.models import Occurrence, Schedule
from core.ledger.publish import pause, publish
from core.ledger.states import ScheduleState

from . import spec

BACKLOG: dict[str, Any] = {
    "schema": "scheduleSpec.v1",
    "scheduleId": "every-minute",
    "revision": 1,
    "timeZone": "UTC",
    "kind": "interval",
    "every": "PT1M",
    "anchor": "2026-01-01T00:00:00Z",
    "misfirePolicy": "CATCH_UP_ALL",
    "horizon": "PT1H",
    "task": {"argv": ["/bin/true"]},
}


def test_a_long_backlog_is_written_in_bounded_transactions(
    ledger: Ledger, ledger_url: str, clock: FixedClock, monkeypatch: Any
) -> None:
    with ledger.write() as session:
        publish(session, spec(BACKLOG), clock)
        publish(session, spec(), clock)  # the daily schedule another person pauses meanwhile
        pause(session, "every-minute", clock)  # nothing is dispatched: only materialization is looked at
    clock.advance(timedelta(days=30))  # 43,200 missed minutes, every one to be caught up
    per_transaction: list[int] = []
    paused_between: list[bool] = []
    other = open_ledger(ledger_url, clock)
    write = ledger.write

    @contextlib.contextmanager
    def counting(**kwargs: Any) -> Iterator[Any]:
        with write(**kwargs) as session:
            count = session.scalar(select(func.count()).select_from(Occurrence)) or 0
            yield session
            per_transaction.append((session.scalar(select(func.count()).select_from(Occurrence)) or 0) - count)
        # Committed: a second writer gets in now.
        if len(paused_between) < 2:
            with other.write() as session:
                schedule = session.get(Schedule, "daily-ops-summary")
                assert schedule is not None
                if schedule.state is ScheduleState.ACTIVE:
                    pause(session, "daily-ops-summary", clock)
                paused_between.append(True)

    monkeypatch.setattr(ledger, "write", counting)
    try:
        Engine(ledger, clock, EngineOptions(max_workers=1)).run_once()
    finally:
        other.close()
    chunk = plan.BATCH_ROWS
    writes = [n for n in per_transaction if n]
    assert sum(writes) >= 30 * 24 * 60
    assert max(writes) <= chunk and len(writes) >= 5
    # ... and full ones: the rows are worked out before each transaction, which only writes them
    assert sum(n >= chunk * 9 // 10 for n in writes) >= 5, writes
    assert paused_between == [True, True]
