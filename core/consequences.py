"""What each clock-change policy would do, for one schedule in its zone, at the
next time it matters: the next gap that removes one of its wall times, the next
fold that repeats one, and the next date the rule names that a month lacks.

Each answer holds what every choice of the policy would do (so a designer can
show the chosen one and describe the others), computed by the core's own
expansion with that choice swapped in. Nothing here reads a clock: ``now`` is an
argument.
"""

from __future__ import annotations

import calendar
import itertools
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any

from core.enums import FoldPolicy, GapPolicy, InvalidDatePolicy, Kind, Status
from core.explain import LOOKAHEAD, day_label, jump_words, rows_near, transition_day, zone_word
from core.occurrence import Occurrence
from core.recurrence.compile import CompiledSchedule, compile_schedule
from core.recurrence.expand import expand, iter_rows
from core.recurrence.invalid_dates import plan_for
from core.spec import ScheduleSpec
from core.timefmt import fmt_clock
from core.zones import Transition, transitions

#: Nominal times scanned for the next date a month lacks, per policy.
_NOMINAL_SCAN_LIMIT = 200_000
#: Transitions looked at for the next one that touches the schedule.
_TRANSITION_LIMIT = 200


@dataclass(frozen=True)
class Run:
    """One run a wall time gets: where it lands on the wall clock and in UTC."""

    local: datetime  # naive wall time in the zone
    utc: datetime  # aware UTC
    abbreviation: str
    offset: timedelta

    def label(self, day: date | None = None) -> str:
        """``03:00 EDT (07:00 UTC)``; each side names its date when it is not ``day``
        (for the UTC side: not the local date)."""
        zone = zone_word(self.abbreviation, self.offset, "")
        utc_wall = self.utc.astimezone(UTC).replace(tzinfo=None)
        utc = (
            fmt_clock(utc_wall)
            if utc_wall.date() == self.local.date()
            else f"{utc_wall:%Y-%m-%d} {fmt_clock(utc_wall)}"
        )
        local = (
            fmt_clock(self.local)
            if day in (None, self.local.date())
            else f"{day_label(self.local)} {fmt_clock(self.local)}"
        )
        return f"{local} {zone} ({utc} UTC)"

    def dated_label(self) -> str:
        """``Sun 2027-02-28 18:00 GMT (18:00 UTC)``."""
        return f"{day_label(self.local)} {self.label()}"


@dataclass(frozen=True)
class Outcome:
    """What one choice of a policy does to the wall time concerned."""

    policy: str  # the policy's value, e.g. SHIFT_FORWARD
    runs: tuple[Run, ...]
    text: str  # "runs at 03:00 EDT (07:00 UTC)", "skips it"


@dataclass(frozen=True)
class GapConsequence:
    """The next gap, and what each gap policy does to this schedule's first time in it.

    ``affects`` False means no gap within the look-ahead touches this schedule's
    times; ``transition`` is then the zone's next gap and ``outcomes`` is empty.
    """

    transition: Transition
    day: date
    wall: datetime | None
    others: int
    affects: bool
    chosen: GapPolicy
    outcomes: dict[GapPolicy, Outcome] = field(default_factory=dict)

    def line(self, policy: GapPolicy | None = None) -> str:
        tr = self.transition
        head = f"Next gap: {day_label(transition_day(tr))}"
        if not self.affects or self.wall is None:
            jump = jump_words(tr, transition_day(tr))
            return f"{head}, {jump}; none of this schedule's times fall in a gap in the next ten years"
        outcome = self.outcomes[policy or self.chosen]
        more = f" (nor {self.others} more of its times)" if self.others else ""
        return f"{head}, {fmt_clock(self.wall)} does not exist{more}; this schedule {outcome.text}"


@dataclass(frozen=True)
class FoldConsequence:
    """The next fold, and what each fold policy does to this schedule's first time in it."""

    transition: Transition
    day: date
    wall: datetime | None
    others: int
    affects: bool
    chosen: FoldPolicy
    outcomes: dict[FoldPolicy, Outcome] = field(default_factory=dict)

    def line(self, policy: FoldPolicy | None = None) -> str:
        tr = self.transition
        head = f"Next repeat: {day_label(transition_day(tr))}"
        if not self.affects or self.wall is None:
            jump = jump_words(tr, transition_day(tr))
            return f"{head}, {jump}; none of this schedule's times happen twice in the next ten years"
        outcome = self.outcomes[policy or self.chosen]
        more = f" (and {self.others} more of its times)" if self.others else ""
        return f"{head}, {fmt_clock(self.wall)} happens twice{more}; {outcome.text}"


@dataclass(frozen=True)
class InvalidDateConsequence:
    """The next date the rule names that its month lacks (day 31 of April, 29 February)."""

    missing: str  # "2027-02-31": not a real date, so kept as text
    chosen: InvalidDatePolicy
    outcomes: dict[InvalidDatePolicy, Outcome] = field(default_factory=dict)

    def line(self, policy: InvalidDatePolicy | None = None) -> str:
        outcome = self.outcomes[policy or self.chosen]
        return f"Next missing date: {self.missing} does not exist; {outcome.text}"


@dataclass(frozen=True)
class Consequences:
    """Everything :func:`consequences` found. A None part has nothing to say; ``note``
    says why in words when the whole topic does not apply (interval schedules, a
    zone without clock changes)."""

    kind: Kind
    zone: str
    gap: GapConsequence | None
    fold: FoldConsequence | None
    invalid_date: InvalidDateConsequence | None
    note: str | None = None


def consequences(spec: ScheduleSpec, now: datetime) -> Consequences:
    """What the gap, fold and invalid-date policies do for ``spec``, next after ``now`` (aware)."""
    name = spec.time_zone
    if spec.kind is Kind.INTERVAL:
        blind = (
            "Interval schedules count elapsed time, so clock changes never move, skip or repeat a run; "
            "the gap and fold choices do not apply."
        )
        return Consequences(spec.kind, name, None, None, None, blind)
    compiled = compile_schedule(spec)
    first = next(iter_rows(compiled), None)
    after = max(now, first.position) if first is not None else now
    if spec.kind is Kind.AFTER_COMPLETION:
        return _after_completion(compiled, first)
    ahead = transitions(compiled.zone, after, after + LOOKAHEAD, limit=_TRANSITION_LIMIT)
    gap = _next_gap(compiled, [t for t in ahead if t.kind == "gap"])
    fold = _next_fold(compiled, [t for t in ahead if t.kind == "fold"])
    # Not ``after``: under OMIT the first row can come after dates that other choices would move.
    invalid = _invalid_date(compiled, now)
    quiet = f"{name} has no clock changes ahead, so no wall time is ever skipped or repeated." if not ahead else None
    return Consequences(spec.kind, name, gap, fold, invalid, quiet)


# --- gaps and folds ---------------------------------------------------------------------------


def _with(spec: ScheduleSpec, **changes: Any) -> CompiledSchedule:
    """The schedule compiled again with one policy swapped (the rest is already validated)."""
    return compile_schedule(spec.model_copy(update=changes))


def _run(row: Occurrence) -> Run | None:
    local = row.resolved_local
    if row.resolved is None or local is None or row.offset is None:
        return None
    return Run(local, row.resolved, row.abbreviation or "", row.offset)


def _describe(rows: Sequence[Occurrence], policy: str, repeat: bool) -> Outcome:
    """Words for what happens to one wall time's rows under one choice."""
    runs = tuple(r for r in (_run(row) for row in rows if row.runnable) if r is not None)
    day = rows[0].nominal.date() if rows else None
    if len(runs) == 2:
        text = f"runs twice, at {runs[0].label(day)} and {runs[1].label(day)}"
    elif runs:
        text = ("runs once, at " if repeat else "will run at ") + runs[0].label(day)
    elif any(r.status is Status.SKIPPED_DUPLICATE for r in rows):
        text = "drops it, since another run already holds that time" if not repeat else "does not run (duplicate)"
    elif any(r.status is Status.EXCLUDED for r in rows):
        text = "leaves it out, as listed in exclude"
    elif repeat:
        text = "does not run"
    else:
        text = "skips it"
    return Outcome(policy, runs, text)


def _affected(rows: Iterable[Occurrence], lo: datetime, hi: datetime) -> list[Occurrence]:
    return [r for r in rows if lo <= r.nominal < hi]


def _gap_for(compiled: CompiledSchedule, tr: Transition) -> GapConsequence | None:
    affected = _affected(rows_near(compiled, tr), tr.local_before, tr.local_after)
    if not affected:
        return None
    wall = min(r.nominal for r in affected)
    others = len({r.nominal for r in affected}) - 1
    outcomes = {}
    for policy in GapPolicy:
        rows = _affected(rows_near(_with(compiled.spec, gap_policy=policy), tr), tr.local_before, tr.local_after)
        outcomes[policy] = _describe([r for r in rows if r.nominal == wall], policy.value, repeat=False)
    return GapConsequence(tr, transition_day(tr).date(), wall, others, True, compiled.gap_policy, outcomes)


def _fold_for(compiled: CompiledSchedule, tr: Transition) -> FoldConsequence | None:
    affected = _affected(rows_near(compiled, tr), tr.local_after, tr.local_before)
    if not affected:
        return None
    wall = min(r.nominal for r in affected)
    others = len({r.nominal for r in affected}) - 1
    outcomes = {}
    for policy in FoldPolicy:
        rows = _affected(rows_near(_with(compiled.spec, fold_policy=policy), tr), tr.local_after, tr.local_before)
        outcomes[policy] = _describe([r for r in rows if r.nominal == wall], policy.value, repeat=True)
    return FoldConsequence(tr, transition_day(tr).date(), wall, others, True, compiled.fold_policy, outcomes)


def _touches(compiled: CompiledSchedule, lo: datetime, hi: datetime) -> bool:
    """Whether the rule names a wall time in ``[lo, hi)``: a cheap test before expanding rows."""
    nxt = next(compiled.nominals(lo), None)
    return nxt is not None and nxt[0] < hi


def _next_gap(compiled: CompiledSchedule, gaps: Sequence[Transition]) -> GapConsequence | None:
    for tr in gaps:
        if not _touches(compiled, tr.local_before, tr.local_after):
            continue
        found = _gap_for(compiled, tr)
        if found is not None:
            return found
    if not gaps:
        return None
    tr = gaps[0]
    return GapConsequence(tr, transition_day(tr).date(), None, 0, False, compiled.gap_policy)


def _next_fold(compiled: CompiledSchedule, folds: Sequence[Transition]) -> FoldConsequence | None:
    for tr in folds:
        if not _touches(compiled, tr.local_after, tr.local_before):
            continue
        found = _fold_for(compiled, tr)
        if found is not None:
            return found
    if not folds:
        return None
    tr = folds[0]
    return FoldConsequence(tr, transition_day(tr).date(), None, 0, False, compiled.fold_policy)


def _after_completion(compiled: CompiledSchedule, first: Occurrence | None) -> Consequences:
    """Only the first appointment reads the wall clock; later runs follow elapsed time."""
    spec = compiled.spec
    assert spec.start is not None
    gap = fold = None
    if first is not None:
        near = transitions(compiled.zone, first.position - timedelta(days=2), first.position + timedelta(days=2))
        gap = next((g for g in (_gap_for(compiled, t) for t in near if t.kind == "gap") if g), None)
        fold = next((f for f in (_fold_for(compiled, t) for t in near if t.kind == "fold") if f), None)
    note: str | None = None
    if gap is None and fold is None:
        note = (
            f"Only the first run ({day_label(spec.start)} {fmt_clock(spec.start)}) reads the wall clock, and that "
            f"time exists exactly once in {spec.time_zone}; later runs follow elapsed time, so clock changes do not "
            "move them."
        )
    return Consequences(spec.kind, spec.time_zone, gap, fold, None, note)


# --- dates a month lacks -----------------------------------------------------------------------


def _moved(compiled: CompiledSchedule, after: datetime) -> Iterator[datetime]:
    """The nominal times at or after ``after`` (naive wall) that the policy moved, in order."""
    for when, note in itertools.islice(compiled.nominals(after), _NOMINAL_SCAN_LIMIT):
        if note is not None:
            yield when


def _missing_month(moved: datetime, policy: InvalidDatePolicy) -> tuple[int, int]:
    """The month whose missing day produced ``moved`` (BACKWARD stays in it; FORWARD leaves it)."""
    origin = moved if policy is InvalidDatePolicy.BACKWARD else moved - timedelta(days=1)
    return origin.year, origin.month


def _resolved(compiled: CompiledSchedule, nominal: datetime) -> list[Occurrence]:
    """The rows a nominal wall time produced (read in the zone, whatever the policies)."""
    guess = nominal.replace(tzinfo=UTC)
    return [r for r in expand(compiled, guess - timedelta(days=2), guess + timedelta(days=2)) if r.nominal == nominal]


def _invalid_date(compiled: CompiledSchedule, after: datetime) -> InvalidDateConsequence | None:
    spec = compiled.spec
    if compiled.parsed is None or spec.start is None:
        return None
    # plan_for answers None for OMIT; ask as if the policy moved days, to learn whether any can be missing.
    plan = plan_for(compiled.parsed, spec.start, InvalidDatePolicy.BACKWARD)
    if plan is None:
        return None
    wall_after = after.astimezone(compiled.zone).replace(tzinfo=None)
    start_of_month = wall_after.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    variants = {p: _with(spec, invalid_date_policy=p) for p in (InvalidDatePolicy.BACKWARD, InvalidDatePolicy.FORWARD)}
    months = []
    for policy, variant in variants.items():
        for moved in _moved(variant, start_of_month):
            year, month = _missing_month(moved, policy)
            # The month must not be over yet: its last day is today or later.
            if date(year, month, calendar.monthrange(year, month)[1]) >= wall_after.date():
                months.append((year, month))
                break
    if not months:
        return None
    year, month = min(months)
    length = calendar.monthrange(year, month)[1]
    missing_day = min(d for d in plan.days if d > length)
    missing = f"{year:04d}-{month:02d}-{missing_day:02d}"
    last = date(year, month, length)
    outcomes = {InvalidDatePolicy.OMIT: Outcome("OMIT", (), "no run for it that month")}
    for policy, variant in variants.items():
        target = last if policy is InvalidDatePolicy.BACKWARD else last + timedelta(days=1)
        moved_times = []
        for when, note in itertools.islice(variant.nominals(datetime.combine(target, datetime.min.time())), 10_000):
            if when.date() > target:
                break
            if note is not None:
                moved_times.append(when)
        rows = _resolved(variant, moved_times[0]) if moved_times else []
        runs = tuple(r for r in (_run(row) for row in rows if row.runnable) if r is not None)
        if runs:
            text = f"runs {runs[0].dated_label()}"
        elif not moved_times:
            text = f"adds nothing: {target:%Y-%m-%d} already has its run"
        else:
            text = _describe(rows, policy.value, repeat=False).text
        outcomes[policy] = Outcome(policy.value, runs, text)
    return InvalidDateConsequence(missing, spec.invalid_date_policy, outcomes)
