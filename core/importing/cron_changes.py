"""What a crontab job did at a clock change and what its imported spec will do there, side by side.

Cron's side follows Debian's ``cron.c``: it reads the wall clock each minute and runs the jobs
that match; when the clock jumps forward by less than three hours it also runs, right after the
jump, each fixed-time job whose minute was skipped (wildcard jobs only follow the new clock);
when the clock falls back it runs only the wildcard jobs until the wall clock catches up with
where it had been, so a fixed-time job runs once. The spec's side is its preview.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from core.importing.cron_expr import CronExpr
from core.preview import build_preview
from core.spec import ScheduleSpec
from core.zones import Transition, get_zone, next_transition, transitions

_MINUTE = timedelta(minutes=1)
#: Runs listed in full on one side; more are shortened to their first and last few.
_LISTED = 8


@dataclass(frozen=True)
class SideBySide:
    """The runs of a job around one clock change, by cron and by the spec (UTC instants)."""

    change: Transition
    zone: str
    cron: list[datetime]
    spec: list[datetime]

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
    if not expr.wildcard:
        for change in transitions(zone, lo, hi):
            if change.kind != "gap" or change.delta >= timedelta(hours=3):
                continue
            wall = change.local_before
            while wall < change.local_after:
                if expr.matches(wall):
                    runs.append(change.utc)
                wall += _MINUTE
    return sorted(runs)


def spec_runs(specs: Sequence[ScheduleSpec], lo: datetime, hi: datetime) -> list[datetime]:
    """The instants in ``[lo, hi)`` at which the specs run, together."""
    runs: list[datetime] = []
    for spec in specs:
        rows = build_preview(spec, lo, until=hi).rows
        runs += [row.resolved for row in rows if row.runnable and row.resolved is not None]
    return sorted(runs)


def side_by_side(expr: CronExpr, specs: Sequence[ScheduleSpec], zone_name: str, after: datetime) -> SideBySide | None:
    """The job's runs around the zone's next clock change after ``after``; None when it has none
    within ten years. The window holds the change's length on either side of it."""
    zone = get_zone(zone_name)
    change = next_transition(zone, after)
    if change is None:
        return None
    lo = (change.utc - change.delta).replace(second=0, microsecond=0)
    hi = change.utc + change.delta
    return SideBySide(change, zone_name, cron_runs(expr, zone, lo, hi), spec_runs(specs, lo, hi))


def _local(instant: datetime, zone: ZoneInfo) -> str:
    local = instant.astimezone(zone)
    return f"{local:%H:%M} {local.tzname()}"


def _listed(runs: list[datetime], zone: ZoneInfo) -> str:
    if not runs:
        return "no run"
    words = [_local(r, zone) for r in runs]
    if len(words) > _LISTED:
        words = [*words[:3], f"… {len(words) - 6} more …", *words[-3:]]
    return ", ".join(words)


def change_lines(view: SideBySide, source: str = "cron") -> list[str]:
    """The side-by-side as report lines; ``source`` names what ran the job before (its runs are
    ``view.cron``) and the section of docs/import.md on where the import differs from it."""
    zone = get_zone(view.zone)
    change = view.change
    hours = change.seconds / 3600
    amount = f"{hours:g} hour{'s' if hours != 1 else ''}"
    way = "forward" if change.kind == "gap" else "back"
    lines = [
        f"next clock change: {change.local_before:%a %Y-%m-%d %H:%M} {change.abbr_before} "
        f"→ {change.local_after:%H:%M} {change.abbr_after}, {way} {amount}; "
        f"runs {_local(change.utc - change.delta, zone)}-{_local(change.utc + change.delta, zone)}:",
        f"  {source + ' ran:':<16}{_listed(view.cron, zone)}",
        f"  this spec runs: {_listed(view.spec, zone)}",
    ]
    if not view.same:
        lines.append(f'  (they differ: see docs/import.md, "Where the import cannot match {source}")')
    return lines
