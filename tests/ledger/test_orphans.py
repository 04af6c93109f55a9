"""An attempt's processes on record, a dead claimant taken over at once, an orphaned
task watched and never run twice (docs/contract.md §4, invariants 4 and 5), on a fixed
clock, on SQLite and PostgreSQL.

Real processes stand in for the engines and tasks on record: a child that
still runs, or one that has ended (its pid then is free).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import select

from core import cli
from core.clock import FixedClock
from core.engine import orphans, processes
from core.engine.admin import AdminError, backfill, run_now
from core.engine.engine import Engine, EngineOptions
from core.engine.processes import ProcessIdentity
from core.engine.reconcile import Decision, ReconcileError, reconcile
from core.ledger.db import Ledger
from core.ledger.models import Attempt, Event, Occurrence
from core.ledger.publish import publish
from core.ledger.states import OccurrenceState as S

from . import by_nominal, spec, utc

PY = sys.executable
HOST = processes.this_host()
SLOT = ("2026-03-02T02:30:00", 0)
#: The attempt's engine claimed it at 07:30:01; its lease runs to 07:32:01.
CLAIMED = utc("2026-03-02T07:30:01Z")
LEASE_END = CLAIMED + timedelta(minutes=2)
BEFORE_EXPIRY = "2026-03-02T07:30:30Z"
#: The crashed attempt's id, unique to this run: recovery looks for a live task by it among every
#: process on the host (SCHED_ATTEMPT_ID), where other runs' tasks may carry a fixed one.
ATTEMPT_ID = f"att-{uuid.uuid4().hex[:12]}"


def put(ledger: Ledger, clock: FixedClock, effect: str = "idempotent", **overrides: Any) -> None:
    task = {"argv": [PY, "-c", "print(1)"], "effect": effect, "timeout": "PT1M"}
    with ledger.write() as session:
        publish(session, spec(cutoverAt="2026-03-02T00:00:00Z", task=task, **overrides), clock)


def run_at(ledger: Ledger, clock: FixedClock, when: datetime | str, engine: Engine | None = None) -> Engine:
    clock.set(utc(when) if isinstance(when, str) else when)
    engine = engine or Engine(ledger, clock, EngineOptions(max_workers=2))
    engine.run_once()
    return engine


@pytest.fixture
def alive() -> Iterator[subprocess.Popen[bytes]]:
    """A process that runs until the test ends it (in its own group, as tasks are)."""
    child = subprocess.Popen([PY, "-c", "import time; time.sleep(120)"], start_new_session=True)
    try:
        yield child
    finally:
        child.kill()
        child.wait()


def ended() -> ProcessIdentity:
    """The identity of a process that has ended (recorded while it existed)."""
    child = subprocess.Popen([PY, "-c", "pass"])
    identity = processes.identify(child.pid)
    child.wait()
    return identity


def in_flight(
    ledger: Ledger,
    clock: FixedClock,
    engine: ProcessIdentity,
    *,
    task: ProcessIdentity | None = None,
    state: S = S.RUNNING,
    claimed: datetime = CLAIMED,
    lease_until: datetime = LEASE_END,
) -> str:
    """The 02:30 occurrence claimed by ``engine`` (and its task ``task`` spawned), as a crash leaves it."""
    run_at(ledger, clock, "2026-03-01T12:00:00Z")  # materialize
    with ledger.write() as session:
        occ = by_nominal(session)[SLOT]
        occ.state = state
        occ.claim_generation = 1
        occ.attempt_count = 1
        occ.lease_owner = f"{engine.host}:{engine.pid}:deadbeef"
        occ.lease_expires_at = lease_until
        session.add(
            Attempt(
                attempt_id=ATTEMPT_ID,
                occurrence_id=occ.occurrence_id,
                attempt_number=1,
                claim_generation=1,
                execution_epoch=1,
                worker_host=engine.host,
                worker_pid=engine.pid,
                worker_started=engine.started,
                boot_id=engine.boot_id,
                task_pid=task.pid if task else None,
                task_started=task.started if task else None,
                started_at=claimed,
                input_digest="0" * 64,
            )
        )
        return occ.occurrence_id


def occurrence(ledger: Ledger, occurrence_id: str) -> Occurrence:
    with ledger.read() as session:
        occ = session.get(Occurrence, occurrence_id)
        assert occ is not None
        return occ


def attempt(ledger: Ledger, attempt_id: str = ATTEMPT_ID) -> Attempt:
    with ledger.read() as session:
        row = session.get(Attempt, attempt_id)
        assert row is not None
        return row


def orphan_events(ledger: Ledger) -> list[dict[str, Any]]:
    with ledger.read() as session:
        return [
            e.data for e in session.scalars(select(Event).where(Event.kind == "attempt.orphaned").order_by(Event.id))
        ]


# --- what an attempt records ---------------------------------------------------------------


def test_an_attempt_records_its_engine_and_task_processes(ledger: Ledger, clock: FixedClock) -> None:
    put(ledger, clock)
    run_at(ledger, clock, "2026-03-01T12:00:00Z")
    engine = run_at(ledger, clock, "2026-03-02T07:30:10Z")
    with ledger.read() as session:
        (row,) = session.scalars(select(Attempt)).all()
    me = processes.identify()
    assert (row.worker_host, row.worker_pid, row.worker_started, row.boot_id) == (
        me.host,
        me.pid,
        me.started,
        me.boot_id,
    )
    assert engine.process == me
    assert row.task_pid is not None and row.task_pid != me.pid
    assert row.task_started is not None
    # The task started after this process did, and before the test ends.
    assert me.started is not None and me.started <= row.task_started <= datetime.now(UTC).timestamp()


# --- a dead claimant is taken over at once on its own host ------------------------------------


@pytest.mark.parametrize(
    ("claimant", "expected"),
    [
        pytest.param("gone_same_host", "RETRY_WAIT", id="gone_same_host_taken_over_at_once"),
        pytest.param("pid_reused_same_host", "RETRY_WAIT", id="pid_reused_same_host_taken_over_at_once"),
        pytest.param("alive_same_host", "RUNNING", id="alive_same_host_lease_rules"),
        pytest.param("other_host", "RUNNING", id="other_host_lease_rules"),
        pytest.param("no_start_time_alive", "RUNNING", id="pid_alive_start_unknown_lease_rules"),
    ],
)
def test_a_dead_claimant_on_this_host_is_taken_over_before_its_lease_ends(
    ledger: Ledger, clock: FixedClock, alive: subprocess.Popen[bytes], claimant: str, expected: str
) -> None:
    put(ledger, clock)
    living = processes.identify(alive.pid)
    assert living.started is not None
    engine = {
        "gone_same_host": ended(),
        "pid_reused_same_host": ProcessIdentity(HOST, living.pid, living.started - 60, living.boot_id),
        "alive_same_host": living,
        "other_host": ProcessIdentity("other-host", 4242, 1.0, "boot"),
        "no_start_time_alive": ProcessIdentity(HOST, living.pid, None, None),
    }[claimant]
    occ_id = in_flight(ledger, clock, engine)
    run_at(ledger, clock, BEFORE_EXPIRY)
    assert occurrence(ledger, occ_id).state.value == expected
    if expected == "RUNNING":
        # Left to the lease: once it ends, the attempt is lost (its task was never spawned).
        assert attempt(ledger).finished_at is None
        run_at(ledger, clock, LEASE_END + timedelta(seconds=1))
        assert occurrence(ledger, occ_id).state is S.RETRY_WAIT
    assert (attempt(ledger).error_class, occurrence(ledger, occ_id).reason) == (
        "lost",
        "the attempt lost its outcome (the engine stopped or its lease expired); "
        "effect idempotent is safe to repeat; attempt 2 follows",
    )


def test_a_dead_claimant_no_longer_makes_the_next_occurrence_skip(ledger: Ledger, clock: FixedClock) -> None:
    """The claim of a dead engine held the schedule for its lease: the next run was SKIPPED_OVERLAP."""
    put(ledger, clock, rule="FREQ=MINUTELY;INTERVAL=30", overlapPolicy="SKIP")
    in_flight(ledger, clock, ended(), claimed=utc("2026-03-02T07:59:30Z"), lease_until=utc("2026-03-02T08:01:00Z"))
    with ledger.read() as session:
        second_id = by_nominal(session)[("2026-03-02T03:00:00", 0)].occurrence_id
    run_at(ledger, clock, "2026-03-02T08:00:05Z")  # 03:00 New York is due; the dead claim's lease runs on
    assert occurrence(ledger, second_id).state is S.SUCCEEDED


# --- an orphaned task is watched, never run twice ---------------------------------------------


@pytest.mark.parametrize("state", [S.RUNNING, S.DISPATCHING], ids=["running", "dispatching"])
def test_an_orphaned_task_is_watched_until_it_ends_then_settled(
    ledger: Ledger, clock: FixedClock, alive: subprocess.Popen[bytes], state: S
) -> None:
    put(ledger, clock, effect="non_idempotent")
    task = processes.identify(alive.pid)
    assert task.started is not None
    occ_id = in_flight(ledger, clock, ended(), task=task, state=state, lease_until=CLAIMED)
    engine = run_at(ledger, clock, "2026-03-02T07:33:00Z")  # lease expired: lost, but its task still runs
    occ = occurrence(ledger, occ_id)
    since = datetime.fromtimestamp(task.started, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert occ.state is S.RUNNING
    assert occ.reason is not None and f"attempt 1 is still running as pid {alive.pid} since {since}" in occ.reason
    assert occ.lease_owner == engine.worker
    assert occ.lease_expires_at == utc("2026-03-02T07:35:00Z")
    assert attempt(ledger).finished_at is None
    (event,) = orphan_events(ledger)
    assert (event["attempt"], event["pid"], event["host"]) == (1, alive.pid, HOST)
    # Watched every pass (its own lease is fresh), said once.
    run_at(ledger, clock, "2026-03-02T07:33:30Z", engine)
    assert occurrence(ledger, occ_id).state is S.RUNNING
    assert len(orphan_events(ledger)) == 1
    # It ends: the attempt's outcome is lost (invariant 5: non_idempotent -> UNKNOWN_EFFECT).
    alive.kill()
    alive.wait()
    run_at(ledger, clock, "2026-03-02T07:34:00Z", engine)
    assert occurrence(ledger, occ_id).state is S.UNKNOWN_EFFECT
    row = attempt(ledger)
    assert (row.error_class, row.finished_at) == ("lost", utc("2026-03-02T07:34:00Z"))


def test_a_task_whose_pid_was_not_recorded_yet_is_found_by_its_attempt_id(ledger: Ledger, clock: FixedClock) -> None:
    """The engine died within moments of the spawn, before the task's pid reached the ledger."""
    env = dict(os.environ, SCHED_ATTEMPT_ID=ATTEMPT_ID)
    child = subprocess.Popen([PY, "-c", "import time; time.sleep(120)"], env=env, start_new_session=True)
    try:
        put(ledger, clock)
        occ_id = in_flight(ledger, clock, ended(), state=S.DISPATCHING)
        run_at(ledger, clock, BEFORE_EXPIRY)  # its claimant is gone: looked at before the lease ends
        occ = occurrence(ledger, occ_id)
        assert occ.state is S.RUNNING
        assert occ.reason is not None and f"still running as pid {child.pid} since" in occ.reason
        row = attempt(ledger)
        assert (row.task_pid, row.task_started) == (child.pid, processes.start_time(child.pid))
    finally:
        child.kill()
        child.wait()


def test_another_engine_on_the_host_takes_over_watching_from_a_dead_watcher(
    ledger: Ledger, clock: FixedClock, alive: subprocess.Popen[bytes]
) -> None:
    put(ledger, clock)
    occ_id = in_flight(ledger, clock, ended(), task=processes.identify(alive.pid), lease_until=CLAIMED)
    run_at(ledger, clock, "2026-03-02T07:33:00Z")
    dead = ended()
    with ledger.write() as session:
        occ = session.get(Occurrence, occ_id)
        assert occ is not None
        occ.lease_owner = f"{dead.host}:{dead.pid}:cafecafe"  # the watcher died meanwhile
    other = run_at(ledger, clock, "2026-03-02T07:33:10Z")
    occ = occurrence(ledger, occ_id)
    assert (occ.state, occ.lease_owner) == (S.RUNNING, other.worker)
    assert len(orphan_events(ledger)) == 2


def test_an_orphan_past_its_timeout_has_its_group_ended(
    ledger: Ledger, clock: FixedClock, alive: subprocess.Popen[bytes]
) -> None:
    put(ledger, clock)  # timeout PT1M
    task = processes.identify(alive.pid)
    assert task.started is not None
    occ_id = in_flight(ledger, clock, ended(), task=task, lease_until=CLAIMED)
    started = datetime.fromtimestamp(task.started, UTC)
    engine = run_at(ledger, clock, started + timedelta(seconds=30))
    assert occurrence(ledger, occ_id).state is S.RUNNING
    assert alive.poll() is None
    run_at(ledger, clock, started + timedelta(seconds=61), engine)  # past its timeout: SIGTERM to its group
    assert alive.wait(timeout=10) == -15
    reason = occurrence(ledger, occ_id).reason
    assert reason is not None and reason.endswith("it outlived its timeout: its process group was sent SIGTERM")
    run_at(ledger, clock, started + timedelta(seconds=62), engine)
    assert occurrence(ledger, occ_id).state is S.RETRY_WAIT


def test_children_that_outlive_the_task_leader_keep_it_running(ledger: Ledger, clock: FixedClock) -> None:
    """The task's group leader exited, a child it started still runs: the task runs."""
    leader = subprocess.Popen(
        [PY, "-c", "import subprocess, sys; subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'])"],
        start_new_session=True,
    )
    task = processes.identify(leader.pid)
    leader.wait()
    try:
        put(ledger, clock)
        occ_id = in_flight(ledger, clock, ended(), task=task, lease_until=CLAIMED)
        run_at(ledger, clock, "2026-03-02T07:33:00Z")
        assert occurrence(ledger, occ_id).state is S.RUNNING
    finally:
        os.killpg(leader.pid, signal.SIGKILL)


@pytest.mark.parametrize(
    ("leader", "expected"),
    [
        pytest.param("zombie", processes.Liveness.ALIVE, id="zombie_leader_child_left"),
        pytest.param("other_boot", processes.Liveness.GONE, id="recorded_in_another_boot"),
        pytest.param("other_start", processes.Liveness.GONE, id="pid_reused_by_another_leader"),
    ],
)
def test_a_task_group_outliving_its_leader(leader: str, expected: processes.Liveness) -> None:
    """The leader exited (not reaped yet: a zombie) and left a child in its group."""
    script = "import subprocess, sys; subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'])"
    parent = subprocess.Popen([PY, "-c", script], start_new_session=True)
    try:
        recorded = processes.identify(parent.pid)
        assert recorded.started is not None
        deadline = time.monotonic() + 30
        while processes.liveness(recorded) is not processes.Liveness.GONE:  # a zombie until we reap it
            assert time.monotonic() < deadline
            time.sleep(0.01)
        process = {
            "zombie": recorded,
            "other_boot": ProcessIdentity(HOST, parent.pid, recorded.started, "another-boot"),
            "other_start": ProcessIdentity(HOST, parent.pid, recorded.started - 60, recorded.boot_id),
        }[leader]
        assert orphans.group_liveness(process) is expected
    finally:
        os.killpg(parent.pid, signal.SIGKILL)
        parent.wait()


# --- no retry beside a live attempt -----------------------------------------------------------


def lost_with_live_task(ledger: Ledger, clock: FixedClock, task: ProcessIdentity, state: S) -> str:
    """An occurrence settled as lost (by lease rules elsewhere) while its task ran on here."""
    occ_id = in_flight(ledger, clock, ProcessIdentity("other-host", 1, 1.0, None), task=task)
    with ledger.write() as session:
        occ = session.get(Occurrence, occ_id)
        row = session.get(Attempt, ATTEMPT_ID)
        assert occ is not None and row is not None
        occ.state, occ.lease_owner, occ.lease_expires_at = state, None, None
        occ.finished_at = CLAIMED + timedelta(minutes=3) if state is S.FAILED else None
        row.worker_host = HOST  # the task ran on this host
        row.finished_at, row.error_class, row.outcome = CLAIMED + timedelta(minutes=3), "lost", state
    return occ_id


def test_reconcile_not_happened_refuses_while_an_attempt_still_runs(
    ledger: Ledger, clock: FixedClock, alive: subprocess.Popen[bytes]
) -> None:
    put(ledger, clock, effect="non_idempotent")
    occ_id = lost_with_live_task(ledger, clock, processes.identify(alive.pid), S.UNKNOWN_EFFECT)
    with pytest.raises(ReconcileError, match=rf"attempt 1 is still running as pid {alive.pid} since .*a retry would"):
        reconcile(ledger, occ_id, Decision.NOT_HAPPENED, clock)
    assert occurrence(ledger, occ_id).state is S.UNKNOWN_EFFECT
    alive.kill()
    alive.wait()
    assert reconcile(ledger, occ_id, Decision.NOT_HAPPENED, clock).new is S.RETRY_WAIT


def test_schedctl_reconcile_refuses_in_one_line_with_exit_2(
    ledger: Ledger,
    ledger_url: str,
    clock: FixedClock,
    alive: subprocess.Popen[bytes],
    capsys: pytest.CaptureFixture[str],
) -> None:
    put(ledger, clock, effect="non_idempotent")
    occ_id = lost_with_live_task(ledger, clock, processes.identify(alive.pid), S.UNKNOWN_EFFECT)
    status = cli.main(["reconcile", occ_id, "--not-happened", "--db", ledger_url, "--now", "2026-03-02T08:00:00Z"])
    out, err = capsys.readouterr()
    assert (status, out) == (2, "")
    assert len(err.splitlines()) == 1 and f"still running as pid {alive.pid} since " in err
    assert occurrence(ledger, occ_id).state is S.UNKNOWN_EFFECT


def test_running_again_refuses_while_a_lost_attempt_still_runs(
    ledger: Ledger, clock: FixedClock, alive: subprocess.Popen[bytes]
) -> None:
    put(ledger, clock)
    occ_id = lost_with_live_task(ledger, clock, processes.identify(alive.pid), S.FAILED)
    clock.set(utc("2026-03-03T00:00:00Z"))
    with pytest.raises(AdminError, match=rf"{occ_id}'s attempt 1 is still running as pid {alive.pid}"):
        run_now(ledger, "daily-ops-summary", clock)
    result = backfill(ledger, "daily-ops-summary", utc("2026-03-02T07:30:00Z"), utc("2026-03-02T07:31:00Z"), clock)
    assert result.created == ()
    assert [why for _, why in result.left] == [
        f"attempt 1 is still running as pid {alive.pid} since "
        f"{datetime.fromtimestamp(processes.identify(alive.pid).started or 0, UTC):%Y-%m-%dT%H:%M:%SZ}"
        ": not run again beside it"
    ]
    alive.kill()
    alive.wait()
    assert run_now(ledger, "daily-ops-summary", clock).startswith("occ-")
