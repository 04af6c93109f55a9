"""Real engine processes killed with SIGKILL at random moments (docs/contract.md §4,
invariants 1, 2, 4 and 5), on SQLite and PostgreSQL.

A worker process (``crash_worker.py``) runs engine passes on a simulated clock
over three schedules:

* ``once``: every 10 minutes, a non_idempotent task that appends its
  SCHED_OCCURRENCE_ID and SCHED_ATTEMPT_ID to an effects file (append +
  fsync), then sleeps a little before it exits 0, so that a kill can land
  between the effect and its record;
* ``again``: the same task, declared idempotent;
* ``bulk``: every minute from ten days on, never due during the test: a large
  materialization for kills to interrupt.

The effects file is the ground truth of what happened. The test kills a
worker many times (seeded delays: during materialization, right after a
claim, between a task's effect and its record, anywhere), starts a new one
each time on a clock that has moved on by one step (more than the lease), and
finally runs clean passes. Then the ledger and the effects file must agree:
nothing lost, nothing run twice that must not be, and every effect whose
record was lost is an UNKNOWN_EFFECT.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from core.clock import FixedClock
from core.engine.engine import Engine, EngineOptions
from core.ledger.compiled import compiled_revision
from core.ledger.db import Ledger, open_ledger
from core.ledger.models import Attempt, Event, Occurrence, Revision, Schedule
from core.ledger.publish import publish
from core.ledger.states import OccurrenceState as S
from core.recurrence.expand import expand
from core.spec.validation import parse_spec
from core.time.formats import fmt_utc

from . import utc

PY = sys.executable
WORKER = str(Path(__file__).with_name("crash_worker.py"))
SEED = 20260301
T0 = utc("2026-03-01T00:00:00Z")
STEP = timedelta(minutes=10)
#: Shorter than a step: a new worker's first pass finds its predecessor's leases expired.
LEASE = timedelta(minutes=5)
PASSES = 4
#: Real seconds a task sleeps after its effect: the window between effect and record.
TASK_SLEEP = 0.15
#: Real seconds to wait for a worker to reach the point aimed at.
REACH = 30.0
BULK_CUTOVER = T0 + timedelta(days=10)

EFFECT_TASK = (
    "import os, sys, time\n"
    "line = '%s %s %d\\n' % (os.environ['SCHED_OCCURRENCE_ID'], os.environ['SCHED_ATTEMPT_ID'], os.getpid())\n"
    "fd = os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)\n"
    "os.write(fd, line.encode())\n"
    "os.fsync(fd)\n"
    "os.close(fd)\n"
    "time.sleep(float(sys.argv[2]))\n"
)


def _specs(effects: Path) -> list[dict[str, Any]]:
    task = {"argv": [PY, "-c", EFFECT_TASK, str(effects), str(TASK_SLEEP)], "timeout": "PT1M"}
    common = {"schema": "scheduleSpec.v1", "revision": 1, "timeZone": "Europe/Berlin", "kind": "interval"}
    return [
        {
            **common,
            "scheduleId": "once",
            "every": "PT10M",
            "anchor": fmt_utc(T0),
            "cutoverAt": fmt_utc(T0),
            "task": {**task, "effect": "non_idempotent"},
        },
        {
            **common,
            "scheduleId": "again",
            "every": "PT10M",
            "anchor": fmt_utc(T0),
            "cutoverAt": fmt_utc(T0),
            "task": {**task, "effect": "idempotent"},
        },
        {
            **common,
            "scheduleId": "bulk",
            "every": "PT1M",
            "anchor": fmt_utc(T0),
            "cutoverAt": fmt_utc(BULK_CUTOVER),
            "horizon": "P13D",
            "task": {"argv": ["/bin/true"]},
        },
    ]


# --- reading what the processes left ------------------------------------------------------


@dataclass(frozen=True)
class Effect:
    occurrence_id: str
    attempt_id: str
    pid: int


def read_effects(path: Path) -> list[Effect]:
    if not path.exists():
        return []
    out = []
    for line in path.read_text().splitlines():
        occ, att, pid = line.split()
        out.append(Effect(occ, att, int(pid)))
    return out


def read_markers(path: Path, pid: int) -> list[list[str]]:
    """The markers one worker process wrote, split into words (without the pid)."""
    if not path.exists():
        return []
    mine = []
    for line in path.read_text().splitlines():
        words = line.split()
        if words and words[0] == str(pid):
            mine.append(words[1:])
    return mine


def alive(pid: int) -> bool:
    """Whether a process runs (a zombie does not count)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def wait_until(test: Callable[[], bool], proc: subprocess.Popen[bytes] | None, log: Path) -> bool:
    """Poll until ``test()`` holds (True) or the worker has exited (False)."""
    deadline = time.monotonic() + REACH
    while time.monotonic() < deadline:
        if test():
            return True
        if proc is not None and proc.poll() is not None:
            return test()
        time.sleep(0.002)
    if proc is not None:
        proc.kill()
        proc.wait()
    pytest.fail(f"the worker did not get there in {REACH}s; its output:\n{log.read_text()}")


# --- one round ----------------------------------------------------------------------------


@dataclass
class Round:
    mode: str
    start: datetime
    killed: bool = False
    landed: str = ""
    #: The clock of the last pass the worker began.
    last_pass: datetime | None = None
    #: Attempts whose effect happened and whose record was missing when the worker died.
    unrecorded_effects: tuple[str, ...] = ()


class Harness:
    def __init__(self, url: str, tmp: Path, seed: int) -> None:
        self.url = url
        self.effects = tmp / "effects.txt"
        self.markers = tmp / "markers.txt"
        self.log = tmp / "worker.log"
        self.rng = random.Random(seed)
        self.ledger = open_ledger(url, FixedClock(T0))

    def spawn(self, start: datetime) -> subprocess.Popen[bytes]:
        argv = [PY, WORKER, "--db", self.url, "--start", fmt_utc(start), "--step", str(STEP.total_seconds())]
        argv += ["--passes", str(PASSES), "--lease", str(LEASE.total_seconds()), "--markers", str(self.markers)]
        with self.log.open("ab") as log:
            log.write(f"--- worker from {fmt_utc(start)}\n".encode())
            return subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)

    def play(self, mode: str, start: datetime) -> Round:
        """Start a worker and kill it as ``mode`` says; return where the kill landed."""
        rnd = Round(mode, start)
        proc = self.spawn(start)
        pid = proc.pid

        def marks(word: str) -> list[list[str]]:
            return [m for m in read_markers(self.markers, pid) if m[0] == word]

        def claimed() -> set[str]:
            return {m[2] for m in marks("claimed")}

        reached = True
        if mode in ("materialize", "outage"):
            reached = wait_until(lambda: bool(marks("pass")), proc, self.log)
            delay = self.rng.uniform(0.02, 0.25 if mode == "materialize" else 0.1)
        elif mode == "dispatch":
            nth = self.rng.randint(1, 4)
            reached = wait_until(lambda: len(marks("claimed")) >= nth, proc, self.log)
            delay = self.rng.uniform(0.0, 0.03)
        elif mode == "effect":
            nth = self.rng.randint(1, 4)
            reached = wait_until(
                lambda: sum(e.attempt_id in claimed() for e in read_effects(self.effects)) >= nth, proc, self.log
            )
            delay = self.rng.uniform(0.01, TASK_SLEEP * 0.6)
        elif mode == "random":
            delay = self.rng.uniform(0.2, 2.0)
        else:
            assert mode == "clean"
            delay = 0.0
        if mode != "clean" and reached and proc.poll() is None:
            time.sleep(delay)  # real time, for the worker to move a little further before the kill
        if mode != "clean" and proc.poll() is None:
            proc.kill()  # SIGKILL
            rnd.killed = True
        code = proc.wait(timeout=REACH * 4)
        if not rnd.killed:
            assert code == 0, self.log.read_text()
        passes = marks("pass")
        rnd.last_pass = utc(passes[-1][1]) if passes else None
        rnd.landed, rnd.unrecorded_effects = self._where(rnd, read_markers(self.markers, pid), claimed())
        return rnd

    def _where(self, rnd: Round, mine: list[list[str]], claimed: set[str]) -> tuple[str, tuple[str, ...]]:
        if not rnd.killed:
            return "clean exit", ()
        if not mine:
            return "before the first pass", ()
        last = mine[-1][0]
        if last == "pass":
            return "during materialization", ()
        with self.ledger.read() as session:
            open_attempts = set(
                session.scalars(
                    select(Attempt.attempt_id).where(
                        Attempt.attempt_id.in_(claimed or {""}), Attempt.finished_at.is_(None)
                    )
                )
            )
        effected = {e.attempt_id for e in read_effects(self.effects)} & open_attempts
        if effected:
            return "between an effect and its record", tuple(sorted(effected))
        if open_attempts:
            return "after a claim, before any effect", ()
        return f"after {last}", ()

    def wait_for_orphans(self) -> None:
        """Tasks outlive their killed engine (they run in their own session): let them end."""
        deadline = time.monotonic() + REACH
        while time.monotonic() < deadline:
            before = read_effects(self.effects)
            if not any(alive(e.pid) for e in before):
                time.sleep(0.05)  # a task started just before its engine died may not have written yet
                if read_effects(self.effects) == before:
                    return
            time.sleep(0.01)
        pytest.fail("orphaned tasks did not end")


def _plan(rng: random.Random) -> list[str]:
    middle = ["dispatch"] * 4 + ["effect"] * 6 + ["random"] * 3 + ["clean"] * 2 + ["outage"] * 2
    rng.shuffle(middle)
    return ["materialize"] * 3 + middle


# --- the test ---------------------------------------------------------------------------


def test_sigkill_at_random_moments_loses_nothing_and_repeats_no_effect(ledger_url: str, tmp_path: Path) -> None:
    harness = Harness(ledger_url, tmp_path, SEED)
    try:
        with harness.ledger.write() as session:
            for data in _specs(harness.effects):
                publish(session, parse_spec(data), FixedClock(T0))
        rounds = _crash_rounds(harness)
        final = _final_passes(harness.ledger, rounds)
        harness.wait_for_orphans()
        _check(harness, rounds, final)
    finally:
        harness.ledger.close()


def _crash_rounds(harness: Harness) -> list[Round]:
    rounds: list[Round] = []
    clock = T0
    for mode in _plan(harness.rng):
        if mode == "outage":
            clock += timedelta(days=1)  # nothing ran for a day; the restart has much to materialize
        rnd = harness.play(mode, clock)
        rounds.append(rnd)
        # A new worker starts one step after the last pass begun: the dead one's leases have expired.
        clock = max(clock, rnd.last_pass or clock) + STEP
    landed = Counter(r.landed for r in rounds)
    print(f"\n{len(rounds)} rounds; kills landed: {dict(landed)}")
    # The plan aims at these; the first rounds always interrupt the bulk materialization.
    assert landed["during materialization"] >= 3, landed
    assert landed["between an effect and its record"] >= 5, landed
    assert landed["clean exit"] >= 2, landed
    return rounds


def _final_passes(ledger: Ledger, rounds: list[Round]) -> datetime:
    last = max(r.last_pass or r.start for r in rounds)
    clock = FixedClock(last + STEP)
    engine = Engine(ledger, clock, EngineOptions(lease=LEASE, max_workers=4))
    for _ in range(3):  # recover, then run the retries their backoff delayed
        engine.run_once()
        clock.advance(STEP)
    return clock.now() - STEP


def _check(harness: Harness, rounds: list[Round], final: datetime) -> None:
    effects = read_effects(harness.effects)
    by_attempt = Counter(e.attempt_id for e in effects)
    assert [a for a, n in by_attempt.items() if n > 1] == [], "one attempt, one effect"
    effects_of: dict[str, list[str]] = defaultdict(list)
    for e in effects:
        effects_of[e.occurrence_id].append(e.attempt_id)
    with harness.ledger.read() as session:
        occs = {o.occurrence_id: o for o in session.scalars(select(Occurrence))}
        attempts = list(session.scalars(select(Attempt)))
        last_event = {
            occ_id: data
            for occ_id, data in session.execute(
                select(Event.occurrence_id, Event.data)
                .where(Event.kind == "occurrence.transitioned")
                .order_by(Event.id)
            )
        }
        revisions = {r.schedule_id: r for r in session.scalars(select(Revision))}
        cursors = {s.id: s.cursor_utc for s in session.scalars(select(Schedule))}
    attempts_of: dict[str, list[Attempt]] = defaultdict(list)
    for a in attempts:
        attempts_of[a.occurrence_id].append(a)
    attempt_ids = {a.attempt_id: a for a in attempts}

    # Every effect belongs to an attempt recorded (at claim time) for the same occurrence.
    for e in effects:
        assert e.attempt_id in attempt_ids, e
        assert attempt_ids[e.attempt_id].occurrence_id == e.occurrence_id, e

    # Nothing left in flight; every attempt settled; the event log agrees with each state.
    assert [o.occurrence_id for o in occs.values() if o.state in (S.DISPATCHING, S.RUNNING)] == []
    assert [a.attempt_id for a in attempts if a.finished_at is None] == []
    for occ_id, runs in attempts_of.items():
        assert sorted(a.attempt_number for a in runs) == list(range(1, len(runs) + 1)), occ_id
        assert occs[occ_id].attempt_count == len(runs), occ_id
    for occ in occs.values():
        if occ.occurrence_id in last_event:
            assert last_event[occ.occurrence_id]["to"] == occ.state.value, occ.occurrence_id

    unrecorded = {a for r in rounds for a in r.unrecorded_effects}
    _check_once(occs, attempts_of, effects_of, unrecorded, final)
    _check_again(occs, attempts_of, effects_of, unrecorded, final)
    _check_bulk(occs, revisions["bulk"].spec_json, cursors["bulk"])


def _due_by(occ: Occurrence, final: datetime) -> bool:
    return occ.due_at is not None and occ.due_at <= final


def _check_once(
    occs: dict[str, Occurrence],
    attempts_of: dict[str, list[Attempt]],
    effects_of: dict[str, list[str]],
    unrecorded: set[str],
    final: datetime,
) -> None:
    """non_idempotent: at most one effect each, never a second attempt, and an
    effect without its record is an UNKNOWN_EFFECT."""
    mine = [o for o in occs.values() if o.schedule_id == "once"]
    states = Counter(o.state for o in mine)
    print(f"once: {dict(states)}")
    for occ in mine:
        done = effects_of.get(occ.occurrence_id, [])
        runs = attempts_of.get(occ.occurrence_id, [])
        assert len(done) <= 1, (occ.occurrence_id, "effect repeated")
        assert len(runs) <= 1, (occ.occurrence_id, "re-sent blindly")
        if occ.state is S.SUCCEEDED:
            assert len(done) == 1 and runs[0].outcome is S.SUCCEEDED, occ.occurrence_id
            assert runs[0].error_class is None and runs[0].exit_status == 0
        elif occ.state is S.UNKNOWN_EFFECT:
            assert len(runs) == 1 and runs[0].error_class == "lost", occ.occurrence_id
        else:
            assert done == [], (occ.occurrence_id, occ.state, "an effect that happened is not recorded")
        if runs and runs[0].attempt_id in unrecorded:
            assert occ.state is S.UNKNOWN_EFFECT, occ.occurrence_id
        if runs and runs[0].error_class == "lost":
            assert occ.state is S.UNKNOWN_EFFECT, occ.occurrence_id
        if _due_by(occ, final):
            assert occ.state in (S.SUCCEEDED, S.UNKNOWN_EFFECT, S.MISFIRE_EXPIRED, S.SKIPPED_OVERLAP), occ
        else:
            assert occ.state is S.PLANNED and runs == [], occ.occurrence_id
    assert states[S.UNKNOWN_EFFECT] >= 1 and states[S.SUCCEEDED] >= 10


def _check_again(
    occs: dict[str, Occurrence],
    attempts_of: dict[str, list[Attempt]],
    effects_of: dict[str, list[str]],
    unrecorded: set[str],
    final: datetime,
) -> None:
    """idempotent: a lost outcome is retried; SUCCEEDED means its effect happened."""
    mine = [o for o in occs.values() if o.schedule_id == "again"]
    print(f"again: {dict(Counter(o.state for o in mine))}")
    retried = 0
    for occ in mine:
        done = effects_of.get(occ.occurrence_id, [])
        runs = sorted(attempts_of.get(occ.occurrence_id, []), key=lambda a: a.attempt_number)
        assert len(done) <= len(runs), occ.occurrence_id
        if occ.state is S.SUCCEEDED:
            assert runs[-1].outcome is S.SUCCEEDED and runs[-1].attempt_id in done, occ.occurrence_id
            assert all(a.error_class == "lost" for a in runs[:-1]), occ.occurrence_id
        elif occ.state is S.FAILED:  # the task always exits 0: only lost outcomes use attempts up
            assert [a.error_class for a in runs] == ["lost"] * 3, occ.occurrence_id
        else:
            assert occ.state is not S.UNKNOWN_EFFECT, occ.occurrence_id
        if any(a.attempt_id in unrecorded for a in runs):
            assert occ.state in (S.SUCCEEDED, S.FAILED) and len(runs) >= 2, occ.occurrence_id
        retried += len(runs) >= 2
        if _due_by(occ, final):
            assert occ.state in (S.SUCCEEDED, S.FAILED, S.MISFIRE_EXPIRED, S.SKIPPED_OVERLAP), occ
        else:
            assert occ.state is S.PLANNED and runs == [], occ.occurrence_id
    assert retried >= 1


def _check_bulk(occs: dict[str, Occurrence], spec_json: str, cursor: datetime | None) -> None:
    """Materialization interrupted again and again: every minute up to the cursor exactly once."""
    assert cursor is not None
    mine = sorted((o for o in occs.values() if o.schedule_id == "bulk"), key=lambda o: o.position_utc)
    expected = [row.occurrence_id for row in expand(compiled_revision(spec_json), BULK_CUTOVER, cursor)]
    assert len(expected) > 4_000
    assert [o.occurrence_id for o in mine] == expected
    assert {o.state for o in mine} == {S.PLANNED}
