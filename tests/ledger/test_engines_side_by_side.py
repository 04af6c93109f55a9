"""Engines side by side on one PostgreSQL ledger (docs/contract.md §4, invariants 1-5;
docs/ledger.md, "Claims"): claims and outcomes share the write lock, so they do not
wait for each other; gate changes and fences still run alone.

* a gate change racing a claim: whichever transaction holds the lock first wins
  whole, the other waits for its commit (held open by a hook, not by sleeping);
* four engine processes materializing and running the same schedules at once: each
  occurrence's task runs once, none is lost;
* kill -9 rounds across four engine processes: nothing lost, and no effect of a
  non-idempotent task repeated.

Every task appends its SCHED_OCCURRENCE_ID and SCHED_ATTEMPT_ID to one file: the
ground truth of what ran.
"""

from __future__ import annotations

import importlib
import random
import signal
import subprocess
import sys
import threading
import time
import types
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select, text
from sqlalchemy.orm import Session

from core.clock import FixedClock
from core.engine import admin, settle, statements
from core.engine import claim as claim_stage
from core.engine.context import Claim
from core.engine.engine import Engine, EngineOptions, PassReport
from core.engine.runner import RunResult
from core.ledger import events
from core.ledger.db import Ledger
from core.ledger.models import Attempt, Event, Occurrence
from core.ledger.publish import publish
from core.ledger.states import OccurrenceState as S
from core.spec.validation import parse_spec
from core.time.formats import fmt_utc

from . import engine_stages as stages
from . import utc

pytestmark = pytest.mark.parametrize("ledger_url", ["postgresql"], indirect=True)
#: The cases with engine processes.
slow = pytest.mark.slow

#: The module (``core.ledger`` exports its function of the same name).
publish_module = importlib.import_module("core.ledger.publish")
PY = sys.executable
WORKER = str(Path(__file__).with_name("crash_worker.py"))
T0 = utc("2026-03-01T00:00:00Z")
#: Seconds to wait for a process or a transaction to reach the point aimed at.
REACH = 60.0


# --- a gate change racing a claim ---------------------------------------------------------


def _waiting_on_a_lock(ledger: Ledger) -> None:
    """Return once another backend of this database waits for a lock (the one held open)."""
    deadline = time.monotonic() + REACH
    query = text(
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
        "AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()"
    )
    while time.monotonic() < deadline:
        with ledger.read() as session:
            if session.scalar(query):
                return
        time.sleep(0.01)
    pytest.fail("nobody waited for the lock held open")


def _pause(ledger: Ledger, clock: FixedClock) -> None:
    with ledger.write() as session:
        publish_module.pause(session, "daily-ops-summary", clock)


def _fence(ledger: Ledger, clock: FixedClock) -> None:
    admin.fence(ledger, clock, note="host lost")


#: name: (the gate change, the module whose ``events`` it writes through)
CHANGES: dict[str, tuple[Callable[[Ledger, FixedClock], None], types.ModuleType]] = {
    "pause": (_pause, publish_module),
    "fence": (_fence, admin),
}


class Hold:
    """Two events: the held transaction reached its point; it may commit."""

    def __init__(self) -> None:
        self.reached = threading.Event()
        self.release = threading.Event()

    def wait(self) -> None:
        self.reached.set()
        assert self.release.wait(REACH)


def _in_thread(call: Callable[[], Any]) -> tuple[threading.Thread, list[Any]]:
    out: list[Any] = []
    thread = threading.Thread(target=lambda: out.append(call()))
    thread.start()
    return thread, out


def _behind(ledger: Ledger, hold: Hold, held: Callable[[], Any], waiting: Callable[[], Any]) -> list[Any]:
    """Run ``held`` (its transaction held open at ``hold``), then ``waiting`` beside it; let
    the held one commit once ``waiting`` waits for a lock. Returns what ``waiting`` returned."""
    holding, _ = _in_thread(held)
    assert hold.reached.wait(REACH)
    behind, out = _in_thread(waiting)
    _waiting_on_a_lock(ledger)
    hold.release.set()
    holding.join(REACH)
    behind.join(REACH)
    return out


@pytest.mark.parametrize("change", list(CHANGES))
def test_a_claim_holding_the_lock_commits_before_a_gate_change_begins(
    ledger: Ledger, clock: FixedClock, change: str
) -> None:
    """The claim's transaction is held open after its compare-and-set: the pause or fence
    waits for its commit, and comes after it in the log. A claim that won before a gate
    change stands (a fence then voids it by its epoch)."""
    engine, occ_id = stages.due(ledger, clock)
    seen = stages.gate(engine, "daily-ops-summary")
    hold = Hold()

    @contextmanager
    def held_claim() -> Iterator[Session]:
        with ledger.write(serialize=False) as session:
            yield session
            hold.wait()

    claiming, claimed = _in_thread(
        lambda: claim_stage.claim(held_claim, engine.context, occ_id, PassReport(), gate=seen, state=S.DUE)
    )
    assert hold.reached.wait(REACH)
    changing, _ = _in_thread(lambda: CHANGES[change][0](ledger, clock))
    _waiting_on_a_lock(ledger)
    hold.release.set()
    claiming.join(REACH)
    changing.join(REACH)
    assert claimed[0] is not None and claimed[0].epoch == 1
    with ledger.read() as session:
        occ = session.get(Occurrence, occ_id)
        assert occ is not None and occ.state is S.DISPATCHING
        kinds = [kind for (kind,) in session.execute(select(Event.kind).order_by(Event.id))][-2:]
    assert kinds == ["occurrence.transitioned", "schedule.paused" if change == "pause" else "ledger.fenced"]


@pytest.mark.parametrize("change", list(CHANGES))
def test_a_claim_waits_for_a_gate_change_holding_the_lock_and_loses_to_it(
    ledger: Ledger, clock: FixedClock, change: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pause or fence is held open after it wrote its event, and a claim made on the
    gate seen before it waits for its commit: then nothing is claimed on a paused
    schedule, and a claim after a fence carries the new epoch, never the old one."""
    engine, occ_id = stages.due(ledger, clock)
    seen = stages.gate(engine, "daily-ops-summary")
    assert seen is not None and seen.epoch == 1
    hold = Hold()
    run, module = CHANGES[change]

    def append_and_hold(session: Session, new: events.NewEvent) -> None:
        events.append(session, new)
        hold.wait()

    monkeypatch.setattr(module, "events", types.SimpleNamespace(**{**vars(events), "append": append_and_hold}))
    write = lambda: ledger.write(serialize=False)  # noqa: E731 - the engine's own kind of transaction
    claimed = _behind(
        ledger,
        hold,
        lambda: run(ledger, clock),
        lambda: claim_stage.claim(write, engine.context, occ_id, PassReport(), gate=seen, state=S.DUE),
    )
    with ledger.read() as session:
        occ = session.get(Occurrence, occ_id)
        epochs = list(session.scalars(select(Attempt.execution_epoch)))
    assert occ is not None
    if change == "pause":
        assert (claimed, occ.state, epochs) == ([None], S.DUE, [])
    else:
        assert claimed[0] is not None and claimed[0].epoch == 2
        assert (occ.state, epochs) == (S.DISPATCHING, [2])


# --- an outcome beside the lease keeper ---------------------------------------------------


def _keeper_marks_running(session: Session, claim: Claim, now: datetime) -> None:
    statements.mark_running(session, [claim.held((4242, None))], now)


def _keeper_renews(session: Session, claim: Claim, now: datetime) -> None:
    statements.renew_leases(session, [claim.held()], now + timedelta(minutes=5))


#: name: what the lease keeper writes (as run.mark_running and run.renew_leases) while an outcome is recorded
KEEPER: dict[str, Callable[[Session, Claim, datetime], None]] = {
    "running": _keeper_marks_running,
    "renewal": _keeper_renews,
}


@pytest.mark.parametrize("write", list(KEEPER))
def test_an_outcome_recorded_while_the_lease_keeper_writes_the_same_occurrence_settles_it(
    ledger: Ledger, clock: FixedClock, write: str
) -> None:
    """The lease keeper's transaction (RUNNING, or a renewal) holds the claimed occurrence's
    row, uncommitted, when the task's outcome is recorded beside it: the outcome waits for
    its commit and is decided on the row as the keeper left it. The occurrence ends
    SUCCEEDED with no lease, its attempt with it, and the log says DISPATCHING, RUNNING,
    SUCCEEDED once each (an outcome decided on the state read before the keeper's commit
    missed the row, and left it RUNNING with its attempt ended: recovery then took the
    success for a lost outcome)."""
    engine, occ_id = stages.due(ledger, clock)
    claim = stages.claim(engine, occ_id, PassReport(), gate=stages.gate(engine, "daily-ops-summary"), state=S.DUE)
    assert claim is not None
    hold = Hold()

    def keeper() -> None:
        with ledger.write(serialize=False) as session:  # as run.mark_running and run.renew_leases
            KEEPER[write](session, claim, clock.now())
            hold.wait()

    now = clock.now()
    ended = RunResult(now, now, 0, None, None, "", "", 4242)
    write_outcome = lambda: ledger.write(serialize=False)  # noqa: E731 - the worker's own kind of transaction
    _behind(ledger, hold, keeper, lambda: settle.finish(write_outcome, engine.context, claim, ended, PassReport()))
    with ledger.read() as session:
        occ = session.get(Occurrence, occ_id)
        attempt = session.scalars(select(Attempt).where(Attempt.occurrence_id == occ_id)).one()
        moves = [
            (data["from"], data["to"])
            for (data,) in session.execute(
                select(Event.data)
                .where(Event.occurrence_id == occ_id, Event.kind == "occurrence.transitioned")
                .order_by(Event.id)
            )
        ]
    assert occ is not None
    assert (occ.state, occ.lease_owner, occ.lease_expires_at) == (S.SUCCEEDED, None, None)
    assert (attempt.outcome, attempt.error_class, attempt.exit_status) == (S.SUCCEEDED, None, 0)
    assert moves[-3:] == [("DUE", "DISPATCHING"), ("DISPATCHING", "RUNNING"), ("RUNNING", "SUCCEEDED")]


# --- four engine processes --------------------------------------------------------------

EFFECT = 'echo "$SCHED_OCCURRENCE_ID $SCHED_ATTEMPT_ID" >> "$1"; sleep "$2"'


#: The schedules of _publish_team whose task is non-idempotent (the odd ones).
NON_IDEMPOTENT = ("team-01", "team-03", "team-05")


def _publish_team(ledger: Ledger, effects: Path, schedules: int, last: datetime, pause: float) -> None:
    """``schedules`` interval schedules every minute from T0 up to ``last``, half of them
    non-idempotent, each task appending its occurrence and attempt to ``effects``."""
    with ledger.write() as session:
        for i in range(schedules):
            data = {
                "schema": "scheduleSpec.v1",
                "scheduleId": f"team-{i:02d}",
                "revision": 1,
                "timeZone": "UTC",
                "kind": "interval",
                "every": "PT1M",
                "anchor": fmt_utc(T0),
                "cutoverAt": fmt_utc(T0),
                "end": fmt_utc(last),
                "misfirePolicy": "CATCH_UP_ALL",
                "latenessWindow": "P1D",
                "runsOn": {"any": True},
                "task": {
                    "argv": ["/bin/sh", "-c", EFFECT, "effect", str(effects), str(pause)],
                    "effect": "non_idempotent" if i % 2 else "idempotent",
                    "timeout": "PT1M",
                },
            }
            publish(session, parse_spec(data), FixedClock(T0))


def _engines(url: str, tmp: Path, count: int, start: datetime, passes: int) -> list[subprocess.Popen[bytes]]:
    """``count`` engine processes (crash_worker.py) on the same simulated clock."""
    argv = [PY, WORKER, "--db", url, "--start", fmt_utc(start), "--step", "60", "--lease", "120"]
    argv += ["--passes", str(passes), "--markers", str(tmp / "markers")]
    return [subprocess.Popen(argv) for _ in range(count)]


def _effects(path: Path) -> list[tuple[str, str]]:
    lines = path.read_text().splitlines() if path.exists() else []
    return [(occ, attempt) for occ, attempt in (line.split() for line in lines)]


def _ledger_rows(ledger: Ledger) -> tuple[dict[str, S], dict[str, str], Counter[str]]:
    """States by occurrence, each attempt's occurrence, attempts per occurrence."""
    with ledger.read() as session:
        states = {occ: state for occ, state in session.execute(select(Occurrence.occurrence_id, Occurrence.state))}
        attempts = {a: occ for a, occ in session.execute(select(Attempt.attempt_id, Attempt.occurrence_id))}
    return states, attempts, Counter(attempts.values())


@slow
def test_four_engines_at_once_run_every_occurrence_once(ledger_url: str, ledger: Ledger, tmp_path: Path) -> None:
    """Nothing is materialized beforehand: the four materialize the same schedules at
    once, then claim and run side by side. Every occurrence ran exactly once (one
    attempt, one effect), and all succeeded."""
    effects = tmp_path / "effects"
    last = T0 + timedelta(minutes=9)
    _publish_team(ledger, effects, 8, last, 0.0)
    engines = _engines(ledger_url, tmp_path, 4, last + timedelta(seconds=30), 2)
    assert [engine.wait(timeout=300) for engine in engines] == [0, 0, 0, 0]
    states, attempts, per_occurrence = _ledger_rows(ledger)
    ran = _effects(effects)
    assert len(states) == 8 * 10
    assert set(states.values()) == {S.SUCCEEDED}
    assert sorted(occ for occ, _ in ran) == sorted(states), "each occurrence's task ran once"
    assert {attempts[attempt] for _, attempt in ran} == set(states)
    assert set(per_occurrence.values()) == {1}
    # Which engine ran how much is left to the machine's timing: one that starts first
    # may finish everything before the others begin. How materialization is split is
    # tested without timing in test_materialize_shared.py.


def _kill_round(url: str, tmp: Path, rng: random.Random, start: datetime) -> None:
    """Four engines; once their tasks have had a few effects, two of them are killed with SIGKILL."""
    engines = _engines(url, tmp, 4, start, 6)
    aim = len(_effects(tmp / "effects")) + rng.randint(2, 10)
    deadline = time.monotonic() + REACH
    while len(_effects(tmp / "effects")) < aim and time.monotonic() < deadline:
        time.sleep(0.01)
    for victim in rng.sample(engines, 2):
        victim.send_signal(signal.SIGKILL)
    for engine in engines:
        engine.wait(timeout=300)


@slow
def test_kill_9_rounds_across_four_engines_lose_nothing_and_repeat_no_effect(
    ledger_url: str, ledger: Ledger, tmp_path: Path
) -> None:
    """Three rounds of four engines, two of each killed while they run tasks; each round
    starts after the dead ones' leases ran out. Then clean passes. Every occurrence is
    settled; a non-idempotent task never ran twice, and one whose record was lost waits
    as UNKNOWN_EFFECT; no attempt ran its task twice."""
    effects = tmp_path / "effects"
    _publish_team(ledger, effects, 6, T0 + timedelta(minutes=35), 0.1)
    rng = random.Random(20261207)
    start = T0 + timedelta(minutes=11, seconds=30)
    for _ in range(3):  # each round finds a dozen minutes of new work per schedule
        _kill_round(ledger_url, tmp_path, rng, start)
        start += timedelta(minutes=11)  # the dead engines' leases (2 minutes) ran out
    clock = FixedClock(start)
    engine = Engine(ledger, clock, EngineOptions(lease=timedelta(minutes=2)))
    for _ in range(3):  # recover, then run the retries their backoff delayed
        engine.run_once()
        clock.advance(timedelta(minutes=10))
    states, attempts, _ = _ledger_rows(ledger)
    ran = _effects(effects)
    assert [a for a, n in Counter(a for _, a in ran).items() if n > 1] == [], "one attempt, one effect"
    with ledger.read() as session:
        once = set(session.scalars(select(Occurrence.occurrence_id).where(Occurrence.schedule_id.in_(NON_IDEMPOTENT))))
        lost = session.scalar(select(func.count()).where(Attempt.error_class == "lost"))
    assert lost, "the kills landed while tasks ran"
    effects_of = Counter(attempts[a] for _, a in ran)
    assert len(states) == 6 * 36
    assert [o for o in once if effects_of[o] > 1] == [], "a non-idempotent task never ran twice"
    # SKIPPED_OVERLAP: due while another engine still ran the schedule (overlapPolicy SKIP).
    assert set(states.values()) <= {S.SUCCEEDED, S.UNKNOWN_EFFECT, S.SKIPPED_OVERLAP}, Counter(states.values())
    for occ, state in states.items():
        if state is S.UNKNOWN_EFFECT:
            assert occ in once and effects_of[occ] <= 1
        elif state is S.SKIPPED_OVERLAP:
            assert effects_of[occ] == 0, f"{occ} ran and was skipped"
        else:
            assert effects_of[occ] >= 1, f"{occ} succeeded without running"
