"""Occurrence rows as materialization writes them: plain tuples in the table's column order,
built straight from an expansion's rows, and inserted by one statement per batch.

A row is built once, in the form its ledger stores (:func:`build_rows`): on SQLite its instants
are the text :class:`~core.ledger.models.UtcDateTime` writes and its states the text
:class:`~core.ledger.models.EnumText` writes, so nothing is converted again on the way in; on
PostgreSQL its instants stay aware datetimes. Any other row (a dict of column values, instants in
any offset, states as enums) takes :func:`stored_rows`, the general conversion, which a test
holds to what SQLAlchemy's own binding stores.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Integer
from sqlalchemy.orm import Session

from core.enums import Status
from core.ledger.models import Occurrence, sqlite_utc_text
from core.ledger.states import FROM_STATUS, OccurrenceKind, OccurrenceState
from core.recurrence.occurrence import Occurrence as Row
from core.version import tidemark_version

#: The columns an occurrence row of materialization fills, in the order of its tuples.
COLUMNS = (
    "occurrence_id",
    "schedule_id",
    "revision",
    "kind",
    "nominal_local",
    "fold_ordinal",
    "resolved_utc",
    "position_utc",
    "due_at",
    "logical_slot_id",
    "business_period",
    "state",
    "reason",
    "tzdb_version",
    "engine_version",
    "holidays_version",
    "attempt_count",
    "claim_generation",
    "created_at",
    "updated_at",
)
#: Where a row's values sit in its tuple.
_AT = {name: i for i, name in enumerate(COLUMNS)}
OCCURRENCE_ID, SCHEDULE_ID, KIND = _AT["occurrence_id"], _AT["schedule_id"], _AT["kind"]
RESOLVED, POSITION, DUE = _AT["resolved_utc"], _AT["position_utc"], _AT["due_at"]
SLOT, PERIOD, STATE, REASON = _AT["logical_slot_id"], _AT["business_period"], _AT["state"], _AT["reason"]
#: Rows per INSERT statement (one batch of the engine's pass is one statement).
CHUNK = 2000

#: A row's state, as stored, from its expansion status.
_STATE_TEXT = {status: FROM_STATUS[status].value for status in Status}
PLANNED = OccurrenceState.PLANNED.value
_SCHEDULED = OccurrenceKind.SCHEDULED.value
_INSTANTS = frozenset({"resolved_utc", "position_utc", "due_at", "created_at", "updated_at"})
#: The instants a batch's rows share (the moment they were written).
_BATCH_INSTANTS = frozenset({"created_at", "updated_at"})
_INSERT_SQLITE = (
    f"INSERT INTO occurrences ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))}) ON CONFLICT DO NOTHING"
)


def build_rows(
    rows: Iterable[Row], revision: int, tzdb: str, now: datetime, holidays: str | None, *, text: bool
) -> list[tuple[Any, ...]]:
    """The occurrence rows of ``rows`` (one revision's expansion), as tuples of :data:`COLUMNS`:
    runnable rows PLANNED with their dispatch time, the others the terminal facts they are.
    With ``text`` (SQLite) in the form SQLite stores; else instants as aware datetimes."""
    moment: datetime | str = sqlite_utc_text(now) if text else now
    tail = (tzdb, tidemark_version(), holidays, 0, 0, moment, moment)
    instants = _text_instants if text else _instants
    scheduled, shifted = Status.SCHEDULED, Status.SHIFTED
    out: list[tuple[Any, ...]] = []
    append = out.append
    for row in rows:
        status = row.status
        runnable = status is scheduled or status is shifted
        at, place, due = instants(row, runnable)
        state = PLANNED if runnable else _STATE_TEXT[status]
        head = (row.occurrence_id, row.schedule_id, revision, _SCHEDULED, row.nominal_local, row.fold_ordinal)
        append((*head, at, place, due, row.logical_slot_id, row.period, state, row.reason, *tail))
    return out


def _instants(row: Row, runnable: bool) -> tuple[Any, Any, Any]:
    """A row's resolved instant, position and due time, as aware datetimes."""
    return row.resolved, row.position, row.dispatch if runnable else None


def _text_instants(row: Row, runnable: bool) -> tuple[Any, Any, Any]:
    """:func:`_instants` as SQLite stores them. The resolved instant is written from the text the
    expansion made of it already (``2027-03-01T12:00:00Z`` becomes ``2027-03-01 12:00:00.000000``),
    and the position and due time are mostly that same instant: a row formats at most one."""
    resolved, utc = row.resolved, row.resolved_utc
    at = (
        None if resolved is None or utc is None else utc[:10] + " " + utc[11:-1] + (".000000" if len(utc) == 20 else "")
    )
    position = row.position
    place = at if position is resolved or (at is not None and position == resolved) else sqlite_utc_text(position)
    if not runnable:
        return at, place, None
    return at, place, at if not row.dispatch_delay else sqlite_utc_text(row.dispatch)  # type: ignore[arg-type]


def stored_rows(rows: Iterable[Mapping[str, Any]], *, text: bool) -> list[tuple[Any, ...]]:
    """Rows given as dicts of :data:`COLUMNS` (instants aware, in any offset; states and kinds as
    enums or text) as tuples in the form :func:`build_rows` makes."""
    pick = operator.itemgetter(*COLUMNS)
    if not text:
        return [tuple(str(v) if i in (KIND, STATE) else v for i, v in enumerate(pick(row))) for row in rows]
    return _sqlite_values([pick(row) for row in rows])


def _sqlite_values(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """``rows`` as the tuples SQLite stores (see :class:`~core.ledger.models.UtcDateTime` and
    :class:`~core.ledger.models.EnumText`), each distinct batch moment formatted once."""
    instants = [i for i, name in enumerate(COLUMNS) if name in _INSTANTS]
    shared = {i for i, name in enumerate(COLUMNS) if name in _BATCH_INSTANTS}
    moments: dict[datetime, str] = {}
    out = []
    for row in rows:
        values = list(row)
        for i in instants:
            value = values[i]
            if value is None:
                continue
            if i in shared:
                found = moments.get(value)
                if found is None:
                    found = moments[value] = sqlite_utc_text(value)
            else:
                found = sqlite_utc_text(value)
            values[i] = found
        values[KIND], values[STATE] = str(values[KIND]), str(values[STATE])
        out.append(tuple(values))
    return out


def insert_rows(session: Session, rows: Sequence[tuple[Any, ...]]) -> int:
    """INSERT ... ON CONFLICT DO NOTHING of rows built for this session's ledger (:func:`build_rows`,
    :func:`stored_rows`); returns how many were new. On SQLite one ``executemany`` per
    :data:`CHUNK` rows, by a statement written once."""
    if not rows:
        return 0
    if session.get_bind().dialect.name == "postgresql":
        return sum(insert_unnest(session, rows).values())
    connection = session.connection()
    return sum(
        connection.exec_driver_sql(_INSERT_SQLITE, rows[i : i + CHUNK]).rowcount for i in range(0, len(rows), CHUNK)
    )


def insert_unnest(session: Session, rows: Sequence[tuple[Any, ...]]) -> dict[str, int]:
    """PostgreSQL's insert, which also says whose rows were new (schedule -> rows): each column's
    values as one array, the rows ``unnest`` of them; RETURNING lists the new rows' schedules
    (psycopg reports no rowcount for executemany). SQLAlchemy's
    multi-row VALUES made a statement thousands of placeholders long, which psycopg parsed
    again for every batch: two thirds of a recovery pass's CPU."""
    table = Occurrence.metadata.tables["occurrences"]
    arrays = ", ".join(f"%s::{_pg_array(table.c[name].type, name)}" for name in COLUMNS)
    sql = (
        f"INSERT INTO occurrences ({', '.join(COLUMNS)}) SELECT * FROM unnest({arrays}) "
        "ON CONFLICT DO NOTHING RETURNING schedule_id"
    )
    connection = session.connection()
    new: dict[str, int] = {}
    for i in range(0, len(rows), CHUNK):
        columns = tuple(list(values) for values in zip(*rows[i : i + CHUNK], strict=True))
        for (sid,) in connection.exec_driver_sql(sql, columns):
            new[sid] = new.get(sid, 0) + 1
    return new


def _pg_array(column_type: Any, name: str) -> str:
    if name in _INSTANTS:
        return "timestamptz[]"
    return "int8[]" if isinstance(column_type, Integer) else "text[]"
