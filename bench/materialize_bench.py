"""Materialization throughput into SQLite against raw sqlite3, measured in the same run.

Measured: ``materialize()`` of a fresh schedule, in one ``ledger.write()`` unit
of work (expansion, rows, conflict checks, INSERT ... ON CONFLICT DO NOTHING,
cursor compare-and-set, event, commit).

Baseline: the least a materializer must do with the same rows: the same
expansion, then plain ``sqlite3`` ``executemany`` of the identical stored
values into an identical ledger file (same schema, indexes and pragmas), in
one transaction. The insert alone is timed too, so the storage layer's own
overhead is visible.

Run by hand: ``.venv/bin/python bench/materialize_bench.py``. Prints
occurrences per second and the ratio measured / baseline; the target is a
ratio within 2x.
"""

from __future__ import annotations

import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sqlalchemy import select

from core.clock import FixedClock
from core.ledger import materialize, open_ledger, publish
from core.ledger.compiled import compiled_revision
from core.ledger.models import Occurrence, Revision
from core.recurrence.expand import expand
from core.spec import ScheduleSpec
from core.spec_validation import parse_spec
from core.version import tidemark_version
from core.zones import tzdb_version

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


def measured(spec: ScheduleSpec) -> tuple[float, int]:
    path, _ = fresh_ledger(spec)
    clock = FixedClock(NOW)
    with open_ledger(path, clock) as ledger:
        start = time.perf_counter()
        with ledger.write() as session:
            inserted = materialize(session, spec.schedule_id, clock).inserted
        return time.perf_counter() - start, inserted


def _stamp(dt: datetime | None) -> str | None:
    return None if dt is None else dt.astimezone(UTC).replace(tzinfo=None).isoformat(" ", "microseconds")


#: Every column materialize writes (the lease, retry and finish columns stay NULL).
COLUMNS = [
    c.name
    for c in Occurrence.__table__.columns
    if c.name not in ("lease_owner", "lease_expires_at", "retry_at", "finished_at")
]
INSERT = f"INSERT INTO occurrences ({', '.join(COLUMNS)}) VALUES ({', '.join('?' for _ in COLUMNS)})"


def rows_for(text: str, spec: ScheduleSpec) -> list[tuple[Any, ...]]:
    """The stored values of every row, as materialize writes them, in :data:`COLUMNS`' order."""
    now = _stamp(NOW)
    tzdb = tzdb_version()
    engine = tidemark_version()
    out = []
    for r in expand(compiled_revision(text), NOW, NOW + spec.horizon):
        runnable = r.status.runnable
        values = {
            "occurrence_id": r.occurrence_id,
            "schedule_id": r.schedule_id,
            "revision": 1,
            "kind": "scheduled",
            "nominal_local": r.nominal_local,
            "fold_ordinal": r.fold_ordinal,
            "resolved_utc": _stamp(r.resolved),
            "position_utc": _stamp(r.position),
            "due_at": _stamp(r.dispatch) if runnable else None,
            "logical_slot_id": r.logical_slot_id,
            "business_period": r.period,
            "state": "PLANNED" if runnable else r.status.value,
            "reason": r.reason,
            "tzdb_version": tzdb,
            "engine_version": engine,
            "attempt_count": 0,
            "claim_generation": 0,
            "created_at": now,
            "updated_at": now,
        }
        out.append(tuple(values[c] for c in COLUMNS))
    return out


def raw_insert(path: str, rows: list[tuple[Any, ...]]) -> float:
    con = sqlite3.connect(path, isolation_level=None)
    try:
        con.execute("PRAGMA foreign_keys = ON")
        con.execute("PRAGMA synchronous = FULL")  # as the ledger's connections
        start = time.perf_counter()
        con.execute("BEGIN IMMEDIATE")
        con.executemany(INSERT, rows)
        con.execute("COMMIT")
        return time.perf_counter() - start
    finally:
        con.close()


def baseline(spec: ScheduleSpec) -> tuple[float, float, int]:
    """(expand + rows + insert seconds, insert-only seconds, rows)."""
    path, text = fresh_ledger(spec)
    start = time.perf_counter()
    rows = rows_for(text, spec)
    built = time.perf_counter() - start
    inserted = raw_insert(path, rows)
    return built + inserted, inserted, len(rows)


def best_interleaved(runs: int, a: Callable[[], Any], b: Callable[[], Any]) -> tuple[Any, Any]:
    """The fastest run of each, alternating them so that both see the same machine load."""
    results_a, results_b = [], []
    for _ in range(runs):
        results_a.append(a())
        results_b.append(b())
    return min(results_a, key=lambda r: r[0]), min(results_b, key=lambda r: r[0])


def main() -> None:
    print(f"best of {RUNS} runs, python {sys.version.split()[0]}, sqlite {sqlite3.sqlite_version}")
    for name, extra in CASES.items():
        spec = make_spec(extra)
        (m_seconds, m_rows), (b_seconds, b_insert, b_rows) = best_interleaved(
            RUNS, lambda spec=spec: measured(spec), lambda spec=spec: baseline(spec)
        )
        assert m_rows == b_rows, (m_rows, b_rows)
        print(f"\n{name}: {int(m_rows):,} occurrences")
        print(f"  materialize()                    {m_seconds:7.3f} s  {m_rows / m_seconds:10,.0f} occ/s")
        print(f"  baseline: expand + executemany   {b_seconds:7.3f} s  {b_rows / b_seconds:10,.0f} occ/s")
        print(f"    of which raw executemany       {b_insert:7.3f} s  {b_rows / b_insert:10,.0f} occ/s")
        print(f"  ratio materialize / baseline     {m_seconds / b_seconds:7.2f}x   (target <= 2x)")
        print(f"  storage overhead vs raw insert   {(m_seconds - (b_seconds - b_insert)) / b_insert:7.2f}x")
    WORKDIR.cleanup()


if __name__ == "__main__":
    main()
