"""Materialization throughput into SQLite against raw sqlite3, measured in the same run.

Measured: ``materialize()`` of a fresh schedule, in one ``ledger.write()`` unit
of work (expansion, rows, conflict checks, INSERT ... ON CONFLICT DO NOTHING,
cursor compare-and-set, event, commit).

Baseline: the least a materializer must do with the same rows: the same
expansion, then plain ``sqlite3`` ``executemany`` of the identical stored
values (read back from the measured run's ledger, every column) into an
identical ledger file (same schema, indexes and pragmas), in one
transaction. The insert alone is timed too, so the storage layer's own
overhead is visible.

Run by hand: ``.venv/bin/python bench/materialize_bench.py [--runs N] [--quick]``. Prints
occurrences per second and the ratio measured / baseline; the target is a
ratio within 2x.
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
import tempfile
import time
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sqlalchemy import select

from core.clock import FixedClock
from core.ledger import materialize, open_ledger, publish
from core.ledger.compiled import compiled_revision
from core.ledger.models import Revision
from core.recurrence.expand import expand
from core.spec.model import ScheduleSpec
from core.spec.validation import parse_spec

NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)
RUNS = 5

CASES: dict[str, dict[str, Any]] = {
    "interval every minute, 28 days": {
        "kind": "interval",
        "timeZone": "Europe/Berlin",
        "every": "PT1M",
        "anchor": "2026-01-01T00:00:00Z",
        "horizon": "P28D",
    },
    "calendar every 5 minutes across a DST change, 60 days": {
        "timeZone": "America/New_York",
        "rule": "FREQ=MINUTELY;INTERVAL=5",
        "start": "2026-01-01T00:00:00",
        "gapPolicy": "SHIFT_FORWARD",
        "foldPolicy": "BOTH",
        "horizon": "P60D",
    },
}


def make_spec(extra: dict[str, Any]) -> ScheduleSpec:
    return parse_spec(
        {
            "schema": "scheduleSpec.v1",
            "scheduleId": "bench",
            "revision": 1,
            "task": {"argv": ["/bin/true"]},
            **extra,
        }
    )


WORKDIR = tempfile.TemporaryDirectory(prefix="tidemark-bench-")


def fresh_ledger(spec: ScheduleSpec) -> tuple[str, str]:
    """A new ledger file with ``spec`` published; returns (path, stored spec text)."""
    path = str(Path(tempfile.mkdtemp(dir=WORKDIR.name)) / "ledger.db")
    clock = FixedClock(NOW)
    with open_ledger(path, clock) as ledger:
        with ledger.write() as session:
            publish(session, spec, clock)
        with ledger.read() as session:
            text = session.scalar(select(Revision.spec_json))
    assert text is not None
    return path, text


def measured(spec: ScheduleSpec) -> tuple[float, int, str]:
    """(seconds, rows, the ledger's path) of ``materialize()`` on a fresh ledger."""
    path, _ = fresh_ledger(spec)
    clock = FixedClock(NOW)
    with open_ledger(path, clock) as ledger:
        start = time.perf_counter()
        with ledger.write() as session:
            inserted = materialize(session, spec.schedule_id, clock).inserted
        return time.perf_counter() - start, inserted, path


def stored_rows(path: str) -> tuple[str, list[tuple[Any, ...]]]:
    """The INSERT and the stored values of every occurrence row in the ledger at ``path``,
    whatever columns the schema has: what the baseline writes is exactly what materialize wrote."""
    with closing(sqlite3.connect(path)) as con:
        cursor = con.execute("SELECT * FROM occurrences")
        rows = cursor.fetchall()
        columns = [d[0] for d in cursor.description]
    return f"INSERT INTO occurrences ({', '.join(columns)}) VALUES ({', '.join('?' for _ in columns)})", rows


def raw_insert(path: str, insert: str, rows: list[tuple[Any, ...]]) -> float:
    con = sqlite3.connect(path, isolation_level=None)
    try:
        con.execute("PRAGMA foreign_keys = ON")
        con.execute("PRAGMA synchronous = FULL")  # as the ledger's connections
        start = time.perf_counter()
        con.execute("BEGIN IMMEDIATE")
        con.executemany(insert, rows)
        con.execute("COMMIT")
        return time.perf_counter() - start
    finally:
        con.close()


def baseline(spec: ScheduleSpec, written: str) -> tuple[float, float, int]:
    """(expand + insert seconds, insert-only seconds, rows): the rows ``materialize`` wrote into
    the ledger at ``written``, expanded again and inserted into a fresh ledger."""
    path, text = fresh_ledger(spec)
    insert, rows = stored_rows(written)
    start = time.perf_counter()
    expanded = expand(compiled_revision(text), NOW, NOW + spec.horizon)
    built = time.perf_counter() - start
    assert len(expanded) == len(rows), (len(expanded), len(rows))
    inserted = raw_insert(path, insert, rows)
    return built + inserted, inserted, len(rows)


def best_interleaved(runs: int, spec: ScheduleSpec) -> tuple[tuple[float, int], tuple[float, float, int]]:
    """The fastest run of each, alternating them so that both see the same machine load."""
    results_a, results_b = [], []
    for _ in range(runs):
        m_seconds, m_rows, path = measured(spec)
        results_a.append((m_seconds, m_rows))
        results_b.append(baseline(spec, path))
    return min(results_a), min(results_b)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=RUNS, help=f"runs of each, the fastest kept (default {RUNS})")
    parser.add_argument("--quick", action="store_true", help="one run of a day of each case: checks the bench works")
    args = parser.parse_args(argv)
    runs = 1 if args.quick else args.runs
    print(f"best of {runs} runs, python {sys.version.split()[0]}, sqlite {sqlite3.sqlite_version}")
    for name, extra in CASES.items():
        spec = make_spec(extra | {"horizon": "P1D"} if args.quick else extra)
        (m_seconds, m_rows), (b_seconds, b_insert, b_rows) = best_interleaved(runs, spec)
        assert m_rows == b_rows, (m_rows, b_rows)
        print(f"\n{name}{' (one day)' if args.quick else ''}: {int(m_rows):,} occurrences")
        print(f"  materialize()                    {m_seconds:7.3f} s  {m_rows / m_seconds:10,.0f} occ/s")
        print(f"  baseline: expand + executemany   {b_seconds:7.3f} s  {b_rows / b_seconds:10,.0f} occ/s")
        print(f"    of which raw executemany       {b_insert:7.3f} s  {b_rows / b_insert:10,.0f} occ/s")
        print(f"  ratio materialize / baseline     {m_seconds / b_seconds:7.2f}x   (target <= 2x)")
        print(f"  storage overhead vs raw insert   {(m_seconds - (b_seconds - b_insert)) / b_insert:7.2f}x")
    WORKDIR.cleanup()


if __name__ == "__main__":
    main()
