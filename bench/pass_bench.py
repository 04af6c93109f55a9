"""An engine pass against the size of the catalogue: idle pass, a pass with a few
schedules due, and how long a ``pause`` from another connection waits behind the
pass that materializes a new catalogue.

For N published daily schedules (default 10, 100, 1,000 and 10,000; SQLite, or
PostgreSQL with ``--pg URL``): publish time per schedule (all in one transaction),
the first pass (materializing all of them), the passes that fill the
horizons after it (20,000 rows a pass), then the median of 5 idle passes
(nothing due, nothing to materialize) and of 5 passes with 3 every-minute
schedules due (no-op runner), the longest wait of a pause issued every 10 ms from
another connection during the first pass, and the growth of the process's peak
RSS per schedule. Ratios are to the same run's N=10 figures.

Run by hand: ``.venv/bin/python bench/pass_bench.py [N ...] [--pg URL]``.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchkit import instant_success
from sqlalchemy import text

from core.cli.engine_commands import fewer_malloc_arenas
from core.clock import FixedClock
from core.engine import run as run_stage
from core.engine.engine import Engine, EngineOptions
from core.ledger import open_ledger, publish
from core.ledger.db import Ledger
from core.ledger.publish import pause, resume
from core.spec.validation import parse_spec

START = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
DAILY: dict[str, Any] = {
    "schema": "scheduleSpec.v1",
    "revision": 1,
    "timeZone": "UTC",
    "kind": "calendar",
    "rule": "FREQ=DAILY;BYHOUR=6;BYMINUTE=0",
    "gapPolicy": "SKIP",
    "foldPolicy": "FIRST_ONLY",
    "start": "2026-01-01T00:00:00",
    "task": {"argv": ["/bin/true"]},
}
MINUTELY: dict[str, Any] = {
    "schema": "scheduleSpec.v1",
    "revision": 1,
    "timeZone": "UTC",
    "kind": "interval",
    "every": "PT1M",
    "anchor": "2026-01-01T00:00:00Z",
    "horizon": "PT1H",
    "task": {"argv": ["/bin/true"]},
}
DUE = 3


def _rss_kib() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def _open(url: str | None, folder: Path, n: int, clock: FixedClock) -> Ledger:
    if url is None:
        return open_ledger(f"sqlite:///{folder / f'ledger-{n}.db'}", clock)
    admin = open_ledger(url, clock)
    with admin.engine.connect() as con:
        con.execute(text("DROP SCHEMA public CASCADE; CREATE SCHEMA public"))
        con.commit()
    admin.close()
    return open_ledger(url, clock)


def _pause_waits(ledger: Ledger, clock: FixedClock, stop: threading.Event, waits: list[float]) -> None:
    """Pause and resume one schedule every 10 ms from another connection; record each wait (both writes)."""
    while not stop.is_set():
        began = time.perf_counter()
        try:
            with ledger.write() as session:
                pause(session, "minutely-0", clock)
            with ledger.write() as session:
                resume(session, "minutely-0", clock)
        except Exception as exc:  # the write gave up waiting (SQLite's busy timeout)
            print(f"  a pause gave up after {time.perf_counter() - began:.1f} s: {exc}", flush=True)
        waits.append(time.perf_counter() - began)
        stop.wait(0.01)


def measure(n: int, url: str | None, folder: Path) -> dict[str, float]:
    clock = FixedClock(START)
    ledger = _open(url, folder, n, clock)
    second = open_ledger(str(ledger.engine.url.render_as_string(hide_password=False)), clock)
    rss_before = _rss_kib()
    began = time.perf_counter()
    with ledger.write() as session:
        for i in range(DUE):
            publish(session, parse_spec({**MINUTELY, "scheduleId": f"minutely-{i}"}), clock)
        for i in range(n - DUE):
            publish(session, parse_spec({**DAILY, "scheduleId": f"daily-{i:05d}"}), clock)
    publish_s = (time.perf_counter() - began) / n
    engine = Engine(ledger, clock, EngineOptions(max_workers=DUE))
    waits: list[float] = []
    stop = threading.Event()
    pauser = threading.Thread(target=_pause_waits, args=(second, clock, stop, waits))
    with mock.patch.object(run_stage, "run_command", instant_success):
        clock.advance(timedelta(seconds=5))
        pauser.start()
        began = time.perf_counter()
        engine.run_once()
        first = time.perf_counter() - began
        stop.set()
        pauser.join()
        settling = 0  # a catalogue published at once fills its horizons over a few passes
        while engine.run_once().materialized and settling < 50:
            settling += 1
        idle, due = [], []
        for _ in range(5):
            clock.advance(timedelta(seconds=20))
            began = time.perf_counter()
            engine.run_once()
            idle.append(time.perf_counter() - began)
            clock.advance(timedelta(seconds=40))
            began = time.perf_counter()
            engine.run_once()
            due.append(time.perf_counter() - began)
    rss = (_rss_kib() - rss_before) / n
    second.close()
    ledger.close()
    return {
        "publish_ms": publish_s * 1000,
        "first_s": first,
        "idle_ms": statistics.median(idle) * 1000,
        "due_ms": statistics.median(due) * 1000,
        "pause_wait_ms": max(waits, default=0.0) * 1000,
        "rss_kib": rss,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sizes", nargs="*", type=int, default=[10, 100, 1000, 10_000])
    parser.add_argument("--pg", metavar="URL", help="a PostgreSQL database to use (its public schema is replaced)")
    parser.add_argument("--quick", action="store_true", help="10 schedules only: checks the bench works")
    args = parser.parse_args()
    fewer_malloc_arenas()  # as `schedctl engine run` does
    if args.quick:
        args.sizes = [10]
    with tempfile.TemporaryDirectory() as tmp:
        base: dict[str, float] | None = None
        print("N       publish/sched  first pass  idle pass (x N=10)  due pass (x N=10)  pause waits  peak RSS/sched")
        for n in args.sizes:
            got = measure(n, args.pg, Path(tmp))
            base = base or got
            print(
                f"{n:<7} {got['publish_ms']:8.2f} ms  {got['first_s']:8.2f} s"
                f"  {got['idle_ms']:8.1f} ms ({got['idle_ms'] / base['idle_ms']:5.1f}x)"
                f"  {got['due_ms']:8.1f} ms ({got['due_ms'] / base['due_ms']:5.1f}x)"
                f"  {got['pause_wait_ms']:8.1f} ms  {got['rss_kib']:6.1f} KiB",
                flush=True,
            )


if __name__ == "__main__":
    main()
