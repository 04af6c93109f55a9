"""What a crontab job did at a clock change and what its imported spec will do there, side by side.

Cron's side follows Debian's ``cron.c``: it reads the wall clock each minute and runs the jobs
that match; when the clock jumps forward by less than three hours it also runs, right after the
jump, each fixed-time job whose minute was skipped (wildcard jobs only follow the new clock);
when the clock falls back it runs only the wildcard jobs until the wall clock catches up with
where it had been, so a fixed-time job runs once. The spec's side is its preview.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from core.importing.cron_expr import CronExpr
from core.recurrence.preview import build_preview
from core.spec.model import ScheduleSpec
from core.time.formats import fmt_clock
from core.time.zones import Transition, get_zone, next_transition, transitions

_MINUTE = timedelta(minutes=1)
#: Runs a step apart, more than this many in a row, are written as one stretch ("01:00 EDT to
#: 01:59 EDT every minute"); fewer are each written out. Nothing is left out either way.
_STRETCH = 4


@dataclass(frozen=True)
class SideBySide:
    """The runs of a job around one clock change, by cron and by the spec (UTC instants).
    ``cron_moved`` and ``spec_moved``: that side's run at the change stands for a time the clocks
    skipped (cron's fixed-time jobs, a spec's ``SHIFT_FORWARD``), not a time of its own."""

    change: Transition
    zone: str
    cron: list[datetime]
    spec: list[datetime]
    cron_moved: bool = False
    spec_moved: bool = False

    @property
    def same(self) -> bool:
        return self.cron == self.spec


def _wall(instant: datetime, zone: ZoneInfo) -> datetime:
    return instant.astimezone(zone).replace(tzinfo=None)


def _second_reading(instant: datetime, zone: ZoneInfo) -> bool:
    """The instant reads a wall time the clock already showed once (clocks fell back)."""
    local = instant.astimezone(zone)
    return local.fold == 1 and local.replace(fold=0).utcoffset() != local.utcoffset()


def cron_runs(expr: CronExpr, zone: ZoneInfo, lo: datetime, hi: datetime) -> list[datetime]:
    """The instants in ``[lo, hi)`` at which Debian's cron runs the job (a minute apart at most;
    a time run twice is listed twice). ``lo`` is a whole minute."""
    runs: list[datetime] = []
    at = lo
    while at < hi:
        if expr.matches(_wall(at, zone)) and (expr.wildcard or not _second_reading(at, zone)):
            runs.append(at)
        at += _MINUTE
    for change in transitions(zone, lo, hi):
        runs += [change.utc] * _skipped_runs(expr, change)
    return sorted(runs)


def _skipped_runs(expr: CronExpr, change: Transition) -> int:
    """How many times a fixed-time job whose times a gap skips runs right after it (once per time);
    0 for a wildcard job, a fold, or a change of three hours or more (cron takes it for a clock set by hand)."""
    if expr.wildcard or change.kind != "gap" or change.delta >= timedelta(hours=3):
        return 0
    count, wall = 0, change.local_before
    while wall < change.local_after:
        count += expr.matches(wall)
        wall += _MINUTE
    return count


def spec_runs(specs: Sequence[ScheduleSpec], lo: datetime, hi: datetime) -> list[datetime]:
    """The instants in ``[lo, hi)`` at which the specs run, together."""
    return sorted(run for run, _ in _spec_rows(specs, lo, hi))


def _spec_rows(specs: Sequence[ScheduleSpec], lo: datetime, hi: datetime) -> list[tuple[datetime, bool]]:
    """Each run in ``[lo, hi)``, and whether it was moved from its nominal wall time."""
    runs: list[tuple[datetime, bool]] = []
    for spec in specs:
        zone = get_zone(spec.time_zone)
        for row in build_preview(spec, lo, until=hi).rows:
            if row.runnable and row.resolved is not None:
                runs.append((row.resolved, _wall(row.resolved, zone) != row.nominal))
    return runs


def spec_moved(specs: Sequence[ScheduleSpec], change: Transition) -> bool:
    """Whether a spec's run at a gap stands for a time the clocks skipped (it was shifted there)."""
    lo = change.utc.replace(second=0, microsecond=0)
    return any(moved and run == change.utc for run, moved in _spec_rows(specs, lo, lo + _MINUTE))


def next_changes(zone: ZoneInfo, after: datetime) -> list[Transition]:
    """The zone's next gap and next fold after ``after`` (within ten years), in the order they come."""
    found = [next_transition(zone, after, kind) for kind in ("gap", "fold")]
    return sorted((change for change in found if change is not None), key=lambda change: change.utc)


def change_window(change: Transition) -> tuple[datetime, datetime]:
    """The instants shown around a change: its length on either side of it (``lo`` a whole minute)."""
    return (change.utc - change.delta).replace(second=0, microsecond=0), change.utc + change.delta


def side_by_sides(expr: CronExpr, specs: Sequence[ScheduleSpec], zone_name: str, after: datetime) -> list[SideBySide]:
    """The job's runs around the zone's next gap and next fold after ``after``; none when the zone
    has no clock change within ten years."""
    zone = get_zone(zone_name)
    views = []
    for change in next_changes(zone, after):
        lo, hi = change_window(change)
        moved = _skipped_runs(expr, change) > 0
        views.append(
            SideBySide(
                change,
                zone_name,
                cron_runs(expr, zone, lo, hi),
                spec_runs(specs, lo, hi),
                cron_moved=moved,
                spec_moved=change.kind == "gap" and spec_moved(specs, change),
            )
        )
    return views


def _local(instant: datetime, zone: ZoneInfo) -> str:
    local = instant.astimezone(zone)
    return f"{fmt_clock(local)} {local.tzname()}"


def _every(step: timedelta) -> str:
    seconds = int(step.total_seconds())
    if seconds % 60:
        return f"every {seconds} seconds"
    minutes = seconds // 60
    if minutes % 60 == 0:
        hours = minutes // 60
        return "every hour" if hours == 1 else f"every {hours} hours"
    return "every minute" if minutes == 1 else f"every {minutes} minutes"


def run_words(runs: Sequence[datetime], zone: ZoneInfo, at: Callable[[datetime], str]) -> list[str]:
    """Every run in words (``at`` writes one), each stretch of more than a few a step apart on one
    offset as one item ("01:00 EDT to 01:59 EDT every minute"): all of them, none left out."""
    words: list[str] = []
    i = 0
    while i < len(runs):
        j = i + 1
        if j < len(runs):
            step, offset = runs[j] - runs[i], runs[i].astimezone(zone).utcoffset()
            while j < len(runs) and runs[j] - runs[j - 1] == step and runs[j].astimezone(zone).utcoffset() == offset:
                j += 1
        if j - i > _STRETCH:
            words.append(f"{at(runs[i])} to {at(runs[j - 1])} {_every(runs[i + 1] - runs[i])}")
        else:
            words += [at(run) for run in runs[i:j]]
        i = j
    return words


def _listed(runs: list[datetime], zone: ZoneInfo, moved: bool, change: Transition) -> str:
    if not runs:
        return "no run"

    def at(run: datetime) -> str:
        shifted = moved and run == change.utc
        return _local(run, zone) + (" (for a skipped time)" if shifted else "")

    return ", ".join(run_words(runs, zone, at))


def change_lines(view: SideBySide, source: str = "cron") -> list[str]:
    """The side-by-side as report lines; ``source`` names what ran the job before (its runs are
    ``view.cron``) and the section of docs/import.md on where the import differs from it."""
    zone = get_zone(view.zone)
    change = view.change
    hours = change.seconds / 3600
    amount = f"{hours:g} hour{'s' if hours != 1 else ''}"
    way = "forward" if change.kind == "gap" else "back"
    lines = [
        f"next {change.kind}: {change.local_before:%a %Y-%m-%d %H:%M} {change.abbr_before} "
        f"→ {change.local_after:%H:%M} {change.abbr_after}, {way} {amount}; "
        f"runs {_local(change.utc - change.delta, zone)}-{_local(change.utc + change.delta, zone)}:",
        f"  {source + ' ran:':<16}{_listed(view.cron, zone, view.cron_moved, change)}",
        f"  this spec runs: {_listed(view.spec, zone, view.spec_moved, change)}",
    ]
    if not view.same:
        lines.append(f'  (they differ: see docs/import.md, "Where the import cannot match {source}")')
    return lines
