"""The engine's hot path: the one-statement claim against what the engine saw,
the outcome and the next claim in one transaction, RUNNING written by the
lease keeper or with the outcome (docs/contract.md §4, invariants 3-5). Every test
runs on SQLite and PostgreSQL."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import pytest
from sqlalchemy import event, select, update

from core.clock import FixedClock
from core.engine import settle, statements
from core.engine.admin import fence
from core.engine.engine import Engine, PassReport
from core.engine.leases import LeaseKeeper
from core.engine.outcomes import Outcome
from core.engine.statements import OutcomeRaced
from core.ledger.db import Ledger
from core.ledger.models import Attempt, Event, Occurrence
from core.ledger.publish import disable, publish
from core.ledger.states import OccurrenceState as S

from . import engine_stages as stages
from . import spec, utc

TRUE = stages.TRUE


def test_a_gate_moved_since_it_was_seen_loses_to_the_disable(ledger: Ledger, clock: FixedClock) -> None:
    engine, occ_id = stages.due(ledger, clock)
    seen = stages.gate(engine, "daily-ops-summary")
    assert seen is not None
    with ledger.write() as session:
        disable(session, "daily-ops-summary", clock, note="stop")
    assert stages.claim(engine, occ_id, PassReport(), gate=seen, state=S.DUE) is None
    with ledger.read() as session:
        occ = session.get(Occurrence, occ_id)
        assert occ is not None and (occ.state, occ.claim_generation, occ.attempt_count) == (S.DUE, 0, 0)
        assert session.scalars(select(Attempt)).all() == []


def test_a_revision_published_since_takes_the_position(ledger: Ledger, clock: FixedClock) -> None:
    engine, occ_id = stages.due(ledger, clock)
    seen = stages.gate(engine, "daily-ops-summary")
    with ledger.write() as session:
        publish(session, spec(revision=2, cutoverAt="2026-03-02T00:00:00Z", task=TRUE), clock)
    assert stages.claim(engine, occ_id, PassReport(), gate=seen, state=S.DUE) is None


def test_a_fence_since_then_claims_under_the_new_epoch(ledger: Ledger, clock: FixedClock) -> None:
    engine, occ_id = stages.due(ledger, clock)
    seen = stages.gate(engine, "daily-ops-summary")
    assert seen is not None and seen.epoch == 1
    fence(ledger, clock, note="host lost")
    claim = stages.claim(engine, occ_id, PassReport(), gate=seen, state=S.DUE)
    assert claim is not None and claim.epoch == 2


def test_the_one_statement_claim_writes_what_the_careful_one_does(ledger: Ledger, clock: FixedClock) -> None:
    engine, occ_id = stages.due(ledger, clock)
    claim = stages.claim(engine, occ_id, PassReport(), gate=stages.gate(engine, "daily-ops-summary"), state=S.DUE)
    assert claim is not None
    with ledger.read() as session:
        occ = session.get(Occurrence, occ_id)
        attempt = session.get(Attempt, claim.attempt_id)
        event = session.scalars(select(Event).where(Event.occurrence_id == occ_id).order_by(Event.id.desc())).first()
    assert occ is not None and attempt is not None and event is not None
    assert (occ.state, occ.claim_generation, occ.attempt_count, occ.lease_owner) == (
        S.DISPATCHING,
        1,
        1,
        engine.worker,
    )
    assert occ.lease_expires_at == clock.now() + engine.options.lease
    assert (attempt.attempt_number, attempt.claim_generation, attempt.execution_epoch) == (1, 1, 1)
    assert (attempt.worker_host, attempt.worker_pid, attempt.started_at) == (engine.host, engine.pid, clock.now())
    assert attempt.input_digest == claim.command.digest and attempt.finished_at is None
    assert event.data == {"from": "DUE", "to": "DISPATCHING", "reason": None, "attempt": 1, "worker": engine.worker}
    assert claim.identity.scheduled_utc == "2026-03-02T07:30:00Z"


def test_a_quick_run_records_each_state_with_its_event(ledger: Ledger, clock: FixedClock) -> None:
    engine, occ_id = stages.due(ledger, clock)
    engine.run_once()
    with ledger.read() as session:
        moves = [
            (e.data["from"], e.data["to"])
            for e in session.scalars(
                select(Event).where(Event.occurrence_id == occ_id, Event.kind == "occurrence.transitioned")
            )
        ]
        attempt = session.scalars(select(Attempt).where(Attempt.occurrence_id == occ_id)).one()
    assert moves == [("PLANNED", "DUE"), ("DUE", "DISPATCHING"), ("DISPATCHING", "RUNNING"), ("RUNNING", "SUCCEEDED")]
    assert (attempt.exit_status, attempt.error_class, attempt.outcome) == (0, None, S.SUCCEEDED)


@contextmanager
def _counting_commits(ledger: Ledger) -> Iterator[list[int]]:
    count = [0]

    def committed(_connection: Any) -> None:
        count[0] += 1

    event.listen(ledger.engine, "commit", committed)
    try:
        yield count
    finally:
        event.remove(ledger.engine, "commit", committed)


def test_each_outcome_shares_its_transaction_with_the_next_claim(ledger: Ledger, clock: FixedClock) -> None:
    with ledger.write() as session:
        publish(session, spec(rule="FREQ=HOURLY;BYMINUTE=0", cutoverAt="2026-03-02T06:30:00Z", task=TRUE), clock)
    engine = Engine(ledger, clock)
    engine.run_once()
    clock.set(utc("2026-03-02T09:00:10Z"))
    report = PassReport()
    stages.promote(engine, report)  # 07:00Z and 08:00Z are late (the newest made up), 09:00Z is on time
    with ledger.read() as session:
        due = session.scalars(select(Occurrence.nominal_local).where(Occurrence.state == S.DUE)).all()
    assert sorted(due) == ["2026-03-02T03:00:00", "2026-03-02T04:00:00"]
    with _counting_commits(ledger) as commits:
        engine.work_schedule("daily-ops-summary", None, report)
    assert report.outcomes == {"SUCCEEDED": 2}
    assert commits[0] == 1 + 2  # the first claim, then one per outcome (the next claim rides along)


def test_the_lease_keeper_marks_running_and_renews_until_forgotten() -> None:
    marked: list[Sequence[str]] = []
    renewed = threading.Event()
    failed_once = threading.Event()
    seen_mark = threading.Event()

    def mark(claims: Sequence[str]) -> None:
        if not failed_once.is_set():
            failed_once.set()
            raise RuntimeError("database is locked")  # tried again next round
        marked.append(list(claims))
        seen_mark.set()

    def renew(claims: Sequence[str]) -> None:
        renewed.set()

    keeper: LeaseKeeper[str] = LeaseKeeper(
        mark, renew, running_after=0.01, renew_every=0.02, key=lambda c: c, idle_exit=0.05
    )
    keeper.track("occ-1")
    assert seen_mark.wait(10) and renewed.wait(10)
    keeper.forget("occ-1")
    assert marked == [["occ-1"]]
    assert failed_once.is_set()


@pytest.mark.parametrize("effect", ["idempotent", "non_idempotent"])
def test_a_stale_late_result_is_ignored_on_the_hot_path(ledger: Ledger, clock: FixedClock, effect: str) -> None:
    engine, occ_id = stages.due(ledger, clock, task={**TRUE, "effect": effect})
    stale = stages.claim(engine, occ_id, PassReport(), gate=stages.gate(engine, "daily-ops-summary"), state=S.DUE)
    assert stale is not None
    with ledger.write() as session:  # another engine took it over meanwhile
        occ = session.get(Occurrence, occ_id)
        assert occ is not None
        occ.claim_generation += 1
    stages.execute(engine, stale, PassReport())
    with ledger.read() as session:
        occ = session.get(Occurrence, occ_id)
        attempt = session.get(Attempt, stale.attempt_id)
        kinds = [e.kind for e in session.scalars(select(Event).where(Event.occurrence_id == occ_id))]
    assert occ is not None and occ.state is S.DISPATCHING
    assert attempt is not None and attempt.finished_at is not None and attempt.outcome is None
    assert kinds[-1] == "attempt.ignored"


def test_a_stopped_engine_claims_nothing_more(ledger: Ledger, clock: FixedClock) -> None:
    engine, occ_id = stages.due(ledger, clock)
    engine.stop()
    report = PassReport()
    engine.work_schedule("daily-ops-summary", None, report)
    assert report.started == 0
    with ledger.read() as session:
        occ = session.get(Occurrence, occ_id)
        assert occ is not None and occ.state is S.DUE


#: (where the claimed occurrence is, the state its outcome was decided on)
STALE = {
    "the keeper's RUNNING committed meanwhile": (S.RUNNING, S.DISPATCHING),
    "recovery settled it meanwhile": (S.UNKNOWN_EFFECT, S.RUNNING),
}


@pytest.mark.parametrize("case", list(STALE))
def test_an_outcome_decided_on_another_state_writes_nothing(ledger: Ledger, clock: FixedClock, case: str) -> None:
    """An outcome whose compare-and-set finds the occurrence in another state than the one it
    was decided on raises, and its transaction leaves the occurrence, its attempt and the
    log as they were: never an ended attempt beside an occurrence still in flight."""
    actual, seen = STALE[case]
    engine, occ_id = stages.due(ledger, clock)
    claim = stages.claim(engine, occ_id, PassReport(), gate=stages.gate(engine, "daily-ops-summary"), state=S.DUE)
    assert claim is not None
    with ledger.write() as session:
        session.execute(update(Occurrence).where(Occurrence.occurrence_id == occ_id).values(state=actual))
    with ledger.read() as session:
        logged = len(session.scalars(select(Event.id)).all())
    ended = {"finished_at": clock.now(), "exit_status": 0, "error_class": None, "stdout_tail": "", "stderr_tail": ""}
    with pytest.raises(OutcomeRaced, match=f"no longer {seen.value}"), ledger.write() as session:
        settle.settle(
            session,
            settle.Settling(claim.schedule_id, occ_id, seen),
            Outcome(S.SUCCEEDED, "exit 0"),
            clock.now(),
            claim.spec,
            attempt=settle.AttemptEnd(claim.attempt_id, ended | {"task_pid": 4242, "task_started": None}),
        )
    with ledger.read() as session:
        occ = session.get(Occurrence, occ_id)
        attempt = session.get(Attempt, claim.attempt_id)
        assert len(session.scalars(select(Event.id)).all()) == logged
    assert occ is not None and attempt is not None
    assert occ.state is actual
    assert (attempt.finished_at, attempt.outcome, attempt.exit_status) == (None, None, None)


#: (the state the ledger holds, whether the lease keeper told the engine it marked it RUNNING,
#: a fence meanwhile) -> (the occurrence's state after the outcome, whether it was read first)
GUESSES = {
    "still_dispatching": ((S.DISPATCHING, False, False), (S.SUCCEEDED, False)),
    "marked_running": ((S.RUNNING, True, False), (S.SUCCEEDED, False)),
    "running_not_yet_told": ((S.RUNNING, False, False), (S.SUCCEEDED, True)),
    "told_but_rolled_back": ((S.DISPATCHING, True, False), (S.SUCCEEDED, True)),
    "fenced_meanwhile": ((S.DISPATCHING, False, True), (S.DISPATCHING, True)),
}


@pytest.mark.parametrize("case", list(GUESSES))
def test_an_outcome_is_one_compare_and_set_when_its_claim_still_holds(
    ledger: Ledger, clock: FixedClock, monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    """The outcome expects the state this engine last gave its claim: when the occurrence is
    there, with the claim's generation and the ledger's epoch, it moves without being read
    first; when anything differs it is read, and settled or ignored as before."""
    (actual, told, fenced), (after, read_first) = GUESSES[case]
    engine, occ_id = stages.due(ledger, clock)
    claim = stages.claim(engine, occ_id, PassReport(), gate=stages.gate(engine, "daily-ops-summary"), state=S.DUE)
    assert claim is not None
    with ledger.write() as session:
        session.execute(update(Occurrence).where(Occurrence.occurrence_id == occ_id).values(state=actual))
    if told:
        engine.context.marked.add(occ_id)
    if fenced:
        fence(ledger, clock, note="host lost")
    reads: list[str] = []
    real = statements.standing
    monkeypatch.setattr(statements, "standing", lambda session, oid: reads.append(oid) or real(session, oid))
    stages.execute(engine, claim, PassReport())
    with ledger.read() as session:
        occ = session.get(Occurrence, occ_id)
        attempt = session.get(Attempt, claim.attempt_id)
        last = session.scalars(select(Event).where(Event.occurrence_id == occ_id).order_by(Event.id.desc())).first()
    assert occ is not None and attempt is not None and last is not None
    assert (occ.state, bool(reads)) == (after, read_first)
    assert attempt.finished_at is not None
    assert attempt.outcome is (None if fenced else S.SUCCEEDED)
    assert last.kind == ("attempt.ignored" if fenced else "occurrence.transitioned")
    assert occ_id not in engine.context.marked
