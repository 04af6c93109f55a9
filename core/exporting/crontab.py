"""``schedctl export crontab``: the nearest crontab equivalent of a spec, with a comment for every
policy cron cannot keep, or the reason no equivalent exists (:class:`ExportRefused`).

The text is one job: a ``CRON_TZ=`` line for its zone, the task's variables, and the job line. Cron's
own behaviour is Debian's, as the import reads it (core.importing.cron): at a clock change a
fixed-time job (neither the minute nor the hour field starts with ``*``) shifts a skipped time to
the change and runs a repeated time once; a wildcard job skips and repeats with the clock. It runs
nothing it missed, starts a job even while the last run goes on, never retries and never stops one.
An export is *exact* when the crontab runs at the spec's times; the comments that change times
(not only how a run behaves) make it inexact.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from core.counts import counted
from core.enums import InvalidDatePolicy, Kind, MisfirePolicy, OverlapPolicy, TzdbPolicy
from core.exporting.clock_changes import clock_differences
from core.exporting.cron_fields import CronFields, spec_fields
from core.exporting.cron_line import CronTask, cron_task
from core.exporting.refusal import ExportRefused
from core.importing.spec_comments import comment_text
from core.recurrence.rules import parse_rule
from core.spec.model import ScheduleSpec
from core.time.durations import format_duration
from core.time.formats import fmt_local, fmt_utc
from core.time.zones import get_zone

_ZONE_NOTE = (
    "CRON_TZ is read by cronie; Debian's cron ignores it and runs every job on the machine's zone "
    "(TZ= only sets the job's environment): there, install this on a machine whose zone is {zone}"
)
_MAIL_NOTE = "as a line of its own, cron would mail the output of every job below it there"
_INTERVAL_NOTE = "every {every} counts elapsed time: the times are written in UTC, which has no clock changes"
_MOST_DATES = 5
#: The days of each month in a common year (a 29 February is lacking in most years).
_MONTH_DAYS = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


@dataclass(frozen=True)
class Note:
    """A comment: something cron does not keep; ``when`` if it changes the times of the runs."""

    text: str
    when: bool


@dataclass(frozen=True)
class CrontabExport:
    """The crontab text, its five fields, and what it does not keep."""

    text: str
    fields: CronFields
    notes: tuple[Note, ...]

    @property
    def exact(self) -> bool:
        """The crontab runs at the spec's times (the notes concern only how a run behaves)."""
        return not any(note.when for note in self.notes)


def _end_notes(spec: ScheduleSpec) -> list[Note]:
    notes = []
    parts = parse_rule(spec.rule).parts if spec.rule else {}
    if "COUNT" in parts:
        notes.append(
            Note(
                f"COUNT={parts['COUNT']}: the spec stops after {counted(int(parts['COUNT']), 'run')}; a crontab line "
                "never ends: remove it after the last run",
                when=True,
            )
        )
    if "UNTIL" in parts:
        notes.append(
            Note(f"UNTIL={parts['UNTIL']}: the spec ends then; a crontab line never ends: remove it then", when=True)
        )
    if spec.end is not None:
        end = fmt_utc(spec.end) if spec.end.tzinfo is not None else fmt_local(spec.end)
        notes.append(Note(f"end {end}: the spec ends then; a crontab line never ends: remove it then", when=True))
    return notes


def _start_notes(spec: ScheduleSpec, now: datetime) -> list[Note]:
    if spec.kind is Kind.INTERVAL and spec.anchor is not None and spec.anchor > now:
        text = f"anchor {fmt_utc(spec.anchor)}: the spec starts then; cron runs from the moment the line is installed"
        return [Note(text + ": install it then", when=True)]
    local_now = now.astimezone(get_zone(spec.time_zone)).replace(tzinfo=None)
    if spec.kind is Kind.CALENDAR and spec.start is not None and spec.start > local_now:
        text = f"start {fmt_local(spec.start)}: the spec starts then; cron runs from the moment the line is installed"
        return [Note(text + ": install it then", when=True)]
    return []


def _date_notes(spec: ScheduleSpec, fields: CronFields) -> list[Note]:
    notes = []
    if spec.exclude:
        shown = ", ".join(value.isoformat() for value in spec.exclude[:_MOST_DATES])
        more = f" and {len(spec.exclude) - _MOST_DATES} more" if len(spec.exclude) > _MOST_DATES else ""
        notes.append(Note(f"exclude {shown}{more}: cron has no exclusions; those runs happen", when=True))
    if spec.business_calendar is not None and spec.holiday_policy is not None:
        notes.append(
            Note(
                f"businessCalendar with holidayPolicy {spec.holiday_policy.value}: cron knows no holidays "
                "or business days; runs on closed days happen as the rule says",
                when=True,
            )
        )
    every_day = len(fields.days) == 31  # no day of the month named: every day is a real one
    lacking = not every_day and any(day > _MONTH_DAYS[m - 1] for day in fields.days for m in fields.months)
    if spec.invalid_date_policy is not InvalidDatePolicy.OMIT and spec.kind is Kind.CALENDAR and lacking:
        policy = spec.invalid_date_policy.value
        notes.append(
            Note(
                f"invalidDatePolicy {policy}: the spec moves a day a month lacks to another day; "
                "cron skips it in that month",
                when=True,
            )
        )
    return notes


def _newest(count: int) -> str:
    return "the newest missed run runs late" if count == 1 else f"the newest {count:,} missed runs run late"


def _run_notes(spec: ScheduleSpec) -> list[Note]:
    notes = []
    if spec.misfire_policy is not MisfirePolicy.SKIP:
        catch = {
            MisfirePolicy.CATCH_UP_ALL: "every missed run runs late",
            MisfirePolicy.CATCH_UP_BOUNDED: _newest(spec.effective_max_catch_up or 1),
        }
        notes.append(
            Note(
                f"misfirePolicy {spec.misfire_policy.value}: {catch[spec.misfire_policy]}; cron runs "
                "nothing it missed while it was not running",
                when=False,
            )
        )
    if spec.overlap_policy is not OverlapPolicy.ALLOW:
        notes.append(
            Note(
                f"overlapPolicy {spec.overlap_policy.value}: cron starts a job even while its previous "
                "run still goes on (flock -n in the command skips instead)",
                when=False,
            )
        )
    if spec.retry.max_attempts > 1:
        notes.append(
            Note(
                f"retry: up to {spec.retry.max_attempts:,} attempts; cron never runs a failed job again",
                when=False,
            )
        )
    if spec.jitter > timedelta(0):
        notes.append(Note(f"jitter {format_duration(spec.jitter)}: cron starts a job on the minute", when=False))
    if spec.business_period is not None:
        notes.append(
            Note(
                f"businessPeriod {spec.business_period}: the spec runs at most once a period; cron has no periods",
                when=True,
            )
        )
    if spec.tzdb_policy is TzdbPolicy.PIN:
        notes.append(Note("tzdbPolicy PIN: cron follows the machine's time zone database as it changes", when=False))
    if spec.runs_on is not None:
        notes.append(Note("runsOn: cron runs the job on the machine whose crontab holds it", when=False))
    if spec.alerts:
        notes.append(Note("alerts: cron mails a job's output to MAILTO, and tells no other route", when=False))
    return notes


def _task_notes(spec: ScheduleSpec, task: CronTask) -> list[Note]:
    assert spec.task is not None
    notes = [
        Note(
            f"task.timeout {format_duration(spec.task.timeout)}: cron never stops a job "
            "(timeout(1) in the command does)",
            when=False,
        )
    ]
    if spec.task.verify is not None:
        notes.append(Note("task.verify: cron runs no probe after the job", when=False))
    for name, secret in task.secrets:
        notes.append(
            Note(
                f"{name} comes from the secret {secret}, which is never written to a file: add {name}=... here by hand",
                when=False,
            )
        )
    return notes


def export_crontab(spec: ScheduleSpec, now: datetime) -> CrontabExport:
    """The crontab text of ``spec`` as of ``now`` (an aware instant), or :class:`ExportRefused`."""
    if spec.task is None:
        raise ExportRefused("the spec has no task: cron needs a command to run")
    fields = spec_fields(spec)
    task = cron_task(spec.task)
    notes = [
        *(Note(text, when=True) for text in clock_differences(spec, fields, now)),
        *_date_notes(spec, fields),
        *_end_notes(spec),
        *_start_notes(spec, now),
        *_run_notes(spec),
        *_task_notes(spec, task),
    ]
    zone = "UTC" if spec.kind is Kind.INTERVAL else spec.time_zone
    title = f": {spec.title}" if spec.title else ""
    lines = [
        f"# Exported from schedule {spec.schedule_id} (revision {spec.revision}){title}",
        "# The nearest crontab equivalent; each comment below names what cron does not keep.",
    ]
    if spec.kind is Kind.INTERVAL:
        assert spec.every is not None
        lines.append(f"# {_INTERVAL_NOTE.format(every=format_duration(spec.every))}")
    lines += [f"# {_ZONE_NOTE.format(zone=zone)}", f"CRON_TZ={zone}"]
    lines += [f"# not kept: {note.text}" for note in notes]
    lines += [f"# {name} is the task's own variable, set in its command: {_MAIL_NOTE}" for name in task.in_command]
    lines += [*task.env_lines, f"{fields.expression} {task.command}"]
    return CrontabExport(
        "\n".join(comment_text(line) if line.startswith("#") else line for line in lines) + "\n", fields, tuple(notes)
    )
