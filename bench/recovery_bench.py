"""Recovery after a one-year outage: the first engine pass over 100 schedules.

100 schedules (by default 34 daily, 33 hourly, 33 every minute, in UTC) are
published with cutoverAt a year before the simulated now, so each cursor sits
at its cutover: nothing has been materialized for a year. misfirePolicy is
CATCH_UP_BOUNDED with maxCatchUp 1, so the pass may run at most one missed
occurrence per schedule: 100 executions. The task is a no-op: the runner is
replaced in-process by one that succeeds at once, so only the engine's own
work is timed.

Measured: one ``Engine.run_once`` (record the stretches certain to expire
as expired ranges, materialize the next hour and a bounded part of the
horizon, promote and apply the misfire policy, recover, dispatch), with the
time of each step. Asserted: executions never exceed the bound. Targets: 1 s
for 100 schedules, 5 s for 1,000 (``--daily 334 --hourly 333 --minutely 333``).

Run by hand: ``.venv/bin/python bench/recovery_bench.py [--daily N] [--hourly N]
[--minutely N] [--days D] [--pg URL] [--quick]``; ``--pg`` runs it on a new database of
that PostgreSQL server (dropped at the end) instead of a SQLite file. The pass's CPU
time (all threads) is printed beside its wall time: on a loaded machine it is the
figure that moves least. The default is the full case: about 17.6 million
missed occurrences, of which 100 run and the rest are recorded as 100 expired
ranges (one per schedule; docs/ledger.md, "Long outages").
"""

from __future__ import annotations

import argparse
import resource
import sqlite3
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, ClassVar
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchkit import TimingEngine, instant_success, scratch_database
from sqlalchemy import func, select, text

from core.clock import FixedClock
from core.engine import plan, promote, recover
from core.engine import run as run_stage
from core.engine.engine import EngineOptions, PassReport
from core.ledger import open_ledger, publish
from core.ledger.models import Attempt, Event, Occurrence
from core.spec.validation import parse_spec
from core.time.formats import fmt_utc

#: Half a minute after a minutely run, and latenessWindow 15 s: every missed occurrence is a misfire,
#: none is merely on time, so the bound is exactly maxCatchUp per schedule.
NOW = datetime(2027, 3, 1, 12, 0, 30, tzinfo=UTC)
MAX_CATCH_UP = 1

RULES = {
    "daily": "FREQ=DAILY;BYHOUR=6;BYMINUTE=15",
    "hourly": "FREQ=HOURLY;BYMINUTE=5",
    "minutely": "FREQ=MINUTELY",
}


def _spec(kind: str, number: int, cutover: datetime) -> Any:
    return parse_spec(
        {
            "schema": "scheduleSpec.v1",
            "scheduleId": f"{kind}-{number:03d}",
            "revision": 1,
            "timeZone": "UTC",
            "kind": "calendar",
            "rule": RULES[kind],
            "start": f"{cutover:%Y-%m-%d}T00:00:00",  # the schedule began with the outage
            "gapPolicy": "SHIFT_FORWARD",
            "foldPolicy": "FIRST_ONLY",
            "misfirePolicy": "CATCH_UP_BOUNDED",
            "maxCatchUp": MAX_CATCH_UP,
            "latenessWindow": "PT15S",
            "cutoverAt": fmt_utc(cutover),
            "task": {"argv": ["true"], "effect": "idempotent"},
        }
    )


class TimedEngine(TimingEngine):
    """The engine, with the seconds of each step of the pass added up."""

    STAGES: ClassVar[dict[str, tuple[object, str]]] = {
        "promote + misfire policy": (promote, "promote"),
        "recover": (recover, "recover_lost"),
        "fill toward the horizons": (plan, "fill"),
    }
    #: perf_counter and process_time when the dispatch began (what people feel: missed runs start).
    dispatched: tuple[float, float] | None = None

    def run_once(self, *, wait: bool = True) -> PassReport:
        with self.timing(self.STAGES):
            return super().run_once(wait=wait)

    def _dispatch(self, report: PassReport, *, wait: bool) -> None:
        if self.dispatched is None:
            self.dispatched = (time.perf_counter(), time.process_time())
        self._timed("dispatch", lambda: super(TimedEngine, self)._dispatch(report, wait=wait))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--daily", type=int, default=34)
    parser.add_argument("--hourly", type=int, default=33)
    parser.add_argument("--minutely", type=int, default=33)
    parser.add_argument("--days", type=int, default=365, help="length of the outage (default 365)")
    parser.add_argument("--pg", help="a PostgreSQL server's URL: run on a new database there")
    parser.add_argument("--quick", action="store_true", help="one schedule of each kind, a day: checks the bench works")
    args = parser.parse_args(argv)
    if args.quick:
        args.daily, args.hourly, args.minutely, args.days = 1, 1, 1, 1
    counts = {"daily": args.daily, "hourly": args.hourly, "minutely": args.minutely}
    schedules = sum(counts.values())
    cutover = NOW - timedelta(days=args.days)
    print(
        f"{schedules} schedules ({', '.join(f'{n} {k}' for k, n in counts.items())}), "
        f"outage of {args.days} days; python {sys.version.split()[0]}, "
        + ("postgresql" if args.pg else f"sqlite {sqlite3.sqlite_version}")
    )
    backend = "postgresql" if args.pg else "sqlite"
    with (
        tempfile.TemporaryDirectory(prefix="tidemark-recovery-bench-") as tmp,
        scratch_database(backend, args.pg or "", Path(tmp)) as url,
    ):
        clock = FixedClock(cutover)
        with open_ledger(url, clock) as ledger:
            with ledger.write() as session:
                for kind, n in counts.items():
                    for i in range(n):
                        publish(session, _spec(kind, i, cutover), clock)
            clock.set(NOW)
            engine = TimedEngine(ledger, clock, EngineOptions(max_workers=4))
            with mock.patch.object(run_stage, "run_command", instant_success):
                start, cpu_start = time.perf_counter(), time.process_time()
                report = engine.run_once()
                elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu_start
            with ledger.read() as session:
                executions = session.scalar(select(func.count()).select_from(Attempt)) or 0
                rows = session.scalar(select(func.count()).select_from(Occurrence)) or 0
                event_rows = session.scalar(select(func.count()).select_from(Event)) or 0
                db_bytes = (
                    int(session.scalar(text("SELECT pg_database_size(current_database())")) or 0)
                    if args.pg
                    else sum(p.stat().st_size for p in Path(tmp).iterdir())
                )
    bound = schedules * MAX_CATCH_UP
    steps = {"materialize to now": elapsed - sum(engine.spent.values())} | engine.spent
    cpus = {"materialize to now": cpu - sum(engine.cpu.values())} | engine.cpu
    print(f"  first pass                   {elapsed:9.2f} s   (target: 1 s for 100 schedules, 5 s for 1,000)")
    print(f"    its CPU time (all threads) {cpu:9.2f} s   (what a loaded machine changes least)")
    if engine.dispatched is not None:
        first_wall, first_cpu = engine.dispatched[0] - start, engine.dispatched[1] - cpu_start
        print(f"    to the first dispatch      {first_wall:9.2f} s   ({first_cpu:.2f} s CPU: missed runs start here)")
    for name, spent in steps.items():
        print(f"    {name:<26} {spent:9.2f} s   ({cpus.get(name, 0.0):.2f} s CPU)")
    print(f"  occurrences materialized     {report.materialized:12,}   ({rows:,} rows, {event_rows:,} events)")
    print(f"  expired by the policy        {report.expired:12,}   ({report.expired_ranges} expired ranges)")
    print(f"  executions                   {executions:12,}   (bound {bound})")
    print(f"  ledger on disk               {db_bytes / 2**20:12,.0f} MiB")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    print(f"  peak memory (RSS)            {peak:12,.0f} MiB")
    if report.materialized:
        print(f"  per materialized occurrence  {elapsed / report.materialized * 1e6:12.1f} µs")
    assert executions <= bound, f"{executions} executions, more than the bound {bound}"
    assert report.outcomes["SUCCEEDED"] == executions, report


if __name__ == "__main__":
    main()
