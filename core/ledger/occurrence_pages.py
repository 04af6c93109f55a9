"""Random-access pages of a very large occurrences table (the monitor's main table).

:func:`occurrence_rows` answers "the rows at index ``start`` of this ordering
and filter". It reads the ids of the page first (an ``OFFSET`` over the
ordering, which an index on the ordering columns answers without touching the
rows), counting from whichever end of the result is nearer, and then loads
those rows by primary key. :func:`occurrence_rows_after` continues from a known
row (keyset paging) when the caller scrolls from a page it already holds, and
:func:`first_page` gives the count and the first page together.

Every function takes a session and returns frozen values that outlive it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any, cast

from sqlalchemy import ColumnElement, Select, select, tuple_
from sqlalchemy.orm import Session

from core.ledger.models import Occurrence, Schedule
from core.ledger.monitor_queries import AttemptView, last_attempts
from core.ledger.queries import (
    OccurrenceFilter,
    OccurrenceView,
    PageKey,
    apply_filter,
    count_occurrences,
    occurrence_view,
)


class Order(StrEnum):
    """The order of the occurrences table, by (positionUtc, nominalLocal, foldOrdinal, occurrenceId)."""

    NEWEST_FIRST = "newest"
    OLDEST_FIRST = "oldest"


_COLUMNS = (Occurrence.position_utc, Occurrence.nominal_local, Occurrence.fold_ordinal, Occurrence.occurrence_id)


def _ordering(order: Order) -> tuple[ColumnElement[Any], ...]:
    if order is Order.OLDEST_FIRST:
        return tuple(c.asc() for c in _COLUMNS)
    return tuple(c.desc() for c in _COLUMNS)


def _flip(order: Order) -> Order:
    return Order.OLDEST_FIRST if order is Order.NEWEST_FIRST else Order.NEWEST_FIRST


@dataclass(frozen=True)
class MonitorRow:
    """One line of the occurrences table: the occurrence and its newest attempt."""

    occurrence: OccurrenceView
    last_attempt: AttemptView | None = None

    @property
    def key(self) -> PageKey:
        o = self.occurrence
        return PageKey(o.position_utc, o.nominal_local, o.fold_ordinal, o.occurrence_id)


def _load(session: Session, ids: Sequence[str]) -> list[MonitorRow]:
    """Rows by id, in the order of ``ids``."""
    if not ids:
        return []
    found = {
        o.occurrence_id: occurrence_view(o)
        for o in session.scalars(select(Occurrence).where(Occurrence.occurrence_id.in_(ids)))
    }
    last = last_attempts(session, ids)
    return [MonitorRow(found[i], last.get(i)) for i in ids if i in found]


#: Pages within this many rows of either end of a plain ordering (no state, text
#: or due-time filter) are read per schedule and merged: each schedule's rows
#: come in order from the (schedule, position) index, so no sort of the whole
#: table is needed even where no index covers the table's order.
MERGE_DEPTH = 1000
#: More schedules than this and the merge costs more than it saves.
MERGE_MAX_SCHEDULES = 100


def _mergeable(where: OccurrenceFilter | None) -> bool:
    if where is None:
        return True
    has_text = where.text is not None and bool(where.text.strip())
    return where.states is None and not has_text and where.due_from is None and where.due_to is None


def _bound(key: PageKey, walk: Order) -> ColumnElement[bool]:
    """Rows after ``key`` in ``walk``; the extra bound on positionUtc lets an index on it narrow the scan."""
    here = tuple_(*_COLUMNS)
    there = tuple_(key.position_utc, key.nominal_local, key.fold_ordinal, key.occurrence_id)
    if walk is Order.OLDEST_FIRST:
        return (Occurrence.position_utc >= key.position_utc) & (here > there)
    return (Occurrence.position_utc <= key.position_utc) & (here < there)


def _merged_ids(
    session: Session,
    where: OccurrenceFilter | None,
    walk: Order,
    offset: int,
    limit: int,
    key: PageKey | None = None,
) -> list[str] | None:
    """Ids at [offset, offset + limit) of ``walk`` (after ``key``), read schedule by
    schedule; None when there are too many schedules for that to pay."""
    base = where or OccurrenceFilter()
    schedules = (
        [base.schedule_id]
        if base.schedule_id is not None
        else list(session.scalars(select(Schedule.id).limit(MERGE_MAX_SCHEDULES + 1)))
    )
    if len(schedules) > MERGE_MAX_SCHEDULES:
        return None
    found: list[tuple[Any, ...]] = []
    for sid in schedules:
        stmt = apply_filter(cast("Select[Any]", select(*_COLUMNS)), replace(base, schedule_id=sid))
        if key is not None:
            stmt = stmt.where(_bound(key, walk))
        found.extend(tuple(r) for r in session.execute(stmt.order_by(*_ordering(walk)).limit(offset + limit)))
    # The same order as the SQL (text columns compare by code point, as SQLite's
    # BINARY collation and a C-collated PostgreSQL do; the ids are ASCII).
    found.sort(reverse=walk is Order.NEWEST_FIRST)
    return [str(r[3]) for r in found[offset : offset + limit]]


def occurrence_rows(
    session: Session,
    where: OccurrenceFilter | None,
    start: int,
    limit: int,
    *,
    order: Order = Order.NEWEST_FIRST,
    total: int | None = None,
) -> list[MonitorRow]:
    """The rows at indexes [start, start + limit) of ``order`` among those ``where`` selects.

    ``total`` is the filtered count when the caller knows it (else it is
    counted). The offset is taken from the nearer end, so the last page costs
    what the first one does.
    """
    if start < 0 or limit < 1:
        raise ValueError("start must be >= 0 and limit >= 1")
    if total is None:
        total = count_occurrences(session, where)
    if start >= total:
        return []
    limit = min(limit, total - start)
    from_end = total - (start + limit)
    flipped = from_end < start
    use, offset = (_flip(order), from_end) if flipped else (order, start)
    ids: list[str] | None = None
    if offset + limit <= MERGE_DEPTH and _mergeable(where):
        ids = _merged_ids(session, where, use, offset, limit)
    if ids is None:
        stmt = apply_filter(select(Occurrence.occurrence_id), where).order_by(*_ordering(use))
        ids = list(session.scalars(stmt.offset(offset).limit(limit)))
    if flipped:
        ids.reverse()
    return _load(session, ids)


def occurrence_rows_after(
    session: Session,
    where: OccurrenceFilter | None,
    key: PageKey,
    limit: int,
    *,
    order: Order = Order.NEWEST_FIRST,
    before: bool = False,
) -> list[MonitorRow]:
    """Up to ``limit`` rows that follow ``key`` in ``order`` (keyset paging), or,
    with ``before``, the ``limit`` rows just ahead of it (still in ``order``)."""
    if limit < 1:
        raise ValueError("limit must be >= 1")
    walk = _flip(order) if before else order
    ids = _merged_ids(session, where, walk, 0, limit, key) if _mergeable(where) else None
    if ids is None:
        stmt = apply_filter(select(Occurrence.occurrence_id), where).where(_bound(key, walk))
        ids = list(session.scalars(stmt.order_by(*_ordering(walk)).limit(limit)))
    if before:
        ids.reverse()
    return _load(session, ids)


#: A filter that reads every row anyway (a text search) and matches at most
#: this many is counted and paged from one read of its keys.
ONE_READ_LIMIT = 20_000


def first_page(
    session: Session, where: OccurrenceFilter | None, limit: int, *, order: Order = Order.NEWEST_FIRST
) -> tuple[int, list[MonitorRow]]:
    """The filtered count and the first ``limit`` rows: what a table shows first.

    A text search cannot use an index, so its count and its page would each
    read the whole table; when it matches few rows, one read of their keys
    gives both.
    """
    if where is not None and where.text is not None and where.text.strip():
        stmt = apply_filter(cast("Select[Any]", select(*_COLUMNS)), where).limit(ONE_READ_LIMIT + 1)
        keys = [tuple(r) for r in session.execute(stmt)]
        if len(keys) <= ONE_READ_LIMIT:
            keys.sort(reverse=order is Order.NEWEST_FIRST)
            return len(keys), _load(session, [str(k[3]) for k in keys[:limit]])
    total = count_occurrences(session, where)
    return total, (occurrence_rows(session, where, 0, limit, order=order, total=total) if total else [])


__all__ = [
    "MERGE_DEPTH",
    "MERGE_MAX_SCHEDULES",
    "ONE_READ_LIMIT",
    "MonitorRow",
    "Order",
    "first_page",
    "occurrence_rows",
    "occurrence_rows_after",
]
