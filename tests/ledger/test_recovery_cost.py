"""What the first pass after an outage sends and stores, counted rather than timed (both
databases where it applies): the revisions an engine's first pass checks are read a page at a
time, whatever the catalogue; the cursor a materialization moves is the one the session sees
afterwards; and SQLite's rows, bound without SQLAlchemy's per-parameter processing, are
stored as the column types store them."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from sqlalchemy import event, insert, select
from sqlalchemy.dialects import sqlite
from sqlalchemy.orm import Session

from core.clock import FixedClock
from core.engine.context import PassReport, Refusals
from core.engine.plan import hold_refused
from core.ledger.db import Ledger, open_ledger
from core.ledger.materialize import materialize, unreadable_revisions
from core.ledger.models import Occurrence
from core.ledger.occurrence_rows import insert_rows, stored_rows
from core.ledger.publish import get_schedule, publish
from core.ledger.states import OccurrenceKind, OccurrenceState
from core.spec.validation import parse_spec
from core.team.placement import Placement

from . import DAILY, NOW

HOURLY: dict[str, Any] = {**DAILY, "timeZone": "UTC", "rule": "FREQ=HOURLY;BYMINUTE=5", "horizon": "PT6H"}


@contextmanager
def statements(ledger: Ledger) -> Iterator[list[str]]:
    sent: list[str] = []

    def before(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        sent.append(statement)

    event.listen(ledger.engine, "before_cursor_execute", before)
    try:
        yield sent
    finally:
        event.remove(ledger.engine, "before_cursor_execute", before)


def _publish(ledger: Ledger, clock: FixedClock, first: int, last: int) -> None:
    with ledger.write() as session:
        for i in range(first, last):
            publish(session, parse_spec({**HOURLY, "scheduleId": f"hourly-{i:03d}"}), clock)


def test_the_revisions_checked_are_read_a_page_at_a_time(ledger: Ledger, clock: FixedClock) -> None:
    """An engine's first pass checks every published revision it has not read: 10 or 120 of
    them, the same two statements (their list and one page of texts), not one per revision."""
    sent = []
    for first, last in ((0, 10), (10, 120)):
        _publish(ledger, clock, first, last)
        with ledger.read() as session, statements(ledger) as seen:
            assert unreadable_revisions(session, set()) == {}
        sent.append(len(seen))
    assert sent[0] == sent[1] <= 3, sent


def test_the_revisions_an_engine_refuses_are_decided_a_page_at_a_time(ledger: Ledger, clock: FixedClock) -> None:
    """An engine's first pass decides which revisions it runs from their placement: for 10 or
    120 revisions the same statements (the mark, their list and one page of placements), not
    one per revision (150 ms of a first pass at 1,000 schedules); each revision is decided once."""
    sent = []
    refusals = Refusals()
    for first, last in ((0, 10), (10, 120)):
        _publish(ledger, clock, first, last)
        with statements(ledger) as seen:
            hold_refused(ledger, Placement.of(), refusals, PassReport())
        sent.append(len(seen))
    assert sent[0] == sent[1] <= 4, sent
    assert len(refusals.decided) == 120
    assert len(set(refusals.decided.values())) == 1  # one publisher: one decision for all of them


def test_the_session_sees_the_cursor_a_materialization_moved(ledger: Ledger, clock: FixedClock) -> None:
    """The cursor moves by a statement on the table: a schedule already loaded in the session
    is read again, never left showing the cursor from before."""
    _publish(ledger, clock, 0, 1)
    with ledger.write() as session:
        loaded = get_schedule(session, "hourly-000")
        before = loaded.cursor_utc
        result = materialize(session, "hourly-000", clock)
        assert result.inserted == 6
        assert (before, loaded.cursor_utc) == (NOW, result.cursor_utc)
        assert loaded.materialize_at == NOW  # the cursor minus the 6-hour horizon


def _row(occurrence_id: str, **values: Any) -> dict[str, Any]:
    at = datetime(2026, 3, 8, 7, 30, tzinfo=UTC)
    row = {
        "occurrence_id": occurrence_id,
        "schedule_id": "hourly-000",
        "revision": 1,
        "kind": OccurrenceKind.SCHEDULED,
        "nominal_local": "2026-03-08T07:30:00",
        "fold_ordinal": 0,
        "resolved_utc": at,
        "position_utc": at,
        "due_at": at,
        "logical_slot_id": None,
        "business_period": None,
        "state": OccurrenceState.PLANNED,
        "reason": None,
        "tzdb_version": "2026a",
        "engine_version": "0.1.0",
        "holidays_version": None,
        "attempt_count": 0,
        "claim_generation": 0,
        "created_at": NOW,
        "updated_at": NOW,
    }
    return row | values


NEW_YORK = timezone(timedelta(hours=-5))
ROWS = [
    _row("occ-plain"),
    _row("occ-microseconds", position_utc=datetime(2026, 3, 8, 7, 30, 0, 250, tzinfo=UTC)),
    _row("occ-other-offset", due_at=datetime(2026, 3, 8, 2, 31, tzinfo=NEW_YORK), reason="later by jitter"),
    _row("occ-same-instant-other-offset", due_at=datetime(2026, 3, 8, 2, 30, tzinfo=NEW_YORK)),
    _row("occ-created-apart", created_at=NOW + timedelta(seconds=1), updated_at=NOW + timedelta(seconds=1)),
    _row(
        "occ-skipped",
        resolved_utc=None,
        due_at=None,
        state=OccurrenceState.SKIPPED_DUPLICATE,
        business_period="2026-03-08",
        reason="falls in the same business period (2026-03-08)",
    ),
    _row("occ-carried", kind=OccurrenceKind.CARRIED, holidays_version="0.62", logical_slot_id="slot-x"),
]


def _insert(session: Session, rows: list[dict[str, Any]]) -> int:
    """The materializer's insert of rows given as dicts, in the form this ledger stores."""
    return insert_rows(session, stored_rows(rows, text=session.get_bind().dialect.name == "sqlite"))


def _stored(path: Path) -> list[tuple[Any, ...]]:
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT * FROM occurrences ORDER BY occurrence_id").fetchall()


def test_sqlite_rows_are_stored_as_the_column_types_store_them(tmp_path: Path) -> None:
    """The same rows written by the statement SQLAlchemy binds and by the materializer's own
    binding give the same bytes in the file, instants in other offsets and absent values included."""
    paths = {}
    for way in ("sqlalchemy", "own"):
        clock = FixedClock(NOW)
        paths[way] = tmp_path / f"{way}.db"
        with open_ledger(str(paths[way]), clock) as ledger:
            _publish(ledger, clock, 0, 1)
            with ledger.write() as session:
                rows = [dict(r) for r in ROWS]
                if way == "own":
                    assert _insert(session, rows) == len(ROWS)
                    assert _insert(session, rows) == 0  # ON CONFLICT DO NOTHING: none is new
                else:
                    _bound_by_sqlalchemy(session, rows)
    assert _stored(paths["own"]) == _stored(paths["sqlalchemy"])
    assert len(_stored(paths["own"])) == len(ROWS)


def _bound_by_sqlalchemy(session: Session, rows: list[dict[str, Any]]) -> None:
    table = Occurrence.metadata.tables["occurrences"]
    session.execute(sqlite.insert(table).on_conflict_do_nothing(), rows)


def _read_back(session: Session, suffix: str) -> list[tuple[Any, ...]]:
    table = Occurrence.metadata.tables["occurrences"]
    found = session.execute(select(table).where(table.c.occurrence_id.like(f"%{suffix}")).order_by(table.c.reason))
    return [tuple(v for k, v in row._mapping.items() if k not in ("occurrence_id", "schedule_id")) for row in found]


def test_rows_read_back_as_sqlalchemy_wrote_them(ledger: Ledger, clock: FixedClock) -> None:
    """On both databases: the materializer's own insert and SQLAlchemy's give the same rows back,
    and a second insert of the same rows adds none (each way writes its own schedule's rows)."""
    _publish(ledger, clock, 0, 2)
    with ledger.write() as session:
        assert _insert(session, [r | {"occurrence_id": r["occurrence_id"] + "-own"} for r in ROWS]) == len(ROWS)
        assert _insert(session, [r | {"occurrence_id": r["occurrence_id"] + "-own"} for r in ROWS]) == 0
        table = Occurrence.metadata.tables["occurrences"]
        theirs = [r | {"occurrence_id": r["occurrence_id"] + "-sa", "schedule_id": "hourly-001"} for r in ROWS]
        session.execute(insert(table), theirs)
    with ledger.read() as session:
        own, theirs = _read_back(session, "-own"), _read_back(session, "-sa")
    assert own == theirs and len(own) == len(ROWS)
