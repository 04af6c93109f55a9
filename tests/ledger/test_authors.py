"""Every decision has an author: each command records who asked, in every event it writes
(``events.actor_user``, ``actor_host``, and on PostgreSQL the role, ``actor_role``), and the
engine records itself. On SQLite and PostgreSQL."""

from __future__ import annotations

import sys
from collections.abc import Callable
from datetime import timedelta

import pytest
from sqlalchemy import select, update
from sqlalchemy.orm import Session

from core.clock import FixedClock
from core.engine import admin
from core.engine.engine import Engine
from core.engine.presence import announce, retire
from core.engine.reconcile import Decision, reconcile
from core.ledger import events
from core.ledger.db import Ledger, NoActorError
from core.ledger.events import EventKind
from core.ledger.models import Event, Occurrence
from core.ledger.publish import Gate, change_gate, publish_to
from core.ledger.states import EngineKind, OccurrenceState
from core.team.actor import Actor, os_user

from . import spec

SID = "daily-ops-summary"
ALICE = Actor("alice", "alpha")
FAILS = {"argv": [sys.executable, "-c", "raise SystemExit(3)"], "effect": "idempotent"}


def role(ledger: Ledger) -> str | None:
    """The role the test server's connections use: ``postgres``; SQLite has none."""
    return "postgres" if ledger.dialect == "postgresql" else None


def authors(ledger: Ledger, after: int = 0) -> list[tuple[str, str | None, str | None, str | None]]:
    """(kind, user, host, role) of every event after id ``after``, oldest first."""
    with ledger.read() as session:
        rows = session.execute(
            select(Event.kind, Event.actor_user, Event.actor_host, Event.actor_role)
            .where(Event.id > after)
            .order_by(Event.id)
        ).all()
    return [tuple(r) for r in rows]  # type: ignore[misc]


def last_id(ledger: Ledger) -> int:
    with ledger.read() as session:
        return int(session.scalar(select(Event.id).order_by(Event.id.desc()).limit(1)) or 0)


def published(ledger: Ledger, clock: FixedClock, **overrides: object) -> None:
    """Published on host beta by this OS user, so that an engine on beta runs it (core.team.placement)."""
    publish_to(ledger, spec(**overrides), clock, check_task=False, actor=Actor(os_user(), "beta"))


def only_by(ledger: Ledger, after: int, kinds: set[str]) -> None:
    """Every event after ``after`` is alice's (with the session's role), and the kinds are these."""
    found = authors(ledger, after)
    assert {kind for kind, *_ in found} == kinds
    assert {tuple(who) for _, *who in found} == {("alice", "alpha", role(ledger))}


def test_publish_records_its_publisher(ledger: Ledger, clock: FixedClock) -> None:
    publish_to(ledger, spec(), clock, check_task=False, actor=ALICE)
    only_by(ledger, 0, {EventKind.SCHEDULE_PUBLISHED.value})


@pytest.mark.parametrize(
    ("gates", "kinds"),
    [
        ([Gate.PAUSE], {"schedule.paused"}),
        ([Gate.PAUSE, Gate.RESUME], {"schedule.paused", "schedule.resumed"}),
        ([Gate.DISABLE], {"schedule.disabled"}),
    ],
    ids=["pause", "resume", "disable"],
)
def test_gates_record_who_moved_them(ledger: Ledger, clock: FixedClock, gates: list[Gate], kinds: set[str]) -> None:
    published(ledger, clock)
    before = last_id(ledger)
    for gate in gates:
        change_gate(ledger, SID, gate, clock, "maintenance", actor=ALICE)
    only_by(ledger, before, kinds)


def test_run_now_backfill_and_fence_record_who_asked(ledger: Ledger, clock: FixedClock) -> None:
    published(ledger, clock, cutoverAt="2026-02-20T00:00:00Z")
    before = last_id(ledger)
    admin.run_now(ledger, SID, clock, actor=ALICE)
    only_by(ledger, before, {"occurrence.created"})
    before = last_id(ledger)
    start = clock.now() - timedelta(days=3)
    result = admin.backfill(ledger, SID, start, clock.now(), clock, actor=ALICE)
    assert result.created or result.queued
    # The range is materialized first, in the same transaction: alice's too.
    assert {k for k, *_ in authors(ledger, before)} & {"occurrence.created", "occurrence.transitioned"}
    assert {tuple(who) for _, *who in authors(ledger, before)} == {("alice", "alpha", role(ledger))}
    before = last_id(ledger)
    admin.fence(ledger, clock, "moved", actor=ALICE)
    only_by(ledger, before, {"ledger.fenced"})


def test_reconcile_records_who_decided(ledger: Ledger, clock: FixedClock) -> None:
    published(ledger, clock)
    occurrence_id = admin.run_now(ledger, SID, clock)
    with ledger.write() as session:  # as a lost outcome leaves it
        session.execute(
            update(Occurrence)
            .where(Occurrence.occurrence_id == occurrence_id)
            .values(state=OccurrenceState.UNKNOWN_EFFECT)
        )
    before = last_id(ledger)
    reconcile(ledger, occurrence_id, Decision.NOT_HAPPENED, clock, "checked the mailbox", actor=ALICE)
    only_by(ledger, before, {"occurrence.transitioned"})


@pytest.mark.parametrize("retry", [False, True], ids=["acknowledge", "retry"])
def test_a_failure_dealt_with_records_who(
    ledger: Ledger, clock: FixedClock, retry: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TIDEMARK_HOSTNAME", "beta")  # the engine runs where the schedule was published
    published(ledger, clock, task=FAILS, retry={"maxAttempts": 1})
    occurrence_id = admin.run_now(ledger, SID, clock)
    Engine(ledger, clock).run_once()
    before = last_id(ledger)
    if retry:
        admin.retry_failed(ledger, occurrence_id, clock, actor=ALICE)
        kinds = {"occurrence.created", "occurrence.acknowledged"}
    else:
        admin.acknowledge_failed(ledger, occurrence_id, clock, "known", actor=ALICE)
        kinds = {"occurrence.acknowledged"}
    only_by(ledger, before, kinds)


def test_the_engine_records_itself(ledger: Ledger, clock: FixedClock, monkeypatch: pytest.MonkeyPatch) -> None:
    """An engine's own events (its start and stop, its state changes) carry its OS user and host."""
    monkeypatch.setenv("TIDEMARK_HOSTNAME", "beta")
    published(ledger, clock)
    before = last_id(ledger)
    engine_id = announce(ledger, clock, EngineKind.HEADLESS)
    Engine(ledger, clock).run_once()
    retire(ledger, clock, engine_id)
    retire(ledger, clock, engine_id)  # idempotent: one stop
    found = authors(ledger, before)
    kinds = [kind for kind, *_ in found]
    assert kinds[0] == EventKind.ENGINE_STARTED.value and kinds.count(EventKind.ENGINE_STOPPED.value) == 1
    assert EventKind.OCCURRENCES_MATERIALIZED.value in kinds
    assert {tuple(who) for _, *who in found} == {(os_user(), "beta", role(ledger))}


def test_started_and_stopped_name_the_engine(ledger: Ledger, clock: FixedClock) -> None:
    engine_id = announce(ledger, clock, EngineKind.APP, host="alpha")
    retire(ledger, clock, engine_id)
    with ledger.read() as session:
        rows = session.execute(select(Event.kind, Event.data).order_by(Event.id)).all()
    assert [kind for kind, _ in rows] == ["engine.started", "engine.stopped"]
    assert rows[0][1]["engine"] == engine_id and rows[0][1]["kind"] == "app" and rows[0][1]["host"] == "alpha"
    assert rows[1][1] == {"engine": engine_id}


def test_the_ledger_actor_is_the_default(ledger: Ledger, clock: FixedClock) -> None:
    ledger.actor = ALICE
    try:
        published_by_default = spec()
        publish_to(ledger, published_by_default, clock, check_task=False)
    finally:
        ledger.actor = None
    only_by(ledger, 0, {"schedule.published"})


def test_an_event_outside_a_ledger_write_is_refused(ledger: Ledger, clock: FixedClock) -> None:
    """No writer can forget the author: a session no Ledger opened for writing has none."""
    write: Callable[[Session], None] = lambda session: events.append(  # noqa: E731
        session, events.LedgerFenced(at=clock.now(), epoch=2, note=None)
    )
    with Session(ledger.engine) as session, pytest.raises(NoActorError):
        write(session)
    assert authors(ledger) == []
