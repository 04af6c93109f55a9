"""The report of a timer import: for each timer what it became and why, each setting that needed
a word (in its file's line order), and each calendar spec's runs at the zone's next gap and next fold,
systemd's and the spec's side by side.
systemd's side is :func:`core.importing.systemd_calendar.elapses`.
"""

from __future__ import annotations

from datetime import datetime

from core.importing.cron_changes import SideBySide, change_lines, change_window, next_changes, spec_moved, spec_runs
from core.importing.systemd import ImportedTimer, Note, SystemdImport, TimerSpec
from core.importing.systemd_calendar import elapses
from core.time.zones import get_zone


def systemd_side_by_sides(made: TimerSpec, after: datetime) -> list[SideBySide]:
    """The spec's runs and systemd's around the zone's next gap and next fold after ``after``.
    systemd never moves a run to a change: the wall times the clocks skip do not run."""
    spec = made.imported.spec
    assert made.calendar is not None
    zone = get_zone(spec.time_zone)
    views = []
    for change in next_changes(zone, after):
        lo, hi = change_window(change)
        runs = spec_runs([spec], lo, hi)
        moved = change.kind == "gap" and spec_moved([spec], change)
        views.append(SideBySide(change, spec.time_zone, elapses(made.calendar, zone, lo, hi), runs, spec_moved=moved))
    return views


def _note_line(note: Note) -> str:
    if note.imported:
        return f"  {note.file} line {note.line}: {note.text}: {note.said}"
    return f"  {note.file} line {note.line}: {note.text}: not imported: {note.said}"


def _spec_lines(made: TimerSpec, now: datetime) -> list[str]:
    spec = made.imported.spec
    if made.calendar is None:
        return [f"  wrote {made.imported.file_name}: {spec.kind.value}, misfire {spec.misfire_policy.value}"]
    lines = [
        f"  OnCalendar={made.calendar.source}: systemd reads {made.calendar.normalized}",
        f"  wrote {made.imported.file_name}: {spec.rule}",
        f"  {spec.time_zone} ({made.zone_from}): gap {spec.effective_gap_policy.value}, "
        f"fold {spec.effective_fold_policy.value}, misfire {spec.misfire_policy.value}",
    ]
    views = systemd_side_by_sides(made, now)
    if not views:
        lines.append(f"  {spec.time_zone} has no clock change in the next ten years")
    for view in views:
        lines += ["  " + line for line in change_lines(view, "systemd")]
    return lines


def _timer_lines(timer: ImportedTimer, notes: list[Note], now: datetime) -> list[str]:
    lines = [f"{timer.file} (runs {timer.service}):"]
    for made in timer.specs:
        lines += _spec_lines(made, now)
    if len([m for m in timer.specs if m.calendar is not None]) > 1:
        lines.append(
            "  its OnCalendar= lines are several schedules (no one rule holds them all): "
            "a time two of them name runs once per schedule, where systemd runs it once"
        )
    lines += [_note_line(note) for note in notes]
    return lines


def report_lines(result: SystemdImport, now: datetime) -> list[str]:
    """Every line of the report, timer by timer, in the order they were given."""
    lines: list[str] = []
    imported = {timer.file: timer for timer in result.timers}
    by_timer: dict[str, list[Note]] = {}
    for note in result.notes:
        by_timer.setdefault(note.timer, []).append(note)
    for file in result.files:
        notes = by_timer.get(file, [])
        notes.sort(key=lambda n: (n.file != file, n.line))
        if file in imported:
            lines += _timer_lines(imported[file], notes, now)
        else:
            lines.append(f"{file}: not imported")
            lines += [_note_line(n) for n in notes]
    files = sum(len(timer.specs) for timer in result.timers)
    left = len(result.unimported)
    lines.append(
        f"{len(result.timers)} timer{'s' if len(result.timers) != 1 else ''} imported into {files} "
        f"file{'s' if files != 1 else ''}; {left} setting{'s' if left != 1 else ''} not imported"
    )
    return lines
