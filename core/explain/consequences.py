"""What each clock-change policy does to one schedule, read off the rows the
preview shows.

The consequence of a choice P (a gap, fold or invalid-date policy) is found by
expanding the spec with P in place, from the same instant the preview starts
from, and taking the first row at or after that instant that P's choice
touched:

* gap: a row whose wall time the clocks skip (skipped, shifted, or dropped as
  a duplicate after shifting);
* fold: the rows of a wall time the clocks repeat (one per reading, from now on);
* invalid date: for BACKWARD and FORWARD, the first row the policy moved there
  from a date its month lacks; for OMIT, which leaves no row, the first such
  date whose month is not over yet, with the run that follows it.

So every date a consequence names is the date of a row the preview built with
that choice lists (or, for OMIT, the date it leaves out before one of them),
never one before "now". Gaps and folds are looked for among the zone's changes
over the next ten years; rows are expanded only around those whose wall times
the rule names. Nothing here reads a clock: ``now`` is an argument.
"""

from __future__ import annotations

import calendar
import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any, Generic, TypeVar

from core.enums import FoldPolicy, GapPolicy, InvalidDatePolicy, Kind, Status
from core.explain.change_words import day_label, jump_words, transition_day, wall_range, zone_word
from core.recurrence.compile import CompiledSchedule, compile_schedule
from core.recurrence.expand import expand, iter_rows
from core.recurrence.invalid_dates import MonthDayPlan, plan_for
from core.recurrence.occurrence import Occurrence
from core.recurrence.rules import build_rrule
from core.spec.model import ScheduleSpec
from core.time.formats import fmt_clock
from core.time.zones import Transition, shifted, transitions

#: How far ahead to look for a gap, a fold or a missing date that touches the schedule.
LOOKAHEAD = timedelta(days=3660)
#: Changes are looked for from this long before now: a row just after now can still sit
#: in a change that began before it (the longest, Apia's skipped day, is one day).
_BEFORE = timedelta(days=2)
#: Transitions looked at for the next one that touches the schedule.
_TRANSITION_LIMIT = 200
#: Nominal times scanned for the next one an invalid-date policy moved.
_NOMINAL_SCAN_LIMIT = 200_000
#: Months scanned for the next date that does not exist (a missing 29 February can be 8 years away).
_MONTH_SCAN_LIMIT = 12 * 1200
#: Rows scanned for the run that follows an omitted date.
_FOLLOWING_LIMIT = 10_000


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
    """What one choice does to the first of the schedule's rows it touches from ``now`` on.

    ``rows`` are those rows exactly as the preview built with this choice from the
    same instant lists them: the rows of one wall time (``wall``). An omitted date
    has no row; ``following`` is then the first run after it.
    """

    policy: str  # the policy's value, e.g. SHIFT_FORWARD
    runs: tuple[Run, ...]
    text: str  # "will run at 03:00 EDT (07:00 UTC)", "skips it"
    rows: tuple[Occurrence, ...] = ()
    wall: datetime | None = None  # the nominal wall time touched
    transition: Transition | None = None  # the gap or fold it falls in
    window: tuple[Occurrence, ...] = ()  # every row near that change from now on
    others: int = 0  # more of the schedule's wall times in the same change
    missing: str | None = None  # "2027-02-31": the date the month lacks (not a date, so text)
    following: Occurrence | None = None  # OMIT: the first run after the missing date


Policy = TypeVar("Policy", GapPolicy, FoldPolicy)


@dataclass(frozen=True)
class ChangeConsequence(Generic[Policy]):
    """What each gap (or fold) policy does at the first gap (fold) that touches one of the
    schedule's rows from now on.

    ``next_change`` is the zone's next change of this kind, told when a choice
    touches none of the schedule's rows within the look-ahead; such a choice has no
    entry in ``outcomes``.
    """

    kind: str  # "gap" or "fold"
    next_change: Transition
    chosen: Policy
    outcomes: dict[Policy, Outcome] = field(default_factory=dict)

    @property
    def affects(self) -> bool:
        """Whether the chosen policy touches one of the schedule's rows."""
        return self.chosen in self.outcomes

    @property
    def outcome(self) -> Outcome | None:
        """The chosen policy's outcome."""
        return self.outcomes.get(self.chosen)

    @property
    def transition(self) -> Transition:
        """The change the chosen policy's line speaks of."""
        found = self.outcome
        return found.transition if found is not None and found.transition is not None else self.next_change

    @property
    def day(self) -> date:
        return transition_day(self.transition).date()

    @property
    def wall(self) -> datetime | None:
        found = self.outcome
        return found.wall if found is not None else None

    @property
    def others(self) -> int:
        found = self.outcome
        return found.others if found is not None else 0

    def line(self, policy: Policy | str | None = None) -> str:
        """``Next gap: Sun 2027-03-14, 02:30 does not exist; this schedule skips it`` for ``policy``
        (the chosen one by default)."""
        found = self._outcome_of(policy)
        gap = self.kind == "gap"
        if found is None or found.transition is None or found.wall is None:
            tr = self.next_change
            head = f"Next {'gap' if gap else 'repeat'}: {day_label(transition_day(tr))}"
            jump = jump_words(tr, transition_day(tr))
            what = "fall in a gap" if gap else "happen twice"
            return f"{head}, {jump}; none of this schedule's times {what} in the next ten years"
        head = f"Next {'gap' if gap else 'repeat'}: {day_label(transition_day(found.transition))}"
        if gap:
            more = f" (nor {found.others} more of its times)" if found.others else ""
            return f"{head}, {fmt_clock(found.wall)} does not exist{more}; this schedule {found.text}"
        more = f" (and {found.others} more of its times)" if found.others else ""
        return f"{head}, {fmt_clock(found.wall)} happens twice{more}; {found.text}"

    def _outcome_of(self, policy: Policy | str | None) -> Outcome | None:
        if policy is None:
            return self.outcome
        return next((o for p, o in self.outcomes.items() if p.value == str(policy)), None)


GapConsequence = ChangeConsequence[GapPolicy]
FoldConsequence = ChangeConsequence[FoldPolicy]


@dataclass(frozen=True)
class InvalidDateConsequence:
    """What each invalid-date policy does to the first date it touches that a month lacks
    (day 31 of April, 29 February); a policy that touches none from now on has no entry."""

    chosen: InvalidDatePolicy
    outcomes: dict[InvalidDatePolicy, Outcome] = field(default_factory=dict)

    @property
    def outcome(self) -> Outcome | None:
        return self.outcomes.get(self.chosen)

    @property
    def missing(self) -> str | None:
        """The chosen policy's missing date."""
        found = self.outcome
        return found.missing if found is not None else None

    def line(self, policy: InvalidDatePolicy | str | None = None) -> str:
        wanted = self.chosen.value if policy is None else str(policy)
        found = next((o for p, o in self.outcomes.items() if p.value == wanted), None)
        if found is None:
            return "No date this schedule names from now on is missing from its month"
        return f"Next missing date: {found.missing} does not exist; {found.text}"


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
    now: datetime | None = None  # the instant the consequences are seen from


def consequences(spec: ScheduleSpec, now: datetime) -> Consequences:
    """What the gap, fold and invalid-date policies do for ``spec``, from ``now`` (aware) on:
    the instant the preview starts from."""
    name = spec.time_zone
    if spec.kind is Kind.INTERVAL:
        blind = (
            "Interval schedules count elapsed time, so clock changes never move, skip or repeat a run; "
            "the gap and fold choices do not apply."
        )
        return Consequences(spec.kind, name, None, None, None, blind, now)
    compiled = compile_schedule(spec)
    first = next(iter_rows(compiled), None)
    if spec.kind is Kind.AFTER_COMPLETION:
        return _after_completion(compiled, first, now)
    # A schedule that starts later is looked at from its first row: ten years of it.
    after = max(now, first.position) if first is not None else now
    ahead = transitions(compiled.zone, shifted(after, -_BEFORE), shifted(after, LOOKAHEAD), limit=_TRANSITION_LIMIT)
    gap = _change(compiled, [t for t in ahead if t.kind == "gap"], now, after, GapPolicy, "gap_policy")
    fold = _change(compiled, [t for t in ahead if t.kind == "fold"], now, after, FoldPolicy, "fold_policy")
    invalid = _invalid_date(compiled, now)
    quiet = None
    if not any(t.utc >= after for t in ahead):
        quiet = f"{name} has no clock changes ahead, so no wall time is ever skipped or repeated."
    return Consequences(spec.kind, name, gap, fold, invalid, quiet, now)


# --- gaps and folds ---------------------------------------------------------------------------


def _with(spec: ScheduleSpec, **changes: Any) -> CompiledSchedule:
    """The schedule compiled again with one policy swapped (the rest is already validated)."""
    return compile_schedule(spec.model_copy(update=changes))


def _variant(compiled: CompiledSchedule, attribute: str, policy: Any) -> CompiledSchedule:
    spec = compiled.spec
    current = {
        "gap_policy": compiled.gap_policy,
        "fold_policy": compiled.fold_policy,
        "invalid_date_policy": spec.invalid_date_policy,
    }[attribute]
    return compiled if current is policy else _with(spec, **{attribute: policy})


def _run(row: Occurrence) -> Run | None:
    local = row.resolved_local
    if row.resolved is None or local is None or row.offset is None:
        return None
    return Run(local, row.resolved, row.abbreviation or "", row.offset)


def _runs(rows: Iterable[Occurrence]) -> tuple[Run, ...]:
    return tuple(r for r in (_run(row) for row in rows if row.runnable) if r is not None)


def _describe(rows: Sequence[Occurrence], repeat: bool) -> tuple[tuple[Run, ...], str]:
    """Words for what happens to one wall time's rows (from now on) under one choice."""
    runs = _runs(rows)
    day = rows[0].nominal.date() if rows else None
    # A repeated time whose first reading is already past: only the second is still ahead.
    late = repeat and bool(rows) and all(r.fold_ordinal == 1 for r in rows)
    if late:
        if runs:
            return runs, f"its first reading is past; it runs at the second, {runs[0].label(day)}"
        return runs, "its first reading is past; the second does not run"
    if len(runs) == 2:
        text = f"runs twice, at {runs[0].label(day)} and {runs[1].label(day)}"
    elif runs:
        text = ("runs once, at " if repeat else "will run at ") + runs[0].label(day)
        if repeat and any(r.status is Status.SKIPPED_DUPLICATE for r in rows):
            text += "; the other reading is dropped as a duplicate"
    elif any(r.status is Status.SKIPPED_DUPLICATE for r in rows):
        text = "drops it, since another run already holds that time" if not repeat else "does not run (duplicate)"
    elif any(r.status is Status.EXCLUDED for r in rows):
        text = "leaves it out, as listed in exclude"
    elif repeat:
        text = "does not run"
    else:
        text = "skips it"
    return runs, text


def _named(compiled: CompiledSchedule, changes: Sequence[Transition]) -> list[Transition]:
    """The changes (in order) in whose wall times the rule names one: a cheap test before expanding rows."""
    if compiled.parsed is None:
        # An after-completion schedule has no rule, only its first appointment near these changes.
        return list(changes)
    if compiled.month_days is None:
        # The rule resumes near any wall time, so each change is asked about on its own.
        out = []
        for tr in changes:
            lo, hi = wall_range(tr)
            nxt = next(compiled.nominals(lo), None)
            if nxt is not None and nxt[0] < hi:
                out.append(tr)
        return out
    # Moved month days are expanded from the rule's start: walk them once for all the changes.
    if not changes:
        return []
    walls = (when for when, _ in compiled.nominals(wall_range(changes[0])[0]))
    out, current = [], next(walls, None)
    for tr in changes:
        lo, hi = wall_range(tr)
        while current is not None and current < lo:
            current = next(walls, None)
        if current is not None and current < hi:
            out.append(tr)
    return out


def first_touch(
    compiled: CompiledSchedule, changes: Iterable[Transition], now: datetime
) -> tuple[Transition, list[Occurrence], list[Occurrence]] | None:
    """The first of ``changes`` with a row of ``compiled`` at or after ``now`` whose wall time it
    skips or repeats: the change, the rows expanded near it from ``now`` on, and those touched."""
    for tr in changes:
        pad = tr.delta + timedelta(seconds=1)
        if tr.utc + pad <= now:
            continue
        window = expand(compiled, max(now, tr.utc - pad), tr.utc + pad)
        lo, hi = wall_range(tr)
        touched = [r for r in window if lo <= r.nominal < hi]
        if touched:
            return tr, window, touched
    return None


def _change(
    compiled: CompiledSchedule,
    changes: Sequence[Transition],
    now: datetime,
    after: datetime,
    policies: type[Policy],
    attribute: str,
) -> ChangeConsequence[Policy] | None:
    """Each policy's first touched row among ``changes``; None when the zone has no such change ahead."""
    if not changes:
        return None
    kind = changes[0].kind
    next_change = next((t for t in changes if t.utc >= after), changes[0])
    # Whether the rule names a wall time in a change does not depend on the policies: test it once.
    named = _named(compiled, changes)
    outcomes: dict[Policy, Outcome] = {}
    for policy in policies:
        found = first_touch(_variant(compiled, attribute, policy), named, now) if named else None
        if found is None:
            continue
        tr, window, touched = found
        wall = touched[0].nominal
        rows = tuple(r for r in touched if r.nominal == wall)
        runs, text = _describe(rows, repeat=kind == "fold")
        outcomes[policy] = Outcome(
            policy.value,
            runs,
            text,
            rows=rows,
            wall=wall,
            transition=tr,
            window=tuple(window),
            others=len({r.nominal for r in touched}) - 1,
        )
    chosen = compiled.gap_policy if kind == "gap" else compiled.fold_policy
    return ChangeConsequence(kind, next_change, chosen, outcomes)  # type: ignore[arg-type]


def _after_completion(compiled: CompiledSchedule, first: Occurrence | None, now: datetime) -> Consequences:
    """Only the first appointment reads the wall clock; later runs follow elapsed time."""
    spec = compiled.spec
    assert spec.start is not None
    gap = fold = None
    if first is not None:
        near = transitions(compiled.zone, shifted(first.position, -_BEFORE), shifted(first.position, _BEFORE))
        gaps = [t for t in near if t.kind == "gap"]
        folds = [t for t in near if t.kind == "fold"]
        found_gap = _change(compiled, gaps, now, now, GapPolicy, "gap_policy")
        found_fold = _change(compiled, folds, now, now, FoldPolicy, "fold_policy")
        gap = found_gap if found_gap is not None and found_gap.affects else None
        fold = found_fold if found_fold is not None and found_fold.affects else None
    note: str | None = None
    if gap is None and fold is None:
        note = (
            f"Only the first run ({day_label(spec.start)} {fmt_clock(spec.start)}) reads the wall clock, and that "
            f"time exists exactly once in {spec.time_zone}; later runs follow elapsed time, so clock changes do not "
            "move them."
        )
    return Consequences(spec.kind, spec.time_zone, gap, fold, None, note, now)


# --- dates a month lacks -----------------------------------------------------------------------


def _invalid_date(compiled: CompiledSchedule, now: datetime) -> InvalidDateConsequence | None:
    spec = compiled.spec
    if compiled.parsed is None or spec.start is None:
        return None
    # plan_for answers None for OMIT; ask as if the policy moved days, to learn whether any can be missing.
    plan = plan_for(compiled.parsed, spec.start, InvalidDatePolicy.BACKWARD)
    if plan is None:
        return None
    outcomes: dict[InvalidDatePolicy, Outcome] = {}
    for policy in InvalidDatePolicy:
        variant = _variant(compiled, "invalid_date_policy", policy)
        found = _omitted(variant, plan, now) if policy is InvalidDatePolicy.OMIT else _moved(variant, plan, now)
        if found is not None:
            outcomes[policy] = found
    if not outcomes:
        return None
    return InvalidDateConsequence(spec.invalid_date_policy, outcomes)


def _wall(compiled: CompiledSchedule, instant: datetime) -> datetime:
    return instant.astimezone(compiled.zone).replace(tzinfo=None)


def _missing_date(moved: datetime, policy: InvalidDatePolicy, plan: MonthDayPlan) -> str:
    """The date a moved row stands for: BACKWARD stays in the month, FORWARD leaves it."""
    origin = moved if policy is InvalidDatePolicy.BACKWARD else moved - timedelta(days=1)
    length = calendar.monthrange(origin.year, origin.month)[1]
    day = min(d for d in plan.days if d > length)
    return f"{origin.year:04d}-{origin.month:02d}-{day:02d}"


def _moved(compiled: CompiledSchedule, plan: MonthDayPlan, now: datetime) -> Outcome | None:
    """BACKWARD or FORWARD: the first row at or after ``now`` that the policy moved."""
    policy = compiled.spec.invalid_date_policy
    window: tuple[datetime, datetime] | None = None
    by_wall: dict[datetime, list[Occurrence]] = {}
    for when, note in itertools.islice(compiled.nominals(_wall(compiled, now) - _BEFORE), _NOMINAL_SCAN_LIMIT):
        if note is None:
            continue
        # A row lies within a day or so of its wall time read as UTC: one expansion serves a run of them.
        guess = when.replace(tzinfo=UTC)
        if window is None or max(now, guess - _BEFORE) < window[0] or guess + _BEFORE > window[1]:
            window = (max(now, guess - _BEFORE), guess + 2 * _BEFORE)
            by_wall = {}
            for row in expand(compiled, *window):
                by_wall.setdefault(row.nominal, []).append(row)
        rows = tuple(by_wall.get(when, ()))
        if not rows:
            continue  # moved to a time already past
        runs = _runs(rows)
        text = f"runs {runs[0].dated_label()}" if runs else _describe(rows, repeat=False)[1]
        return Outcome(policy.value, runs, text, rows=rows, wall=when, missing=_missing_date(when, policy, plan))
    return None


def _omitted(compiled: CompiledSchedule, plan: MonthDayPlan, now: datetime) -> Outcome | None:
    """OMIT: the first date the rule names that its month lacks, in a month not over at ``now``,
    with the first run after it (no run after it: the schedule has ended, nothing is omitted)."""
    spec = compiled.spec
    assert compiled.parsed is not None and spec.start is not None
    wall_now = _wall(compiled, now)
    # One time per month the rule visits.
    one_time = {**plan.overrides, "BYHOUR": None, "BYMINUTE": None, "BYSECOND": None}
    months = build_rrule(compiled.parsed, spec.start.replace(day=1), until=None, overrides=one_time)
    for first in itertools.islice(months, _MONTH_SCAN_LIMIT):
        if compiled.until is not None and first > compiled.until:
            return None
        length = calendar.monthrange(first.year, first.month)[1]
        missing = [d for d in plan.days if d > length]
        next_month = datetime.combine(date(first.year, first.month, length) + timedelta(days=1), datetime.min.time())
        if not missing or next_month <= wall_now or next_month <= spec.start:
            continue
        following = _first_run_from(compiled, next_month, now)
        if following is None:
            return None
        run = _run(following)
        assert run is not None
        text = f"no run takes its place; the next run is {run.dated_label()}"
        missing_date = f"{first.year:04d}-{first.month:02d}-{missing[0]:02d}"
        return Outcome("OMIT", (), text, missing=missing_date, following=following)
    return None


def _first_run_from(compiled: CompiledSchedule, wall: datetime, now: datetime) -> Occurrence | None:
    """The first runnable row at or after ``now`` whose wall time is ``wall`` or later."""
    lo = max(now, wall.replace(tzinfo=UTC) - _BEFORE)
    for row in itertools.islice(iter_rows(compiled, lo), _FOLLOWING_LIMIT):
        if row.nominal >= wall and row.runnable:
            return row
    return None
