"""Typed events: one class per kind, and the data each stores, pinned key by key.

The ``data`` JSON of the events table is read by the window, ``schedctl
events``, the metrics and the attention queue; its keys must not move. Each
case is an event as the ledger's writers build it and the exact data it stored
before the events were typed (keys in the order written).
"""

from __future__ import annotations

import json
from dataclasses import FrozenInstanceError, dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import select, text

from core.ledger import events
from core.ledger.db import Ledger
from core.ledger.events import EVENT_CLASSES, EventKind, NewEvent, stored_data, stored_json
from core.ledger.models import Event
from core.ledger.states import EngineKind, OccurrenceKind, OccurrenceState, ScheduleState

S = OccurrenceState
AT = datetime(2026, 3, 1, 9, 30, tzinfo=UTC)
LATER = AT + timedelta(hours=1)
SID = "daily-ops-summary"
OID = "0192f3c4-0000-7000-8000-000000000001"
HEAD = {"at": AT, "schedule_id": SID, "occurrence_id": OID}

CASES: list[tuple[str, NewEvent, dict[str, Any]]] = [
    (
        "published",
        events.SchedulePublished(
            at=AT, schedule_id=SID, revision=2, cutover_at=LATER, tzdb_version="2025b", cancelled=3
        ),
        {"revision": 2, "cutoverAt": "2026-03-01T10:30:00Z", "tzdbVersion": "2025b", "cancelled": 3},
    ),
    (
        "paused",
        events.SchedulePaused(at=AT, schedule_id=SID, from_=ScheduleState.ACTIVE, note="maintenance", gate_version=2),
        {"from": "active", "note": "maintenance", "gateVersion": 2},
    ),
    (
        "resumed",
        events.ScheduleResumed(at=AT, schedule_id=SID, from_=ScheduleState.PAUSED, note=None, gate_version=3),
        {"from": "paused", "note": None, "gateVersion": 3},
    ),
    (
        "disabled",
        events.ScheduleDisabled(
            at=AT, schedule_id=SID, from_=ScheduleState.ACTIVE, note=None, gate_version=4, disable_generation=1
        ),
        {"from": "active", "note": None, "gateVersion": 4, "disableGeneration": 1},
    ),
    (
        "unreadable",
        events.ScheduleUnreadable(at=AT, schedule_id=SID, revision=2, problems=["rule: unknown part FREQQ"]),
        {"revision": 2, "problems": ["rule: unknown part FREQQ"]},
    ),
    (
        "drift_found",
        events.ScheduleDriftFound(
            at=AT, schedule_id=SID, tzdb_version="2027a", from_tzdb=["2026f"], occurrences=3, largest_shift=3600
        ),
        {"tzdbVersion": "2027a", "fromTzdb": ["2026f"], "occurrences": 3, "largestShift": 3600},
    ),
    (
        "drift_kept",
        events.ScheduleDriftKept(at=AT, schedule_id=SID, tzdb_version="2027a", occurrences=3, note="the law lags"),
        {"tzdbVersion": "2027a", "occurrences": 3, "note": "the law lags"},
    ),
    (
        "shadow_differs",
        events.ScheduleShadowDiffers(
            at=AT,
            schedule_id=SID,
            engine_version="0.2.0",
            from_engine_version="0.1.0",
            tzdb_version="2027a",
            occurrences=2,
            differences=3,
        ),
        {
            "engineVersion": "0.2.0",
            "fromEngineVersion": "0.1.0",
            "tzdbVersion": "2027a",
            "occurrences": 2,
            "differences": 3,
        },
    ),
    (
        "shadow_kept",
        events.ScheduleDriftKept(
            at=AT, schedule_id=SID, tzdb_version="2027a", occurrences=2, note=None, engine_version="0.2.0"
        ),
        {"tzdbVersion": "2027a", "occurrences": 2, "note": None, "engineVersion": "0.2.0"},
    ),
    (
        "materialized",
        events.OccurrencesMaterialized(
            at=AT,
            schedule_id=SID,
            revisions=[1, 2],
            from_utc=AT,
            to_utc=LATER,
            inserted=5,
            states={"PLANNED": 4, "SKIPPED_GAP": 1},
        ),
        {
            "revisions": [1, 2],
            "fromUtc": "2026-03-01T09:30:00Z",
            "toUtc": "2026-03-01T10:30:00Z",
            "inserted": 5,
            "states": {"PLANNED": 4, "SKIPPED_GAP": 1},
        },
    ),
    (
        "expired_counted",
        events.OccurrencesExpired(
            at=AT,
            schedule_id=SID,
            revision=1,
            from_utc=AT,
            to_utc=LATER,
            state=S.MISFIRE_EXPIRED,
            policy="SKIP",
            reason="missed while no engine ran",
            occurrences=240,
        ),
        {
            "revision": 1,
            "fromUtc": "2026-03-01T09:30:00Z",
            "toUtc": "2026-03-01T10:30:00Z",
            "state": "MISFIRE_EXPIRED",
            "policy": "SKIP",
            "reason": "missed while no engine ran",
            "occurrences": 240,
        },
    ),
    (
        "expired_uncounted",
        events.OccurrencesExpired(
            at=AT,
            schedule_id=SID,
            revision=1,
            from_utc=AT,
            to_utc=LATER,
            state=S.MISFIRE_EXPIRED,
            policy="catchUpWindow",
            reason="older than the catch-up window",
            occurrences=None,
        ),
        {
            "revision": 1,
            "fromUtc": "2026-03-01T09:30:00Z",
            "toUtc": "2026-03-01T10:30:00Z",
            "state": "MISFIRE_EXPIRED",
            "policy": "catchUpWindow",
            "reason": "older than the catch-up window",
            "occurrences": None,
        },
    ),
    (
        "transitioned",
        events.OccurrenceTransitioned(**HEAD, from_=S.PLANNED, to=S.DUE, reason=None),
        {"from": "PLANNED", "to": "DUE", "reason": None},
    ),
    (
        "transitioned_claimed",
        events.OccurrenceTransitioned(
            **HEAD, from_=S.DUE, to=S.DISPATCHING, reason=None, attempt=1, worker="host:1234:abcd"
        ),
        {"from": "DUE", "to": "DISPATCHING", "reason": None, "attempt": 1, "worker": "host:1234:abcd"},
    ),
    (
        "transitioned_running",
        events.OccurrenceTransitioned(**HEAD, from_=S.DISPATCHING, to=S.RUNNING, reason=None, attempt=2),
        {"from": "DISPATCHING", "to": "RUNNING", "reason": None, "attempt": 2},
    ),
    (
        "transitioned_cancelled",
        events.OccurrenceTransitioned(
            **HEAD, from_=S.PLANNED, to=S.CANCELLED, reason="superseded by revision 3", revision=3
        ),
        {"from": "PLANNED", "to": "CANCELLED", "reason": "superseded by revision 3", "revision": 3},
    ),
    (
        "transitioned_reconciled_without_note",
        events.OccurrenceTransitioned(**HEAD, from_=S.UNKNOWN_EFFECT, to=S.SUCCEEDED, reason="r", decision="happened"),
        {"from": "UNKNOWN_EFFECT", "to": "SUCCEEDED", "reason": "r", "decision": "happened", "note": None},
    ),
    (
        "transitioned_reconciled_with_note",
        events.OccurrenceTransitioned(
            **HEAD, from_=S.UNKNOWN_EFFECT, to=S.RETRY_WAIT, reason="r", decision="not-happened", note="checked"
        ),
        {"from": "UNKNOWN_EFFECT", "to": "RETRY_WAIT", "reason": "r", "decision": "not-happened", "note": "checked"},
    ),
    (
        "created_manual",
        events.OccurrenceCreated(**HEAD, occurrence_kind=OccurrenceKind.MANUAL, reason="run now"),
        {"kind": "manual", "reason": "run now"},
    ),
    (
        "created_backfill",
        events.OccurrenceCreated(**HEAD, occurrence_kind=OccurrenceKind.BACKFILL, reason="backfill", of="old-id"),
        {"kind": "backfill", "reason": "backfill", "of": "old-id"},
    ),
    (
        "acknowledged",
        events.OccurrenceAcknowledged(**HEAD, action="acknowledged", note=None, state=S.FAILED),
        {"action": "acknowledged", "note": None, "state": "FAILED"},
    ),
    (
        "acknowledged_retried",
        events.OccurrenceAcknowledged(**HEAD, action="retried", note="again", state=S.FAILED, retried_as="new-id"),
        {"action": "retried", "note": "again", "state": "FAILED", "retriedAs": "new-id"},
    ),
    (
        "attempt_ignored",
        events.AttemptIgnored(**HEAD, attempt=1, state=S.RUNNING, reason="late result of attempt 1 ignored"),
        {"attempt": 1, "state": "RUNNING", "reason": "late result of attempt 1 ignored"},
    ),
    (
        "attempt_orphaned",
        events.AttemptOrphaned(
            **HEAD, attempt=1, host="box", pid=4242, started=1772357400.25, reason="its engine is gone"
        ),
        {"attempt": 1, "host": "box", "pid": 4242, "started": 1772357400.25, "reason": "its engine is gone"},
    ),
    (
        "fenced",
        events.LedgerFenced(at=AT, epoch=7, note="moved to a new host"),
        {"epoch": 7, "note": "moved to a new host"},
    ),
    (
        "worker_died_idle",
        events.EngineWorkerDied(at=AT, schedule_id=SID, worker="w1", error="ValueError: boom", restarted=True),
        {"worker": "w1", "error": "ValueError: boom", "restarted": True},
    ),
    (
        "worker_died_holding",
        events.EngineWorkerDied(**HEAD, worker="w1", error="ValueError: boom", restarted=False, attempt=3),
        {"worker": "w1", "error": "ValueError: boom", "restarted": False, "attempt": 3},
    ),
    (
        "found_gone",
        events.EngineFoundGone(
            at=AT, engine="e-1", engine_kind=EngineKind.HEADLESS, host="box", pid=99, last_heartbeat=AT
        ),
        {"engine": "e-1", "kind": "headless", "host": "box", "pid": 99, "lastHeartbeat": "2026-03-01T09:30:00Z"},
    ),
    (
        "engine_started",
        events.EngineStarted(at=AT, engine="e-1", engine_kind=EngineKind.APP, host="alpha", pid=99),
        {"engine": "e-1", "kind": "app", "host": "alpha", "pid": 99},
    ),
    (
        "engine_stopped",
        events.EngineStopped(at=AT, engine="e-1"),
        {"engine": "e-1"},
    ),
]


def test_every_kind_has_exactly_one_class() -> None:
    assert sorted(EVENT_CLASSES) == sorted(EventKind)
    for kind, cls in EVENT_CLASSES.items():
        assert cls.kind is kind, cls
    with pytest.raises(TypeError, match="already has a class"):

        @dataclass(frozen=True, kw_only=True)
        class _Again(NewEvent):
            kind = EventKind.LEDGER_FENCED


def test_every_kind_is_pinned_here() -> None:
    assert {event.kind for _, event, _ in CASES} == set(EventKind)


@pytest.mark.parametrize(("event", "data"), [pytest.param(e, d, id=i) for i, e, d in CASES])
def test_stored_data_keeps_the_keys(event: NewEvent, data: dict[str, Any]) -> None:
    stored = stored_data(event)
    assert list(stored) == list(data)  # the order written, too
    assert stored == data


@pytest.mark.parametrize(("event", "data"), [pytest.param(e, d, id=i) for i, e, d in CASES])
def test_stored_json_is_the_data_as_json_writes_it(event: NewEvent, data: dict[str, Any]) -> None:
    assert stored_json(event) == json.dumps(data)


_TEXTS = st.none() | st.text(max_size=40)


@given(
    old=st.sampled_from(list(S)),
    new=st.sampled_from(list(S)),
    reason=_TEXTS,
    attempt=st.none() | st.integers(min_value=-(2**70), max_value=2**70),
    worker=_TEXTS,
    revision=st.none() | st.integers(min_value=1, max_value=10**6),
    decision=_TEXTS,
    note=_TEXTS,
)
def test_a_transition_as_json_is_its_data_as_json_writes_it(
    old: S,
    new: S,
    reason: str | None,
    attempt: int | None,
    worker: str | None,
    revision: int | None,
    decision: str | None,
    note: str | None,
) -> None:
    """The engine's transitions are put together from pieces (``stored_json``): the same text as
    the dictionary's, whatever the states, the text (quotes, control characters, any script)
    and the fields present."""
    event = events.OccurrenceTransitioned(
        at=AT,
        schedule_id=SID,
        occurrence_id=OID,
        from_=old,
        to=new,
        reason=reason,
        attempt=attempt,
        worker=worker,
        revision=revision,
        decision=decision,
        note=note,
    )
    text = stored_json(event)
    assert text == json.dumps(stored_data(event))
    assert json.loads(text)["from"] == old.value


def test_a_transition_with_a_value_of_another_type_is_written_as_its_data() -> None:
    """A bool is an int to Python but ``true`` to JSON: such a value takes the general way."""
    event = events.OccurrenceTransitioned(
        at=AT, schedule_id=SID, occurrence_id=OID, from_=S.DUE, to=S.DISPATCHING, reason=None, attempt=True
    )
    assert stored_json(event) == '{"from": "DUE", "to": "DISPATCHING", "reason": null, "attempt": true}'


def test_events_are_frozen() -> None:
    event = events.LedgerFenced(at=AT, epoch=1, note=None)
    with pytest.raises(FrozenInstanceError):
        event.epoch = 2  # type: ignore[misc]


def test_every_event_round_trips_through_the_ledger(ledger: Ledger) -> None:
    with ledger.write() as session:
        events.append_many(session, (event for _, event, _ in CASES))
    with ledger.read() as session:
        rows = session.scalars(select(Event).order_by(Event.id)).all()
    assert [(r.kind, r.schedule_id, r.occurrence_id, r.data) for r in rows] == [
        (event.kind.value, event.schedule_id, event.occurrence_id, data) for _, event, data in CASES
    ]
    assert [r.at for r in rows] == [AT] * len(CASES)
    with ledger.read() as session:  # the text itself, as JSON writes the dictionary
        stored = (
            session.execute(
                text(
                    "SELECT data::text FROM events ORDER BY id"
                    if ledger.dialect == "postgresql"
                    else "SELECT data FROM events ORDER BY id"
                )
            )
            .scalars()
            .all()
        )
    assert [json.loads(t) for t in stored] == [data for _, _, data in CASES]
    if ledger.dialect == "sqlite":
        assert stored == [json.dumps(data) for _, _, data in CASES]
