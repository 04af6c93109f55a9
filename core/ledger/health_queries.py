"""The monitor's health read models: each schedule's recent results (for a
sparkline) and the health series of the ledger over a range (start delays,
attempts by outcome, expired runs, and how long the oldest occurrence waiting
for a person had waited).

Every function takes a session; "now" is an argument, never read from a clock.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.ledger.attention_queries import ACKNOWLEDGED, ATTENTION_STATES
from core.ledger.models import Attempt, Event, Occurrence, Schedule
from core.ledger.monitor_queries import id_chunks
from core.ledger.states import OccurrenceState

_S = OccurrenceState

#: States shown as a schedule's recent results (an outcome, or a run under way).
RESULT_STATES: frozenset[OccurrenceState] = frozenset(
    {
        _S.DISPATCHING,
        _S.RUNNING,
        _S.SUCCEEDED,
        _S.RETRY_WAIT,
        _S.FAILED,
        _S.UNKNOWN_EFFECT,
        _S.MISFIRE_EXPIRED,
        _S.SKIPPED_OVERLAP,
    }
)


@dataclass(frozen=True)
class Mark:
    """One recent result of a schedule (for a sparkline)."""

    occurrence_id: str
    state: OccurrenceState
    position_utc: datetime


def recent_results(
    session: Session, *, limit: int = 20, schedule_ids: Iterable[str] | None = None
) -> dict[str, tuple[Mark, ...]]:
    """Each schedule's last ``limit`` results, oldest first (the newest is last)."""
    if schedule_ids is None:
        schedule_ids = list(session.scalars(select(Schedule.id).order_by(Schedule.id)))
    out: dict[str, tuple[Mark, ...]] = {}
    for sid in schedule_ids:
        stmt = (
            select(Occurrence.occurrence_id, Occurrence.state, Occurrence.position_utc)
            .where(Occurrence.schedule_id == sid, Occurrence.state.in_(sorted(RESULT_STATES)))
            .order_by(Occurrence.position_utc.desc(), Occurrence.occurrence_id.desc())
            .limit(limit)
        )
        out[sid] = tuple(Mark(oid, state, pos) for oid, state, pos in reversed(session.execute(stmt).all()))
    return out


# --- health ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DelayPoint:
    """How long a first attempt started after its occurrence was due."""

    started_at: datetime
    schedule_id: str
    occurrence_id: str
    seconds: float


@dataclass(frozen=True)
class HealthSeries:
    """Health of the ledger over [start, end), in buckets of ``bucket`` (an hour by default)."""

    start: datetime
    end: datetime
    bucket: timedelta
    #: Due-to-start delay of every first attempt that started in the range.
    delays: tuple[DelayPoint, ...]
    #: Attempts started per bucket, by outcome (``RUNNING`` while one has none yet).
    attempts: Mapping[str, tuple[int, ...]]
    #: MISFIRE_EXPIRED occurrences per bucket of their due time.
    misfires: tuple[int, ...]
    #: At the end of each bucket, the age in seconds of the oldest occurrence
    #: waiting for a person then (None when none was).
    oldest_unresolved: tuple[float | None, ...]
    #: The same at ``now``.
    oldest_unresolved_now: float | None

    @property
    def buckets(self) -> tuple[datetime, ...]:
        """The start of each bucket."""
        return tuple(self.start + i * self.bucket for i in range(len(self.misfires)))


def _bucket_count(start: datetime, end: datetime, bucket: timedelta) -> int:
    return max(1, -(-int((end - start).total_seconds()) // int(bucket.total_seconds())))


def health(
    session: Session, start: datetime, end: datetime, now: datetime, *, bucket: timedelta = timedelta(hours=1)
) -> HealthSeries:
    """The monitor's health series over [start, end)."""
    if end <= start:
        raise ValueError("the range must end after it starts")
    if bucket.total_seconds() < 1:
        raise ValueError("a bucket must be at least a second long")
    n = _bucket_count(start, end, bucket)

    def index(at: datetime) -> int:
        return int((at - start).total_seconds() // bucket.total_seconds())

    delays: list[DelayPoint] = []
    attempts: dict[str, list[int]] = defaultdict(lambda: [0] * n)
    rows = session.execute(
        select(
            Attempt.started_at,
            Attempt.attempt_number,
            Attempt.outcome,
            Occurrence.due_at,
            Occurrence.schedule_id,
            Occurrence.occurrence_id,
        )
        .join(Occurrence, Occurrence.occurrence_id == Attempt.occurrence_id)
        .where(Attempt.started_at >= start, Attempt.started_at < end)
        .order_by(Attempt.started_at)
    ).all()
    for started, number, outcome, due, sid, oid in rows:
        attempts[(outcome or _S.RUNNING).value][index(started)] += 1
        if number == 1 and due is not None:
            delays.append(DelayPoint(started, sid, oid, max((started - due).total_seconds(), 0.0)))

    misfires = [0] * n
    for (due,) in session.execute(
        select(Occurrence.due_at).where(
            Occurrence.state == _S.MISFIRE_EXPIRED, Occurrence.due_at >= start, Occurrence.due_at < end
        )
    ):
        if due is not None:
            misfires[index(due)] += 1

    spans = _unresolved_spans(session, end)
    ends = [min(start + (i + 1) * bucket, end) for i in range(n)]
    oldest = tuple(_oldest_at(spans, t) for t in ends)
    return HealthSeries(
        start,
        end,
        bucket,
        tuple(delays),
        {k: tuple(v) for k, v in sorted(attempts.items())},
        tuple(misfires),
        oldest,
        _oldest_at(spans, now),
    )


def _unresolved_spans(session: Session, until: datetime) -> list[tuple[datetime, datetime | None]]:
    """When each wait for a person began and ended (None: still waiting).

    A wait begins when an attempt ends in UNKNOWN_EFFECT or FAILED, and ends
    with the next attempt, an acknowledgement, or the occurrence moving on.
    """
    ended = session.execute(
        select(Attempt.occurrence_id, Attempt.attempt_number, Attempt.finished_at)
        .where(Attempt.outcome.in_(sorted(ATTENTION_STATES)), Attempt.finished_at < until)
        .order_by(Attempt.finished_at)
    ).all()
    if not ended:
        return []
    ids = sorted({oid for oid, _, _ in ended})
    starts: dict[tuple[str, int], datetime] = {}
    state: dict[str, tuple[OccurrenceState, datetime]] = {}
    acks: dict[str, datetime] = {}
    for chunk in id_chunks(ids):
        for oid, number, started in session.execute(
            select(Attempt.occurrence_id, Attempt.attempt_number, Attempt.started_at).where(
                Attempt.occurrence_id.in_(chunk)
            )
        ):
            starts[(oid, number)] = started
        for oid, st, updated in session.execute(
            select(Occurrence.occurrence_id, Occurrence.state, Occurrence.updated_at).where(
                Occurrence.occurrence_id.in_(chunk)
            )
        ):
            state[oid] = (st, updated)
        for who, at in session.execute(
            select(Event.occurrence_id, Event.at).where(Event.kind == ACKNOWLEDGED, Event.occurrence_id.in_(chunk))
        ):
            if who is not None:
                acks[who] = min(at, acks.get(who, at))
    spans: list[tuple[datetime, datetime | None]] = []
    for oid, number, finished in ended:
        if finished is None:
            continue
        ends = [t for t in (starts.get((oid, number + 1)), acks.get(oid)) if t is not None and t >= finished]
        st, updated = state.get(oid, (_S.FAILED, finished))
        if st not in ATTENTION_STATES and updated >= finished:
            ends.append(updated)
        spans.append((finished, min(ends) if ends else None))
    return spans


def _oldest_at(spans: Sequence[tuple[datetime, datetime | None]], t: datetime) -> float | None:
    ages = [(t - began).total_seconds() for began, over in spans if began <= t and (over is None or over > t)]
    return max(ages) if ages else None


__all__ = [
    "RESULT_STATES",
    "DelayPoint",
    "HealthSeries",
    "Mark",
    "health",
    "recent_results",
]
