"""Random-access pages of a very large occurrences table (the monitor's main table).

:func:`occurrence_rows` answers "the rows at index ``start`` of this ordering
and filter". It reads the ids of the page first (an ``OFFSET`` over the
ordering, which an index on the ordering columns answers without touching the
rows), counting from whichever end of the result is nearer, and then loads
those rows by primary key. :func:`occurrence_rows_after` continues from a known
row (keyset paging) when the caller scrolls from a page it already holds, and
:func:`first_page` gives the count and the first page together, and
:func:`opening` the count and the pages around now, where the table opens.

Every function takes a session and returns frozen values that outlive it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from enum import StrEnum
from typing import Any, cast

from sqlalchemy import ColumnElement, Select, func, select, tuple_
from sqlalchemy.orm import Session

from core.ledger.models import Occurrence
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


def _bound(key: PageKey, walk: Order) -> ColumnElement[bool]:
    """Rows after ``key`` in ``walk``; the extra bound on positionUtc lets an index on it narrow the scan."""
    here = tuple_(*_COLUMNS)
    there = tuple_(key.position_utc, key.nominal_local, key.fold_ordinal, key.occurrence_id)
    if walk is Order.OLDEST_FIRST:
        return (Occurrence.position_utc >= key.position_utc) & (here > there)
    return (Occurrence.position_utc <= key.position_utc) & (here < there)


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
    stmt = apply_filter(select(Occurrence.occurrence_id), where).where(_bound(key, walk))
    ids = list(session.scalars(stmt.order_by(*_ordering(walk)).limit(limit)))
    if before:
        ids.reverse()
    return _load(session, ids)


#: A filter that reads every row anyway (a text search) and matches at most
#: this many is counted and paged from one read of its keys.
ONE_READ_LIMIT = 20_000


def _few_text_matches(session: Session, where: OccurrenceFilter | None, order: Order) -> list[tuple[Any, ...]] | None:
    """The keys of every row a text search matches, in ``order``, when there are at most
    ONE_READ_LIMIT of them; None for no text search, or too many matches.

    A text search cannot use an index, so its count and its page would each read
    the whole table; when it matches few rows, one read of their keys gives both.
    """
    if where is None or where.text is None or not where.text.strip():
        return None
    stmt = apply_filter(cast("Select[Any]", select(*_COLUMNS)), where).limit(ONE_READ_LIMIT + 1)
    keys = [tuple(r) for r in session.execute(stmt)]
    if len(keys) > ONE_READ_LIMIT:
        return None
    keys.sort(reverse=order is Order.NEWEST_FIRST)
    return keys


def first_page(
    session: Session, where: OccurrenceFilter | None, limit: int, *, order: Order = Order.NEWEST_FIRST
) -> tuple[int, list[MonitorRow]]:
    """The filtered count and the first ``limit`` rows (a text search matching few rows is read once)."""
    keys = _few_text_matches(session, where, order)
    if keys is not None:
        return len(keys), _load(session, [str(k[3]) for k in keys[:limit]])
    total = count_occurrences(session, where)
    return total, (occurrence_rows(session, where, 0, limit, order=order, total=total) if total else [])


def later_than(session: Session, where: OccurrenceFilter | None, instant: datetime) -> int:
    """How many of the rows ``where`` selects are positioned after ``instant`` (the planned
    future: a range of the position index, not a count of the whole table)."""
    stmt = apply_filter(select(func.count()).select_from(Occurrence), where).where(Occurrence.position_utc > instant)
    return int(session.scalar(stmt) or 0)


def now_index(total: int, later: int, order: Order) -> int:
    """Where now falls in ``order``: rows [0, index) are after now when the newest come
    first, and at or before now when the oldest do."""
    return later if order is Order.NEWEST_FIRST else total - later


@dataclass(frozen=True)
class Opening:
    """What the occurrences table shows first: the filtered count, where now falls
    in the order, and the pages (by number) that hold the rows around it."""

    total: int
    #: See :func:`now_index`.
    now_index: int
    pages: Mapping[int, list[MonitorRow]]

    def first_row(self, lead: int) -> int:
        """The row to show at the top: ``lead`` rows before now (fewer at the start)."""
        return max(0, min(self.now_index - lead, self.total - 1))


def opening(
    session: Session,
    where: OccurrenceFilter | None,
    now: datetime,
    page_size: int,
    *,
    order: Order = Order.NEWEST_FIRST,
    lead: int = 3,
    shown: int = 60,
) -> Opening:
    """The table opened around ``now``: the count, where now falls, and the pages of
    ``page_size`` rows that cover ``shown`` rows from ``lead`` rows before now.

    Newest first, the rows above now are the next ones planned, nearest last, and
    the rows under it the latest that came due or ran. The pages are read from now
    outwards (:func:`_ids_around`), however deep in the table now lies.
    """
    if page_size < 1:
        raise ValueError("page_size must be >= 1")
    keys = _few_text_matches(session, where, order)
    if keys is not None:
        total = len(keys)
        later = sum(1 for k in keys if k[0] > now)
    else:
        total = count_occurrences(session, where)
        later = later_than(session, where, now) if total else 0
    found = Opening(total, now_index(total, later, order), {})
    if not total:
        return found
    top = found.first_row(lead)
    first, last = top // page_size, (min(total, top + shown) - 1) // page_size
    start, end = first * page_size, min(total, (last + 1) * page_size)
    if keys is not None:
        ids = [str(k[3]) for k in keys[start:end]]
    else:
        ids = _ids_around(session, where, now, order, found.now_index - start, end - found.now_index)
    rows = _load(session, ids)
    pages = {page: rows[(page - first) * page_size : (page - first + 1) * page_size] for page in range(first, last + 1)}
    return replace(found, pages=pages)


def _ids_around(
    session: Session, where: OccurrenceFilter | None, now: datetime, order: Order, above: int, below: int
) -> list[str]:
    """Ids of the ``above`` rows just above now and the ``below`` rows just under it, in ``order``.

    Each side is read walking away from now along the index on the table's order
    (a range from now, LIMIT n), so the cost does not grow with how deep now lies.
    """
    later = Occurrence.position_utc > now
    not_later = Occurrence.position_utc <= now
    if order is Order.NEWEST_FIRST:  # above: the future, nearest first when walking up (oldest first)
        sides = ((later, Order.OLDEST_FIRST, above), (not_later, Order.NEWEST_FIRST, below))
    else:
        sides = ((not_later, Order.NEWEST_FIRST, above), (later, Order.OLDEST_FIRST, below))
    read: list[list[str]] = []
    for cond, walk, n in sides:
        stmt = apply_filter(select(Occurrence.occurrence_id), where).where(cond).order_by(*_ordering(walk))
        read.append(list(session.scalars(stmt.limit(n))) if n > 0 else [])
    up, down = read
    return up[::-1] + down


__all__ = [
    "ONE_READ_LIMIT",
    "MonitorRow",
    "Opening",
    "Order",
    "first_page",
    "later_than",
    "now_index",
    "occurrence_rows",
    "occurrence_rows_after",
    "opening",
]
