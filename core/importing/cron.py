"""A user crontab as scheduleSpec.v1 files: one spec per job (two where cron's either-day rule
needs two rules), with the clock-change policies of Debian's cron written out and why.

Debian's cron (``cron.c``) at a clock change, and what each imported spec says for it:

- clocks jump forward: a *fixed-time* job (neither its minute nor its hour field starts with
  ``*``) whose time was skipped runs right after the change: ``gapPolicy: SHIFT_FORWARD``;
  a *wildcard* job follows the new clock, its skipped times do not run: ``SKIP``;
- clocks fall back: a fixed-time job runs at the first reading of a repeated time only
  (``foldPolicy: FIRST_ONLY``); a wildcard job follows the clock through the repeated hour
  again (``BOTH``);
- cron started after it was down runs nothing it missed: ``misfirePolicy: SKIP``;
- cron never stops a job, starts one even while the last run still goes on, and never retries.

Nothing is dropped silently: a line that cannot be imported (``@reboot``, ``MAILTO``, a job that
never runs) is reported with the reason (:class:`Unimported`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from core.enums import FoldPolicy, GapPolicy, MisfirePolicy, OverlapPolicy
from core.errors import UserError, ZoneError
from core.importing.cron_command import DEFAULT_SHELL, CronCommand, task_command
from core.importing.cron_expr import CronExpr, CronRule, cron_rules, parse_fields
from core.importing.crontab_file import REBOOT, Assignment, CrontabError, JobLine, read_crontab
from core.importing.input_text import BLANKS, split_words
from core.importing.spec_comments import commented_yaml
from core.spec.model import ScheduleSpec
from core.spec.validation import parse_spec
from core.time.formats import fmt_local
from core.time.zones import check_zone_name, get_zone

#: Variables that set the zone of the jobs below them (CRON_TZ first where both are set).
ZONE_VARIABLES = ("CRON_TZ", "TZ")
#: Variables that only tell cron where to mail a job's output.
MAIL_VARIABLES = ("MAILTO", "MAILFROM")
#: :attr:`ImportedJob.zone_from` of a job whose zone was given to the import (no ``CRON_TZ``/``TZ`` above it).
ZONE_GIVEN = "from --zone"
#: :attr:`ImportedJob.zone_from` of a job that runs in the machine's zone, no zone being given.
ZONE_MACHINE = "the machine's zone; --zone chooses another"
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_TITLE_WIDTH = 60
_ID_WIDTH = 48

GAP_WHY = {
    GapPolicy.SHIFT_FORWARD: "cron runs a fixed-time job whose time the clocks skip right after they jump",
    GapPolicy.SKIP: "cron runs a wildcard job (minute or hour *) on the new clock; skipped times do not run",
}
FOLD_WHY = {
    FoldPolicy.FIRST_ONLY: "cron runs a fixed-time job once when clocks fall back: at the first reading",
    FoldPolicy.BOTH: "cron runs a wildcard job (minute or hour *) through the repeated hour again",
}
_WHY = {
    "misfirePolicy": "cron runs nothing it missed while it was not running",
    "overlapPolicy": "cron starts a job even while its previous run still goes on",
    "retry": "cron never runs a failed job again",
}
_TIMEOUT_WHY = "cron never stops a job: the timeout is a day (shorten it to what the job needs)"
#: Where a command's words stop being a name for it (what follows is for its shell).
_NAME_ENDS = re.compile(r"[|><;&$`'\"%]")


@dataclass(frozen=True)
class ImportedSpec:
    """One spec written from a job: its file name, the spec, and its text with comments."""

    file_name: str
    spec: ScheduleSpec
    text: str
    part: str | None  # which days it takes when the job needed two rules


@dataclass(frozen=True)
class ImportedJob:
    """A crontab job and what it became."""

    line: int
    source: str
    expr: CronExpr
    specs: tuple[ImportedSpec, ...]
    command: CronCommand
    zone: str
    zone_from: str  # where the zone came from: "CRON_TZ, line 2", or "from --zone"


@dataclass(frozen=True)
class Unimported:
    """A line with something no spec holds, and why."""

    line: int
    source: str
    reason: str


@dataclass
class CrontabImport:
    """What a crontab became: the jobs imported, every line that was not (or not all of it), and
    every line refused as a mistake (``refused``: each message starts with its line)."""

    jobs: list[ImportedJob] = field(default_factory=list)
    unimported: list[Unimported] = field(default_factory=list)
    env_lines: list[Assignment] = field(default_factory=list)
    refused: list[CrontabError] = field(default_factory=list)


def _slug(text: str) -> str:
    words = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    if len(words) > _ID_WIDTH:
        words = words[:_ID_WIDTH].rsplit("-", 1)[0] or words[:_ID_WIDTH]
    return words.strip("-")


def _base_id(command: str, line: int) -> str:
    named = split_words(_NAME_ENDS.split(command, maxsplit=1)[0])
    if named and "/" in named[0]:
        named[0] = named[0].rsplit("/", 1)[1]
    return _slug(" ".join(named)) or f"cron-line-{line}"


def _unique(base: str, taken: set[str], tried: dict[str, int]) -> str:
    """``base``, or ``base-2``, ``base-3``…: the first not in ``taken``. ``tried`` remembers the last
    number tried for each base, so that a thousand jobs running the same command cost a thousand
    steps, not half a million."""
    candidate, n = base, tried.get(base, 2)
    if candidate in taken:
        candidate = f"{base}-{n}"
    while candidate in taken:
        n += 1
        candidate = f"{base}-{n}"
    tried[base] = n
    taken.add(candidate)
    return candidate


def _title(command: str) -> str:
    text = " ".join(split_words(command))
    return text if len(text) <= _TITLE_WIDTH else text[: _TITLE_WIDTH - 1] + "…"


def _zone_of(assignment: Assignment) -> str:
    try:
        return check_zone_name(assignment.value)
    except ZoneError as exc:
        raise CrontabError(f"line {assignment.line}: {assignment.name}={assignment.value}: {exc}") from None


def _policies(expr: CronExpr) -> dict[str, str]:
    gap = GapPolicy.SKIP if expr.wildcard else GapPolicy.SHIFT_FORWARD
    fold = FoldPolicy.BOTH if expr.wildcard else FoldPolicy.FIRST_ONLY
    return {"gapPolicy": gap.value, "foldPolicy": fold.value}


def _document(
    job: JobLine,
    expr: CronExpr,
    rule: CronRule,
    spec_id: str,
    zone: str,
    start: date,
    command: CronCommand,
    env: dict[str, str],
) -> dict[str, Any]:
    title = _title(job.command) + (f" ({rule.part})" if rule.part else "")
    task: dict[str, Any] = {"argv": command.argv}
    if env:
        task["env"] = dict(env)
    task["timeout"] = "P1D"
    return {
        "schema": "scheduleSpec.v1",
        "scheduleId": spec_id,
        "revision": 1,
        "title": title,
        "timeZone": zone,
        "rule": rule.rule,
        "start": fmt_local(datetime.combine(start, datetime.min.time())),
        **_policies(expr),
        "misfirePolicy": MisfirePolicy.SKIP.value,
        "overlapPolicy": OverlapPolicy.ALLOW.value,
        "retry": {"maxAttempts": 1},
        "task": task,
    }


def _task_why(command: CronCommand) -> str:
    if not command.why_shell:
        return _TIMEOUT_WHY
    return (
        f"runs through {command.argv[0]} -c as cron did: the command has {', '.join(command.why_shell)}; {_TIMEOUT_WHY}"
    )


def _why(document: dict[str, Any], job: JobLine, command: CronCommand) -> dict[str, str]:
    why = dict(_WHY)
    why["task"] = _task_why(command)
    why["gapPolicy"] = GAP_WHY[GapPolicy(document["gapPolicy"])]
    why["foldPolicy"] = FOLD_WHY[FoldPolicy(document["foldPolicy"])]
    why["rule"] = f"cron: {' '.join(job.fields) if job.nickname is None else job.nickname}"
    return why


def _spec(document: dict[str, Any], job: JobLine, command: CronCommand, part: str | None) -> ImportedSpec:
    file_name = f"{document['scheduleId']}.yaml"
    header = f"Imported from crontab line {job.line}: {job.text}"
    text = commented_yaml(document, header, _why(document, job, command))
    spec = parse_spec(document, source=file_name)
    return ImportedSpec(file_name, spec, text, part)


class _Reader:
    """The state of a crontab read top to bottom: the zone and variables in force."""

    def __init__(self, zone: str | None, zone_from: str, now: datetime, taken: Iterable[str]) -> None:
        self.zone_given = zone
        self.zone_from = zone_from
        self.zone_line: dict[str, Assignment] = {}
        self.env: dict[str, str] = {}
        self.now = now
        self.taken: set[str] = set(taken)
        self.tried: dict[str, int] = {}
        self.result = CrontabImport()

    def assignment(self, item: Assignment) -> None:
        if item.name in ZONE_VARIABLES:
            self.zone_line[item.name] = item
            _zone_of(item)
            if item.name == "TZ":
                self.env[item.name] = item.value  # cron also hands TZ to the job
            return
        if item.name in MAIL_VARIABLES:
            reason = "cron mails output; Tidemark keeps it with the run (schedctl attempts)"
            self.result.unimported.append(Unimported(item.line, f"{item.name}={item.value}", reason))
            return
        if not _ENV_NAME.match(item.name):
            reason = "not a variable name a task can have; the jobs below run without it"
            self.result.unimported.append(Unimported(item.line, f"{item.name}={item.value}", reason))
            return
        self.env[item.name] = item.value
        self.result.env_lines.append(item)

    def zone(self, job: JobLine) -> tuple[str, str]:
        for name in ZONE_VARIABLES:
            if name in self.zone_line:
                line = self.zone_line[name]
                try:
                    return _zone_of(line), f"{name}, line {line.line}"
                except CrontabError:
                    raise CrontabError(
                        f"line {job.line}: runs in {name}={line.value} of line {line.line}, which is not a zone"
                    ) from None
        if self.zone_given is None:
            raise CrontabError(
                f"line {job.line}: no CRON_TZ= or TZ= line above this job; "
                "give --zone ZONE, the zone the machine's cron ran in (e.g. --zone Europe/Berlin)"
            )
        return self.zone_given, self.zone_from

    def job(self, job: JobLine) -> None:
        if job.nickname == REBOOT:
            reason = "runs at boot; Tidemark schedules by the clock"
            self.result.unimported.append(Unimported(job.line, job.text, reason))
            return
        expr = parse_fields(job.fields, job.line)
        if not job.command.strip(BLANKS):
            raise CrontabError(f"line {job.line}: no command after the five time fields")
        zone, zone_from = self.zone(job)
        start = self.now.astimezone(get_zone(zone)).date()
        rules = cron_rules(expr)
        if not rules:
            reason = "never runs: its day of the month never exists in its months"
            self.result.unimported.append(Unimported(job.line, job.text, reason))
            return
        command = task_command(job.command, self.env.get("SHELL", DEFAULT_SHELL))
        base = _base_id(job.command, job.line)
        specs = []
        for rule in rules:
            suffix = {None: "", "days of the month": "-monthdays", "days of the week": "-weekdays"}[rule.part]
            spec_id = _unique(base[: 64 - len(suffix) - 4] + suffix, self.taken, self.tried)
            document = _document(job, expr, rule, spec_id, zone, start, command, self.env)
            specs.append(_spec(document, job, command, rule.part))
        self.result.jobs.append(ImportedJob(job.line, job.text, expr, tuple(specs), command, zone, zone_from))


def import_crontab(
    text: str, *, zone: str | None, now: datetime, taken: Iterable[str] = (), zone_from: str = ZONE_GIVEN
) -> CrontabImport:
    """Read a crontab and translate every job; ``zone`` serves jobs with no ``CRON_TZ``/``TZ`` above them
    (``zone_from`` says where it came from). The ids (and so the file names) avoid ``taken``: the ids
    already in use where the specs go.

    Each spec starts at the local midnight of ``now``'s date in its zone. A line that cannot be read
    is refused (:attr:`CrontabImport.refused`, its message naming it) and the others are imported;
    a text that is no crontab, or too big a one, raises :class:`CrontabError` and nothing is imported.
    """
    reader = _Reader(check_zone_name(zone) if zone is not None else None, zone_from, now, taken)
    for item in read_crontab(text):
        try:
            if isinstance(item, CrontabError):
                raise item
            if isinstance(item, Assignment):
                reader.assignment(item)
            else:
                _job(reader, item)
        except CrontabError as exc:
            reader.result.refused.append(exc)
    return reader.result


def _job(reader: _Reader, item: JobLine) -> None:
    try:
        reader.job(item)
    except UserError as exc:
        if isinstance(exc, CrontabError):
            raise
        raise CrontabError(f"line {item.line}: {str(exc).splitlines()[0]}") from None
