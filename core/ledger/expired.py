"""Expired ranges: missed occurrences whose fate was certain, recorded as one entry.

A year-long outage of an every-minute schedule leaves half a million missed
occurrences; under CATCH_UP_BOUNDED with maxCatchUp 1 all but one expire.
Writing each as a MISFIRE_EXPIRED row would take minutes and tell a person
nothing more than one line does. So the engine asks, before materializing,
where the occurrences that the misfire policy could never run end
(:func:`core.engine.misfire.certain_expiry`), and :func:`core.ledger.materialize.materialize`
records everything before that point as one :class:`~core.ledger.models.ExpiredRange`
per governing revision, in the transaction that moves the cursor past it,
with an ``occurrences.expired`` event. The rows that can still run (the
newest maxCatchUp, anything inside catchUpWindow) are materialized one by one
and go through the misfire policy as usual.

Views read the ranges through :func:`list_expired_ranges` (``schedctl
ledger`` lists them after the occurrences) and :func:`expired_totals` (for
counts and metrics). A backfill of a range still works: its occurrences were
never materialized, so each gets a new backfill occurrence.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import func, insert, select
from sqlalchemy.orm import Session

from core.enums import Kind
from core.ledger.models import ExpiredRange
from core.ledger.queries import OccurrenceFilter
from core.ledger.states import OccurrenceKind, OccurrenceState
from core.recurrence.compile import CompiledSchedule
from core.time.formats import fmt_utc
from core.time.zones import transitions

#: A range is recorded only when it holds at least this many occurrences; fewer
#: are materialized as MISFIRE_EXPIRED rows, which say more about each one.
RANGE_MIN_ROWS = 100
#: Counting a calendar range by its repeating pattern expands at most this many times per pattern.
_COUNT_PATTERN_LIMIT = 20_000
_UNITS = {
    "MINUTELY": timedelta(minutes=1),
    "HOURLY": timedelta(hours=1),
    "DAILY": timedelta(days=1),
    "WEEKLY": timedelta(weeks=1),
}
#: Rule parts that tie the pattern to months or years (it would not repeat by days or weeks).
_CALENDAR_BOUND = ("COUNT", "UNTIL", "BYMONTH", "BYMONTHDAY", "BYYEARDAY", "BYWEEKNO", "BYSETPOS")


@dataclass(frozen=True)
class ExpiryCut:
    """Every occurrence positioned before ``before`` is certain to expire now."""

    before: datetime
    #: What makes it certain: a misfirePolicy value, or "catchUpWindow".
    policy: str
    #: One sentence for a person, like the reason of a MISFIRE_EXPIRED row.
    reason: str


@dataclass(frozen=True)
class ExpiredRangeView:
    """One expired range, for the CLI, the GUI and metrics."""

    range_id: int
    schedule_id: str
    revision: int
    from_utc: datetime
    to_utc: datetime
    policy: str
    reason: str
    #: How many occurrences it stands for; None when that was not cheap to know.
    occurrences: int | None
    created_at: datetime

    def summary(self) -> str:
        """``8,760 occurrences of rev 1 expired from … to … (misfirePolicy SKIP): reason``."""
        what = f"{self.occurrences:,} occurrences" if self.occurrences is not None else "every occurrence"
        by = "catchUpWindow" if self.policy == "catchUpWindow" else f"misfirePolicy {self.policy}"
        return (
            f"{what} of {self.schedule_id} revision {self.revision} from {fmt_utc(self.from_utc)} "
            f"to {fmt_utc(self.to_utc)} expired by {by} (recorded as one range): {self.reason}"
        )

    def line(self) -> str:
        """``8,760 occurrences of heartbeat expired by misfirePolicy SKIP, 2026-03-01 00:00 … 2027-03-01 00:00 UTC``."""
        what = f"{self.occurrences:,} occurrences" if self.occurrences is not None else "Every occurrence"
        by = "catchUpWindow" if self.policy == "catchUpWindow" else f"misfirePolicy {self.policy}"
        return (
            f"{what} of {self.schedule_id} expired by {by}, "
            f"{self.from_utc:%Y-%m-%d %H:%M} … {self.to_utc:%Y-%m-%d %H:%M} UTC"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "rangeId": self.range_id,
            "scheduleId": self.schedule_id,
            "revision": self.revision,
            "fromUtc": fmt_utc(self.from_utc),
            "toUtc": fmt_utc(self.to_utc),
            "state": "MISFIRE_EXPIRED",
            "policy": self.policy,
            "reason": self.reason,
            "occurrences": self.occurrences,
        }


def range_row(
    schedule_id: str,
    revision: int,
    from_utc: datetime,
    to_utc: datetime,
    cut: ExpiryCut,
    occurrences: int | None,
    tzdb: str,
    now: datetime,
) -> dict[str, Any]:
    """One range's values, for :func:`record_ranges`."""
    return {
        "schedule_id": schedule_id,
        "revision": revision,
        "from_utc": from_utc,
        "to_utc": to_utc,
        "policy": cut.policy,
        "reason": cut.reason,
        "occurrences": occurrences,
        "tzdb_version": tzdb,
        "created_at": now,
    }


def record_ranges(session: Session, rows: list[dict[str, Any]]) -> None:
    """Insert ranges (:func:`range_row`) in one statement; the caller moves the cursors and
    writes the events in the same transaction."""
    # One statement for every call, its values as parameters: built with ``.values()`` it was
    # compiled again at each call, the larger part of recording a range.
    if rows:
        session.execute(_INSERT_RANGE, rows)


_INSERT_RANGE = insert(ExpiredRange.metadata.tables[ExpiredRange.__tablename__])


def list_expired_ranges(session: Session, schedule_id: str | None = None) -> list[ExpiredRangeView]:
    """Expired ranges (of one schedule), by schedule and position."""
    stmt = select(ExpiredRange).order_by(ExpiredRange.schedule_id, ExpiredRange.from_utc, ExpiredRange.id)
    if schedule_id is not None:
        stmt = stmt.where(ExpiredRange.schedule_id == schedule_id)
    return [
        ExpiredRangeView(
            r.id, r.schedule_id, r.revision, r.from_utc, r.to_utc, r.policy, r.reason, r.occurrences, r.created_at
        )
        for r in session.scalars(stmt)
    ]


def ranges_matching(session: Session, where: OccurrenceFilter, limit: int = 50) -> list[ExpiredRangeView]:
    """The expired ranges an occurrence filter would show, were their occurrences rows:
    same schedule, revision and text; MISFIRE_EXPIRED among the states; positions
    overlapping the window. They never run, so a window on due times leaves them out."""
    if where.states is not None and OccurrenceState.MISFIRE_EXPIRED not in where.states:
        return []
    if where.kind is not None and where.kind is not OccurrenceKind.SCHEDULED:
        return []
    if where.due_from is not None or where.due_to is not None:
        return []
    stmt = select(ExpiredRange).order_by(ExpiredRange.from_utc.desc(), ExpiredRange.id.desc()).limit(limit)
    if where.schedule_id is not None:
        stmt = stmt.where(ExpiredRange.schedule_id == where.schedule_id)
    if where.revision is not None:
        stmt = stmt.where(ExpiredRange.revision == where.revision)
    if where.position_from is not None:
        stmt = stmt.where(ExpiredRange.to_utc > where.position_from)
    if where.position_to is not None:
        stmt = stmt.where(ExpiredRange.from_utc < where.position_to)
    if where.text:
        pattern = f"%{where.text.lower()}%"
        stmt = stmt.where(
            func.lower(ExpiredRange.schedule_id).like(pattern) | func.lower(ExpiredRange.reason).like(pattern)
        )
    return [
        ExpiredRangeView(
            r.id, r.schedule_id, r.revision, r.from_utc, r.to_utc, r.policy, r.reason, r.occurrences, r.created_at
        )
        for r in session.scalars(stmt)
    ]


@dataclass(frozen=True)
class ExpiredTotals:
    ranges: int
    #: Occurrences the counted ranges stand for.
    occurrences: int
    #: Ranges whose count is unknown.
    uncounted: int


def expired_totals(session: Session) -> ExpiredTotals:
    """What the ranges add to the MISFIRE_EXPIRED rows, for counts and metrics."""
    row = session.execute(
        select(
            func.count(),
            func.coalesce(func.sum(ExpiredRange.occurrences), 0),
            func.count() - func.count(ExpiredRange.occurrences),
        )
    ).one()
    return ExpiredTotals(int(row[0] or 0), int(row[1] or 0), int(row[2] or 0))


# --- counting ---------------------------------------------------------------------------


def count_rows(compiled: CompiledSchedule, lo: datetime, hi: datetime) -> int | None:
    """How many occurrences have positions in [lo, hi), when that is cheap; else None.

    Interval schedules: arithmetic. Calendar rules that repeat by days or weeks
    (MINUTELY to WEEKLY, no month or year parts), in a zone whose offset does
    not change in the range: the pattern is counted once and multiplied. Any
    exclusion, business calendar, business period, end bound or clock change makes it None: the
    range then stands for "every occurrence" between its bounds.
    """
    spec = compiled.facts
    if hi <= lo:
        return 0
    if spec.business_period or compiled.excluded_dates or compiled.excluded_times or compiled.business_days:
        return None
    if compiled.until is not None or compiled.end_utc is not None:
        return None
    if spec.kind is Kind.INTERVAL:
        if spec.anchor is not None and hi <= spec.anchor:
            return 0
        assert spec.anchor is not None and spec.every is not None
        return _indices_before(hi, spec.anchor, spec.every) - _indices_before(lo, spec.anchor, spec.every)
    if spec.kind is not Kind.CALENDAR:
        return None
    return _count_calendar(compiled, lo, hi)


def _indices_before(t: datetime, anchor: datetime, every: timedelta) -> int:
    """How many instants anchor + k*every (k >= 0) lie before ``t``."""
    if t <= anchor:
        return 0
    return math.ceil((t - anchor) / every)


def fixed_offset(compiled: CompiledSchedule, lo: datetime, hi: datetime) -> timedelta | None:
    """The zone's UTC offset when it does not change in [lo, hi] (a day of margin
    each side) and nothing but the rule shapes the rows (no exclusions, business
    periods or moved month days): then every nominal time is one runnable row at
    nominal - offset. None otherwise."""
    if compiled.facts.business_period or compiled.excluded_dates or compiled.excluded_times:
        return None
    if compiled.month_days is not None:
        return None
    zone = compiled.zone
    if str(zone.key) != "UTC" and transitions(zone, lo - timedelta(days=1), hi + timedelta(days=1)):
        return None
    return zone.utcoffset(lo)


def _count_calendar(compiled: CompiledSchedule, lo: datetime, hi: datetime) -> int | None:
    parsed, start = compiled.parsed, compiled.facts.start
    if parsed is None or start is None:
        return None
    if parsed.freq not in _UNITS or any(part in parsed.parts for part in _CALENDAR_BOUND):
        return None
    offset = fixed_offset(compiled, lo, hi)
    if offset is None:
        return None
    lo_local = max((lo + offset).replace(tzinfo=None), start)
    hi_local = (hi + offset).replace(tzinfo=None)
    if hi_local <= lo_local:
        return 0
    step = _UNITS[parsed.freq] * int(parsed.parts.get("INTERVAL", "1"))
    if set(parsed.parts) <= {"FREQ", "INTERVAL", "WKST"}:
        # start + k*step: arithmetic.
        return _indices_before(hi_local, start, step) - _indices_before(lo_local, start, step)
    cycle = timedelta(weeks=1) if parsed.freq == "WEEKLY" or "BYDAY" in parsed.parts else timedelta(days=1)
    seconds = math.lcm(int(step.total_seconds()), int(cycle.total_seconds()))
    if seconds // int(step.total_seconds()) > _COUNT_PATTERN_LIMIT:
        return None  # a pattern too long to count cheaply
    period = timedelta(seconds=seconds)
    whole = (hi_local - lo_local) // period
    return whole * _nominals(compiled, lo_local, lo_local + period) + _nominals(
        compiled, lo_local + whole * period, hi_local
    )


def _nominals(compiled: CompiledSchedule, lo: datetime, hi: datetime) -> int:
    n = 0
    for when, _moved in compiled.nominals(lo):
        if when >= hi:
            break
        n += 1
    return n
