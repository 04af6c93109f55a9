"""How the engine's cost grows with the number of published schedules.

For each size N, mix and backend, a fresh ledger (a SQLite file, or a database
of its own on the PostgreSQL server), in a process of its own:

* publish: N schedules, each in its own unit of work as ``schedctl apply``
  publishes one (seconds per schedule);
* warm-up: passes at the same instant until one materializes nothing (the
  first pass is printed too);
* idle pass: the median of a few passes with nothing due (the clock moves a
  millisecond between them, so no pass sees the same instant twice);
* steady pass: passes with the clock a second further each (the engine's
  default poll), across a minute boundary, tasks run to their end: the median
  and the longest;
* pause wait: meanwhile another process with its own connection pauses and
  resumes a schedule about every 50 ms, as ``schedctl pause`` does (with its
  5 s lock wait): the longest of those writes, beside the longest while no
  pass ran (the baseline);
* memory: the peak RSS above the RSS after one schedule and one pass, per
  schedule published;
* ledger size: the SQLite file with its WAL, or ``pg_database_size``;
* floor: what an idle pass cannot avoid asking, with no engine around it
  (every schedule's cursor, the rows due by now through the state index).

Mixes. ``daily``: calendar schedules once a day (every fifth weekly, every
seventh monthly) at spread times in five zones, the spec's default horizon
(14 days). ``minute``: of every ten schedules one calendar rule every minute,
two intervals of a minute, three of five minutes, two of 15 minutes and two of
an hour, their anchors spread over the period, horizon PT1H. Tasks are
``true``, run by the real runner. Only public entry points are used
(``open_ledger``, ``publish``, ``pause``/``resume``, ``Engine.run_once``),
with a fixed clock moved by hand.

Targets (2 cores): idle pass at 10,000 schedules <= 50 ms; steady pass at
1,000 mixed schedules <= 250 ms; both flat in N; a pause waits <= 200 ms at
10,000; memory <= 10 KiB per schedule. Each row prints its ratio to each
target, and its idle pass against the smallest size's ("vs min": flatness)
and against the floor measured on the same ledger.

Run by hand: ``.venv/bin/python bench/scale_bench.py [--sizes 10,100,1000,10000]
[--backend sqlite|postgresql|both] [--pg URL]``; ``--quick`` is the tiny run CI makes.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import select
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchkit import scratch_database

#: The warm-up pass's instant: half a second into a second, so a millisecond later nothing new is due.
WARM = datetime(2026, 6, 3, 12, 0, 55, 500_000, tzinfo=UTC)
PUBLISHED = WARM - timedelta(minutes=1)
ZONES = ("UTC", "Europe/Berlin", "America/New_York", "Asia/Tokyo", "Australia/Sydney")
GATE = "scale-gate"
DEFAULT_PG = "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
PAUSE_EVERY = 0.05
LOCK_WAIT = 5.0  # schedctl's (core.cli.ledger_access.LOCK_WAIT_SECONDS)
MAX_WARM_UP = 30

TARGETS = {"idle_ms": 50.0, "steady_ms": 250.0, "pause_ms": 200.0, "kib": 10.0}


def _base(schedule_id: str) -> dict[str, Any]:
    return {
        "schema": "scheduleSpec.v1",
        "scheduleId": schedule_id,
        "revision": 1,
        "task": {"argv": ["true"], "effect": "idempotent", "timeout": "PT1M"},
    }


def daily_spec(i: int, schedule_id: str | None = None) -> dict[str, Any]:
    """Once a day at a spread time; every fifth weekly, every seventh monthly."""
    hour, minute = (i * 7) % 24, (i * 13) % 60
    rule = f"FREQ=DAILY;BYHOUR={hour};BYMINUTE={minute}"
    if i % 5 == 4:
        rule = f"FREQ=WEEKLY;BYDAY=MO,TH;BYHOUR={hour};BYMINUTE={minute}"
    elif i % 7 == 6:
        rule = f"FREQ=MONTHLY;BYMONTHDAY=1,15;BYHOUR={hour};BYMINUTE={minute}"
    return _base(schedule_id or f"daily-{i:05d}") | {
        "timeZone": ZONES[i % len(ZONES)],
        "rule": rule,
        "start": "2026-01-01T00:00:00",
        "gapPolicy": "SHIFT_FORWARD",
        "foldPolicy": "FIRST_ONLY",
    }


#: The minute mix, per ten schedules: None for the calendar rule every minute, else an interval's seconds.
MINUTE_MIX = (None, 60, 60, 300, 300, 300, 900, 900, 3600, 3600)


def minute_spec(i: int) -> dict[str, Any]:
    every = MINUTE_MIX[i % len(MINUTE_MIX)]
    spec = _base(f"minute-{i:05d}") | {"timeZone": ZONES[i % len(ZONES)], "horizon": "PT1H"}
    if every is None:
        rule = {"rule": "FREQ=MINUTELY", "start": "2026-01-01T00:00:00"}
        return spec | rule | {"gapPolicy": "SHIFT_FORWARD", "foldPolicy": "FIRST_ONLY"}
    anchor = datetime(2026, 1, 1, tzinfo=UTC) + timedelta(seconds=(i * 37) % every)
    return spec | {"kind": "interval", "every": f"PT{every}S", "anchor": anchor.strftime("%Y-%m-%dT%H:%M:%SZ")}


MIXES: dict[str, Callable[[int], dict[str, Any]]] = {"daily": daily_spec, "minute": minute_spec}


# --- one case, in a process of its own ---------------------------------------------------


def _peak_kib() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux


def _ledger_bytes(ledger: Any, tmp: Path) -> int:
    if ledger.dialect == "sqlite":
        return sum(p.stat().st_size for p in tmp.iterdir() if p.name.startswith("ledger.db"))
    from sqlalchemy import text

    with ledger.read() as session:
        return int(session.scalar(text("SELECT pg_database_size(current_database())")))


class Pauser:
    """``schedctl pause`` and ``resume`` from another process, every :data:`PAUSE_EVERY` seconds
    from :meth:`start` to :meth:`stop`. Started early: its imports overlap the publishing."""

    def __init__(self, url: str) -> None:
        command = [sys.executable, __file__, "--pauser", url]
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        #: Its writes while no pass ran: seconds each.
        self.baseline: list[float] = []

    def start(self) -> None:
        assert self.process.stdout is not None and self.process.stdin is not None
        self.process.stdin.write("go\n")
        self.process.stdin.flush()
        self.baseline = json.loads(self.process.stdout.readline())

    def stop(self) -> dict[str, Any]:
        """Its writes while the passes ran: {"waits": [...], "refused": n}."""
        out, _ = self.process.communicate("stop\n", timeout=120)
        return dict(json.loads(out))


def pauser_main(url: str) -> None:
    import sqlite3

    from sqlalchemy.exc import DBAPIError

    from core.clock import FixedClock
    from core.errors import LedgerError
    from core.ledger import open_ledger, pause, resume

    clock = FixedClock(WARM)
    waits: list[float] = []
    refused = 0
    with open_ledger(url, clock, busy_timeout=LOCK_WAIT, migrate=False) as ledger:
        sys.stdin.readline()  # go
        for round_ in range(1_000_000):
            if round_ == 10:  # the first ten ran while nothing else did
                print(json.dumps(waits), flush=True)
                waits = []
            if round_ >= 10 and select.select([sys.stdin], [], [], PAUSE_EVERY)[0]:
                break
            start = time.perf_counter()
            try:
                with ledger.write() as session:
                    (pause if round_ % 2 == 0 else resume)(session, GATE, clock, "scale bench")
            except (LedgerError, DBAPIError, sqlite3.Error):  # what schedctl says as "the ledger is busy"
                refused += 1
            waits.append(time.perf_counter() - start)
    print(json.dumps({"waits": waits, "refused": refused}), flush=True)


def _pass_ms(engine: Any, clock: Any, at: datetime) -> tuple[float, Any]:
    clock.set(at)
    start = time.perf_counter()
    report = engine.run_once()
    return (time.perf_counter() - start) * 1000, report


def _publish_all(ledger: Any, clock: Any, mix: str, n: int) -> float:
    """Milliseconds per schedule to publish ``n`` schedules of ``mix``, one unit of work each."""
    from core.ledger import publish
    from core.spec.validation import parse_spec

    make = MIXES[mix]
    spent = 0.0
    for i in range(n):
        spec = parse_spec(make(i))
        start = time.perf_counter()
        with ledger.write() as session:
            publish(session, spec, clock)
        spent += time.perf_counter() - start
    return spent * 1000 / n


def _warm_up(engine: Any, clock: Any) -> float:
    """Passes at :data:`WARM` until one materializes nothing; the first one's milliseconds."""
    first, report = _pass_ms(engine, clock, WARM)
    for _ in range(MAX_WARM_UP):
        if not report.materialized:
            break
        _, report = _pass_ms(engine, clock, WARM)
    return first


def _timed_passes(engine: Any, clock: Any, case: dict[str, Any]) -> dict[str, Any]:
    """The idle passes (a millisecond apart), then the steady ones (a second apart)."""
    idle = [_pass_ms(engine, clock, WARM + timedelta(milliseconds=1 + k))[0] for k in range(case["idle"])]
    steady, started = [], 0
    for k in range(1, case["steady"] + 1):
        spent, report = _pass_ms(engine, clock, WARM + timedelta(seconds=k))
        steady.append(spent)
        started += report.started
    return {
        "idle_ms": statistics.median(idle),
        "steady_ms": statistics.median(steady),
        "steady_max_ms": max(steady),
        "started": started,
    }


def _floor_ms(ledger: Any, at: datetime) -> float:
    """The least an idle pass asks, with no engine around it: every schedule's cursor, and the
    rows due by ``at`` (the state index). Milliseconds, the median of five."""
    from sqlalchemy import select

    from core.ledger.models import Occurrence, Schedule

    cursors = select(Schedule.id, Schedule.cursor_utc)
    due = select(Occurrence.occurrence_id).where(Occurrence.state.in_(["PLANNED", "DUE"]), Occurrence.due_at <= at)
    spent = []
    with ledger.engine.connect() as conn:
        for _ in range(5):
            start = time.perf_counter()
            conn.execute(cursors).all()
            conn.execute(due).all()
            conn.rollback()
            spent.append((time.perf_counter() - start) * 1000)
    return statistics.median(spent)


def run_case(case: dict[str, Any]) -> dict[str, Any]:
    """One size of one mix on one backend: the figures of a row."""
    from core.cli.engine_commands import fewer_malloc_arenas
    from core.clock import FixedClock
    from core.engine.engine import Engine
    from core.ledger import open_ledger, publish
    from core.spec.validation import parse_spec

    fewer_malloc_arenas()  # as `schedctl engine run` does

    out, clock = dict(case), FixedClock(PUBLISHED)
    with (
        tempfile.TemporaryDirectory(prefix="tidemark-scale-") as name,
        scratch_database(case["backend"], case["pg"], Path(name)) as url,
        open_ledger(url, clock) as ledger,
    ):
        with ledger.write() as session:
            publish(session, parse_spec(daily_spec(0, GATE)), clock)
        pauser = Pauser(url)
        try:
            engine = Engine(ledger, clock)
            _pass_ms(engine, clock, PUBLISHED)  # what every pass loads, loaded: the base of the memory figure
            base_kib = _peak_kib()
            out["publish_ms"] = _publish_all(ledger, clock, case["mix"], case["n"])
            out["first_ms"] = _warm_up(engine, clock)
            pauser.start()
            out |= _timed_passes(engine, clock, case)
            paused = pauser.stop()
        finally:
            pauser.process.kill()  # when something above failed; a no-op after stop()
        out |= {
            "pause_ms": max(paused["waits"], default=0.0) * 1000,  # none: the passes ended before a pause came
            "pause_base_ms": max(pauser.baseline, default=0.0) * 1000,
            "pauses": len(paused["waits"]),
            "refused": paused["refused"],
            "kib": (_peak_kib() - base_kib) / case["n"],
            "ledger_mib": _ledger_bytes(ledger, Path(name)) / 2**20,
            "floor_ms": _floor_ms(ledger, clock.now()),
        }
    return out


# --- the table ----------------------------------------------------------------------------


def _case_in_child(case: dict[str, Any]) -> dict[str, Any] | None:
    done = subprocess.run(
        [sys.executable, __file__, "--case", json.dumps(case)], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        print(f"  {case['backend']} {case['mix']} N={case['n']} failed:\n{done.stderr.strip()[-2000:]}")
        return None
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


HEADER = (
    f"{'backend':10} {'mix':6} {'N':>6} {'publish':>8} {'1st pass':>9} {'idle':>8} {'vs min':>6} {'floor':>7} "
    f"{'steady':>8} {'max':>8} {'tasks':>5} {'pause':>7} {'(base)':>7} {'KiB/sch':>7} {'ledger':>8}"
)


def _row(r: dict[str, Any], smallest: dict[str, Any]) -> str:
    return (
        f"{r['backend']:10} {r['mix']:6} {r['n']:6,} {r['publish_ms']:6.1f}ms {r['first_ms'] / 1000:8.2f}s "
        f"{r['idle_ms']:6.0f}ms {r['idle_ms'] / smallest['idle_ms']:5.1f}x {r['floor_ms']:5.1f}ms "
        f"{r['steady_ms']:6.0f}ms {r['steady_max_ms']:6.0f}ms {r['started']:5} "
        f"{r['pause_ms']:5.0f}ms {r['pause_base_ms']:5.0f}ms {r['kib']:7.1f} {r['ledger_mib']:6.1f}MiB"
        + (f"  ({r['refused']} of {r['pauses']} pauses refused)" if r["refused"] else "")
    )


def _against_targets(rows: list[dict[str, Any]]) -> None:
    """Each row's figures divided by their targets (<= 1.00 meets it)."""
    print("\nratio to target (<= 1.00 meets it; the targets are stated for idle at 10,000, steady at 1,000 minute,")
    print("pause at 10,000, memory at every N):")
    for r in rows:
        ratios = "  ".join(f"{key.removesuffix('_ms')} {r[key] / limit:5.2f}" for key, limit in TARGETS.items())
        floor = f"idle / floor {r['idle_ms'] / max(r['floor_ms'], 1e-3):7.1f}x"
        print(f"  {r['backend']:10} {r['mix']:6} {r['n']:6,}  {ratios}   {floor}")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10,100,1000,10000", help="schedule counts, comma-separated")
    parser.add_argument("--mix", choices=["daily", "minute", "both"], default="both")
    parser.add_argument(
        "--backend",
        choices=["sqlite", "postgresql", "both"],
        help="default: both with --pg or TIDEMARK_TEST_PG_URL, else sqlite",
    )
    parser.add_argument("--pg", default=os.environ.get("TIDEMARK_TEST_PG_URL"), help="a PostgreSQL server's URL")
    parser.add_argument("--idle-passes", type=int, default=5, help="idle passes (their median; default 5)")
    parser.add_argument("--steady-passes", type=int, default=10, help="steady passes, a second apart (default 10)")
    parser.add_argument("--quick", action="store_true", help="a tiny run that checks the bench works (CI)")
    parser.add_argument("--case", help=argparse.SUPPRESS)
    parser.add_argument("--pauser", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    try:
        args.sizes = [int(part) for part in args.sizes.split(",")]
    except ValueError:
        parser.error(f"--sizes: {args.sizes!r} is not a list of numbers")
    if any(n < 1 for n in args.sizes):
        parser.error("--sizes: each size must be at least 1")
    if args.backend is None:
        args.backend = "both" if args.pg else "sqlite"
    args.pg = args.pg or DEFAULT_PG
    if args.quick:
        args.sizes, args.idle_passes, args.steady_passes = [4], 2, 5
    return args


def _pg_problem(url: str) -> str | None:
    """Why the PostgreSQL server at ``url`` cannot be used, in one line; None when it can."""
    from sqlalchemy import create_engine, make_url, text
    from sqlalchemy.exc import ArgumentError, SQLAlchemyError

    try:
        engine = create_engine(url, connect_args={"connect_timeout": 3})
    except ArgumentError as exc:
        return f"{url!r} is not a database URL ({exc})"
    try:
        with engine.connect() as conn:
            conn.execute(text("SELECT 1"))
    except SQLAlchemyError as exc:
        reason = str(getattr(exc, "orig", None) or exc).strip().splitlines()[0]
        return f"no PostgreSQL at {make_url(url).render_as_string()} ({reason})"
    finally:
        engine.dispose()
    return None


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.case is not None:
        print(json.dumps(run_case(json.loads(args.case))))
        return 0
    if args.pauser is not None:
        pauser_main(args.pauser)
        return 0
    backends = ["sqlite", "postgresql"] if args.backend == "both" else [args.backend]
    mixes = list(MIXES) if args.mix == "both" else [args.mix]
    problem = _pg_problem(args.pg) if "postgresql" in backends else None
    if problem is not None:
        print(f"scale_bench.py: --pg: {problem}", file=sys.stderr)
        return 2
    print(f"python {sys.version.split()[0]}; {args.idle_passes} idle passes (median), {args.steady_passes} steady")
    print(HEADER)
    rows, failed = [], 0
    for backend in backends:
        for mix in mixes:
            smallest = None
            for n in args.sizes:
                case = {"backend": backend, "mix": mix, "n": n, "pg": args.pg}
                case |= {"idle": args.idle_passes, "steady": args.steady_passes}
                # --quick runs in this process (its memory figure then means little): quicker to start.
                row = run_case(case) if args.quick else _case_in_child(case)
                if row is None:
                    failed += 1
                    continue
                smallest = smallest or row
                rows.append(row)
                print(_row(row, smallest), flush=True)
    _against_targets(rows)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
