"""The engine on a fixed clock: what runs, what is skipped, and what each
outcome becomes (docs/contract.md §4, invariants 4-7 and 9). Every test runs on SQLite
and PostgreSQL."""

from __future__ import annotations

import sys
from datetime import datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import select

from core.clock import FixedClock
from core.engine.engine import Engine, EngineOptions, PassReport
from core.engine.reconcile import Decision, ReconcileError, reconcile
from core.ledger.db import Ledger
from core.ledger.models import Attempt, Event, Occurrence
from core.ledger.publish import disable, publish
from core.ledger.states import OccurrenceState as S

from . import DAILY, by_nominal, spec, utc
from . import engine_stages as stages

PY = sys.executable


def put(ledger: Ledger, clock: FixedClock, **overrides: Any) -> None:
    with ledger.write() as session:
        publish(session, spec(**overrides), clock)


def run_at(ledger: Ledger, clock: FixedClock, when: str, engine: Engine | None = None) -> Engine:
    clock.set(utc(when))
    engine = engine or Engine(ledger, clock, EngineOptions(max_workers=2))
    engine.run_once()
    return engine


def states(ledger: Ledger, sid: str = "daily-ops-summary") -> dict[str, str]:
    with ledger.read() as session:
        return {f"{k[0]}#{k[1]}": o.state.value for k, o in by_nominal(session, sid).items()}


def attempts(ledger: Ledger) -> list[Attempt]:
    with ledger.read() as session:
        return list(session.scalars(select(Attempt).order_by(Attempt.started_at, Attempt.attempt_number)))


def wait_for_state(ledger: Ledger, key: str, state: str, limit: float = 30.0) -> None:
    """Wait (bounded) until a task started in the background is seen in ``state``."""
    import time

    deadline = time.monotonic() + limit
    while states(ledger).get(key) != state:
        assert time.monotonic() < deadline, f"{key} never reached {state}"
        time.sleep(0.01)


def task(script: str, **extra: Any) -> dict[str, Any]:
    return {"argv": [PY, "-c", script], **extra}


ECHO_UTC = task("import os; print(os.environ['SCHED_SCHEDULED_UTC'], os.environ['SCHED_OCCURRENCE_ID'])")


def test_spring_gap_skip_never_runs_the_missing_time(ledger: Ledger, clock: FixedClock) -> None:
    put(ledger, clock, cutoverAt="2026-03-07T00:00:00Z", task=ECHO_UTC)
    engine = run_at(ledger, clock, "2026-03-07T07:30:30Z")
    run_at(ledger, clock, "2026-03-08T08:00:00Z", engine)
    run_at(ledger, clock, "2026-03-09T06:30:30Z", engine)
    seen = states(ledger)
    assert seen["2026-03-07T02:30:00#0"] == "SUCCEEDED"
    assert seen["2026-03-08T02:30:00#0"] == "SKIPPED_GAP"
    assert seen["2026-03-09T02:30:00#0"] == "SUCCEEDED"
    assert [a.stdout_tail.split()[0] for a in attempts(ledger) if a.stdout_tail] == [
        "2026-03-07T07:30:00Z",
        "2026-03-09T06:30:00Z",
    ]


def test_spring_gap_shift_forward_runs_at_the_transition(ledger: Ledger, clock: FixedClock) -> None:
    put(ledger, clock, cutoverAt="2026-03-08T00:00:00Z", gapPolicy="SHIFT_FORWARD", task=ECHO_UTC)
    run_at(ledger, clock, "2026-03-08T07:00:20Z")
    assert states(ledger)["2026-03-08T02:30:00#0"] == "SUCCEEDED"
    (only,) = attempts(ledger)
    assert only.stdout_tail is not None and only.stdout_tail.split()[0] == "2026-03-08T07:00:00Z"


def test_fall_back_both_runs_each_reading_once(ledger: Ledger, clock: FixedClock) -> None:
    put(
        ledger,
        clock,
        rule="FREQ=DAILY;BYHOUR=1;BYMINUTE=30",
        foldPolicy="BOTH",
        cutoverAt="2026-10-31T12:00:00Z",
        task=ECHO_UTC,
    )
    engine = run_at(ledger, clock, "2026-11-01T05:30:10Z")
    run_at(ledger, clock, "2026-11-01T06:30:10Z", engine)
    run_at(ledger, clock, "2026-11-01T06:45:00Z", engine)
    seen = states(ledger)
    assert seen["2026-11-01T01:30:00#0"] == "SUCCEEDED"
    assert seen["2026-11-01T01:30:00#1"] == "SUCCEEDED"
    outs = [a.stdout_tail.split() for a in attempts(ledger) if a.stdout_tail]
    assert [o[0] for o in outs] == ["2026-11-01T05:30:00Z", "2026-11-01T06:30:00Z"]
    assert outs[0][1] != outs[1][1]  # two occurrences, two ids


def test_clean_failure_retries_with_backoff_then_fails(ledger: Ledger, clock: FixedClock) -> None:
    put(
        ledger,
        clock,
        cutoverAt="2026-03-02T00:00:00Z",
        task=task("import sys; sys.stderr.write('smtp refused'); sys.exit(3)"),
        retry={"maxAttempts": 2, "initialBackoff": "PT30S"},
    )
    engine = run_at(ledger, clock, "2026-03-02T07:30:10Z")
    with ledger.read() as session:
        occ = by_nominal(session)[("2026-03-02T02:30:00", 0)]
        assert occ.state is S.RETRY_WAIT
        assert occ.retry_at == utc("2026-03-02T07:30:40Z")
    run_at(ledger, clock, "2026-03-02T07:30:30Z", engine)  # backoff not over: nothing happens
    assert len(attempts(ledger)) == 1
    run_at(ledger, clock, "2026-03-02T07:30:41Z", engine)
    assert states(ledger)["2026-03-02T02:30:00#0"] == "FAILED"
    runs = attempts(ledger)
    assert [(a.attempt_number, a.exit_status, a.error_class, a.outcome) for a in runs] == [
        (1, 3, None, S.RETRY_WAIT),
        (2, 3, None, S.FAILED),
    ]
    assert runs[0].stderr_tail == "smtp refused"
    assert runs[0].input_digest == runs[1].input_digest
    assert runs[0].claim_generation == 1 and runs[1].claim_generation == 2


def test_hung_non_idempotent_task_waits_for_a_person(ledger: Ledger, clock: FixedClock) -> None:
    put(
        ledger,
        clock,
        cutoverAt="2026-03-02T00:00:00Z",
        task=task("import time; print('sent', flush=True); time.sleep(60)", timeout="PT1S"),
    )
    engine = run_at(ledger, clock, "2026-03-02T07:30:10Z")
    assert states(ledger)["2026-03-02T02:30:00#0"] == "UNKNOWN_EFFECT"
    (only,) = attempts(ledger)
    assert (only.error_class, only.outcome) == ("timeout", S.UNKNOWN_EFFECT)
    assert only.stdout_tail == "sent\n"
    run_at(ledger, clock, "2026-03-02T09:00:00Z", engine)  # never re-sent blindly
    assert len(attempts(ledger)) == 1
    with ledger.read() as session:
        occ_id = by_nominal(session)[("2026-03-02T02:30:00", 0)].occurrence_id
    done = reconcile(ledger, occ_id, Decision.HAPPENED, clock, note="customer confirmed receipt")
    assert done.new is S.SUCCEEDED
    with ledger.read() as session:
        last = session.scalars(select(Event).where(Event.occurrence_id == occ_id).order_by(Event.id.desc())).first()
        assert last is not None and last.data["note"] == "customer confirmed receipt"
    with pytest.raises(ReconcileError, match="not UNKNOWN_EFFECT"):
        reconcile(ledger, occ_id, Decision.ABANDON, clock)


@pytest.mark.parametrize(
    ("verify_exit", "expected"),
    [
        pytest.param(0, "SUCCEEDED", id="probe_says_happened"),
        pytest.param(1, "RETRY_WAIT", id="probe_says_not_happened"),
        pytest.param(3, "UNKNOWN_EFFECT", id="probe_cannot_tell"),
    ],
)
def test_lost_outcome_asks_the_verify_probe(ledger: Ledger, clock: FixedClock, verify_exit: int, expected: str) -> None:
    killed = "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"
    probe = [PY, "-c", f"import sys; sys.exit({verify_exit})"]
    put(ledger, clock, cutoverAt="2026-03-02T00:00:00Z", task=task(killed, verify=probe))
    run_at(ledger, clock, "2026-03-02T07:30:10Z")
    assert states(ledger)["2026-03-02T02:30:00#0"] == expected
    (only,) = attempts(ledger)
    assert (only.error_class, only.exit_status) == ("signal", None)


@pytest.mark.parametrize("effect", ["none", "idempotent"])
def test_lost_outcome_of_a_repeatable_task_retries(ledger: Ledger, clock: FixedClock, effect: str) -> None:
    killed = "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"
    put(ledger, clock, cutoverAt="2026-03-02T00:00:00Z", task=task(killed, effect=effect))
    run_at(ledger, clock, "2026-03-02T07:30:10Z")
    assert states(ledger)["2026-03-02T02:30:00#0"] == "RETRY_WAIT"


@pytest.mark.parametrize(
    ("overrides", "ran", "expired"),
    [
        pytest.param({"misfirePolicy": "SKIP"}, [], ["03-02", "03-03", "03-04", "03-05", "03-06"], id="skip"),
        pytest.param(
            {"misfirePolicy": "CATCH_UP_BOUNDED", "maxCatchUp": 2},
            ["03-05", "03-06"],
            ["03-02", "03-03", "03-04"],
            id="bounded_2",
        ),
        pytest.param(
            {"misfirePolicy": "CATCH_UP_ALL"}, ["03-02", "03-03", "03-04", "03-05", "03-06"], [], id="catch_up_all"
        ),
        pytest.param(
            {"misfirePolicy": "CATCH_UP_ALL", "catchUpWindow": "P2D"},
            ["03-05", "03-06"],
            ["03-02", "03-03", "03-04"],
            id="catch_up_window",
        ),
    ],
)
def test_recovery_after_downtime(
    ledger: Ledger, clock: FixedClock, overrides: dict[str, Any], ran: list[str], expired: list[str]
) -> None:
    put(ledger, clock, cutoverAt="2026-03-01T12:00:00Z", task=ECHO_UTC, **overrides)
    run_at(ledger, clock, "2026-03-06T12:00:00Z")
    seen = states(ledger)
    assert sorted(k[5:10] for k, v in seen.items() if v == "SUCCEEDED") == ran
    assert sorted(k[5:10] for k, v in seen.items() if v == "MISFIRE_EXPIRED") == expired
    # Oldest first, one at a time.
    runs = attempts(ledger)
    assert [a.stdout_tail.split()[0][5:10] for a in runs if a.stdout_tail] == ran
    assert all(a.finished_at is not None for a in runs)


def _hold_running(ledger: Ledger, clock: FixedClock, nominal: str) -> None:
    """Another engine is running ``nominal`` right now (its lease is fresh)."""
    with ledger.write() as session:
        occ = by_nominal(session)[(nominal, 0)]
        occ.state = S.RUNNING
        occ.claim_generation = 1
        occ.lease_owner = "other-host:1:x"
        occ.lease_expires_at = clock.now() + timedelta(days=10)


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        pytest.param("ALLOW", "SUCCEEDED", id="allow_runs_both"),
        pytest.param("SKIP", "SKIPPED_OVERLAP", id="skip_records_overlap"),
        pytest.param("QUEUE_ONE", "DUE", id="queue_one_keeps_it_waiting"),
        pytest.param("QUEUE_ALL", "DUE", id="queue_all_keeps_it_waiting"),
    ],
)
def test_overlap_with_a_run_still_going(ledger: Ledger, clock: FixedClock, policy: str, expected: str) -> None:
    put(ledger, clock, cutoverAt="2026-03-02T00:00:00Z", overlapPolicy=policy, task=ECHO_UTC)
    engine = run_at(ledger, clock, "2026-03-01T12:00:00Z")  # materialize only
    clock.set(utc("2026-03-02T07:00:00Z"))
    _hold_running(ledger, clock, "2026-03-02T02:30:00")
    run_at(ledger, clock, "2026-03-03T07:30:10Z", engine)
    assert states(ledger)["2026-03-03T02:30:00#0"] == expected


def test_queue_one_skips_all_but_one_waiting(ledger: Ledger, clock: FixedClock) -> None:
    put(
        ledger,
        clock,
        cutoverAt="2026-03-02T00:00:00Z",
        overlapPolicy="QUEUE_ONE",
        misfirePolicy="CATCH_UP_ALL",
        task=ECHO_UTC,
    )
    engine = run_at(ledger, clock, "2026-03-01T12:00:00Z")
    _hold_running(ledger, clock, "2026-03-02T02:30:00")
    run_at(ledger, clock, "2026-03-05T07:30:10Z", engine)
    seen = states(ledger)
    assert [seen[f"2026-03-0{d}T02:30:00#0"] for d in (3, 4, 5)] == ["DUE", "SKIPPED_OVERLAP", "SKIPPED_OVERLAP"]


@pytest.mark.parametrize(
    ("effect", "expected"),
    [
        pytest.param("non_idempotent", "UNKNOWN_EFFECT", id="non_idempotent"),
        pytest.param("idempotent", "RETRY_WAIT", id="idempotent"),
    ],
)
def test_engine_crash_leaves_a_lost_attempt(ledger: Ledger, clock: FixedClock, effect: str, expected: str) -> None:
    """An attempt whose engine died (lease expired, never finished) is settled by the next engine."""
    put(ledger, clock, cutoverAt="2026-03-02T00:00:00Z", task=task("print(1)", effect=effect))
    run_at(ledger, clock, "2026-03-01T12:00:00Z")
    with ledger.write() as session:
        occ = by_nominal(session)[("2026-03-02T02:30:00", 0)]
        occ.state = S.RUNNING
        occ.claim_generation = 1
        occ.attempt_count = 1
        occ.lease_owner = "dead-host:99:x"
        occ.lease_expires_at = utc("2026-03-02T07:32:30Z")
        session.add(
            Attempt(
                attempt_id="att-dead",
                occurrence_id=occ.occurrence_id,
                attempt_number=1,
                claim_generation=1,
                execution_epoch=1,
                worker_host="dead-host",
                worker_pid=99,
                started_at=utc("2026-03-02T07:30:01Z"),
                input_digest="0" * 64,
            )
        )
    run_at(ledger, clock, "2026-03-02T07:31:00Z")  # lease still valid: left alone
    assert states(ledger)["2026-03-02T02:30:00#0"] == "RUNNING"
    run_at(ledger, clock, "2026-03-02T07:33:00Z")
    assert states(ledger)["2026-03-02T02:30:00#0"] == expected
    with ledger.read() as session:
        dead = session.get(Attempt, "att-dead")
        assert dead is not None and (dead.error_class, dead.finished_at) == ("lost", utc("2026-03-02T07:33:00Z"))


def test_disabled_schedule_dispatches_nothing(ledger: Ledger, clock: FixedClock) -> None:
    put(ledger, clock, cutoverAt="2026-03-02T00:00:00Z", task=ECHO_UTC)
    engine = run_at(ledger, clock, "2026-03-01T12:00:00Z")
    clock.set(utc("2026-03-02T07:30:10Z"))
    with ledger.write() as session:
        disable(session, "daily-ops-summary", clock, note="vacation")
    run_at(ledger, clock, "2026-03-02T07:30:20Z", engine)
    assert attempts(ledger) == []


def test_claim_loses_to_a_disable_in_between(ledger: Ledger, clock: FixedClock) -> None:
    """The engine saw the occurrence due, then the schedule was disabled: the claim fails."""
    put(ledger, clock, cutoverAt="2026-03-02T00:00:00Z", task=ECHO_UTC)
    engine = run_at(ledger, clock, "2026-03-01T12:00:00Z")
    clock.set(utc("2026-03-02T07:30:10Z"))
    stages.promote(engine, PassReport())
    with ledger.read() as session:
        occ_id = by_nominal(session)[("2026-03-02T02:30:00", 0)].occurrence_id
    with ledger.write() as session:
        disable(session, "daily-ops-summary", clock, note="stop")
    assert stages.claim(engine, occ_id, PassReport()) is None
    assert states(ledger)["2026-03-02T02:30:00#0"] == "DUE"


def test_old_revision_waking_after_cutover_claims_nothing(ledger: Ledger, clock: FixedClock) -> None:
    put(ledger, clock, cutoverAt="2026-03-02T00:00:00Z", task=ECHO_UTC)
    engine = run_at(ledger, clock, "2026-03-01T12:00:00Z")
    with ledger.read() as session:
        old_id = by_nominal(session)[("2026-03-03T02:30:00", 0)].occurrence_id
    clock.set(utc("2026-03-02T12:00:00Z"))
    put(ledger, clock, revision=2, cutoverAt="2026-03-02T12:00:00Z", task=ECHO_UTC)
    clock.set(utc("2026-03-03T07:30:10Z"))
    assert stages.claim(engine, old_id, PassReport()) is None
    engine.run_once()
    with ledger.read() as session:
        rows = session.scalars(select(Occurrence).where(Occurrence.nominal_local == "2026-03-03T02:30:00")).all()
        assert sorted((o.revision, o.state.value) for o in rows) == [(1, "CANCELLED"), (2, "SUCCEEDED")]


def test_one_hundred_deliveries_give_one_claim(ledger: Ledger, clock: FixedClock) -> None:
    import threading

    put(ledger, clock, cutoverAt="2026-03-02T00:00:00Z", task=ECHO_UTC)
    run_at(ledger, clock, "2026-03-01T12:00:00Z")
    clock.set(utc("2026-03-02T07:30:10Z"))
    stages.promote(Engine(ledger, clock), PassReport())
    with ledger.read() as session:
        occ_id = by_nominal(session)[("2026-03-02T02:30:00", 0)].occurrence_id
    engines = [Engine(ledger, clock) for _ in range(100)]
    won: list[object] = []
    barrier = threading.Barrier(10)

    def deliver(chunk: list[Engine]) -> None:
        barrier.wait()
        for e in chunk:
            claim = stages.claim(e, occ_id, PassReport())
            if claim is not None:
                won.append(claim)

    threads = [threading.Thread(target=deliver, args=(engines[i::10],)) for i in range(10)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(won) == 1
    assert len(attempts(ledger)) == 1


def test_late_result_of_a_superseded_claim_is_ignored(ledger: Ledger, clock: FixedClock) -> None:
    """A paused-then-resumed worker cannot record over a newer claim (fencing by generation)."""
    put(ledger, clock, cutoverAt="2026-03-02T00:00:00Z", task=task("print('hello')", effect="idempotent"))
    run_at(ledger, clock, "2026-03-01T12:00:00Z")
    clock.set(utc("2026-03-02T07:30:10Z"))
    slow, fast = Engine(ledger, clock), Engine(ledger, clock)
    stages.promote(slow, PassReport())
    with ledger.read() as session:
        occ_id = by_nominal(session)[("2026-03-02T02:30:00", 0)].occurrence_id
    stale = stages.claim(slow, occ_id, PassReport())
    assert stale is not None
    clock.set(utc("2026-03-02T07:40:00Z"))  # slow's lease (2 min) has expired
    fast.run_once()  # settles the lost claim (idempotent: RETRY_WAIT) ...
    clock.set(utc("2026-03-02T07:41:00Z"))
    fast.run_once()  # ... and runs it again
    assert states(ledger)["2026-03-02T02:30:00#0"] == "SUCCEEDED"
    stages.execute(slow, stale, PassReport())  # the stale worker wakes up and finishes
    assert states(ledger)["2026-03-02T02:30:00#0"] == "SUCCEEDED"
    numbers = [(a.attempt_number, a.claim_generation, a.outcome) for a in attempts(ledger)]
    assert numbers == [(1, 1, None), (2, 2, S.SUCCEEDED)] or numbers == [(1, 1, S.RETRY_WAIT), (2, 2, S.SUCCEEDED)]


def test_after_completion_appoints_the_next_run(ledger: Ledger, clock: FixedClock) -> None:
    data = {k: v for k, v in DAILY.items() if k not in ("rule", "gapPolicy", "foldPolicy")}
    data.update(kind="after_completion", delay="PT6H", start="2026-03-02T08:00:00", cutoverAt="2026-03-01T12:00:00Z")
    data["task"] = ECHO_UTC
    from core.spec.validation import parse_spec

    with ledger.write() as session:
        publish(session, parse_spec(data), clock)
    run_at(ledger, clock, "2026-03-02T13:00:30Z")
    with ledger.read() as session:
        rows = [
            (o.nominal_local, o.state.value, o.due_at)
            for o in session.scalars(select(Occurrence).order_by(Occurrence.position_utc))
        ]
    assert rows == [
        ("2026-03-02T08:00:00", "SUCCEEDED", utc("2026-03-02T13:00:00Z")),
        ("2026-03-02T14:00:30", "PLANNED", utc("2026-03-02T19:00:30Z")),
    ]


def _unused(_: datetime) -> None:  # keeps the datetime import honest for type hints above
    return None


@pytest.mark.parametrize(
    ("policy", "second", "third"),
    [
        pytest.param("SKIP", "SKIPPED_OVERLAP", "SKIPPED_OVERLAP", id="skip"),
        pytest.param("QUEUE_ONE", "SUCCEEDED", "SKIPPED_OVERLAP", id="queue_one"),
        pytest.param("QUEUE_ALL", "SUCCEEDED", "SUCCEEDED", id="queue_all"),
        pytest.param("ALLOW", "SUCCEEDED", "SUCCEEDED", id="allow"),
    ],
)
def test_running_engine_applies_overlap_to_what_comes_due_meanwhile(
    ledger: Ledger, clock: FixedClock, tmp_path: Any, policy: str, second: str, third: str
) -> None:
    """Continuous mode: the first run holds until released; two more come due meanwhile."""
    gate = tmp_path / "release"
    hold = (
        "import os, sys, time\n"
        "if os.environ['SCHED_NOMINAL_LOCAL'].endswith('T02:00:00'):\n"
        f"    while not os.path.exists({str(gate)!r}): time.sleep(0.01)\n"
    )
    put(
        ledger,
        clock,
        rule="FREQ=HOURLY;BYMINUTE=0",
        cutoverAt="2026-03-02T06:30:00Z",
        overlapPolicy=policy,
        task=task(hold),
    )
    engine = Engine(ledger, clock)
    clock.set(utc("2026-03-02T07:00:05Z"))
    engine.run_once(wait=False)  # 02:00 starts and holds
    wait_for_state(ledger, "2026-03-02T02:00:00#0", "RUNNING")
    clock.set(utc("2026-03-02T09:00:05Z"))
    engine.run_once(wait=False)  # 03:00 and 04:00 came due while it runs
    assert engine.busy()
    gate.write_text("go")
    assert engine.wait_idle(timeout=60)
    engine.run_once()  # whatever was kept waiting runs now
    seen = states(ledger)
    assert seen["2026-03-02T02:00:00#0"] == "SUCCEEDED"
    assert (seen["2026-03-02T03:00:00#0"], seen["2026-03-02T04:00:00#0"]) == (second, third)


def test_a_run_about_to_start_is_not_an_overlap_of_itself(
    ledger: Ledger, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a clock that does not move, a second pass comes while the first pass's worker
    has started but not yet claimed: the occurrence it is about to run is not an overlap."""
    import threading

    put(ledger, clock, cutoverAt="2026-03-02T00:00:00Z", overlapPolicy="SKIP")
    clock.set(utc("2026-03-02T07:30:00Z"))  # exactly 02:30 New York: due now, and the clock stays here
    engine = Engine(ledger, clock)
    entered, release = threading.Event(), threading.Event()
    work = engine.work_schedule

    def slow_start(schedule_id: str, only: list[str] | None, report: Any, first: Any = None) -> None:
        entered.set()
        assert release.wait(30)
        work(schedule_id, only, report, first)

    monkeypatch.setattr(engine, "work_schedule", slow_start)
    engine.run_once(wait=False)
    assert entered.wait(30)
    second = engine.run_once(wait=False)  # the worker is busy but has not claimed yet
    release.set()
    assert engine.wait_idle(timeout=60)
    assert second.skipped_overlap == 0
    assert states(ledger)["2026-03-02T02:30:00#0"] == "SUCCEEDED"
