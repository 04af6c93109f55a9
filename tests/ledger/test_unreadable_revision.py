"""A published revision this Tidemark refuses to read (an older Tidemark let it through:
a fraction of a second, a NUL byte) holds its own schedule, never the engine.

On SQLite and PostgreSQL."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

import pytest
from sqlalchemy import select, update

from core.clock import FixedClock
from core.engine.admin import run_now
from core.engine.engine import Engine
from core.ledger.db import Ledger
from core.ledger.events import EventKind
from core.ledger.models import Event, Occurrence, Revision
from core.ledger.publish import publish
from core.ledger.states import OccurrenceState

from . import DAILY, spec

BAD = "held-one"
GOOD = "daily-ops-summary"
PRINT_OK = {"argv": [sys.executable, "-c", "print('ok')"], "effect": "non_idempotent"}


def _interval_fraction(data: dict[str, Any]) -> None:
    data.update(kind="interval", every="PT0.5S", anchor="2026-01-01T00:00:00Z")
    for key in ("rule", "start", "gapPolicy", "foldPolicy"):
        data.pop(key, None)


def _nul_in_argv(data: dict[str, Any]) -> None:
    data["task"] = {"argv": [sys.executable, "-c", "print('a\0b')"], "effect": "non_idempotent"}


def _not_json(data: dict[str, Any]) -> None:
    data.clear()


#: How a stored revision is spoiled, and a word the reason holds.
SPOILED: list[Any] = [
    pytest.param(_interval_fraction, "whole number of seconds", id="fraction"),
    pytest.param(_nul_in_argv, "NUL", id="nul"),
    pytest.param(_not_json, "", id="empty"),
]


def spoil(ledger: Ledger, how: Callable[[dict[str, Any]], None]) -> None:
    """Rewrite the held schedule's stored revision as an older Tidemark could have stored it."""
    with ledger.write() as session:
        text = session.scalar(select(Revision.spec_json).where(Revision.schedule_id == BAD))
        assert text is not None
        data = json.loads(text)
        how(data)
        session.execute(
            update(Revision).where(Revision.schedule_id == BAD).values(spec_json=json.dumps(data) if data else "")
        )


def states(ledger: Ledger, schedule_id: str) -> list[OccurrenceState]:
    with ledger.read() as session:
        return list(session.scalars(select(Occurrence.state).where(Occurrence.schedule_id == schedule_id)))


@pytest.mark.parametrize(("how", "word"), SPOILED)
def test_an_unreadable_revision_holds_its_schedule_and_no_other(
    ledger: Ledger, clock: FixedClock, how: Callable[[dict[str, Any]], None], word: str
) -> None:
    with ledger.write() as session:
        publish(session, spec(task=PRINT_OK), clock)
        publish(session, spec(dict(DAILY, scheduleId=BAD), task=PRINT_OK), clock)
    held_run = run_now(ledger, BAD, clock)  # due now, before it was spoiled
    spoil(ledger, how)
    good_run = run_now(ledger, GOOD, clock)

    report = Engine(ledger, clock).run_once()

    assert list(report.held) == [BAD]
    assert report.held[BAD].startswith("revision 1 cannot be read by this Tidemark: ")
    assert word in report.held[BAD]
    with ledger.read() as session:
        held = session.get(Occurrence, held_run)
        good = session.get(Occurrence, good_run)
        assert held is not None and good is not None
        assert (held.state, good.state) == (OccurrenceState.DUE, OccurrenceState.SUCCEEDED)
    assert OccurrenceState.PLANNED in states(ledger, GOOD)  # the other schedule was materialized
    assert states(ledger, BAD) == [OccurrenceState.DUE]  # nothing more materialized for the held one


def test_the_hold_is_recorded_once_per_revision_whatever_the_engines(ledger: Ledger, clock: FixedClock) -> None:
    with ledger.write() as session:
        publish(session, spec(dict(DAILY, scheduleId=BAD), task=PRINT_OK), clock)
    spoil(ledger, _interval_fraction)
    for _ in range(2):
        engine = Engine(ledger, clock)
        engine.run_once()
        engine.run_once()
    with ledger.read() as session:
        said = session.scalars(select(Event).where(Event.kind == EventKind.SCHEDULE_UNREADABLE.value)).all()
    assert [(e.schedule_id, e.data["revision"]) for e in said] == [(BAD, 1)]
    assert any("every: " in p for p in said[0].data["problems"])


def test_a_corrected_revision_releases_the_schedule(ledger: Ledger, clock: FixedClock) -> None:
    """Revision 2 reads: the schedule runs again; only what still needs revision 1 waits."""
    with ledger.write() as session:
        publish(session, spec(dict(DAILY, scheduleId=BAD), task=PRINT_OK), clock)
    old_run = run_now(ledger, BAD, clock)
    spoil(ledger, _nul_in_argv)
    assert list(Engine(ledger, clock).run_once().held) == [BAD]
    with ledger.write() as session:
        publish(session, spec(dict(DAILY, scheduleId=BAD, revision=2), task=PRINT_OK), clock)
    new_run = run_now(ledger, BAD, clock)
    report = Engine(ledger, clock).run_once()
    assert report.held[BAD].startswith("revision 1 cannot be read")  # still said: a run of it waits
    with ledger.read() as session:
        old = session.get(Occurrence, old_run)
        new = session.get(Occurrence, new_run)
        assert old is not None and new is not None
        assert (old.revision, old.state) == (1, OccurrenceState.DUE)
        assert (new.revision, new.state) == (2, OccurrenceState.SUCCEEDED)
        planned = session.scalars(
            select(Occurrence.revision).where(
                Occurrence.schedule_id == BAD, Occurrence.state == OccurrenceState.PLANNED
            )
        ).all()
    assert planned and set(planned) == {2}  # materialized again, under the corrected revision
