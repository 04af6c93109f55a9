"""Several engines on one PostgreSQL ledger: jobs per second against one engine.

``engine_bench.py --pg URL --engines N`` creates a fresh database on the server
for each measurement, publishes ``--schedules`` interval schedules whose due
occurrences add up to ``--jobs``, and starts N engine processes that each
make passes until one claims nothing and nothing due is left unfinished (an
engine that finds the work taken polls again after 50 ms, then after longer
and longer waits, up to the 1 s poll of ``schedctl engine run``, while it
finds nothing: engines started together must not leave it all to the first).
Each engine announces itself on the ledger as ``schedctl engine run`` does,
so that they split the materialization between them. The clock of every engine is fixed past
the last due time (nothing is a misfire). Each measurement is timed from the
moment all N engines are ready (opened, their imports done, and their first pass made
at a time when nothing was due yet: engines that were running when the work came due)
to the end of the last pass that started something (each pass waits for its tasks: the last
job's end), not to the last exit, which would add the wait of an engine polling for work
that is no longer there. With ``--cold`` the engines make their first pass
(which looks at every schedule) inside the timing instead, as the bench did before
2026-12-07. With ``--no-sweep`` each pass skips the materialization sweep,
which finds nothing to do on the ledger materialized beforehand: what remains
is the engines' claims and outcomes.

Two tasks: ``no-op`` (the runner replaced in each engine process by one that
succeeds at once: the ledger's own work) and ``sleep`` (a real ``sleep 0.2``
process: a task that waits). Then, from the ledger: duplicates (attempts
beyond one per occurrence; a task started twice) and lost (due occurrences
that did not succeed). Both must be 0.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from unittest import mock

from benchkit import interval_spec
from sqlalchemy import create_engine, func, make_url, select, text

from core.clock import FixedClock
from core.ledger import materialize_all, open_ledger, publish
from core.ledger.models import Attempt, Occurrence

T0 = datetime(2026, 3, 2, tzinfo=UTC)
TASKS = {"no-op": ["true"], "sleep": ["sleep", "0.2"]}


def _spec(schedule: int, per_schedule: int, argv: list[str]) -> Any:
    return interval_spec(f"team-{schedule:03d}", per_schedule, argv, misfirePolicy="CATCH_UP_ALL", runsOn={"any": True})


def fixed_clock(per_schedule: int) -> FixedClock:
    return FixedClock(T0 + timedelta(minutes=per_schedule - 1, seconds=30))


@contextmanager
def fresh_database(server: str) -> Iterator[str]:
    """A database of its own on the server, dropped afterwards."""
    admin = make_url(server).set(drivername="postgresql+psycopg")
    name = f"tidemark_team_bench_{uuid.uuid4().hex[:8]}"
    engine = create_engine(admin, isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield admin.set(database=name).render_as_string(hide_password=False)
    finally:
        with engine.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        engine.dispose()


def prepare(url: str, schedules: int, per_schedule: int, argv: list[str]) -> None:
    clock = fixed_clock(per_schedule)
    with open_ledger(url, clock) as ledger:
        for i in range(schedules):
            with ledger.write() as session:
                publish(session, _spec(i, per_schedule, argv), clock)
        with ledger.write() as session:
            materialize_all(session, clock)


def _counts(url: str) -> tuple[int, int, int]:
    """(succeeded, duplicates, lost) of the due occurrences."""
    with open_ledger(url, FixedClock(T0)) as ledger, ledger.read() as session:
        states = dict(session.execute(select(Occurrence.state, func.count()).group_by(Occurrence.state)).all())
        per = session.scalars(select(func.count(Attempt.attempt_id)).group_by(Attempt.occurrence_id)).all()
    succeeded = sum(n for state, n in states.items() if state.value == "SUCCEEDED")
    due = sum(n for state, n in states.items() if state.value != "PLANNED")
    return succeeded, sum(n - 1 for n in per), due - succeeded


def _told(procs: list[subprocess.Popen[str]], said: str, then: str) -> None:
    """Wait until every process said ``said``, then tell each ``then``."""
    for proc in procs:
        assert proc.stdout is not None and proc.stdout.readline().strip() == said
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write(f"{then}\n")
        proc.stdin.flush()


def measure(
    server: str, engines: int, task: str, jobs: int, schedules: int, sweep: bool, cold: bool = False
) -> dict[str, float]:
    """One measurement: seconds for ``engines`` processes to run ``jobs`` occurrences."""
    per_schedule = jobs // schedules
    with fresh_database(server) as url:
        prepare(url, schedules, per_schedule, TASKS[task])
        here = Path(__file__).resolve().with_name("engine_bench.py")
        flags = "".join(flag for flag, on in (("/no-sweep", not sweep), ("/cold", cold)) if on)
        argv = [sys.executable, str(here), "--worker", url, f"{task}{flags}", str(per_schedule)]
        procs = [
            subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) for _ in range(engines)
        ]
        _told(procs, "announced", "warm")  # every engine is on the ledger before any first pass
        _told(procs, "ready", "go")
        start = time.monotonic()  # one clock for every process of this machine
        for proc in procs:
            assert proc.stdin is not None
            proc.stdin.close()
        started, cpu, last = 0, 0.0, start
        for proc in procs:
            assert proc.stdout is not None
            said = json.loads(proc.stdout.read() or "{}")
            started += said.get("started", 0)
            cpu += said.get("cpu", 0.0)
            last = max(last, said.get("last", start))
            proc.wait()
        seconds = last - start
        succeeded, duplicates, lost = _counts(url)
    return {
        "seconds": seconds,
        "rate": succeeded / seconds,
        "duplicates": duplicates,
        "lost": lost,
        "cpu": cpu / max(succeeded, 1),
    }


#: Seconds an engine whose pass started nothing waits before its next pass while others work, at
#: first; each pass that starts nothing doubles it, up to :data:`IDLE_POLL_MOST`; one that starts
#: something brings it back to this.
IDLE_POLL = 0.05
IDLE_POLL_MOST = 1.0  # `schedctl engine run`'s poll

#: States of an occurrence some engine still has to take to an end.
_UNFINISHED = ("DUE", "DISPATCHING", "RUNNING", "RETRY_WAIT")


def _work_left(ledger: Any, now: datetime) -> bool:
    """Whether an occurrence due by ``now`` has not ended yet. An engine whose pass started
    nothing is not done while another engine's pass is still promoting or running what is due:
    engines started together would otherwise leave the work to the first one and stop."""
    with ledger.read() as session:
        left = session.scalar(
            select(func.count())
            .select_from(Occurrence)
            .where((Occurrence.state.in_(_UNFINISHED)) | ((Occurrence.state == "PLANNED") & (Occurrence.due_at <= now)))
        )
    return bool(left)


def worker(url: str, task: str, per_schedule: int) -> None:
    """One engine process: passes until one claims nothing."""
    from benchkit import instant_success

    from core.engine import plan
    from core.engine import run as run_stage
    from core.engine.engine import Engine, EngineOptions
    from core.engine.presence import announce, retire
    from core.ledger.states import EngineKind

    clock = fixed_clock(per_schedule)
    task, *flags = task.split("/")
    with open_ledger(url, clock) as ledger:
        engine_id = announce(ledger, clock, EngineKind.HEADLESS)  # as `schedctl engine run` does
        engine = Engine(ledger, clock, EngineOptions(max_workers=4), engine_id=engine_id)
        print("announced", flush=True)
        sys.stdin.readline()
        if task == "no-op":
            mock.patch.object(run_stage, "run_command", instant_success).start()
        if "no-sweep" in flags:  # everything is materialized already: the sweep would find nothing to do
            nothing = plan.Sweep(clock.now(), [], {}, set())
            mock.patch.object(plan, "select_sweep", lambda *args, **kwargs: nothing).start()
        if "cold" not in flags:  # its first pass, before anything is due (it looks at every schedule)
            due = clock.now()
            clock.set(T0 - timedelta(seconds=30))
            engine.run_once()
            clock.set(due)
        print("ready", flush=True)
        sys.stdin.readline()
        started, cpu, last = 0, time.process_time(), time.monotonic()
        idle = IDLE_POLL
        while True:
            report = engine.run_once()
            started += report.started
            if report.started:
                last = time.monotonic()  # the pass waited for its tasks: they have finished
                idle = IDLE_POLL
                continue
            if not _work_left(ledger, clock.now()):
                break
            time.sleep(idle)  # what another engine runs is not ours: poll, less often while it finds nothing
            idle = min(idle * 2, IDLE_POLL_MOST)
        print(json.dumps({"started": started, "cpu": time.process_time() - cpu, "last": last}), flush=True)
        retire(ledger, clock, engine_id)


def team(
    server: str,
    most: int,
    jobs: int,
    schedules: int,
    runs: int,
    *,
    sweep: bool = True,
    tasks: list[str] | None = None,
    cold: bool = False,
) -> None:
    """Print jobs/s for 1, 2, ... ``most`` engines, each against one engine in the same run.
    Without ``sweep``, each engine's pass skips the materialization sweep (the ledger is
    materialized beforehand, so it has nothing to do): the claims and outcomes alone.
    ``tasks``: those of :data:`TASKS` to measure (None: all). ``cold``: each engine's first pass
    inside the timing."""
    counts = sorted({1, *(n for n in (2, 4) if n < most), most})
    what = ("passes" if sweep else "passes without the materialization sweep") + (
        ", first passes timed" if cold else ", engines started before the work came due"
    )
    print(f"{jobs} jobs over {schedules} schedules on PostgreSQL, {what}, best of {runs} runs, engines {counts}")
    for task in tasks or list(TASKS):
        best: dict[int, dict[str, float]] = {}
        for _ in range(runs):
            for n in counts:
                result = measure(server, n, task, jobs, schedules, sweep, cold)
                if n not in best or result["rate"] > best[n]["rate"]:
                    best[n] = result
                if result["duplicates"] or result["lost"]:
                    best[n] = result  # a wrong run is what is shown
        one = best[1]["rate"]
        for n in counts:
            r = best[n]
            print(
                f"  {task:<6} {n} engine{'s' if n > 1 else ' '}  {r['rate']:8,.1f} jobs/s  "
                f"{r['rate'] / one:5.2f}x one engine  duplicates {int(r['duplicates'])}  lost {int(r['lost'])}  "
                f"engines' CPU {r['cpu'] * 1e3:.2f} ms a job"
            )
