"""An engine pass costs what is due, not the size of the catalogue (both databases).

The statements a pass sends, the rows it writes and the schedules it materializes are
counted, never timed: an idle pass and a pass with the same few schedules due cost the
same at 10 published schedules and at 2,000. A long first materialization commits in
batches, and a ``schedctl pause`` run as its own process in the middle of it goes
through between two of them.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import event, func, select
from sqlalchemy.orm import Session

from core.clock import FixedClock
from core.engine import plan
from core.engine.engine import Engine, EngineOptions, PassReport
from core.ledger.db import Ledger
from core.ledger.materialize import materialize_many, to_materialize
from core.ledger.models import Schedule
from core.ledger.publish import disable, pause, publish, resume
from core.ledger.states import ScheduleState
from core.spec.validation import parse_spec

from . import DAILY
from .test_recovery_cost import statements

#: Schedules due every minute in both catalogues.
DUE = 3
#: A filler: daily at 06:00 UTC, never due during the test (it starts at 12:00 UTC).
FILLER: dict[str, Any] = {
    **DAILY,
    "timeZone": "UTC",
    "rule": "FREQ=DAILY;BYHOUR=6;BYMINUTE=0",
    "horizon": "P1D",
}
MINUTELY: dict[str, Any] = {
    "schema": "scheduleSpec.v1",
    "scheduleId": "minutely",
    "revision": 1,
    "timeZone": "UTC",
    "kind": "interval",
    "every": "PT1M",
    "anchor": "2026-01-01T00:00:00Z",
    "horizon": "PT1H",
    "task": {"argv": ["/bin/true"]},
}


def publish_many(ledger: Ledger, clock: FixedClock, base: dict[str, Any], ids: list[str]) -> None:
    """Publish one schedule per id, all in one transaction."""
    with ledger.write() as session:
        for sid in ids:
            publish(session, parse_spec({**base, "scheduleId": sid}), clock)


@dataclass
class Cost:
    """What one pass sent to the database."""

    statements: int = 0
    written: int = 0
    materialized: list[str] = field(default_factory=list)


#: Statements of savepoints, not counted.
_SAVEPOINTS = ("SAVEPOINT", "RELEASE SAVEPOINT", "ROLLBACK TO SAVEPOINT")


@contextlib.contextmanager
def counted(ledger: Ledger, monkeypatch: pytest.MonkeyPatch) -> Iterator[Cost]:
    """Count the statements sent, the rows written and the schedules materialized meanwhile."""
    cost = Cost()
    lock = threading.Lock()
    bind = ledger.engine

    def before(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        if statement.startswith(_SAVEPOINTS):
            return  # a shared commit's (core.engine.group_commit): how many depends on how the workers met
        with lock:
            cost.statements += 1

    def after(_conn: Any, cursor: Any, statement: str, *_args: Any) -> None:
        if statement.lstrip().upper().startswith(("INSERT", "UPDATE", "DELETE")) and cursor.rowcount > 0:
            with lock:
                cost.written += cursor.rowcount

    real = plan.materialize_drafted

    def spied(session: Session, drafts: Any, schedule_ids: list[str]) -> Any:
        cost.materialized.extend(schedule_ids)
        return real(session, drafts, schedule_ids)

    monkeypatch.setattr(plan, "materialize_drafted", spied)
    event.listen(bind, "before_cursor_execute", before)
    event.listen(bind, "after_cursor_execute", after)
    try:
        yield cost
    finally:
        event.remove(bind, "before_cursor_execute", before)
        event.remove(bind, "after_cursor_execute", after)
        monkeypatch.setattr(plan, "materialize_drafted", real)


def measure(engine: Engine, clock: FixedClock, monkeypatch: pytest.MonkeyPatch) -> tuple[Cost, Cost]:
    """An idle pass (this minute's runs are done), then a pass at the next minute (DUE due)."""
    clock.advance(timedelta(seconds=20))
    with counted(engine.ledger, monkeypatch) as idle:
        report = engine.run_once()
    assert (report.started, report.materialized, report.promoted) == (0, 0, 0)
    clock.advance(timedelta(seconds=40))
    with counted(engine.ledger, monkeypatch) as due:
        report = engine.run_once()
    assert (report.started, report.materialized, report.promoted) == (DUE, 0, DUE)
    return idle, due


def warm_up(engine: Engine, clock: FixedClock) -> PassReport:
    """A pass that materializes what was just published and runs this minute's runs."""
    clock.advance(timedelta(seconds=5))
    return engine.run_once()


def test_a_pass_touches_only_what_is_due_whatever_the_catalogue(
    ledger: Ledger, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a task still running after an hour is recorded RUNNING: here every outcome comes with its RUNNING
    engine = Engine(ledger, clock, EngineOptions(max_workers=DUE, running_after=timedelta(hours=1)))
    publish_many(ledger, clock, MINUTELY, [f"minutely-{i}" for i in range(DUE)])
    publish_many(ledger, clock, FILLER, [f"filler-{i:04d}" for i in range(10 - DUE)])
    assert warm_up(engine, clock).materialized > 0
    small = measure(engine, clock, monkeypatch)

    publish_many(ledger, clock, FILLER, [f"filler-{i:04d}" for i in range(10 - DUE, 2000 - DUE)])
    assert warm_up(engine, clock).materialized >= 2 * (2000 - 10)
    large = measure(engine, clock, monkeypatch)

    with ledger.read() as session:
        assert session.scalar(select(func.count()).select_from(Schedule)) == 2000
    (idle10, due10), (idle2000, due2000) = small, large
    assert idle10.materialized == idle2000.materialized == []
    assert due10.materialized == due2000.materialized == []
    assert idle10.written == idle2000.written == 0  # an idle pass writes nothing at all
    assert due10.written == due2000.written > 0
    assert (idle2000.statements, due2000.statements) == (idle10.statements, due10.statements)


def test_a_schedule_comes_back_once_per_chunk(ledger: Ledger, clock: FixedClock) -> None:
    """A schedule is materialized beyond its horizon by a chunk, and read again only when
    now + horizon reaches its cursor; a new revision brings it back at once."""
    publish_many(ledger, clock, MINUTELY, ["minutely-0"])
    with ledger.read() as session:
        assert [(sid, at) for sid, at, _ in to_materialize(session, clock.now())] == [("minutely-0", None)]
    engine = Engine(ledger, clock, EngineOptions(max_workers=1))
    engine.run_once()
    start = clock.now()
    with ledger.read() as session:
        schedule = session.get(Schedule, "minutely-0")
        assert schedule is not None
        # the horizon (PT1H) and a chunk (at most the horizon again)
        assert (schedule.cursor_utc, schedule.materialize_at) == (
            start + timedelta(hours=2),
            start + timedelta(hours=1),
        )
    cases = [(timedelta(minutes=59), []), (timedelta(hours=1), ["minutely-0"])]
    for ahead, expected in cases:
        with ledger.read() as session:
            assert [sid for sid, _, _ in to_materialize(session, start + ahead)] == expected
    publish_many(ledger, clock, {**MINUTELY, "revision": 2, "horizon": "PT2H"}, ["minutely-0"])
    with ledger.read() as session:
        assert [(sid, at) for sid, at, _ in to_materialize(session, clock.now())] == [("minutely-0", None)]


def test_a_pause_goes_through_between_two_batches_of_a_pass(
    ledger: Ledger, ledger_url: str, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``schedctl pause``, a process of its own, runs while a pass materializes a new catalogue
    of 100 schedules: it completes between two of the pass's write transactions, with
    schedules still left to materialize after it."""
    ids = [f"filler-{i:04d}" for i in range(100)]
    publish_many(ledger, clock, FILLER, ids)
    published = clock.now()
    write = ledger.write
    seen: list[tuple[int, int]] = []

    def left_and_done() -> tuple[int, int]:
        with ledger.read() as session:
            cursors = list(session.scalars(select(Schedule.cursor_utc)))
        return sum(c == published for c in cursors), sum(c != published for c in cursors)

    @contextlib.contextmanager
    def then_pause(**kwargs: Any) -> Iterator[Session]:
        with write(**kwargs) as session:
            yield session
        left, done = left_and_done()
        if seen or not done:
            return
        paused = subprocess.run(
            [sys.executable, "-m", "core.cli", "pause", ids[-1], "--db", ledger_url, "--now", "2026-03-01T12:00:00Z"],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert (paused.returncode, paused.stderr) == (0, "")
        seen.append((left, done))

    monkeypatch.setattr(ledger, "write", then_pause)
    clock.advance(timedelta(seconds=1))
    report = Engine(ledger, clock, EngineOptions(max_workers=1)).run_once()
    assert len(seen) == 1
    left, done = seen[0]
    assert left > 0 and done >= plan.BATCH_SCHEDULES // 2  # the pause came in the middle of the sweep
    assert left_and_done() == (0, 100)
    assert report.materialized == 100 * 2  # 06:00 tomorrow and the day after
    with ledger.read() as session:
        schedule = session.get(Schedule, ids[-1])
        assert schedule is not None and schedule.state is ScheduleState.PAUSED


@pytest.mark.parametrize(
    ("change", "reads_again"),
    [
        pytest.param("pause", False, id="pause"),
        pytest.param("resume", False, id="pause_then_resume"),
        pytest.param("disable", True, id="disable"),
        pytest.param("enable", True, id="disable_then_enable"),
        pytest.param("publish", True, id="new_revision"),
    ],
)
def test_a_pass_reads_every_revision_again_only_when_the_set_of_revisions_moved(
    ledger: Ledger, clock: FixedClock, monkeypatch: pytest.MonkeyPatch, change: str, reads_again: bool
) -> None:
    """A team pausing and resuming schedules all day changes no revision's readability nor
    whom it is refused by: the next pass does not list every revision again (it did at
    every gate change, about 50 ms a pass at 3,000 schedules). A disable, an enable and a
    new revision change the set, and the next pass reads it again."""
    engine = Engine(ledger, clock)
    publish_many(ledger, clock, FILLER, [f"filler-{i:04d}" for i in range(5)])
    warm_up(engine, clock)
    reads: list[str] = []
    for name in ("unreadable_revisions", "_decide_refusals"):
        real = getattr(plan, name)
        monkeypatch.setattr(plan, name, lambda *a, real=real, name=name, **k: reads.append(name) or real(*a, **k))
    gates = {"pause": [pause], "resume": [pause, resume], "disable": [disable], "enable": [disable, resume]}
    with ledger.write() as session:
        if change == "publish":
            publish(
                session,
                parse_spec({**FILLER, "scheduleId": "filler-0000", "revision": 2, "rule": "FREQ=DAILY;BYHOUR=7"}),
                clock,
            )
        for gate in gates.get(change, []):
            gate(session, "filler-0001", clock)
    clock.advance(timedelta(seconds=1))
    engine.run_once()
    assert sorted(reads) == (["_decide_refusals", "unreadable_revisions"] if reads_again else [])


#: Daily at 06:00 UTC since a year before the tests' now, missed all year: under CATCH_UP_BOUNDED
#: (maxCatchUp 1) the year but its last day is certain to expire, and is recorded as a range.
YEAR_AWAY: dict[str, Any] = {
    **FILLER,
    "start": "2025-03-01T00:00:00",
    "cutoverAt": "2025-03-01T00:00:00Z",
    "misfirePolicy": "CATCH_UP_BOUNDED",
    "maxCatchUp": 1,
}


@pytest.mark.parametrize(
    ("base", "away", "ranges"),
    [
        pytest.param(FILLER, timedelta(0), 0, id="new_schedules"),
        pytest.param(YEAR_AWAY, timedelta(days=365), 1, id="after_a_year_away"),
        pytest.param({**FILLER, "businessPeriod": "{nominal:%Y-%m-%d}"}, timedelta(0), 0, id="business_periods"),
    ],
)
def test_a_materialization_batch_sends_the_same_statements_for_8_schedules_and_for_64(
    ledger: Ledger, clock: FixedClock, base: dict[str, Any], away: timedelta, ranges: int
) -> None:
    """One batch reads the schedules, their revisions, their live slots and the business periods
    held once, and inserts the expired ranges, the rows and the events and moves every cursor
    in one statement each: 64 schedules send what 8 send (before, some ten statements per
    schedule)."""
    sent: dict[int, list[str]] = {}
    for size in (8, 64):
        ids = [f"batch-{size}-{i:03d}" for i in range(size)]
        publish_many(ledger, FixedClock(clock.now() - away), base, ids)
        with ledger.write() as session, statements(ledger) as seen:
            results = materialize_many(session, ids, clock, expire=plan.certain_expiry)
        assert [r.schedule_id for r in results] == ids
        # 06:00 tomorrow, and after a year away the last missed one (today's) as well
        assert {(r.inserted, r.expired_ranges, r.more) for r in results} == {(1 + ranges, ranges, False)}
        sent[size] = seen
    assert len(sent[8]) == len(sent[64]) <= 12, sent[64]
    with ledger.read() as session:
        cursors = set(session.scalars(select(Schedule.cursor_utc)))
    assert cursors == {clock.now() + timedelta(days=1)}  # every cursor moved, to now + horizon
