"""Shadow: what the installed Tidemark and tz database would compute for the
future the ledger already holds, compared with what it holds.

:func:`shadow` recomputes each schedule's occurrences in a window from now
with the materializer's own expansion (:func:`core.ledger.materialize.expected_rows`:
the same governing revisions, rows and yielding to live holders) and lists
every occurrence whose id, instants, state or reason differ from the ledger's
row. It reads only: the caller passes a read session (``ledger.read()``),
and nothing is written whatever it finds. An unchanged ledger, read by the
Tidemark and tz database that materialized it, is always equal; a difference
means the code or the tz data changed.

A row that yielded to a live holder (an older revision's run of the same
period) whose holder has since given the period back is not a difference: the
ledger's row was right when it was made, and a fact changed since, not the code.

Compared are the rows materialization made (kind ``scheduled``) that have not
started: planned or due, and the terminal facts it records (skipped in a gap,
a fold or as a duplicate, excluded). Rows a person or the engine moved on
(cancelled, running, finished) are facts of their own and left out, and so
are revisions of ``after_completion`` schedules, whose later runs follow
completions rather than a rule. The window ends at the schedule's cursor:
beyond it the ledger holds nothing yet to compare.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.calendar import holiday_codes
from core.clock import Clock
from core.enums import Kind
from core.ledger.compiled import REVISION_ERRORS, compiled_revision, revision_problems
from core.ledger.materialize import GOV_COLUMNS, expected_rows, governing_segments, yielded_to
from core.ledger.models import Occurrence, Revision, Schedule
from core.ledger.states import PERIOD_RELEASING, SLOT_RELEASING, OccurrenceKind, OccurrenceState, ScheduleState
from core.time.formats import fmt_utc
from core.time.zones import tzdb_version

_S = OccurrenceState

#: Ledger states shadow compares: materialized and not started.
COMPARED_STATES: frozenset[OccurrenceState] = frozenset(
    {_S.PLANNED, _S.DUE, _S.SKIPPED_GAP, _S.SKIPPED_FOLD, _S.SKIPPED_DUPLICATE, _S.EXCLUDED}
)
#: Waiting to run: DUE is a PLANNED row whose time has come, the same promise.
_WAITING = frozenset({_S.PLANNED, _S.DUE})

#: What can differ, in the order a difference lists them.
FIELDS = ("occurrence", "resolvedUtc", "positionUtc", "state", "reason")


@dataclass(frozen=True)
class ShadowDifference:
    """One occurrence the installed code computes otherwise: ``what`` differs (one of
    :data:`FIELDS`), from the ``ledger``'s value to the ``recomputed`` one. For
    ``occurrence`` the values say whether it exists (``present``/``absent``)."""

    schedule_id: str
    occurrence_id: str
    nominal_local: str
    fold_ordinal: int
    what: str
    ledger: str | None
    recomputed: str | None

    def to_json(self) -> dict[str, Any]:
        return {
            "scheduleId": self.schedule_id,
            "occurrenceId": self.occurrence_id,
            "nominalLocal": self.nominal_local,
            "foldOrdinal": self.fold_ordinal,
            "field": self.what,
            "ledger": self.ledger,
            "recomputed": self.recomputed,
        }


@dataclass(frozen=True)
class ScheduleShadow:
    """One schedule's comparison: the window [start, end) and how many occurrences were compared."""

    schedule_id: str
    start: datetime
    end: datetime
    compared: int
    #: Why nothing was compared, when that is the case.
    skipped: str | None = None
    #: A revision this Tidemark cannot read (then nothing was compared): its problems.
    unreadable: str | None = None


@dataclass(frozen=True)
class ShadowReport:
    """Every schedule's comparison and the differences found, by schedule then position."""

    at: datetime
    tzdb_version: str
    #: The installed holidays data's release, when a compared schedule has a business calendar.
    holidays_version: str | None = None
    schedules: list[ScheduleShadow] = field(default_factory=list)
    differences: list[ShadowDifference] = field(default_factory=list)

    @property
    def equal(self) -> bool:
        """No difference, and every schedule could be read (one that cannot is computed otherwise: not at all)."""
        return not self.differences and all(s.unreadable is None for s in self.schedules)

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": "shadow.v1",
            "at": fmt_utc(self.at),
            "tzdbVersion": self.tzdb_version,
            "holidaysVersion": self.holidays_version,
            "equal": self.equal,
            "schedules": [
                {
                    "scheduleId": s.schedule_id,
                    "fromUtc": fmt_utc(s.start),
                    "toUtc": fmt_utc(s.end),
                    "compared": s.compared,
                    "skipped": s.skipped,
                    "unreadable": s.unreadable,
                }
                for s in self.schedules
            ],
            "differences": [d.to_json() for d in self.differences],
        }


def _utc(value: datetime | None) -> str | None:
    return fmt_utc(value) if value is not None else None


def _same_state(stored: OccurrenceState, fresh: OccurrenceState) -> bool:
    return stored is fresh or (stored in _WAITING and fresh in _WAITING)


def _compare(sid: str, stored: Occurrence, fresh: dict[str, Any]) -> list[ShadowDifference]:
    """What differs between a ledger row and its recomputed twin."""
    pairs = (
        ("resolvedUtc", _utc(stored.resolved_utc), _utc(fresh["resolved_utc"])),
        ("positionUtc", _utc(stored.position_utc), _utc(fresh["position_utc"])),
        (
            "state",
            stored.state.value,
            stored.state.value if _same_state(stored.state, fresh["state"]) else fresh["state"].value,
        ),
        ("reason", stored.reason, fresh["reason"]),
    )
    return [
        ShadowDifference(sid, stored.occurrence_id, stored.nominal_local, stored.fold_ordinal, what, old, new)
        for what, old, new in pairs
        if old != new
    ]


def _holder_let_go(session: Session, occ: Occurrence, twin: dict[str, Any]) -> bool:
    """A row that yielded to a live holder when it was materialized, whose holder has since
    given the period or instant back (it failed, expired, was cancelled): materializing now
    would not yield, but the ledger's row was right when made. A fact that changed, not code."""
    holder = yielded_to(occ.reason) if occ.state is _S.SKIPPED_DUPLICATE else None
    if holder is None or twin["state"] is _S.SKIPPED_DUPLICATE:
        return False
    state = session.scalar(select(Occurrence.state).where(Occurrence.occurrence_id == holder))
    return state is None or state in PERIOD_RELEASING or state in SLOT_RELEASING


def _window_end(schedule: Schedule, active_text: str, now: datetime, days: int | None) -> datetime:
    ahead = compiled_revision(active_text).spec.horizon if days is None else timedelta(days=days)
    end = now + ahead
    return min(end, schedule.cursor_utc) if schedule.cursor_utc is not None else now


def shadow_schedule(
    session: Session, schedule: Schedule, now: datetime, days: int | None
) -> tuple[ScheduleShadow, list[ShadowDifference]]:
    """One schedule's comparison over [now, min(now + days or its horizon, its cursor))."""
    sid = schedule.id
    revisions = [
        (number, cutover, text, tzif, tzdb)
        for number, cutover, text, tzif, tzdb in session.execute(
            select(*GOV_COLUMNS).where(Revision.schedule_id == sid).order_by(Revision.revision)
        )
    ]
    end = _window_end(schedule, revisions[-1][2], now, days)
    if end <= now:
        return ScheduleShadow(sid, now, now, 0, "nothing materialized ahead of now"), []
    chained = {
        number
        for number, _, text, tzif, _ in revisions
        if compiled_revision(text, tzif).spec.kind is Kind.AFTER_COMPLETION
    }
    segments = governing_segments([(number, cutover) for number, cutover, *_ in revisions], now, end)

    def governed(occ: Occurrence) -> bool:
        """A row of the revision that governs its position (an older revision's skipped
        row past a later cutover is a fact the later revision does not remake)."""
        return occ.revision not in chained and any(
            number == occ.revision and lo <= occ.position_utc < hi for number, lo, hi in segments
        )

    fresh = {
        row["occurrence_id"]: row
        for row in expected_rows(session, sid, revisions, now, end, now)
        if row["revision"] not in chained
    }
    stored = {
        o.occurrence_id: o
        for o in session.scalars(
            select(Occurrence)
            .where(
                Occurrence.schedule_id == sid,
                Occurrence.kind == OccurrenceKind.SCHEDULED,
                Occurrence.position_utc >= now,
                Occurrence.position_utc < end,
            )
            .order_by(Occurrence.position_utc, Occurrence.nominal_local, Occurrence.fold_ordinal)
        )
        if governed(o)
    }
    found: list[tuple[datetime, ShadowDifference]] = []
    compared = 0
    for oid, occ in stored.items():
        twin = fresh.get(oid)
        if occ.state not in COMPARED_STATES:
            continue  # moved on (cancelled, started, finished): a fact of its own
        compared += 1
        if twin is not None and _holder_let_go(session, occ, twin):
            continue
        if twin is None:
            found.append(
                (
                    occ.position_utc,
                    ShadowDifference(sid, oid, occ.nominal_local, occ.fold_ordinal, "occurrence", "present", "absent"),
                )
            )
        else:
            found.extend((occ.position_utc, d) for d in _compare(sid, occ, twin))
    for oid, row in fresh.items():
        if oid not in stored:
            found.append(
                (
                    row["position_utc"],
                    ShadowDifference(
                        sid, oid, row["nominal_local"], row["fold_ordinal"], "occurrence", "absent", "present"
                    ),
                )
            )
    found.sort(key=lambda pair: (pair[0], pair[1].nominal_local, pair[1].fold_ordinal, FIELDS.index(pair[1].what)))
    return ScheduleShadow(sid, now, end, compared), [d for _, d in found]


def shadow(
    session: Session, clock: Clock, *, days: int | None = None, schedule_ids: Iterable[str] = ()
) -> ShadowReport:
    """Compare every schedule that is not disabled (or those of ``schedule_ids``) with what
    the installed code and tz database compute now. ``days`` bounds the window (default:
    each schedule's horizon). Reads only."""
    now = clock.now()
    stmt = select(Schedule).where(Schedule.state != ScheduleState.DISABLED).order_by(Schedule.id)
    wanted = list(schedule_ids)
    if wanted:
        stmt = stmt.where(Schedule.id.in_(wanted))
    report = ShadowReport(now, tzdb_version())
    for schedule in session.scalars(stmt):
        try:
            one, differences = shadow_schedule(session, schedule, now, days)
        except REVISION_ERRORS as exc:  # a revision this Tidemark cannot read or expand (the engine holds it too)
            why = "; ".join(revision_problems(exc))
            one, differences = ScheduleShadow(schedule.id, now, now, 0, "a revision cannot be read", why), []
        report.schedules.append(one)
        report.differences.extend(differences)
    compared = [s.schedule_id for s in report.schedules]
    calendars = select(Revision.schedule_id).where(
        Revision.schedule_id.in_(compared), Revision.holidays_version.is_not(None)
    )
    if compared and session.execute(calendars.limit(1)).first() is not None:
        return replace(report, holidays_version=holiday_codes.holidays_version())
    return report


__all__ = [
    "COMPARED_STATES",
    "FIELDS",
    "ScheduleShadow",
    "ShadowDifference",
    "ShadowReport",
    "shadow",
    "shadow_schedule",
]
