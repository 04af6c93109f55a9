"""A schedule in plain words: one short sentence saying what it does and when,
then one sentence per policy (the next gap and fold that touch it, the next
date its month lacks, the holiday policy with the next holiday it touches,
missed runs and overlap).

``schedctl explain`` prints them as one paragraph (:func:`explain`); the
designer shows the sentence on a line of its own and each policy on its own
line (:func:`summarize`). What is said about clock changes and missing dates
comes from :func:`core.explain.consequences.consequences`: the rows the preview shows
from the same instant, with the chosen policies.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from core.calendar.business_words import policy_line
from core.enums import InvalidDatePolicy, Kind, MisfirePolicy, OverlapPolicy, Status
from core.explain.change_words import clocks, day_label, jump_words, transition_day, wall_range, zone_word
from core.explain.consequences import LOOKAHEAD, Consequences, consequences
from core.recurrence.compile import CompiledSchedule, compile_schedule
from core.recurrence.describe import describe_bounds, describe_rule, join_words
from core.recurrence.expand import expand, iter_rows
from core.recurrence.occurrence import Occurrence
from core.spec.model import ScheduleSpec
from core.time.durations import human_duration
from core.time.formats import fmt_clock, fmt_local, fmt_utc
from core.time.zones import Transition, next_transition, shifted

if TYPE_CHECKING:
    from core.desktop.wake.alarms import WakeBackend


@dataclass(frozen=True)
class Summary:
    """A schedule in words: ``headline`` says what it does and when, in one short
    sentence; ``lines`` say what each policy does, one sentence each."""

    headline: str
    lines: tuple[str, ...]

    def paragraph(self) -> str:
        """Everything as one paragraph (``schedctl explain``)."""
        return " ".join((self.headline, *self.lines))


def explain(spec: ScheduleSpec, now: datetime, *, wake: WakeBackend | None = None) -> str:
    """One paragraph describing ``spec`` as seen from the instant ``now`` (aware).

    The gap and fold described are the first ones from ``now`` on (or from the
    schedule's first row when that is later) that touch one of its rows. With
    ``wakeSystem``, ``wake`` (this host's wake backend) says whether the machine
    can be woken (:func:`core.desktop.wake.alarms.wake_line`).
    """
    return summarize(spec, now, wake=wake).paragraph()


def summarize(spec: ScheduleSpec, now: datetime, *, wake: WakeBackend | None = None) -> Summary:
    """The words of :func:`explain`, the sentence apart from the policies' lines."""
    compiled = compile_schedule(spec)
    first = next(iter_rows(compiled), None)
    after = max(now, first.position) if first is not None else now
    lines: list[str]
    if spec.kind is Kind.INTERVAL:
        headline, lines = _interval(compiled, after)
    elif spec.kind is Kind.AFTER_COMPLETION:
        headline, lines = _after_completion(compiled)
    else:
        found = consequences(spec, now)
        headline = _calendar_what(compiled, now) + "."
        lines = _calendar_changes(compiled, found) + _invalid_dates(found)
        holidays = policy_line(spec, now)
        if holidays is not None:
            lines.append(holidays)
    lines.append(_misfire_and_overlap(spec))
    if spec.jitter > timedelta(0):
        lines.append(
            f"Each run starts up to {human_duration(spec.jitter)} late, by a fixed delay derived from its id (jitter)."
        )
    if spec.wake_system:
        from core.desktop.wake.alarms import wake_line  # only a spec with wakeSystem asks

        lines.append(wake_line(wake))
    return Summary(headline, tuple(lines))


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


def _after_completion(compiled: CompiledSchedule) -> tuple[str, list[str]]:
    spec = compiled.spec
    assert spec.start is not None and spec.delay is not None
    headline = (
        f"First run at {day_label(spec.start)} {fmt_clock(spec.start)} in {spec.time_zone}; "
        f"then each run is due {_elapsed(spec.delay)} after the previous one finishes."
    )
    rows = list(iter_rows(compiled))
    runs = [r for r in rows if r.runnable]
    gap_note = f"The first run's time does not exist that day, so it {{}} (gapPolicy {compiled.gap_policy.value})."
    lines = []
    if any(r.status is Status.SKIPPED_GAP for r in rows):
        lines.append(gap_note.format("is skipped"))
    elif runs and runs[0].status is Status.SHIFTED and (moved := runs[0].resolved_local) is not None:
        label = zone_word(runs[0].abbreviation or "", runs[0].offset or timedelta(0), "")
        lines.append(gap_note.format(f"runs at {fmt_clock(moved)} {label}"))
    elif len(rows) == 2:
        if len(runs) == 2:
            which = "both readings"
        elif runs:
            which = f"the {'first' if runs[0].fold_ordinal == 0 else 'second'} reading only"
        else:
            which = "neither reading"
        lines.append(
            f"The first run's time happens twice that day, so it runs at {which} "
            f"(foldPolicy {compiled.fold_policy.value})."
        )
    lines.append("Clock changes do not move the later runs, since they follow elapsed time.")
    return headline, lines


# --- clock changes, calendar schedules ----------------------------------------------------


def _calendar_changes(compiled: CompiledSchedule, found: Consequences) -> list[str]:
    """The gap and fold sentences: the first change that touches one of the schedule's rows
    under the chosen policy (the consequence lines' own), else the zone's next one."""
    name = compiled.spec.time_zone
    if found.gap is None and found.fold is None:
        return [f"{name} has no clock changes ahead, so no wall time is ever skipped or repeated."]
    out = []
    for part, kind in ((found.gap, "gap"), (found.fold, "fold")):
        if part is None:
            out.append(f"{name} has no {kind} in the next ten years.")
            continue
        outcome = part.outcome
        if outcome is None or outcome.transition is None:
            tr = part.next_change
            where = f"{day_label(transition_day(tr))}, {jump_words(tr, transition_day(tr))}"
            out.append(f"Next {kind}: {where}; this schedule's times are not affected.")
            continue
        tr = outcome.transition
        policy = part.chosen.value
        effect = _gap_effect(tr, outcome.window, policy) if kind == "gap" else _fold_effect(tr, outcome.window, policy)
        # The zone's next change may leave the schedule alone; then the one that does not is named.
        lead = f"Next {kind}" if tr.utc <= part.next_change.utc else f"Next {kind} that touches this schedule"
        out.append(f"{lead}: {day_label(transition_day(tr))}, {jump_words(tr, transition_day(tr))}; {effect}.")
    return out


def _pronoun(rows: Sequence[Occurrence]) -> str:
    return "it" if len(rows) == 1 else "them"


def _touched(tr: Transition, window: Sequence[Occurrence]) -> list[Occurrence]:
    lo, hi = wall_range(tr)
    return [r for r in window if lo <= r.nominal < hi]


def _gap_effect(tr: Transition, window: Sequence[Occurrence], policy: str) -> str:
    affected = _touched(tr, window)
    times = clocks([r.nominal for r in affected], tr.local_before)
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
        clauses.append(f"runs {_pronoun(shifted)} at {clocks(moved, tr.local_before)} {label} instead")
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


def _fold_effect(tr: Transition, window: Sequence[Occurrence], policy: str) -> str:
    affected = _touched(tr, window)
    first = [r for r in affected if r.fold_ordinal == 0]
    second = [r for r in affected if r.fold_ordinal == 1]
    times = clocks([r.nominal for r in affected], tr.local_after)
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


def _interval(compiled: CompiledSchedule, after: datetime) -> tuple[str, list[str]]:
    spec = compiled.spec
    assert spec.every is not None and spec.anchor is not None
    headline = (
        f"Every {_elapsed(spec.every)} of elapsed time from {fmt_utc(spec.anchor)}, "
        f"shown on the wall clock of {spec.time_zone}."
    )
    zone = compiled.zone
    gap = next_transition(zone, after, "gap", within=LOOKAHEAD)
    fold = next_transition(zone, after, "fold", within=LOOKAHEAD)
    if gap is None and fold is None:
        return headline, [f"{spec.time_zone} has no clock changes ahead."]
    parts = []
    if gap is not None:
        where = f"{day_label(transition_day(gap))}, {jump_words(gap, transition_day(gap))}"
        parts.append(f"at the next gap ({where}) {_interval_gap(compiled, gap)}")
    if fold is not None:
        where = f"{day_label(transition_day(fold))}, {jump_words(fold, transition_day(fold))}"
        parts.append(f"at the next fold ({where}) {_interval_fold(compiled, fold)}")
    return headline, [f"Clock changes do not move it: {'; '.join(parts)}."]


def _interval_gap(compiled: CompiledSchedule, tr: Transition) -> str:
    every = compiled.spec.every
    assert every is not None
    rows = expand(compiled, shifted(tr.utc, -every), shifted(tr.utc, every))
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
    repeats = [r for r in expand(compiled, tr.utc, shifted(tr.utc, tr.delta)) if r.fold_ordinal == 1]
    if not repeats:
        return "no run falls in the repeated wall times"
    times = clocks([r.nominal for r in repeats], tr.local_after)
    runs = "run" if len(repeats) == 1 else "runs"
    return (
        f"the {runs} at {times} {tr.abbr_after} repeat wall times already shown in {tr.abbr_before} "
        "and are marked as second readings (foldOrdinal 1)"
    )


# --- dates that do not exist ------------------------------------------------------------


def _invalid_dates(found: Consequences) -> list[str]:
    """The chosen invalid-date policy's consequence, the one its consequence line names."""
    part = found.invalid_date
    outcome = part.outcome if part is not None else None
    if part is None or outcome is None or outcome.missing is None:
        return []
    missing = outcome.missing
    policy = part.chosen
    if policy is InvalidDatePolicy.OMIT:
        return [f"Dates that do not exist get no run: the next is {missing} (invalidDatePolicy OMIT)."]
    assert outcome.wall is not None
    moved = f"{outcome.wall:%Y-%m-%d}"
    where = f"runs on {moved}" if outcome.runs else f"moves to {moved}, and there this schedule {outcome.text}"
    if policy is InvalidDatePolicy.BACKWARD:
        return [
            f"Dates that do not exist move back to the last day of the month: {missing} {where} "
            "(invalidDatePolicy BACKWARD)."
        ]
    return [
        f"Dates that do not exist move forward to the first day after: {missing} {where} (invalidDatePolicy FORWARD)."
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
        runs = "run is" if n == 1 else f"{n:,} runs are"
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
