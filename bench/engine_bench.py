"""Engine overhead per occurrence, against spawning the same command directly.

Three measurements on a SQLite ledger in a temporary directory, each over the
same number of due occurrences of one interval schedule (latenessWindow long
enough that none is a misfire), in one ``Engine.run_once`` pass after the rows
were materialized:

* ``no-op``: the engine's own work per occurrence (promote, claim with its
  attempt row and event, RUNNING and the outcome with their events; one write
  transaction per occurrence, which also claims the next one), with the runner
  replaced in-process by one that succeeds at once;
* ``true``: the same through the real runner, a ``true`` process per
  occurrence, end to end;
* baseline: ``subprocess.run(["true"])`` in a loop, as many times; and the
  runner's ``run_command`` alone, for the cost of the runner's own spawning
  (its own session, pipes for the output tails);
* the same two through the runner held to ``Popen`` (as it spawned before it
  used ``posix_spawn``), so that the spawn's share is measured in the same run;
* SQLite's own part: the statements and commits the no-op worker sent to the
  driver, recorded as they went and replayed with plain ``sqlite3`` on an
  identical fresh ledger (same pragmas, ``synchronous = FULL``). What the
  engine costs beyond that is its own Python.

Run by hand: ``.venv/bin/python bench/engine_bench.py [--count N] [--runs N] [--quick]``. Prints
occurrences per second and ratios. Target: the engine with ``true`` at least
0.6 times the direct spawn rate.

With ``--pg URL --engines N``: several engine processes on one PostgreSQL
ledger instead, with no-op tasks and with ``sleep 0.2``, each against one
engine in the same run, with the duplicates and lost occurrences counted
(:mod:`team_bench`); ``--task no-op`` (or ``sleep``) measures that task only.
"""

from __future__ import annotations

import argparse
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, ClassVar
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import team_bench
from benchkit import TimingEngine, instant_success, interval_spec

from core.clock import FixedClock
from core.engine import claim as claim_stage
from core.engine import promote, settle, spawning
from core.engine import run as run_stage
from core.engine.engine import EngineOptions
from core.engine.runner import PreparedCommand, TaskIdentity, prepare, run_command
from core.ledger import materialize_all, open_ledger, publish

T0 = datetime(2026, 3, 2, tzinfo=UTC)
RUNS = 3


def _spec(count: int) -> Any:
    return interval_spec("bench", count, ["true"])


class TimedEngine(TimingEngine):
    """The engine, with the seconds spent in each step of a run added up (no behaviour changed)."""

    STAGES: ClassVar[dict[str, tuple[object, str]]] = {
        "promote": (promote, "promote"),
        "first claims, made together": (claim_stage, "claim_together"),
        "a worker's own first claim": (claim_stage, "claim"),
        "list what is due": (claim_stage, "claimable"),
        "run the task": (run_stage, "run_claim"),
        "record outcome + next claim": (settle, "finish"),
    }

    def run_once(self, *, wait: bool = True) -> Any:
        with self.timing(self.STAGES):
            return super().run_once(wait=wait)


#: The step times of the last no-op measurement.
SPENT: dict[str, float] = {}


class Recorder:
    """What an engine pass sends to SQLite, call by call, while ``recording``:
    ("execute", sql, params), ("executemany", sql, rows), ("commit",) or
    ("rollback",), each with whether a worker's dispatch sent it (``local.on``)."""

    def __init__(self) -> None:
        self.recording = False
        self.calls: list[tuple[bool, tuple[Any, ...]]] = []
        self.local = threading.local()

    def note(self, *call: Any) -> None:
        if self.recording:
            self.calls.append((getattr(self.local, "on", False), call))

    def connect(self, connect: Callable[..., sqlite3.Connection]) -> Callable[..., sqlite3.Connection]:
        """``sqlite3.connect`` making connections whose calls are noted."""
        recorder = self

        class Cursor(sqlite3.Cursor):
            def execute(self, sql: str, params: Any = (), /) -> Any:
                recorder.note("execute", sql, params)
                return super().execute(sql, params)

            def executemany(self, sql: str, rows: Any, /) -> Any:
                rows = list(rows)
                recorder.note("executemany", sql, rows)
                return super().executemany(sql, rows)

        class Connection(sqlite3.Connection):
            def cursor(self, factory: Any = Cursor) -> Any:  # type: ignore[override]
                return super().cursor(factory)

            def execute(self, sql: str, params: Any = (), /) -> Any:
                return self.cursor().execute(sql, params)

            def executemany(self, sql: str, rows: Any, /) -> Any:
                return self.cursor().executemany(sql, rows)

            def commit(self) -> None:
                recorder.note("commit")
                super().commit()

            def rollback(self) -> None:
                recorder.note("rollback")
                super().rollback()

        def connect_recorded(*args: Any, **kwargs: Any) -> sqlite3.Connection:
            return connect(*args, **kwargs, factory=Connection)

        return connect_recorded


class RecordedEngine(TimedEngine):
    """The timed engine, its dispatch noted by ``recorder``."""

    recorder: Recorder

    def _work_queue(self, schedule_id: str, only: Any, report: Any) -> None:
        self.recorder.local.on = True
        try:
            super()._work_queue(schedule_id, only, report)
        finally:
            self.recorder.local.on = False


def _ledger_with_due_rows(path: Path, count: int, clock: FixedClock) -> Any:
    ledger = open_ledger(str(path), clock)
    with ledger.write() as session:
        publish(session, _spec(count), clock)
    with ledger.write() as session:
        materialize_all(session, clock)
    return ledger


def sqlite_floor(count: int, *, spawn: bool = False) -> tuple[float, int]:
    """Seconds for plain sqlite3 to replay what a no-op dispatch of ``count`` sent it.
    With ``spawn``, the runner starts ``true`` after each of the first ``count``
    commits (where the engine starts a task, its claim committed) and that is
    timed too: the engine's end to end with none of its own Python."""
    clock = FixedClock(T0 + timedelta(minutes=count - 1, seconds=30))
    recorder = Recorder()
    with tempfile.TemporaryDirectory(prefix="tidemark-engine-bench-") as tmp:
        # SQLAlchemy connects through sqlite3.dbapi2.
        with (
            mock.patch.object(sqlite3.dbapi2, "connect", recorder.connect(sqlite3.dbapi2.connect)),
            _ledger_with_due_rows(Path(tmp) / "recorded.db", count, clock) as ledger,
            mock.patch.object(run_stage, "run_command", instant_success),
        ):
            engine = RecordedEngine(ledger, clock, EngineOptions(max_workers=1))
            engine.recorder = recorder
            recorder.recording = True
            report = engine.run_once()
            recorder.recording = False
        assert report.outcomes["SUCCEEDED"] == count, report
        # The whole pass is replayed in order (the pass's own steps bring the rows to
        # where the dispatch found them); only the dispatch's calls are timed.
        fresh = Path(tmp) / "replayed.db"
        _ledger_with_due_rows(fresh, count, clock).close()
        seconds = 0.0
        spawned = 0
        command = _true_command()
        with closing(sqlite3.connect(fresh, isolation_level=None)) as con:
            for pragma in ("foreign_keys = ON", "synchronous = FULL"):
                con.execute(f"PRAGMA {pragma}")
            for timed, call in recorder.calls:
                start = time.perf_counter()
                if call[0] == "execute":
                    con.execute(call[1], call[2]).fetchall()
                elif call[0] == "executemany":
                    con.executemany(call[1], call[2])
                elif call[0] == "commit":
                    con.commit()
                    if spawn and timed and spawned < count:
                        assert run_command(command, timedelta(minutes=1), clock).succeeded
                        spawned += 1
                else:
                    con.rollback()
                if timed:
                    seconds += time.perf_counter() - start
            done = con.execute("SELECT count(*) FROM occurrences WHERE state = 'SUCCEEDED'").fetchone()[0]
    return seconds, done


@contextmanager
def popen_only(on: bool) -> Iterator[None]:
    """The runner without ``posix_spawn`` (every task started by ``Popen``), when ``on``."""
    if not on:
        yield
        return
    with mock.patch.object(spawning, "posix_spawn", None), mock.patch.object(spawning, "posix_spawnp", None):
        yield


def engine_pass(count: int, *, no_op: bool, popen: bool = False) -> tuple[float, int]:
    """Seconds for one run_once over ``count`` due occurrences, and how many succeeded."""
    with tempfile.TemporaryDirectory(prefix="tidemark-engine-bench-") as tmp, popen_only(popen):
        clock = FixedClock(T0 + timedelta(minutes=count - 1, seconds=30))
        with _ledger_with_due_rows(Path(tmp) / "ledger.db", count, clock) as ledger:
            engine = TimedEngine(ledger, clock, EngineOptions(max_workers=1))
            patch = mock.patch.object(run_stage, "run_command", instant_success) if no_op else None
            if patch is not None:
                patch.start()
            try:
                start = time.perf_counter()
                report = engine.run_once()
                seconds = time.perf_counter() - start
            finally:
                if patch is not None:
                    patch.stop()
            if no_op and (not SPENT or seconds < SPENT["total"]):
                SPENT.clear()
                SPENT.update(engine.spent, total=seconds)
            return seconds, report.outcomes["SUCCEEDED"]


def direct_spawn(count: int) -> tuple[float, int]:
    start = time.perf_counter()
    for _ in range(count):
        subprocess.run(["true"], check=True)
    return time.perf_counter() - start, count


def _true_command() -> PreparedCommand:
    identity = TaskIdentity("bench", 1, "occ-x", "slot-x", "2026-03-02T00:00:00", None, None, "att", 1)
    return prepare(["true"], None, {}, identity)


def runner_alone(count: int, *, popen: bool = False) -> tuple[float, int]:
    clock = FixedClock(T0)
    command = _true_command()
    with popen_only(popen):
        start = time.perf_counter()
        for _ in range(count):
            assert run_command(command, timedelta(minutes=1), clock).succeeded
        return time.perf_counter() - start, count


def best(runs: int, *measures: Callable[[], tuple[float, int]]) -> list[tuple[float, int]]:
    """The fastest of ``runs`` rounds of each, interleaved so that all see the same load."""
    results: list[list[tuple[float, int]]] = [[] for _ in measures]
    for _ in range(runs):
        for i, measure in enumerate(measures):
            results[i].append(measure())
    return [min(r) for r in results]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--count", type=int, default=300, help="occurrences per measurement (default 300)")
    parser.add_argument("--runs", type=int, default=RUNS, help=f"rounds, the fastest kept (default {RUNS})")
    parser.add_argument("--quick", action="store_true", help="one round of 10 occurrences: checks the bench works")
    parser.add_argument("--pg", metavar="URL", help="a PostgreSQL server: measure several engines on it instead")
    parser.add_argument("--engines", type=int, default=4, help="with --pg: the most engines at once (default 4)")
    parser.add_argument("--jobs", type=int, default=640, help="with --pg: due occurrences (default 640)")
    parser.add_argument("--schedules", type=int, default=32, help="with --pg: schedules they belong to (default 32)")
    parser.add_argument("--no-sweep", action="store_true", help="with --pg: passes skip the materialization sweep")
    parser.add_argument("--cold", action="store_true", help="with --pg: time each engine's first pass too")
    parser.add_argument(
        "--task", choices=["no-op", "sleep"], action="append", help="with --pg: this task only (default both)"
    )
    parser.add_argument("--worker", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        team_bench.worker(args.worker[0], args.worker[1], int(args.worker[2]))
        return
    if args.pg:
        team_bench.team(
            args.pg,
            args.engines,
            args.jobs,
            args.schedules,
            args.runs,
            sweep=not args.no_sweep,
            tasks=args.task,
            cold=args.cold,
        )
        return
    n, runs = (10, 1) if args.quick else (args.count, args.runs)
    print(f"{n} occurrences, best of {runs} runs, python {sys.version.split()[0]}, sqlite {sqlite3.sqlite_version}")
    no_op, engine_true, engine_popen, direct, runner, runner_popen, floor, floor_true = best(
        runs,
        lambda: engine_pass(n, no_op=True),
        lambda: engine_pass(n, no_op=False),
        lambda: engine_pass(n, no_op=False, popen=True),
        lambda: direct_spawn(n),
        lambda: runner_alone(n),
        lambda: runner_alone(n, popen=True),
        lambda: sqlite_floor(n),
        lambda: sqlite_floor(n, spawn=True),
    )
    for _seconds, done in (no_op, engine_true, engine_popen, floor, floor_true):
        assert done == n, f"{done} of {n} succeeded"

    def rate(result: tuple[float, int]) -> float:
        return result[1] / result[0]

    print(f"  engine, in-process no-op task      {no_op[0]:7.3f} s  {rate(no_op):9,.0f} occ/s")
    print(f"    engine overhead per occurrence   {no_op[0] / n * 1000:7.2f} ms, of which:")
    steps = {name: spent for name, spent in SPENT.items() if name != "total"}
    for name, spent in steps.items():
        print(f"      {name:<30} {spent / n * 1000:7.2f} ms")
    print(f"    of which SQLite's own work       {floor[0] / n * 1000:7.2f} ms  (the same calls replayed with sqlite3)")
    print(f"  engine, `true` end to end          {engine_true[0]:7.3f} s  {rate(engine_true):9,.0f} occ/s")
    print(f"  baseline: subprocess.run(['true']) {direct[0]:7.3f} s  {rate(direct):9,.0f} occ/s")
    print(f"  engine, `true`, Popen only         {engine_popen[0]:7.3f} s  {rate(engine_popen):9,.0f} occ/s")
    print(f"  the runner's run_command alone     {runner[0]:7.3f} s  {rate(runner):9,.0f} occ/s")
    print(f"  the runner alone, Popen only       {runner_popen[0]:7.3f} s  {rate(runner_popen):9,.0f} occ/s")
    print(f"  ratio engine `true` / direct spawn {rate(engine_true) / rate(direct):7.2f}   (target >= 0.60)")
    print(f"    the same, Popen only             {rate(engine_popen) / rate(direct):7.2f}")
    print(f"  ratio runner alone / direct spawn  {rate(runner) / rate(direct):7.2f}")
    print(f"    the same, Popen only             {rate(runner_popen) / rate(direct):7.2f}")
    print(
        f"  ratio with no engine Python at all {rate(floor_true) / rate(direct):7.2f}"
        "   (SQLite's replayed calls and the runner alone)"
    )


if __name__ == "__main__":
    main()
