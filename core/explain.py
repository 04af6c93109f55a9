"""A schedule in one paragraph of plain words: the rule, the zone, and what each
policy does at the zone's next gap and fold, with dates.

Everything said about clock changes is read off the core: the zone's next
transitions come from the zone data and the schedule's rows around them are
expanded, so the paragraph says what the expansion will actually do.
"""

from __future__ import annotations

import calendar
import itertools
from collections.abc import Sequence
from datetime import datetime, timedelta

from core.durations import human_duration
from core.enums import InvalidDatePolicy, Kind, MisfirePolicy, OverlapPolicy, Status
from core.occurrence import Occurrence
from core.recurrence.compile import CompiledSchedule, compile_schedule
from core.recurrence.describe import describe_bounds, describe_rule, join_words
from core.recurrence.expand import expand, iter_rows
from core.recurrence.invalid_dates import plan_for
from core.recurrence.rules import build_rrule
from core.spec import ScheduleSpec
from core.timefmt import fmt_clock, fmt_local, fmt_utc
from core.zones import Transition, format_offset, next_transition

#: How far ahead to look for the zone's next gap and fold.
LOOKAHEAD = timedelta(days=3660)
_WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
#: Months scanned for the next date that does not exist (a missing 29 February can be 8 years away).
_MONTH_SCAN_LIMIT = 12 * 1200


def explain(spec: ScheduleSpec, now: datetime) -> str:
    """One paragraph describing ``spec`` as seen from the instant ``now`` (aware).

    The gap and fold described are the zone's first ones at or after ``now``, or
    after the schedule's first row when that is later.
    """
    compiled = compile_schedule(spec)
    first = next(iter_rows(compiled), None)
    after = max(now, first.position) if first is not None else now
    if spec.kind is Kind.INTERVAL:
        sentences = [_interval(compiled, after)]
    elif spec.kind is Kind.AFTER_COMPLETION:
        sentences = [_after_completion(compiled)]
    else:
        sentences = [_calendar_what(compiled, now) + "."]
        sentences += _calendar_changes(compiled, after)
        sentences += _invalid_dates(compiled, after)
    sentences.append(_misfire_and_overlap(spec))
    if spec.jitter > timedelta(0):
        sentences.append(
            f"Each run starts up to {human_duration(spec.jitter)} late, by a fixed delay derived from its id (jitter)."
        )
    return " ".join(sentences)


# --- words for times -------------------------------------------------------------------


def day_label(value: datetime) -> str:
    """``Sun 2027-03-14``: English weekday names, whatever the locale."""
    return f"{_WEEKDAYS[value.weekday()]} {value:%Y-%m-%d}"


def zone_word(abbr: str, offset: timedelta, other: str) -> str:
    """The abbreviation, or the offset when the abbreviation is numeric or says nothing new."""
    if not abbr or abbr[0] in "+-" or abbr == other:
        return "UTC" + format_offset(offset)
    return abbr


def jump_words(tr: Transition, day: datetime) -> str:
    """``clocks jump from 02:00 EST to 03:00 EDT``; a side on another date than ``day`` names its date."""
    verb = "jump" if tr.kind == "gap" else "fall back"

    def side(local: datetime, abbr: str, offset: timedelta, other: str) -> str:
        clock = fmt_clock(local) if local.date() == day.date() else f"{day_label(local)} {fmt_clock(local)}"
        return f"{clock} {zone_word(abbr, offset, other)}"

    before = side(tr.local_before, tr.abbr_before, tr.offset_before, tr.abbr_after)
    after = side(tr.local_after, tr.abbr_after, tr.offset_after, tr.abbr_before)
    return f"clocks {verb} from {before} to {after}"


def transition_day(tr: Transition) -> datetime:
    """The day a transition is told under: where its skipped or repeated wall times begin."""
    return tr.local_before if tr.kind == "gap" else tr.local_after


def _clocks(values: Sequence[datetime], day: datetime) -> str:
    """Wall times as a short list; the date is added to those on another day."""

    def one(v: datetime) -> str:
        return fmt_clock(v) if v.date() == day.date() else f"{v:%Y-%m-%d} {fmt_clock(v)}"

    distinct = sorted(set(values))
    if len(distinct) <= 4:
        return join_words([one(v) for v in distinct])
    return f"the {len(distinct)} times from {one(distinct[0])} to {one(distinct[-1])}"


def _elapsed(delta: timedelta) -> str:
    seconds = int(delta.total_seconds())
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds % size == 0 and (unit != "day" or seconds >= 2 * 86400):
            n = seconds // size
            return unit if n == 1 else f"{n} {unit}s"
    return human_duration(delta)


# --- what the schedule is ----------------------------------------------------------------


def _calendar_what(compiled: CompiledSchedule, now: datetime) -> str:
    spec = compiled.spec
    assert compiled.parsed is not None and spec.start is not None
    text = describe_rule(compiled.parsed, spec.start, bounds=False) + f" in {spec.time_zone}"
    text += describe_bounds(compiled.parsed)
    first = next(iter_rows(compiled), None)
    if first is not None and first.position > now:
        text += f", starting {day_label(first.nominal)}"
    if spec.end is not None:
        ends = fmt_utc(spec.end) if spec.end.tzinfo is not None else fmt_local(spec.end)
        text += f", ending {ends}"
    if spec.exclude:
        listed = sorted(e.isoformat() if not isinstance(e, datetime) else fmt_local(e) for e in spec.exclude)
        text += f", except {join_words(listed)}" if len(listed) <= 3 else f", except {len(listed)} listed dates"
    if next(iter_rows(compiled, now), None) is None:
        text += f"; it has no runs left after {fmt_utc(now)}"
    return text


def _after_completion(compiled: CompiledSchedule) -> str:
    spec = compiled.spec
    assert spec.start is not None and spec.delay is not None
    first = f"First run at {day_label(spec.start)} {fmt_clock(spec.start)} in {spec.time_zone}"
    rows = list(iter_rows(compiled))
    runs = [r for r in rows if r.runnable]
    gap_note = f"a time that does not exist that day, so it {{}} (gapPolicy {compiled.gap_policy.value})"
    if any(r.status is Status.SKIPPED_GAP for r in rows):
        first += ", " + gap_note.format("is skipped")
    elif runs and runs[0].status is Status.SHIFTED and (moved := runs[0].resolved_local) is not None:
        label = zone_word(runs[0].abbreviation or "", runs[0].offset or timedelta(0), "")
        first += ", " + gap_note.format(f"runs at {fmt_clock(moved)} {label}")
    elif len(rows) == 2:
        if len(runs) == 2:
            which = "both readings"
        elif runs:
            which = f"the {'first' if runs[0].fold_ordinal == 0 else 'second'} reading only"
        else:
            which = "neither reading"
        first += (
            f", a time that happens twice that day, so it runs at {which} (foldPolicy {compiled.fold_policy.value})"
        )
    return (
        f"{first}; then each run is due {_elapsed(spec.delay)} after the previous one finishes, "
        "and clock changes do not move these runs, since they follow elapsed time."
    )


# --- clock changes, calendar schedules ----------------------------------------------------


def _calendar_changes(compiled: CompiledSchedule, after: datetime) -> list[str]:
    zone, name = compiled.zone, compiled.spec.time_zone
    gap = next_transition(zone, after, "gap", within=LOOKAHEAD)
    fold = next_transition(zone, after, "fold", within=LOOKAHEAD)
    if gap is None and fold is None:
        return [f"{name} has no clock changes ahead, so no wall time is ever skipped or repeated."]
    out = []
    for tr, kind in ((gap, "gap"), (fold, "fold")):
        if tr is None:
            out.append(f"{name} has no {kind} in the next ten years.")
            continue
        effect = _gap_effect(compiled, tr) if kind == "gap" else _fold_effect(compiled, tr)
        out.append(f"Next {kind}: {day_label(transition_day(tr))}, {jump_words(tr, transition_day(tr))}; {effect}.")
    return out


def rows_near(compiled: CompiledSchedule, tr: Transition) -> list[Occurrence]:
    """Rows positioned within one transition length of it, on either side."""
    pad = tr.delta + timedelta(seconds=1)
    return expand(compiled, tr.utc - pad, tr.utc + pad)


def _pronoun(rows: Sequence[Occurrence]) -> str:
    return "it" if len(rows) == 1 else "them"


def _gap_effect(compiled: CompiledSchedule, tr: Transition) -> str:
    policy = compiled.gap_policy.value
    window = rows_near(compiled, tr)
    # The wall times the gap removes: from the old offset's reading of the change to the new one's.
    affected = [r for r in window if tr.local_before <= r.nominal < tr.local_after]
    if not affected:
        return "this schedule's times are not affected"
    times = _clocks([r.nominal for r in affected], tr.local_before)
    verb = "does" if len({r.nominal for r in affected}) == 1 else "do"
    clauses = []
    skipped = [r for r in affected if r.status is Status.SKIPPED_GAP]
    shifted = [r for r in affected if r.status is Status.SHIFTED]
    duplicates = [r for r in affected if r.status is Status.SKIPPED_DUPLICATE]
    excluded = [r for r in affected if r.status is Status.EXCLUDED]
    if skipped:
        clauses.append(f"skips {_pronoun(skipped) if len(skipped) == len(affected) else len(skipped)}")
    if shifted:
        moved = [r.resolved_local for r in shifted if r.resolved_local is not None]
        label = zone_word(shifted[0].abbreviation or "", tr.offset_after, tr.abbr_before)
        clauses.append(f"runs {_pronoun(shifted)} at {_clocks(moved, tr.local_before)} {label} instead")
    if duplicates:
        holders = {r.resolved for r in window if r.runnable}
        if all(r.position in holders for r in duplicates):
            clauses.append(f"drops {_pronoun(duplicates)}, since another run already holds that instant")
        else:
            whose = "its" if len(duplicates) == 1 else "their"
            clauses.append(f"drops {_pronoun(duplicates)}, since {whose} business period already has a run")
    if excluded:
        clauses.append(f"leaves {_pronoun(excluded)} out, as listed in exclude")
    return f"{times} {verb} not exist that day and this schedule {join_words(clauses)} (gapPolicy {policy})"


def _fold_effect(compiled: CompiledSchedule, tr: Transition) -> str:
    policy = compiled.fold_policy.value
    # Wall times read twice: from the new offset's reading of the change up to the old one's.
    affected = [r for r in rows_near(compiled, tr) if tr.local_after <= r.nominal < tr.local_before]
    if not affected:
        return "this schedule's times are not affected"
    first = [r for r in affected if r.fold_ordinal == 0]
    second = [r for r in affected if r.fold_ordinal == 1]
    times = _clocks([r.nominal for r in affected], tr.local_after)
    verb = "happens" if len({r.nominal for r in affected}) == 1 else "happen"
    runs_first = any(r.runnable for r in first)
    runs_second = any(r.runnable for r in second)
    a, b = tr.abbr_before, tr.abbr_after
    if runs_first and runs_second:
        what = f"runs at both readings ({a}, then {b} {human_duration(tr.delta)} later)"
    elif runs_first:
        what = f"runs at the first reading only ({a})"
    elif runs_second:
        what = f"runs at the second reading only ({b})"
    else:
        what = "runs at neither reading"
    extra = []
    for rows, which in ((first, "first"), (second, "second")):
        if any(r.status is Status.SKIPPED_DUPLICATE for r in rows):
            extra.append(f"the {which} reading is dropped as a duplicate")
        if any(r.status is Status.EXCLUDED for r in rows):
            extra.append(f"the {which} reading is left out as listed in exclude")
    tail = f", because {join_words(extra)}" if extra else ""
    return f"{times} {verb} twice and this schedule {what}{tail} (foldPolicy {policy})"


# --- clock changes, interval schedules ----------------------------------------------------


def _interval(compiled: CompiledSchedule, after: datetime) -> str:
    spec = compiled.spec
    assert spec.every is not None and spec.anchor is not None
    head = (
        f"Every {_elapsed(spec.every)} of elapsed time from {fmt_utc(spec.anchor)}, "
        f"shown on the wall clock of {spec.time_zone}"
    )
    zone = compiled.zone
    gap = next_transition(zone, after, "gap", within=LOOKAHEAD)
    fold = next_transition(zone, after, "fold", within=LOOKAHEAD)
    if gap is None and fold is None:
        return f"{head}; {spec.time_zone} has no clock changes ahead."
    parts = []
    if gap is not None:
        where = f"{day_label(transition_day(gap))}, {jump_words(gap, transition_day(gap))}"
        parts.append(f"at the next gap ({where}) {_interval_gap(compiled, gap)}")
    if fold is not None:
        where = f"{day_label(transition_day(fold))}, {jump_words(fold, transition_day(fold))}"
        parts.append(f"at the next fold ({where}) {_interval_fold(compiled, fold)}")
    return f"{head}; clock changes do not move it: {'; '.join(parts)}."


def _interval_gap(compiled: CompiledSchedule, tr: Transition) -> str:
    every = compiled.spec.every
    assert every is not None
    rows = expand(compiled, tr.utc - every, tr.utc + every)
    before = [r for r in rows if r.position < tr.utc]
    later = [r for r in rows if r.position >= tr.utc]
    if not before or not later:
        return "no run is near it"
    a, b = before[-1], later[0]
    return (
        f"the run at {fmt_clock(a.nominal)} {a.abbreviation} is followed {_elapsed(every)} later by "
        f"the one at {fmt_clock(b.nominal)} {b.abbreviation} on the wall clock"
    )


def _interval_fold(compiled: CompiledSchedule, tr: Transition) -> str:
    repeats = [r for r in expand(compiled, tr.utc, tr.utc + tr.delta) if r.fold_ordinal == 1]
    if not repeats:
        return "no run falls in the repeated wall times"
    times = _clocks([r.nominal for r in repeats], tr.local_after)
    runs = "run" if len(repeats) == 1 else "runs"
    return (
        f"the {runs} at {times} {tr.abbr_after} repeat wall times already shown in {tr.abbr_before} "
        "and are marked as second readings (foldOrdinal 1)"
    )


# --- dates that do not exist ------------------------------------------------------------


def _invalid_dates(compiled: CompiledSchedule, after: datetime) -> list[str]:
    spec = compiled.spec
    parsed = compiled.parsed
    assert parsed is not None and spec.start is not None
    # plan_for says whether the rule names month days that some months lack (it answers None
    # for OMIT, so ask as if the policy moved them), and which months the rule visits.
    plan = plan_for(parsed, spec.start, InvalidDatePolicy.BACKWARD)
    if plan is None:
        return []
    one_time = {**plan.overrides, "BYHOUR": None, "BYMINUTE": None, "BYSECOND": None}
    months = build_rrule(parsed, spec.start.replace(day=1), until=None, overrides=one_time)
    wall_after = after.astimezone(compiled.zone).replace(tzinfo=None)
    found: tuple[datetime, int] | None = None
    for first in itertools.islice(months, _MONTH_SCAN_LIMIT):
        if compiled.until is not None and first > compiled.until:
            break
        length = calendar.monthrange(first.year, first.month)[1]
        missing = [d for d in plan.days if d > length]
        last_day = first.replace(day=length)
        if missing and last_day.date() >= wall_after.date():
            found = (last_day, missing[0])
            break
    if found is None:
        return []
    last_day, missing_day = found
    missing_date = f"{last_day:%Y-%m}-{missing_day:02d}"
    policy = spec.invalid_date_policy
    if policy is InvalidDatePolicy.OMIT:
        return [f"Dates that do not exist get no run: the next is {missing_date} (invalidDatePolicy OMIT)."]
    if policy is InvalidDatePolicy.BACKWARD:
        return [
            f"Dates that do not exist move back to the last day of the month: {missing_date} runs on "
            f"{last_day:%Y-%m-%d} (invalidDatePolicy BACKWARD)."
        ]
    forward = last_day + timedelta(days=1)
    return [
        f"Dates that do not exist move forward to the first day after: {missing_date} runs on "
        f"{forward:%Y-%m-%d} (invalidDatePolicy FORWARD)."
    ]


# --- engine policies ----------------------------------------------------------------------


def _misfire_and_overlap(spec: ScheduleSpec) -> str:
    late = human_duration(spec.lateness_window)
    policy = spec.misfire_policy
    if policy is MisfirePolicy.SKIP:
        misfire = f"A run missed by more than {late} (engine down) is not made up (misfirePolicy SKIP)"
    elif policy is MisfirePolicy.CATCH_UP_ALL:
        misfire = (
            f"Runs missed by more than {late} are all made up after an outage, oldest first "
            "(misfirePolicy CATCH_UP_ALL)"
        )
    else:
        n = spec.effective_max_catch_up or 1
        runs = "run is" if n == 1 else f"{n} runs are"
        misfire = (
            f"After an outage only the newest missed {runs} made up and the rest expire "
            f"(misfirePolicy CATCH_UP_BOUNDED, maxCatchUp {n})"
        )
    if spec.catch_up_window is not None:
        misfire += f", and nothing older than {human_duration(spec.catch_up_window)} is ever run"
    overlap = {
        OverlapPolicy.ALLOW: "a run may start while the previous one is still running (overlapPolicy ALLOW)",
        OverlapPolicy.SKIP: "a run that comes due while the previous one still runs is skipped (overlapPolicy SKIP)",
        OverlapPolicy.QUEUE_ONE: "a run that comes due while the previous one still runs waits, at most one at a time "
        "(overlapPolicy QUEUE_ONE)",
        OverlapPolicy.QUEUE_ALL: "runs that come due while the previous one still runs wait and go in order "
        "(overlapPolicy QUEUE_ALL)",
    }[spec.overlap_policy]
    return f"{misfire}; {overlap}."
