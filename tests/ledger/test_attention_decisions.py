"""A person's decision on a FAILED occurrence is one transaction: "run again" makes the
new run and acknowledges the failed one together, or does neither. On SQLite and PostgreSQL."""

from __future__ import annotations

import sys
from typing import Any

import pytest
from sqlalchemy import func, select

from core.clock import FixedClock
from core.engine import admin
from core.engine.admin import AdminError, acknowledge_failed, retry_failed, run_now
from core.engine.engine import Engine
from core.ledger.db import Ledger
from core.ledger.events import EventKind
from core.ledger.models import Event, Occurrence
from core.ledger.publish import publish
from core.ledger.states import OccurrenceKind, OccurrenceState

from . import spec

SID = "daily-ops-summary"
FAILS = {"argv": [sys.executable, "-c", "raise SystemExit(3)"], "effect": "idempotent"}


def failed_run(ledger: Ledger, clock: FixedClock) -> str:
    with ledger.write() as session:
        publish(session, spec(task=FAILS, retry={"maxAttempts": 1}), clock)
    occurrence_id = run_now(ledger, SID, clock)
    Engine(ledger, clock).run_once()
    with ledger.read() as session:
        occ = session.get(Occurrence, occurrence_id)
        assert occ is not None and occ.state is OccurrenceState.FAILED
    return occurrence_id


def manual_runs(ledger: Ledger) -> int:
    with ledger.read() as session:
        count = session.scalar(
            select(func.count()).select_from(Occurrence).where(Occurrence.kind == OccurrenceKind.MANUAL)
        )
    return int(count or 0)


def decisions(ledger: Ledger, occurrence_id: str) -> list[str]:
    """The actions a person took on the occurrence, oldest first."""
    with ledger.read() as session:
        rows = session.scalars(
            select(Event.data).where(
                Event.occurrence_id == occurrence_id, Event.kind == EventKind.OCCURRENCE_ACKNOWLEDGED.value
            )
        ).all()
    return [data["action"] for data in rows]


def test_run_again_makes_the_new_run_and_acknowledges_together(ledger: Ledger, clock: FixedClock) -> None:
    failed = failed_run(ledger, clock)
    new_id = retry_failed(ledger, failed, clock, "try once more")
    with ledger.read() as session:
        new = session.get(Occurrence, new_id)
        assert new is not None and new.state is OccurrenceState.DUE
    assert manual_runs(ledger) == 2
    assert decisions(ledger, failed) == ["retried"]


def test_a_failure_between_the_two_leaves_nothing_half_done(
    ledger: Ledger, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    failed = failed_run(ledger, clock)

    def broken(*_args: Any, **_kwargs: Any) -> None:
        raise RuntimeError("the ledger went away")

    monkeypatch.setattr(admin, "acknowledge", broken)
    with pytest.raises(RuntimeError):
        retry_failed(ledger, failed, clock)
    assert manual_runs(ledger) == 1  # no new run without its acknowledgement
    assert decisions(ledger, failed) == []


def test_a_decision_on_what_is_no_longer_failed_is_refused(ledger: Ledger, clock: FixedClock) -> None:
    failed = failed_run(ledger, clock)
    acknowledge_failed(ledger, failed, clock, "seen")
    retry_failed(ledger, failed, clock)  # still FAILED: acknowledged runs may still be run again
    with ledger.write() as session:
        publish(session, spec(task=FAILS, retry={"maxAttempts": 1}, revision=2), clock)
    ok = run_now(ledger, SID, clock)
    with pytest.raises(AdminError, match="is DUE, not FAILED"):
        retry_failed(ledger, ok, clock)
    with pytest.raises(AdminError, match="no occurrence occ-nothing"):
        acknowledge_failed(ledger, "occ-nothing", clock)
