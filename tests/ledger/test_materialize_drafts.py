"""An engine's pass expands outside the write lock (both databases): :func:`draft_many` works
out the rows from a read, :func:`materialize_drafted` writes them under the lock. A draft
still true is written as drafted, with no expansion and no read of revisions in the write; a
draft that a publish, a gate or another engine made stale is worked out again under the lock,
so rows never land under a revision that lost the gate."""

from __future__ import annotations

import importlib
from datetime import timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import func, select

from core.clock import FixedClock
from core.ledger.db import Ledger
from core.ledger.materialize import draft_many, materialize_drafted, materialize_many
from core.ledger.models import Occurrence, Schedule
from core.ledger.publish import disable, pause, publish

from . import spec
from .test_recovery_cost import statements

materialize_module = importlib.import_module("core.ledger.materialize")
NEW_YORK = ZoneInfo("America/New_York")
IDS = ["drafted-a", "drafted-b", "drafted-c"]


def _publish(ledger: Ledger, clock: FixedClock, **overrides: Any) -> None:
    with ledger.write() as session:
        for sid in IDS:
            publish(session, spec(scheduleId=sid, **overrides), clock)


def _rows(ledger: Ledger) -> dict[str, list[tuple[Any, ...]]]:
    with ledger.read() as session:
        found = session.execute(
            select(Occurrence.schedule_id, Occurrence.revision, Occurrence.position_utc, Occurrence.state).order_by(
                Occurrence.schedule_id, Occurrence.position_utc
            )
        ).all()
    out: dict[str, list[tuple[Any, ...]]] = {}
    for sid, *rest in found:
        out.setdefault(sid, []).append(tuple(rest))
    return out


def _expansions(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    seen: list[str] = []
    real = materialize_module._expand_bounded

    def counted(*args: Any, **kwargs: Any) -> Any:
        seen.append("expanded")
        return real(*args, **kwargs)

    monkeypatch.setattr(materialize_module, "_expand_bounded", counted)
    return seen


def test_a_draft_still_true_is_written_without_expanding_or_reading_revisions(
    ledger: Ledger, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    _publish(ledger, clock)
    expanded = _expansions(monkeypatch)
    with ledger.read() as session:
        drafts = draft_many(session, IDS, clock)
    assert len(expanded) == 3
    with ledger.write() as session, statements(ledger) as sent:
        results = materialize_drafted(session, drafts, IDS)
    assert len(expanded) == 3  # nothing expanded under the lock
    assert not [s for s in sent if "FROM revisions" in s]
    assert [(r.schedule_id, r.inserted) for r in results] == [(sid, 14) for sid in IDS]
    rows = _rows(ledger)
    assert {sid: len(found) for sid, found in rows.items()} == dict.fromkeys(IDS, 14)


def test_drafted_writes_what_materialize_many_writes(ledger: Ledger, clock: FixedClock) -> None:
    """The same schedules, drafted then written, and materialized in one call: the same rows."""
    _publish(ledger, clock)
    with ledger.read() as session:
        drafts = draft_many(session, IDS[:2], clock)
    with ledger.write() as session:
        drafted = materialize_drafted(session, drafts, IDS[:2])
    with ledger.write() as session:
        direct = materialize_many(session, IDS[2:], clock)
    assert [r.inserted for r in drafted + direct] == [14, 14, 14]
    rows = _rows(ledger)
    assert rows[IDS[0]] == rows[IDS[1]] == rows[IDS[2]]


@pytest.mark.parametrize("change", ["publish", "pause", "disable", "materialized"])
def test_a_draft_made_stale_is_worked_out_again_under_the_lock(
    ledger: Ledger, clock: FixedClock, monkeypatch: pytest.MonkeyPatch, change: str
) -> None:
    """Between the draft and the write, the second schedule moves (a new revision, a pause, a
    disable, another engine's materialization): it and those after it are worked out again
    from the rows read under the lock; the first is written as drafted."""
    _publish(ledger, clock)
    with ledger.read() as session:
        drafts = draft_many(session, IDS, clock)
    with ledger.write() as session:
        if change == "publish":
            publish(session, spec(scheduleId=IDS[1], revision=2, rule="FREQ=DAILY;BYHOUR=4;BYMINUTE=0"), clock)
        elif change == "pause":
            pause(session, IDS[1], clock)
        elif change == "disable":
            disable(session, IDS[1], clock)
        else:
            materialize_many(session, [IDS[1]], clock, until=clock.now() + timedelta(days=3))
    expanded = _expansions(monkeypatch)
    with ledger.write() as session:
        results = materialize_drafted(session, drafts, IDS)
    assert len(expanded) == (1 if change == "disable" else 2)  # the first schedule's draft held
    by_id = {r.schedule_id: r for r in results}
    assert by_id[IDS[0]].inserted == by_id[IDS[2]].inserted == 14
    rows = _rows(ledger)
    if change == "publish":  # the new revision's 04:00, never the old revision's rows past its cutover
        assert {revision for revision, *_ in rows[IDS[1]]} == {2}
        assert {at.astimezone(NEW_YORK).hour for _, at, _ in rows[IDS[1]]} == {4}
    elif change == "disable":
        assert IDS[1] not in rows and by_id[IDS[1]].skipped == "the schedule is disabled"
    else:
        assert len(rows[IDS[1]]) == 14
    with ledger.read() as session:
        count = session.scalar(select(func.count()).select_from(Occurrence).where(Occurrence.schedule_id == IDS[1]))
        cursor = session.scalar(select(Schedule.cursor_utc).where(Schedule.id == IDS[1]))
    assert count == len(rows.get(IDS[1], []))
    assert change == "disable" or cursor == clock.now() + timedelta(days=14)


def test_a_draft_offers_the_interpreter_to_other_threads_after_each_schedule(
    ledger: Ledger, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A thread of the same process writing while a draft computes (the window's pause beside the
    engine it hosts) gets the interpreter between two schedules; the write under the lock does not
    give it away."""
    _publish(ledger, clock)
    offered: list[float] = []

    class Recorded:
        @staticmethod
        def sleep(seconds: float) -> None:
            offered.append(seconds)

    monkeypatch.setattr(materialize_module, "time", Recorded)
    with ledger.read() as session:
        drafts = draft_many(session, IDS, clock)
    assert offered == [0, 0, 0]
    with ledger.write() as session:
        materialize_drafted(session, drafts, IDS)
    assert offered == [0, 0, 0]
