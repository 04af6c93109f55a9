"""A business period kept across a cutover (docs/decisions.md, "A zone change at a cutover").

Publishing revision r+1 cancels r's not-started occurrences at positions at or
after the cutover (invariant 8). With a ``businessPeriod``, that can drop a
period: a daily 09:00 report moved from New York to Paris at 10:00Z loses
New York's 14:00Z run, and Paris's 08:00Z run for the same day came before
revision r+1 governed anything. Nothing would run that day.

:func:`carry_periods` finds such periods right after the cancellation and gives
each one an occurrence of revision r+1, kind ``carried``, at the cancelled
run's time: the period runs once, at the time it was going to. A period is
carried only when all of these hold:

- the new revision has a run of that period before its cutover (the period is
  part of its promise too: a new rule that never runs on Saturdays does not
  carry Saturday's run),
- it has no run of that period at or after its cutover (then that run keeps
  the period),
- no live occurrence holds the period already (one that ran before the cutover).

Both looks at the new revision span :data:`LOOK` around the cancelled runs: a
revision whose own run of the period lies further away does not carry it, and
its later run of the period runs (or, when the period is held, is a duplicate
naming the holder) as the materializer decides. Either way a period runs once.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Sequence
from datetime import datetime, timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.ledger import events
from core.ledger.compiled import compiled_revision
from core.ledger.models import Occurrence
from core.ledger.states import PERIOD_RELEASING, OccurrenceKind, OccurrenceState
from core.recurrence.expand import iter_rows
from core.time.formats import fmt_utc
from core.version import tidemark_version

#: How far before and after the cancelled runs the new revision's runs are looked at.
LOOK = timedelta(days=35)


def taken_periods(
    session: Session, sid: str, periods: set[str], *, cutover: datetime | None = None
) -> dict[str, tuple[str, int]]:
    """Business periods already held by a live runnable occurrence: period -> (occurrence id, revision).

    With ``cutover``, as they will be once a revision with that cutover is published: the
    scheduled occurrences it cancels (not started, at or after it) hold nothing."""
    return taken_periods_of(session, {sid: periods}, cutover=cutover).get(sid, {})


def taken_periods_of(
    session: Session, wanted: dict[str, set[str]], *, cutover: datetime | None = None
) -> dict[str, dict[str, tuple[str, int]]]:
    """:func:`taken_periods` of several schedules, 500 periods per statement whatever their number:
    schedule -> period -> (occurrence id, revision)."""
    taken: dict[str, dict[str, tuple[str, int]]] = {}
    ordered = sorted(set().union(*wanted.values())) if wanted else []
    for i in range(0, len(ordered), 500):
        stmt = select(
            Occurrence.schedule_id, Occurrence.business_period, Occurrence.occurrence_id, Occurrence.revision
        ).where(
            Occurrence.schedule_id.in_(sorted(wanted)),
            Occurrence.business_period.in_(ordered[i : i + 500]),
            Occurrence.state.not_in(PERIOD_RELEASING),
        )
        if cutover is not None:
            stmt = stmt.where(
                ~(
                    (Occurrence.kind == OccurrenceKind.SCHEDULED)
                    & Occurrence.state.in_((OccurrenceState.PLANNED, OccurrenceState.DUE))
                    & (Occurrence.position_utc >= cutover)
                )
            )
        for sid, period, occ, rev in session.execute(stmt):
            if period is not None and period in wanted[sid]:
                taken.setdefault(sid, {})[period] = (occ, rev)
    return taken


def carried_id(schedule_id: str, revision: int, period: str) -> str:
    """The carried occurrence's id: one per schedule, revision and period, the same on every host."""
    digest = hashlib.sha256(f"{schedule_id}\x00carried\x00{revision}\x00{period}".encode()).hexdigest()
    return f"occ-{digest[:32]}"


def _new_periods(spec_json: str, cutover: datetime, lo: datetime, hi: datetime) -> tuple[set[str], set[str]]:
    """The periods of the new revision's runnable rows in [lo, cutover) and in [cutover, hi]."""
    before: set[str] = set()
    after: set[str] = set()
    for row in iter_rows(compiled_revision(spec_json), lo):
        if row.position > hi:
            break
        if row.period is not None and row.status.runnable:
            (before if row.position < cutover else after).add(row.period)
    return before, after


def periods_to_carry(
    spec_json: str, cutover: datetime, superseded: Sequence[tuple[str, datetime]], held: Collection[str]
) -> set[str]:
    """Which periods of the ``superseded`` runs ((period, position), at or after the cutover)
    the new revision ``spec_json`` carries: those it runs before its cutover, not after it,
    and that nothing in ``held`` keeps already (the rules of the module)."""
    if not superseded:
        return set()
    positions = [position for _, position in superseded]
    before, after = _new_periods(spec_json, cutover, min(positions) - LOOK, max(positions) + LOOK)
    return {period for period, _ in superseded if period in before and period not in after and period not in held}


def carry_periods(
    session: Session,
    schedule_id: str,
    revision: int,
    spec_json: str,
    cutover: datetime,
    cancelled: Sequence[str],
    tzdb: str,
    now: datetime,
) -> list[str]:
    """Give each period the cutover would drop an occurrence of ``revision`` (see the module).

    ``cancelled`` are the ids publishing just cancelled. Returns the carried ids."""
    if not cancelled:
        return []
    olds = [
        o
        for o in session.scalars(
            select(Occurrence)
            .where(Occurrence.occurrence_id.in_(cancelled), Occurrence.business_period.is_not(None))
            .order_by(Occurrence.position_utc)
        )
        if o.kind is OccurrenceKind.SCHEDULED
    ]
    if not olds:
        return []
    periods = {o.business_period for o in olds if o.business_period is not None}
    held = taken_periods(session, schedule_id, periods)
    superseded = [(o.business_period, o.position_utc) for o in olds if o.business_period is not None]
    chosen = periods_to_carry(spec_json, cutover, superseded, held)
    carried: list[str] = []
    for old in olds:
        period = old.business_period
        if period is None or period not in chosen:
            continue
        chosen.discard(period)  # one carried run per period: the earliest superseded one's time
        carried.append(_carry(session, old, period, revision, cutover, tzdb, now))
    return carried


def _carry(
    session: Session, old: Occurrence, period: str, revision: int, cutover: datetime, tzdb: str, now: datetime
) -> str:
    occurrence_id = carried_id(old.schedule_id, revision, period)
    reason = (
        f"keeps business period {period}: revision {revision} took over at {fmt_utc(cutover)}, after its own run "
        f"for this period would have been, so it runs at revision {old.revision}'s time "
        f"(in place of {old.occurrence_id})"
    )
    session.add(
        Occurrence(
            occurrence_id=occurrence_id,
            schedule_id=old.schedule_id,
            revision=revision,
            kind=OccurrenceKind.CARRIED,
            nominal_local=old.nominal_local,
            fold_ordinal=old.fold_ordinal,
            resolved_utc=old.resolved_utc,
            position_utc=old.position_utc,
            due_at=old.due_at,
            logical_slot_id=None,
            business_period=period,
            state=OccurrenceState.PLANNED,
            reason=reason,
            tzdb_version=tzdb,
            engine_version=tidemark_version(),
            holidays_version=old.holidays_version,
            created_at=now,
            updated_at=now,
        )
    )
    events.append(
        session,
        events.OccurrenceCreated(
            at=now,
            schedule_id=old.schedule_id,
            occurrence_id=occurrence_id,
            occurrence_kind=OccurrenceKind.CARRIED,
            reason=reason,
            of=old.occurrence_id,
        ),
    )
    return occurrence_id
