"""Where a crontab line and its spec part at clock changes, in the words of a comment.

Cron's behaviour is the import's model of Debian's cron (core.importing.cron_changes): a
fixed-time job (neither the minute nor the hour field starts with ``*``) shifts a skipped time to
the change and runs a repeated time once; a wildcard job skips and repeats with the clock. A
policy of the spec other than cron's is named only where it shows: where the spec's runs at some
change of the next 28 years (a whole cycle of weekdays and dates) differ from what the spec would
run with cron's policy. Where the policies agree and the runs still differ (two fixed times in the
hour the clocks skip: cron runs both right after the change, the spec once), the first such
change is named with both sides' runs.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from itertools import takewhile
from typing import Any

from core.enums import FoldPolicy, GapPolicy, Kind
from core.exporting.cron_fields import CronFields
from core.importing.cron import FOLD_WHY, GAP_WHY
from core.importing.cron_changes import cron_runs
from core.importing.cron_expr import parse_fields
from core.recurrence.compile import CompiledSchedule, compile_schedule
from core.recurrence.expand import iter_rows
from core.recurrence.rules import parse_rule
from core.spec.model import ScheduleSpec
from core.time.zones import Transition, get_zone, transitions

#: How far ahead changes are compared: 28 years, after which weekdays fall on the same dates again.
CYCLE = timedelta(days=365 * 28 + 7)
#: What a spec's gap and fold policies do, in the words of a comment.
_GAP_DOES = {
    GapPolicy.SKIP: "the spec skips a time the clocks skip",
    GapPolicy.SHIFT_FORWARD: "the spec runs a time the clocks skip at the change",
    GapPolicy.SHIFT_BY_GAP: "the spec runs a time the clocks skip later by the gap's length",
}
_FOLD_DOES = {
    FoldPolicy.FIRST_ONLY: "the spec runs a repeated time at its first reading only",
    FoldPolicy.SECOND_ONLY: "the spec runs a repeated time at its second reading only",
    FoldPolicy.BOTH: "the spec runs a repeated time at both readings",
}


def _window(change: Transition) -> tuple[datetime, datetime]:
    return (change.utc - change.delta).replace(second=0, microsecond=0), change.utc + change.delta


def _runs(compiled: CompiledSchedule, change: Transition) -> list[datetime]:
    lo, hi = _window(change)
    rows = takewhile(lambda row: row.position < hi, iter_rows(compiled, lo))
    return [row.resolved for row in rows if row.runnable and row.resolved is not None]


def _shows(spec: ScheduleSpec, other: ScheduleSpec, changes: list[Transition]) -> bool:
    """``spec`` and ``other`` run differently at one of ``changes``."""
    mine, theirs = compile_schedule(spec), compile_schedule(other)
    return any(_runs(mine, change) != _runs(theirs, change) for change in changes)


def _unbounded(spec: ScheduleSpec) -> ScheduleSpec:
    """``spec`` with nothing that ends or thins out its runs (each has its own comment)."""
    assert spec.rule is not None
    rule = ";".join(f"{k}={v}" for k, v in parse_rule(spec.rule).parts.items() if k not in ("COUNT", "UNTIL"))
    thinning: dict[str, Any] = {
        "end": None,
        "exclude": [],
        "business_period": None,
        "business_calendar": None,
        "holiday_policy": None,
    }
    return spec.model_copy(update={"rule": rule, **thinning})


def _runs_text(runs: list[datetime], spec: ScheduleSpec) -> str:
    zone = get_zone(spec.time_zone)
    return ", ".join(f"{at.astimezone(zone):%H:%M %Z}" for at in runs) or "no run"


def _first_difference(spec: ScheduleSpec, fields: CronFields, changes: list[Transition]) -> str | None:
    zone = get_zone(spec.time_zone)
    expr = parse_fields(fields.texts(), 0)
    compiled = compile_schedule(spec)
    for change in changes:
        cron, runs = cron_runs(expr, zone, *_window(change)), _runs(compiled, change)
        if cron != runs:
            return (
                f"at the clock change of {change.local_before:%Y-%m-%d} cron runs the job at "
                f"{_runs_text(cron, spec)}; the spec at {_runs_text(runs, spec)}"
            )
    return None


def clock_differences(spec: ScheduleSpec, fields: CronFields, now: datetime) -> list[str]:
    """What the line does otherwise than the spec at the clock changes after ``now``; none for an
    interval (written in UTC) or a zone that does not change its clocks."""
    if spec.kind is not Kind.CALENDAR:
        return []
    assert spec.start is not None
    zone = get_zone(spec.time_zone)
    after = max(now, spec.start.replace(tzinfo=zone).astimezone(UTC))  # a start to come has its own comment
    changes = transitions(zone, after, after + CYCLE)
    if not changes:
        return []
    spec = _unbounded(spec)
    gap, fold = spec.effective_gap_policy, spec.effective_fold_policy
    cron_gap = GapPolicy.SKIP if fields.wildcard else GapPolicy.SHIFT_FORWARD
    cron_fold = FoldPolicy.BOTH if fields.wildcard else FoldPolicy.FIRST_ONLY
    gaps = [c for c in changes if c.kind == "gap"]
    folds = [c for c in changes if c.kind == "fold"]
    notes = []
    if gap is not cron_gap and _shows(spec, spec.model_copy(update={"gap_policy": cron_gap}), gaps):
        notes.append(f"gapPolicy {gap.value}: {_GAP_DOES[gap]}; {GAP_WHY[cron_gap]}")
    if fold is not cron_fold and _shows(spec, spec.model_copy(update={"fold_policy": cron_fold}), folds):
        notes.append(f"foldPolicy {fold.value}: {_FOLD_DOES[fold]}; {FOLD_WHY[cron_fold]}")
    if notes:
        return notes
    as_cron = spec.model_copy(update={"gap_policy": cron_gap, "fold_policy": cron_fold})
    difference = _first_difference(as_cron, fields, changes)
    return [difference] if difference is not None else []
