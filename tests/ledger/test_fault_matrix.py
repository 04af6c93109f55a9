"""The fault matrix: what the engine does when things go wrong in ways the
other engine tests do not stage (docs/contract.md §4, invariants 4, 5, 7 and 8).
Each row is its own test, on SQLite and PostgreSQL.

* a lost acknowledgement: the task ran to exit 0, its engine died before
  recording it;
* a retry whose backoff is longer than the schedule's interval;
* a tz database change (drift is reported, nothing is rewritten, a new
  revision adopts it);
* unconfirmed outcomes staying UNKNOWN_EFFECT through many passes;
* task environment values never written to any table.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections import defaultdict
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import inspect, select, text
from sqlalchemy.orm import Session

from core.clock import FixedClock
from core.engine.admin import fence, run_now
from core.engine.engine import Engine, EngineOptions, PassReport
from core.engine.runner import prepare, run_command
from core.identity import IdFactory
from core.ledger.db import Ledger
from core.ledger.materialize import drift
from core.ledger.models import Attempt, Event, Occurrence
from core.ledger.publish import publish
from core.ledger.states import OccurrenceState as S
from core.spec.validation import parse_spec
from core.time.zones import tzdb_version

from . import DAILY, by_nominal, spec, utc
from . import engine_stages as stages

PY = sys.executable
SID = "daily-ops-summary"

#: Appends "<occurrenceId> <attempt number>" to argv[1]; the ground truth of what ran.
LOG = (
    "import os, sys\n"
    "with open(sys.argv[1], 'a') as f:\n"
    "    f.write(os.environ['SCHED_OCCURRENCE_ID'] + ' ' + os.environ['SCHED_ATTEMPT_NUMBER'] + '\\n')\n"
)


def put(ledger: Ledger, clock: FixedClock, base: dict[str, Any] | None = None, /, **overrides: Any) -> None:
    with ledger.write() as session:
        publish(session, spec(base, **overrides), clock)


def at(clock: FixedClock, when: str) -> FixedClock:
    clock.set(utc(when))
    return clock


def pass_at(engine: Engine, clock: FixedClock, when: str) -> None:
    clock.set(utc(when))
    engine.run_once()


def occurrence(ledger: Ledger, nominal: str, sid: str = SID) -> Occurrence:
    with ledger.read() as session:
        return by_nominal(session, sid)[(nominal, 0)]


def runs(ledger: Ledger, occurrence_id: str) -> list[Attempt]:
    with ledger.read() as session:
        stmt = select(Attempt).where(Attempt.occurrence_id == occurrence_id).order_by(Attempt.attempt_number)
        return list(session.scalars(stmt))


def logged(path: Path) -> dict[str, list[int]]:
    """occurrence id -> the attempt numbers that ran, in order."""
    out: dict[str, list[int]] = defaultdict(list)
    if path.exists():
        for line in path.read_text().splitlines():
            occ, number = line.split()
            out[occ].append(int(number))
    return dict(out)


# --- a lost acknowledgement ------------------------------------------------------------------


def _lose_the_acknowledgement(ledger: Ledger, clock: FixedClock, log: Path, effect: str) -> str:
    """Claim the 03-02 run, run its command to exit 0, and record nothing (the engine died)."""
    put(ledger, clock, cutoverAt="2026-03-02T00:00:00Z", task={"argv": [PY, "-c", LOG, str(log)], "effect": effect})
    Engine(ledger, clock).run_once()  # materializes (now is 2026-03-01T12:00Z)
    at(clock, "2026-03-02T07:30:10Z")
    dead = Engine(ledger, clock)
    stages.promote(dead, PassReport())
    occ_id = occurrence(ledger, "2026-03-02T02:30:00").occurrence_id
    claim = stages.claim(dead, occ_id, PassReport())
    assert claim is not None
    command = prepare(claim.task.argv, claim.task.cwd, claim.task.env, claim.identity)
    assert run_command(command, claim.task.timeout, clock).succeeded
    assert logged(log) == {occ_id: [1]}
    assert occurrence(ledger, "2026-03-02T02:30:00").state is S.DISPATCHING
    return occ_id


def test_lost_acknowledgement_of_an_idempotent_task_runs_it_again(
    ledger: Ledger, clock: FixedClock, tmp_path: Path
) -> None:
    log = tmp_path / "effects.log"
    occ_id = _lose_the_acknowledgement(ledger, clock, log, "idempotent")
    engine = Engine(ledger, at(clock, "2026-03-02T07:33:00Z"))  # the dead engine's 2-minute lease has expired
    engine.run_once()
    assert occurrence(ledger, "2026-03-02T02:30:00").state is S.RETRY_WAIT
    assert [(a.attempt_number, a.error_class, a.outcome) for a in runs(ledger, occ_id)] == [(1, "lost", S.RETRY_WAIT)]
    engine.run_once()  # the backoff (30 s) is not over
    assert logged(log) == {occ_id: [1]}
    for when in ("2026-03-02T07:33:31Z", "2026-03-02T08:00:00Z", "2026-03-02T12:00:00Z"):
        pass_at(engine, clock, when)
    assert occurrence(ledger, "2026-03-02T02:30:00").state is S.SUCCEEDED
    assert logged(log) == {occ_id: [1, 2]}  # repeated once, as an idempotent effect may be
    assert [(a.attempt_number, a.error_class, a.outcome) for a in runs(ledger, occ_id)] == [
        (1, "lost", S.RETRY_WAIT),
        (2, None, S.SUCCEEDED),
    ]


def test_lost_acknowledgement_of_a_non_idempotent_task_is_never_run_again(
    ledger: Ledger, clock: FixedClock, tmp_path: Path
) -> None:
    log = tmp_path / "effects.log"
    occ_id = _lose_the_acknowledgement(ledger, clock, log, "non_idempotent")
    engine = Engine(ledger, at(clock, "2026-03-02T07:33:00Z"))
    engine.run_once()
    occ = occurrence(ledger, "2026-03-02T02:30:00")
    assert occ.state is S.UNKNOWN_EFFECT
    assert occ.reason is not None and "a person must decide" in occ.reason
    for when in ("2026-03-02T07:34:00Z", "2026-03-02T08:00:00Z", "2026-03-02T18:00:00Z"):
        pass_at(engine, clock, when)
    assert occurrence(ledger, "2026-03-02T02:30:00").state is S.UNKNOWN_EFFECT
    assert logged(log) == {occ_id: [1]}  # the effect happened once and is never re-sent
    assert [(a.attempt_number, a.error_class, a.outcome) for a in runs(ledger, occ_id)] == [
        (1, "lost", S.UNKNOWN_EFFECT)
    ]


# --- a retry later than the next period --------------------------------------------------------

EVERY_10_MIN: dict[str, Any] = {
    "schema": "scheduleSpec.v1",
    "scheduleId": SID,
    "revision": 1,
    "timeZone": "UTC",
    "kind": "interval",
    "every": "PT10M",
    "anchor": "2026-03-02T12:00:00Z",
    "cutoverAt": "2026-03-02T12:00:00Z",
    # The retry waits 15 minutes: longer than the 10-minute period.
    "retry": {"maxAttempts": 2, "initialBackoff": "PT15M", "maxBackoff": "PT15M"},
}


def _first_attempt_of_noon_fails(log: Path) -> dict[str, Any]:
    script = LOG + (
        "if os.environ['SCHED_NOMINAL_LOCAL'] == '2026-03-02T12:00:00' and os.environ['SCHED_ATTEMPT_NUMBER'] == '1':\n"
        "    sys.exit(3)\n"
    )
    return {"argv": [PY, "-c", script, str(log)]}


def _ids(ledger: Ledger, *hours: str) -> list[str]:
    return [occurrence(ledger, f"2026-03-02T{h}:00").occurrence_id for h in hours]


def test_a_retry_later_than_the_next_period_runs_once_besides_it(
    ledger: Ledger, clock: FixedClock, tmp_path: Path
) -> None:
    log = tmp_path / "effects.log"
    at(clock, "2026-03-02T11:00:00Z")
    put(ledger, clock, EVERY_10_MIN, task=_first_attempt_of_noon_fails(log))
    engine = Engine(ledger, clock)
    engine.run_once()
    x0, x1, x2, x3 = _ids(ledger, "12:00", "12:10", "12:20", "12:30")
    pass_at(engine, clock, "2026-03-02T12:00:10Z")
    assert occurrence(ledger, "2026-03-02T12:00:00").retry_at == utc("2026-03-02T12:15:10Z")
    pass_at(engine, clock, "2026-03-02T12:10:10Z")
    # The next period ran while the retry waited; waiting for a retry is not running.
    assert occurrence(ledger, "2026-03-02T12:00:00").state is S.RETRY_WAIT
    assert occurrence(ledger, "2026-03-02T12:10:00").state is S.SUCCEEDED
    for when in ("2026-03-02T12:20:10Z", "2026-03-02T12:30:10Z", "2026-03-02T13:00:00Z"):
        pass_at(engine, clock, when)
    later = _ids(ledger, "12:40", "12:50", "13:00")
    assert logged(log) == {x0: [1, 2], x1: [1], x2: [1], x3: [1]} | {x: [1] for x in later}
    # Oldest first: the retry of 12:00 ran before 12:20, in the same pass.
    lines = log.read_text().splitlines()
    assert lines.index(f"{x0} 2") < lines.index(f"{x2} 1")
    assert [a.outcome for a in runs(ledger, x0)] == [S.RETRY_WAIT, S.SUCCEEDED]


@pytest.mark.parametrize(
    ("policy", "while_running", "finally_"),
    [
        pytest.param("ALLOW", ("SUCCEEDED", "SUCCEEDED"), ("SUCCEEDED", "SUCCEEDED"), id="allow_runs_both_at_once"),
        pytest.param(
            "SKIP", ("RETRY_WAIT", "SKIPPED_OVERLAP"), ("SUCCEEDED", "SKIPPED_OVERLAP"), id="skip_waits_the_retry"
        ),
        pytest.param("QUEUE_ONE", ("RETRY_WAIT", "DUE"), ("SUCCEEDED", "SUCCEEDED"), id="queue_one_queues_both"),
        pytest.param("QUEUE_ALL", ("RETRY_WAIT", "DUE"), ("SUCCEEDED", "SUCCEEDED"), id="queue_all_queues_both"),
    ],
)
def test_a_retry_due_while_the_next_period_runs_follows_the_overlap_policy(
    ledger: Ledger,
    clock: FixedClock,
    tmp_path: Path,
    policy: str,
    while_running: tuple[str, str],
    finally_: tuple[str, str],
) -> None:
    """12:00 fails and retries at 12:15; 12:10 is still running (another engine)
    when the retry and 12:20 come due. A retry never becomes SKIPPED_OVERLAP."""
    log = tmp_path / "effects.log"
    at(clock, "2026-03-02T11:00:00Z")
    put(ledger, clock, EVERY_10_MIN, overlapPolicy=policy, task=_first_attempt_of_noon_fails(log))
    engine = Engine(ledger, clock)
    engine.run_once()
    x0, x1, x2 = _ids(ledger, "12:00", "12:10", "12:20")
    pass_at(engine, clock, "2026-03-02T12:00:10Z")
    assert occurrence(ledger, "2026-03-02T12:00:00").state is S.RETRY_WAIT
    other = Engine(ledger, at(clock, "2026-03-02T12:10:10Z"), EngineOptions(lease=timedelta(hours=1)))
    stages.promote(other, PassReport())
    long_run = stages.claim(other, x1, PassReport())
    assert long_run is not None
    pass_at(engine, clock, "2026-03-02T12:20:10Z")
    seen = (occurrence(ledger, "2026-03-02T12:00:00").state, occurrence(ledger, "2026-03-02T12:20:00").state)
    assert seen == tuple(S(s) for s in while_running)
    stages.execute(other, long_run, PassReport())  # 12:10 ends
    pass_at(engine, clock, "2026-03-02T12:25:00Z")
    seen = (occurrence(ledger, "2026-03-02T12:00:00").state, occurrence(ledger, "2026-03-02T12:20:00").state)
    assert seen == tuple(S(s) for s in finally_)
    assert occurrence(ledger, "2026-03-02T12:10:00").state is S.SUCCEEDED
    expected = {x0: [1, 2], x1: [1]} | ({x2: [1]} if finally_[1] == "SUCCEEDED" else {})
    assert logged(log) == expected  # each once; the retry once more, never twice


# --- a tz database change ----------------------------------------------------------------------

ECHO_UTC = {"argv": [PY, "-c", "import os; print(os.environ['SCHED_SCHEDULED_UTC'])"]}


def _table(session: Session) -> list[tuple[Any, ...]]:
    rows = session.execute(select(Occurrence).order_by(Occurrence.occurrence_id)).scalars()
    columns = [c.key for c in inspect(Occurrence).column_attrs]
    return [tuple(getattr(o, c) for c in columns) for o in rows]


def test_a_tzdata_change_is_reported_never_rewritten_and_adopted_by_a_new_revision(
    ledger: Ledger, clock: FixedClock
) -> None:
    put(ledger, clock, task=ECHO_UTC)  # cutover 2026-03-01T12:00Z (now)
    engine = Engine(ledger, clock)
    engine.run_once()
    stale = "2026-03-10T02:30:00"
    with ledger.write() as session:
        # As if resolved by a release that had New York on EST until April:
        # 02:30 on 03-10 at 07:30Z instead of 06:30Z.
        occ = by_nominal(session, SID)[(stale, 0)]
        wrong = utc("2026-03-10T07:30:00Z")
        occ.resolved_utc = occ.position_utc = occ.due_at = wrong
        occ.logical_slot_id = IdFactory(SID, 1).slot("2026-03-10T07:30:00Z")
        occ.tzdb_version = "2006a"
        stale_id = occ.occurrence_id
    with ledger.read() as session:
        before = _table(session)
        events_before = len(session.scalars(select(Event.id)).all())
        found = drift(session, clock)
    assert [(d.occurrence_id, d.stored_resolved_utc, d.current_resolved_utc) for d in found] == [
        (stale_id, utc("2026-03-10T07:30:00Z"), utc("2026-03-10T06:30:00Z"))
    ]
    assert (found[0].stored_tzdb_version, found[0].current_tzdb_version) == ("2006a", tzdb_version())
    # Engine passes materialize further and promote, but never touch a stored instant.
    for when in ("2026-03-05T12:00:00Z", "2026-03-09T12:00:00Z"):
        pass_at(engine, clock, when)
    with ledger.read() as session:
        after = {row[0]: row for row in _table(session)}
        assert {row[0]: row for row in before}[stale_id] == after[stale_id]
        assert len(session.scalars(select(Event.id)).all()) > events_before  # the passes did work
        assert [d.occurrence_id for d in drift(session, clock)] == [stale_id]  # still reported
    # A new revision adopts the installed data; the stale row is cancelled, not rewritten.
    put(ledger, clock, revision=2, cutoverAt="2026-03-09T12:00:00Z", task=ECHO_UTC)
    pass_at(engine, clock, "2026-03-10T06:30:30Z")
    with ledger.read() as session:
        assert drift(session, clock) == []
        old = session.get(Occurrence, stale_id)
        assert old is not None
        assert (old.state, old.resolved_utc, old.tzdb_version) == (S.CANCELLED, wrong, "2006a")
        new = by_nominal(session, SID)[(stale, 0)]
        assert (new.revision, new.state, new.resolved_utc) == (2, S.SUCCEEDED, utc("2026-03-10T06:30:00Z"))
        assert new.tzdb_version == tzdb_version()
        (ran,) = session.scalars(select(Attempt).where(Attempt.occurrence_id == new.occurrence_id))
        assert ran.stdout_tail == "2026-03-10T06:30:00Z\n"


def test_an_unadopted_tzdata_change_runs_at_the_stored_instant(ledger: Ledger, clock: FixedClock) -> None:
    """Until a new revision adopts the change, the stored instant is the promise."""
    put(ledger, clock, task=ECHO_UTC)
    engine = Engine(ledger, clock)
    engine.run_once()
    with ledger.write() as session:
        occ = by_nominal(session, SID)[("2026-03-10T02:30:00", 0)]
        occ.resolved_utc = occ.position_utc = occ.due_at = utc("2026-03-10T07:30:00Z")
        occ.logical_slot_id = IdFactory(SID, 1).slot("2026-03-10T07:30:00Z")
        occ.tzdb_version = "2006a"
        occ_id = occ.occurrence_id
    pass_at(engine, clock, "2026-03-10T06:30:30Z")  # what the installed data says
    assert occurrence(ledger, "2026-03-10T02:30:00").state is S.PLANNED
    pass_at(engine, clock, "2026-03-10T07:30:30Z")
    (ran,) = runs(ledger, occ_id)
    assert ran.stdout_tail == "2026-03-10T07:30:00Z\n"
    with ledger.read() as session:
        done = session.get(Occurrence, occ_id)
        assert done is not None and (done.state, done.tzdb_version) == (S.SUCCEEDED, "2006a")


# --- unconfirmed outcomes stay unconfirmed ------------------------------------------------------

SELF_KILL = "import os, signal; print('sent', flush=True); os.kill(os.getpid(), signal.SIGKILL)"
ONE_RUN: dict[str, Any] = {"cutoverAt": "2026-03-02T00:00:00Z", "end": "2026-03-02T12:00:00"}  # only 2026-03-02 02:30


def test_every_unconfirmed_outcome_stays_unknown_through_many_passes(ledger: Ledger, clock: FixedClock) -> None:
    routes = {
        "timed-out": {"argv": [PY, "-c", "import time; print('sent', flush=True); time.sleep(30)"], "timeout": "PT1S"},
        "killed": {"argv": [PY, "-c", SELF_KILL]},
        "probe-unsure": {"argv": [PY, "-c", SELF_KILL], "verify": [PY, "-c", "import sys; sys.exit(3)"]},
        "engine-died": {"argv": [PY, "-c", "print('sent')"]},
    }
    for sid, task in routes.items():
        put(ledger, clock, scheduleId=sid, task=task, **ONE_RUN)
    Engine(ledger, clock).run_once()  # materializes
    at(clock, "2026-03-02T07:30:10Z")
    dead = Engine(ledger, clock)
    stages.promote(dead, PassReport())
    died = occurrence(ledger, "2026-03-02T02:30:00", "engine-died").occurrence_id
    assert stages.claim(dead, died, PassReport()) is not None  # and its engine is never heard of again
    engine = Engine(ledger, clock)
    engine.run_once()
    pass_at(engine, clock, "2026-03-02T07:40:00Z")  # the dead engine's lease expired
    settled = {sid: occurrence(ledger, "2026-03-02T02:30:00", sid) for sid in routes}
    assert {sid: o.state for sid, o in settled.items()} == dict.fromkeys(routes, S.UNKNOWN_EFFECT)
    ids = {sid: o.occurrence_id for sid, o in settled.items()}
    with ledger.read() as session:
        last_event = session.scalar(select(Event.id).order_by(Event.id.desc()).limit(1))
    # Ten days of passes, an engine restart, a fence, retry backoffs and lateness windows long over.
    for hours in range(4, 24 * 10, 4):
        clock.set(utc("2026-03-02T07:40:00Z") + timedelta(hours=hours))
        if hours == 120:
            fence(ledger, clock, note="operator took over")
            engine = Engine(ledger, clock)
        engine.run_once()
    with ledger.read() as session:
        for sid, occ_id in ids.items():
            occ = session.get(Occurrence, occ_id)
            assert occ is not None and occ.state is S.UNKNOWN_EFFECT, sid
            assert (occ.attempt_count, occ.retry_at, occ.lease_owner) == (1, None, None), sid
            (only,) = session.scalars(select(Attempt).where(Attempt.occurrence_id == occ_id))
            assert only.finished_at is not None and only.outcome is S.UNKNOWN_EFFECT, sid
        touched = session.scalars(
            select(Event.occurrence_id).where(Event.id > last_event, Event.occurrence_id.in_(ids.values()))
        ).all()
        assert touched == []


# --- environment values stay out of the ledger ------------------------------------------------

SECRET = "tm-secret-4f9d2c7a1e8b"
SECRET_DIGEST = hashlib.sha256(SECRET.encode()).hexdigest()
#: The task proves it received the secret without printing it.
CHECK_SECRET = (
    "import hashlib, os, sys\n"
    "print(hashlib.sha256(os.environ['API_TOKEN'].encode()).hexdigest())\n"
    "sys.exit(int(sys.argv[1]))\n"
)


def _secret_task(exit_code: int, **extra: Any) -> dict[str, Any]:
    return {"argv": [PY, "-c", CHECK_SECRET, str(exit_code)], "env": {"API_TOKEN": SECRET}, **extra}


def _fill_with_secret_runs(ledger: Ledger, clock: FixedClock) -> str:
    """Runs that end every way an attempt can end, each with the secret in its env."""
    tasks = {
        "succeeds": _secret_task(0),
        "fails": _secret_task(3, effect="idempotent"),
        "lost-then-probed": {
            "argv": [PY, "-c", SELF_KILL],
            "env": {"API_TOKEN": SECRET},
            "verify": [PY, "-c", CHECK_SECRET, "3"],
        },
        "times-out": {
            "argv": [PY, "-c", "import time; time.sleep(30)"],
            "env": {"API_TOKEN": SECRET},
            "timeout": "PT1S",
        },
    }
    for sid, task in tasks.items():
        put(ledger, clock, scheduleId=sid, task=task, **ONE_RUN)
    with ledger.write() as session:
        data = {**DAILY, "scheduleId": "cannot-start", **ONE_RUN}
        data["task"] = {"argv": ["/nonexistent/send-report"], "env": {"API_TOKEN": SECRET}}
        publish(session, parse_spec(data), clock, check_task=False)
    engine = Engine(ledger, at(clock, "2026-03-02T07:30:10Z"))
    engine.run_once()
    run_now(ledger, "succeeds", clock, note="by hand")
    for when in ("2026-03-02T07:31:00Z", "2026-03-02T07:32:00Z", "2026-03-02T08:00:00Z"):
        pass_at(engine, clock, when)
    with ledger.read() as session:
        ran = session.scalars(select(Attempt).where(Attempt.stdout_tail.is_not(None))).all()
        digests = {a.stdout_tail.strip() for a in ran if a.stdout_tail and len(a.stdout_tail.strip()) == 64}
    assert digests == {SECRET_DIGEST}  # the tasks did get it
    return SECRET


def _cells(session: Session, table: str) -> list[tuple[str, str]]:
    """(column, value as text) for every non-null cell of ``table``."""
    columns = [c["name"] for c in inspect(session.get_bind()).get_columns(table)]
    out = []
    for row in session.execute(text(f'SELECT * FROM "{table}"')).mappings():
        for column in columns:
            value = row[column]
            if value is not None:
                out.append((column, value if isinstance(value, str) else json.dumps(value, default=str)))
    return out


def _tables_holding(ledger: Ledger, needle: str) -> dict[str, list[str]]:
    found: dict[str, list[str]] = defaultdict(list)
    with ledger.read() as session:
        tables = inspect(session.get_bind()).get_table_names()
        assert {"occurrences", "attempts", "events", "revisions", "schedules"} <= set(tables)
        for table in tables:
            for column, value in _cells(session, table):
                if needle in value:
                    found[table].append(column)
    return dict(found)


def test_task_env_values_appear_in_no_record_of_a_run(ledger: Ledger, clock: FixedClock) -> None:
    secret = _fill_with_secret_runs(ledger, clock)
    assert "attempts" in _tables_holding(ledger, SECRET_DIGEST)  # the search does see what is stored
    holding = _tables_holding(ledger, secret)
    assert set(holding.pop("revisions")) == {"spec_json"}  # the published tasks themselves: see the next test
    assert holding == {}


def test_task_env_values_live_only_in_the_published_revision(ledger: Ledger, clock: FixedClock) -> None:
    """The engine needs the values to run the task, so the revision that defines
    the task keeps them (the ledger file is private to its owner); nothing else does."""
    put(ledger, clock, task=_secret_task(0))
    assert _tables_holding(ledger, SECRET) == {"revisions": ["spec_json"]}
