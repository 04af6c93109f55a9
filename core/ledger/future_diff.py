"""The diff of the future: what publishing a spec as the next revision would change.

:func:`future_diff` compares, over [cutover, max(now, cutover) + horizon), the
runnable occurrences the schedule has now (materialized or still to be) with
the ones the new revision would produce, and lists those that **appear**,
**vanish** and **move**. Rows are paired first by logical slot (same instant:
unchanged), then by nominal local time and fold (same wall time, another
instant: a zone change), then by nominal date in order (02:30 becoming 03:30 on
the same day). Occurrences already started or finished keep their slots and are
never listed as vanishing; those running or waiting on a decision
(DISPATCHING, RUNNING, RETRY_WAIT, UNKNOWN_EFFECT) are listed as **untouched**:
a cutover cancels only what has not started (docs/contract.md §4, invariant 8).

A pure read: nothing is written.
"""

from __future__ import annotations

import dataclasses
import json
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.enums import TzdbPolicy
from core.ledger.compiled import compiled_revision
from core.ledger.materialize import governing_segments
from core.ledger.models import Occurrence, Revision
from core.ledger.period_carry import periods_to_carry, taken_periods
from core.ledger.states import OccurrenceKind, OccurrenceState
from core.recurrence.expand import expand
from core.recurrence.occurrence import Occurrence as Row
from core.spec.canonical import canonical_dict
from core.spec.model import ScheduleSpec
from core.team.actor import Actor, current_actor
from core.team.placement import Wants, runs_on_text
from core.time.formats import fmt_utc, parse_instant
from core.time.tzdb_policy import policy_of, policy_words

_S = OccurrenceState
#: States a cutover cancels (not started yet).
_CANCELLABLE = frozenset({_S.PLANNED, _S.DUE})
#: Running, or waiting for a retry or a person: publishing leaves them alone.
UNTOUCHED_STATES = (_S.DISPATCHING, _S.RUNNING, _S.RETRY_WAIT, _S.UNKNOWN_EFFECT)


@dataclass(frozen=True)
class DiffRow:
    """One occurrence in the diff: its nominal wall time, its instant and the zone it is read in."""

    nominal_local: str
    fold_ordinal: int
    resolved_utc: datetime | None
    position_utc: datetime
    time_zone: str
    occurrence_id: str | None = None
    #: The ledger state (untouched rows, and materialized rows of the current revisions).
    state: OccurrenceState | None = None
    revision: int | None = None
    #: Its business period (``businessPeriod``), when the spec has one.
    business_period: str | None = None


@dataclass(frozen=True)
class Move:
    """The same obligation at another instant."""

    before: DiffRow
    after: DiffRow

    @property
    def shift(self) -> timedelta | None:
        if self.before.resolved_utc is None or self.after.resolved_utc is None:
            return None
        return self.after.resolved_utc - self.before.resolved_utc


@dataclass(frozen=True)
class FutureDiff:
    """What publishing would change in [start, end)."""

    schedule_id: str
    revision: int
    cutover_at: datetime
    start: datetime
    end: datetime
    #: True when the schedule is not in the ledger yet (everything appears).
    new_schedule: bool
    appear: tuple[DiffRow, ...]
    vanish: tuple[DiffRow, ...]
    moves: tuple[Move, ...]
    untouched: tuple[DiffRow, ...]
    #: Occurrences at the same instant before and after.
    unchanged: int
    #: The schedule's newest published revision (None for a new schedule).
    published_revision: int | None = None
    #: Where it runs, before and after (``engines with host=alpha``, ``any engine``), when
    #: publishing changes that (``runsOn``, or the default: the publishing host); the
    #: first is None for a new schedule.
    runs_on: tuple[str | None, str] | None = None
    #: Superseded runs whose business period the new revision keeps at their time, as a
    #: ``carried`` occurrence (core.ledger.period_carry): they neither vanish nor move.
    carried: tuple[DiffRow, ...] = ()
    #: Whether it follows the installed tz database or is pinned to one, before and after
    #: (``follows the installed tz database``, ``pinned to tz database 2026a``), when publishing
    #: changes that; the first is None for a new schedule (listed only when it pins).
    tzdb_policy: tuple[str | None, str] | None = None

    @property
    def changes(self) -> int:
        return len(self.appear) + len(self.vanish) + len(self.moves)


def _diff_row(row: Row, zone: str, state: OccurrenceState | None = None) -> DiffRow:
    return DiffRow(
        row.nominal_local,
        row.fold_ordinal,
        row.resolved,
        row.position,
        zone,
        row.occurrence_id,
        state,
        row.revision,
        row.period,
    )


def _current_rows(
    session: Session, schedule_id: str, start: datetime, end: datetime
) -> tuple[list[tuple[Row, str, OccurrenceState | None]], int | None]:
    """The runnable rows the current revisions give in [start, end), each with its zone
    and its ledger state (None: not materialized yet); and the newest published revision."""
    revisions = session.execute(
        select(Revision.revision, Revision.cutover_at, Revision.spec_json, Revision.tzif).where(
            Revision.schedule_id == schedule_id
        )
    ).all()
    if not revisions:
        return [], None
    texts = {number: (text, tzif) for number, _, text, tzif in revisions}
    stored = {
        oid: (state, resolved, position, slot)
        for oid, state, resolved, position, slot in session.execute(
            select(
                Occurrence.occurrence_id,
                Occurrence.state,
                Occurrence.resolved_utc,
                Occurrence.position_utc,
                Occurrence.logical_slot_id,
            ).where(
                Occurrence.schedule_id == schedule_id,
                Occurrence.kind == OccurrenceKind.SCHEDULED,
                Occurrence.position_utc >= start,
                Occurrence.position_utc < end,
            )
        )
    }
    rows: list[tuple[Row, str, OccurrenceState | None]] = []
    for number, lo, hi in governing_segments([(r, c) for r, c, _, _ in revisions], start, end):
        compiled = compiled_revision(*texts[number])
        for row in expand(compiled, lo, hi):
            kept = _as_materialized(row, stored.get(row.occurrence_id))
            if kept is not None:
                rows.append(
                    (
                        kept,
                        compiled.spec.time_zone,
                        stored[row.occurrence_id][0] if row.occurrence_id in stored else None,
                    )
                )
    return rows, max(texts)


#: A materialized row's state that the tz data decided (a gap, a fold), not a person or a run.
_TZ_SKIPPED = frozenset({_S.SKIPPED_GAP, _S.SKIPPED_FOLD})


def _as_materialized(
    row: Row, stored: tuple[OccurrenceState, datetime | None, datetime, str | None] | None
) -> Row | None:
    """The row as the schedule has it now: a materialized one at the instant the ledger holds
    (a newer tz release may resolve its wall time otherwise: it is kept as materialized),
    None when it does not run. A row not materialized yet is the expansion's, when runnable."""
    if stored is None:
        return row if row.runnable else None
    state, resolved, position, slot = stored
    if state in _TZ_SKIPPED:
        return None
    if state in _CANCELLABLE and resolved != row.resolved:
        return dataclasses.replace(
            row,
            resolved=resolved,
            position=position,
            logical_slot_id=slot,
            resolved_utc=fmt_utc(resolved) if resolved else None,
        )
    return row if row.runnable or state not in _CANCELLABLE else None


def _untouched(session: Session, schedule_id: str) -> list[DiffRow]:
    found = session.scalars(
        select(Occurrence)
        .where(Occurrence.schedule_id == schedule_id, Occurrence.state.in_(UNTOUCHED_STATES))
        .order_by(Occurrence.position_utc, Occurrence.nominal_local, Occurrence.fold_ordinal)
    )
    zones: dict[int, str] = {}
    out = []
    for occ in found:
        if occ.revision not in zones:
            text = session.scalar(
                select(Revision.spec_json).where(Revision.schedule_id == schedule_id, Revision.revision == occ.revision)
            )
            zones[occ.revision] = compiled_revision(text).spec.time_zone if text else "UTC"
        out.append(
            DiffRow(
                occ.nominal_local,
                occ.fold_ordinal,
                occ.resolved_utc,
                occ.position_utc,
                zones[occ.revision],
                occ.occurrence_id,
                occ.state,
                occ.revision,
            )
        )
    return out


def _pair(old: list[DiffRow], new: list[DiffRow], by: str) -> tuple[list[Move], list[DiffRow], list[DiffRow]]:
    """Pair rows with equal keys, in order; returns the pairs and what is left on each side."""

    def key_of(row: DiffRow) -> tuple[object, ...]:
        if by == "nominal":
            return (row.nominal_local, row.fold_ordinal)
        return (row.nominal_local[:10],)

    waiting: dict[tuple[object, ...], list[DiffRow]] = defaultdict(list)
    for row in new:
        waiting[key_of(row)].append(row)
    moves: list[Move] = []
    left_old: list[DiffRow] = []
    for row in old:
        candidates = waiting.get(key_of(row))
        if candidates:
            moves.append(Move(row, candidates.pop(0)))
        else:
            left_old.append(row)
    paired = {id(m.after) for m in moves}
    return moves, left_old, [r for r in new if id(r) not in paired]


def future_diff(
    session: Session, spec: ScheduleSpec, now: datetime, horizon: timedelta | None = None, actor: Actor | None = None
) -> FutureDiff:
    """What publishing ``spec`` (validated) as its schedule's next revision would change.

    The cutover is the spec's cutoverAt, else ``now`` (what publishing now
    would use); the window runs from the cutover to ``horizon`` (default: the
    spec's) past the later of the cutover and ``now``. ``actor`` publishes it
    (default: this process's user and host), which decides where a spec
    without ``runsOn`` runs.
    """
    canonical = canonical_dict(spec, cutover_at=now)
    cutover = parse_instant(str(canonical["cutoverAt"]))
    start = cutover
    end = max(now, cutover) + (horizon if horizon is not None else spec.horizon)
    sid = spec.schedule_id

    current, latest = _current_rows(session, sid, start, end)
    movable: list[DiffRow] = []
    held_slots: set[str] = set()
    for row, zone, state in current:
        if state is None or state in _CANCELLABLE:
            movable.append(_diff_row(row, zone, state))
        elif row.logical_slot_id is not None:
            held_slots.add(row.logical_slot_id)  # started or done: it keeps its slot

    compiled = compiled_revision(json.dumps(canonical))
    zone = compiled.spec.time_zone
    fresh = [
        _diff_row(row, zone)
        for row in expand(compiled, start, end)
        if row.runnable and row.logical_slot_id not in held_slots
    ]

    old_slots = {_slot(r) for r in movable}
    new_slots = {_slot(r) for r in fresh}
    same = old_slots & new_slots
    old_left = [r for r in movable if _slot(r) not in same]
    new_left = [r for r in fresh if _slot(r) not in same]
    moves_nominal, old_left, new_left = _pair(old_left, new_left, "nominal")
    moves_day, old_left, new_left = _pair(old_left, new_left, "day")
    carried, old_left = _carried(session, sid, json.dumps(canonical), cutover, old_left)
    moves = sorted(moves_nominal + moves_day, key=lambda m: (m.before.position_utc, m.before.nominal_local))
    return FutureDiff(
        schedule_id=sid,
        revision=spec.revision,
        cutover_at=cutover,
        start=start,
        end=end,
        new_schedule=latest is None,
        appear=tuple(new_left),
        vanish=tuple(old_left),
        moves=tuple(moves),
        untouched=tuple(_untouched(session, sid)),
        unchanged=len(same),
        published_revision=latest,
        runs_on=_runs_on_change(session, sid, latest, canonical, actor or current_actor()),
        carried=tuple(carried),
        tzdb_policy=_tzdb_policy_change(session, sid, latest, canonical),
    )


def _carried(
    session: Session, sid: str, spec_json: str, cutover: datetime, vanishing: list[DiffRow]
) -> tuple[list[DiffRow], list[DiffRow]]:
    """Split the vanishing rows: those whose period the new revision carries (materialized
    runs a cutover cancels, as :func:`core.ledger.period_carry.carry_periods` decides), and the rest."""
    superseded = [
        (r.business_period, r.position_utc)
        for r in vanishing
        if r.business_period is not None and r.state in _CANCELLABLE
    ]
    if not superseded:
        return [], vanishing
    held = taken_periods(session, sid, {p for p, _ in superseded}, cutover=cutover)
    chosen = periods_to_carry(spec_json, cutover, superseded, held)
    carried: list[DiffRow] = []
    rest: list[DiffRow] = []
    for row in vanishing:
        if row.business_period in chosen and row.state in _CANCELLABLE:
            chosen.discard(row.business_period)
            carried.append(row)
        else:
            rest.append(row)
    return carried, rest


def _runs_on_change(
    session: Session, sid: str, latest: int | None, canonical: dict[str, object], actor: Actor
) -> tuple[str | None, str] | None:
    """Where the schedule runs before and after publishing, when that changes."""
    after = runs_on_text(Wants.of_revision(json.dumps(canonical), None, actor.host))
    if latest is None:
        return (None, after)
    row = session.execute(
        select(Revision.spec_json, Revision.publisher_host).where(
            Revision.schedule_id == sid, Revision.revision == latest
        )
    ).one()
    before = runs_on_text(Wants.of_revision(row.spec_json, None, row.publisher_host))
    return None if before == after else (before, after)


def _tzdb_policy_change(
    session: Session, sid: str, latest: int | None, canonical: dict[str, object]
) -> tuple[str | None, str] | None:
    """Whether the schedule follows or pins the tz database, before and after publishing, when that changes."""
    after = policy_words(canonical)
    if latest is None:
        return None if policy_of(canonical) is TzdbPolicy.FOLLOW else (None, after)
    text = session.scalar(select(Revision.spec_json).where(Revision.schedule_id == sid, Revision.revision == latest))
    before = policy_words(json.loads(text or "{}"))
    return None if before == after else (before, after)


def _slot(row: DiffRow) -> tuple[datetime | None, str, int]:
    """Same instant = same slot (the logical slot id hashes the schedule and the instant)."""
    if row.resolved_utc is None:
        return (None, row.nominal_local, row.fold_ordinal)
    return (row.resolved_utc, "", 0)


@dataclass(frozen=True)
class BackfillPreview:
    """What ``core.engine.admin.backfill`` would do with a range, without doing it."""

    #: Occurrences that would run (made due under their own id, or as new backfill occurrences).
    would_run: int
    #: Occurrences left alone (already ran, live, waiting for a person, or backfilled before).
    left_alone: int
    #: Why the range cannot be backfilled, or None.
    problem: str | None = None


_RERUNNABLE = frozenset({_S.MISFIRE_EXPIRED, _S.SKIPPED_OVERLAP, _S.FAILED})
#: The most occurrences one backfill may run (as ``core.engine.admin.MAX_BACKFILL``).
MAX_BACKFILL = 10_000


def backfill_preview(
    session: Session, schedule_id: str, start: datetime, end: datetime, now: datetime
) -> BackfillPreview:
    """Count what a backfill of [start, end) would run and leave alone (a read; the rules of
    ``core.engine.admin.backfill``). Occurrences not materialized yet count as runs."""
    if end > now:
        return BackfillPreview(0, 0, "the end is in the future; a backfill runs a past range")
    if start >= end:
        return BackfillPreview(0, 0, "the start must be before the end")
    revisions = session.execute(
        select(Revision.revision, Revision.cutover_at, Revision.spec_json, Revision.tzif).where(
            Revision.schedule_id == schedule_id
        )
    ).all()
    if not revisions:
        return BackfillPreview(0, 0, f"{schedule_id}: no such schedule in this ledger")
    texts = {number: (text, tzif) for number, _, text, tzif in revisions}
    rows: list[Row] = []
    for number, lo, hi in governing_segments([(r, c) for r, c, _, _ in revisions], start, end):
        rows.extend(row for row in expand(compiled_revision(*texts[number]), lo, hi) if row.runnable)
        if len(rows) > MAX_BACKFILL:
            return BackfillPreview(
                0, 0, f"the range holds more than {MAX_BACKFILL:,} occurrences; choose a shorter one"
            )
    existing = dict(
        session.execute(
            select(Occurrence.occurrence_id, Occurrence.state).where(
                Occurrence.schedule_id == schedule_id,
                Occurrence.occurrence_id.in_([row.occurrence_id for row in rows]),
            )
        ).all()
    )
    backfilled = set(
        session.execute(
            select(Occurrence.nominal_local, Occurrence.fold_ordinal).where(
                Occurrence.schedule_id == schedule_id,
                Occurrence.kind == OccurrenceKind.BACKFILL,
                Occurrence.state.not_in(_RERUNNABLE),
                Occurrence.nominal_local.in_([row.nominal_local for row in rows]),
            )
        ).all()
    )
    run = left = 0
    for row in rows:
        state = existing.get(row.occurrence_id)
        if state is _S.PLANNED:
            run += 1
        elif (state is not None and state not in _RERUNNABLE) or (row.nominal_local, row.fold_ordinal) in backfilled:
            left += 1  # ran, is live, waits for a person, or was backfilled before
        else:
            run += 1
    return BackfillPreview(run, left)
