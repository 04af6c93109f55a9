"""systemd timers as scheduleSpec.v1 files: one spec per timer (more where its triggers need
more), the service's command as the task, and what systemd does at a clock change written out.

What systemd does, and what each imported spec says for it (systemd 252, checked with
``systemd-analyze calendar`` in the tests):

- ``OnCalendar=`` is read on the wall clock: a time the clocks jump over does not exist and is
  not run (``gapPolicy: SKIP``); when the clocks fall back, the next elapse is computed from the
  wall time of the last one, so a repeated time runs at its first reading only
  (``foldPolicy: FIRST_ONLY``), for a fixed time and a repetition (``*:0/15``) alike;
- ``Persistent=true``: a timer that elapsed while the machine was off runs once when it starts
  (``misfirePolicy: CATCH_UP_BOUNDED``, ``maxCatchUp: 1``); otherwise nothing missed runs
  (``SKIP``);
- ``RandomizedDelaySec=`` delays each elapse by a random time up to it (``jitter``);
- starting a service that still runs does nothing (``overlapPolicy: SKIP``); a failed run is not
  run again by the timer (``retry: {maxAttempts: 1}``).

Nothing is dropped silently: each setting no spec holds is reported with the reason.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import date, datetime, timedelta
from typing import Any

from core.enums import FoldPolicy, GapPolicy, Kind, MisfirePolicy, OverlapPolicy
from core.errors import UserError
from core.importing.cron import ImportedSpec
from core.importing.spec_comments import commented_yaml
from core.importing.systemd_calendar import (
    CalendarError,
    CalendarSpec,
    calendar_rule,
    parse_calendar,
)
from core.importing.systemd_exec import ExecCommand, ExecError, described, environment, exec_command, specifiers
from core.importing.systemd_merge import merge_calendars
from core.importing.systemd_unit import Setting, UnitError, parse_span, read_unit, unit_name_problem
from core.spec.validation import parse_spec
from core.time.durations import format_duration
from core.time.formats import fmt_local
from core.time.zones import get_zone

_ID_WIDTH = 56
_TRUE = ("1", "yes", "y", "true", "t", "on")
_FALSE = ("0", "no", "n", "false", "f", "off")
_TIMEOUT = "P1D"
#: ``OnCalendar=`` lines in one timer: a real one has a few; each may become a spec of its own.
MAX_CALENDARS = 100
#: Triggers that count from something other than the clock, and why no spec holds them.
_NOT_CLOCK = {
    "OnBootSec": "counts from boot; Tidemark schedules by the clock",
    "OnStartupSec": "counts from the service manager's start; Tidemark schedules by the clock",
    "OnActiveSec": "counts from the timer's own start; Tidemark schedules by the clock",
    "OnClockChange": "runs when the clock is set; Tidemark schedules by the clock",
    "OnTimezoneChange": "runs when the zone is changed; Tidemark schedules by the clock",
}
_TIMER_NOTES = {
    "AccuracySec": "systemd may run up to this late to group wake-ups; Tidemark runs on time "
    "(a run later than latenessWindow is a misfire)",
    "WakeSystem": "systemd can wake a suspended machine; the engine cannot",
    "RemainAfterElapse": "how systemd shows an elapsed timer; no spec keeps it",
    "FixedRandomDelay": "systemd keeps one delay per machine; Tidemark's jitter is fixed per occurrence",
}
_SERVICE_KEYS_SAID = {"ExecStart", "Environment", "WorkingDirectory", "Type", "Description", "TimeoutStartSec"}
GAP_WHY = "systemd reads OnCalendar= on the wall clock: a time the clocks jump over is not run"
FOLD_WHY = "systemd computes the next elapse from the wall time of the last: a repeated time runs once"
_WHY = {
    "overlapPolicy": "systemd does nothing when the timer starts a service that still runs",
    "retry": "a timer never runs a failed service again",
}


class TimerError(UserError):
    """A timer (or its service) that cannot be read; the message names the file and line."""


@dataclass(frozen=True)
class Note:
    """A setting of a unit file and what the import did with it (``reason``: not imported)."""

    file: str
    line: int
    text: str
    said: str
    imported: bool
    timer: str = ""  # the timer it was read for


@dataclass(frozen=True)
class TimerSpec:
    """One spec written from a timer, the expression it came from (None: an elapsed-time
    trigger), and where its zone came from."""

    imported: ImportedSpec
    calendar: CalendarSpec | None
    zone_from: str


@dataclass(frozen=True)
class ImportedTimer:
    """A timer and what it became."""

    file: str
    service: str
    specs: tuple[TimerSpec, ...]
    command: ExecCommand


@dataclass
class SystemdImport:
    """What the timers became, and every setting that needed a word."""

    files: list[str] = field(default_factory=list)  # the timers, in the order given
    timers: list[ImportedTimer] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)

    @property
    def unimported(self) -> list[Note]:
        return [note for note in self.notes if not note.imported]


def _boolean(setting: Setting, file: str) -> bool:
    value = setting.value.lower()
    if value in _TRUE or value in _FALSE:
        return value in _TRUE
    raise TimerError(f"{file}: line {setting.line}: {setting.key}={setting.value} is not yes or no")


def _span(setting: Setting, file: str) -> timedelta:
    try:
        return parse_span(setting.value)
    except ValueError as exc:
        raise TimerError(f"{file}: line {setting.line}: {setting.key}=: {exc}") from None


def _slug(text: str) -> str:
    words = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return words[:_ID_WIDTH].strip("-") or "timer"


@dataclass(frozen=True)
class _Service:
    """What a timer's service runs (``command`` None: nothing a task can run, ``why_not`` says why)."""

    name: str
    command: ExecCommand | None
    env: dict[str, str]
    cwd: str | None
    timeout: str | None
    why_not: str | None


@dataclass
class _Timer:
    """What a timer file says, setting by setting."""

    file: str
    calendars: list[tuple[Setting, CalendarSpec]] = field(default_factory=list)
    persistent: Setting | None = None
    jitter: Setting | None = None
    active: Setting | None = None
    inactive: Setting | None = None
    unit: str | None = None
    description: str | None = None
    first_timer_line: int = 1
    calendar_lines: int = 0
    #: The setting each expression (its source) was first written in.
    settings_by_source: dict[str, Setting] = field(default_factory=dict)

    def setting_of(self, calendar: CalendarSpec) -> Setting:
        """The setting a (perhaps joined) expression starts with: joined ones are
        ``first; OnCalendar=second``."""
        first = calendar.source.split("; OnCalendar=", 1)[0]
        return self.settings_by_source.get(first, self.calendars[0][0])


class _Importer:
    def __init__(
        self, zone: str | None, now: datetime, service_text: Callable[[str, str], str | None], zone_from: str
    ) -> None:
        self.zone_given = zone
        self.zone_from = zone_from
        self.now = now
        self.service_text = service_text
        self.taken: set[str] = set()
        self.result = SystemdImport()

    def note(self, file: str, setting: Setting, said: str, *, imported: bool = True) -> None:
        self.add(Note(file, setting.line, setting.text, said, imported))

    def add(self, note: Note) -> None:
        self.result.notes.append(replace(note, timer=self.result.files[-1]))

    def read_timer(self, file: str, text: str) -> _Timer:
        try:
            settings = read_unit(text)
        except UnitError as exc:
            raise TimerError(f"{file}: {exc}") from None
        timer = _Timer(file)
        said_before = len(self.result.notes)
        timer_lines = [s.line for s in settings if s.section == "Timer"]
        timer.first_timer_line = timer_lines[0] if timer_lines else 1
        for setting in settings:
            self.timer_setting(timer, setting)
        if not (timer.calendars or timer.active or timer.inactive) and not any(
            n.file == file and not n.imported and n.text.split("=")[0] in _NOT_CLOCK
            for n in self.result.notes[said_before:]
        ):
            raise TimerError(
                f"{file}: line {timer.first_timer_line}: no OnCalendar= (nor OnUnitActiveSec=, OnUnitInactiveSec=); "
                "this timer never runs by the clock"
            )
        return timer

    def timer_setting(self, timer: _Timer, setting: Setting) -> None:
        file, key = timer.file, setting.key
        if setting.section == "Unit" and key == "Description":
            timer.description = described(setting.value)
            return
        if setting.section == "Install":
            self.note(file, setting, "how systemd enables the timer; publishing the spec does that", imported=False)
            return
        if setting.section != "Timer":
            self.note(file, setting, f"[{setting.section}] is not read for a timer", imported=False)
            return
        if key == "OnCalendar":
            timer.calendar_lines += 1
            if timer.calendar_lines > MAX_CALENDARS:
                raise TimerError(
                    f"{file}: line {setting.line}: more than {MAX_CALENDARS} OnCalendar= lines; "
                    f"a timer holds at most {MAX_CALENDARS}"
                )
            if not setting.value:
                for dropped, _ in timer.calendars:  # an empty assignment resets the list, as systemd does
                    self.note(file, dropped, f"the empty OnCalendar= on line {setting.line} resets it", imported=False)
                timer.calendars.clear()
                timer.settings_by_source.clear()
                return
            try:
                calendar = parse_calendar(setting.value)
            except CalendarError as exc:
                raise TimerError(f"{file}: line {setting.line}: OnCalendar={setting.value}: {exc}") from None
            timer.calendars.append((setting, calendar))
            timer.settings_by_source.setdefault(calendar.source, setting)
        elif key == "Persistent":
            _boolean(setting, file)
            timer.persistent = setting
        elif key == "RandomizedDelaySec":
            _span(setting, file)
            timer.jitter = setting
        elif key in ("OnUnitActiveSec", "OnUnitInactiveSec"):
            if _span(setting, file) <= timedelta(0):
                raise TimerError(f"{file}: line {setting.line}: {setting.text}: must be longer than zero")
            setattr(timer, "active" if key == "OnUnitActiveSec" else "inactive", setting)
        elif key == "Unit":
            problem = unit_name_problem(setting.value)
            if problem is not None:  # never a path: the name is looked up beside the timer
                raise TimerError(f"{file}: line {setting.line}: Unit=: {problem}")
            timer.unit = setting.value
        elif key in _NOT_CLOCK:
            self.note(file, setting, _NOT_CLOCK[key], imported=False)
        elif key in _TIMER_NOTES:
            self.note(file, setting, _TIMER_NOTES[key], imported=False)
        else:
            self.note(file, setting, "not a timer setting Tidemark knows", imported=False)

    def read_service(self, timer: _Timer) -> _Service:
        stem = timer.file.rsplit("/", 1)[-1].removesuffix(".timer")
        name = timer.unit or f"{stem}.service"
        text = self.service_text(timer.file, name)
        if text is None:
            raise TimerError(f"{timer.file}: no {name} beside it; give the service file too (it holds the command)")
        try:
            settings = read_unit(text)
        except UnitError as exc:
            raise TimerError(f"{name}: {exc}") from None
        env: dict[str, str] = {}
        starts: list[Setting] = []
        cwd: str | None = None
        timeout: str | None = None
        for setting in settings:
            key = setting.key
            if setting.section == "Unit" and key == "Description":
                timer.description = timer.description or described(setting.value)
            elif setting.section != "Service":
                self.note(name, setting, f"[{setting.section}] is not read for a timer's service", imported=False)
            elif key == "ExecStart":
                if not setting.value:  # an empty assignment resets the list, as systemd does
                    for dropped in starts:
                        self.note(
                            name, dropped, f"the empty ExecStart= on line {setting.line} resets it", imported=False
                        )
                starts = [] if not setting.value else [*starts, setting]
            elif key == "Environment":
                try:
                    found = environment(setting.value)
                except ExecError as exc:
                    raise TimerError(f"{name}: line {setting.line}: {exc}") from None
                env.update(found)
                self.note(name, setting, f"in the task env: {', '.join(found)}")
            elif key == "WorkingDirectory":
                if setting.value.startswith("/"):
                    try:
                        cwd = specifiers(setting.value)
                    except ExecError as exc:
                        raise TimerError(f"{name}: line {setting.line}: WorkingDirectory= {exc}") from None
                    self.note(name, setting, "the task's cwd")
                else:
                    self.note(name, setting, "not an absolute folder; the task runs in the engine's", imported=False)
            elif key == "TimeoutStartSec" and setting.value not in ("infinity", "0"):
                timeout = format_duration(_span(setting, name))
                self.note(name, setting, "the task's timeout")
            elif key == "Type":
                if setting.value not in ("oneshot", "simple", "exec"):
                    self.note(name, setting, "the task is done when its command exits", imported=False)
            elif key not in _SERVICE_KEYS_SAID:
                self.note(name, setting, "no task setting holds it", imported=False)
        if not starts:
            raise TimerError(f"{name}: no ExecStart=; the service runs nothing")
        if len(starts) > 1:
            why_not = f"{len(starts)} ExecStart= lines (run in turn); a task runs one command: put them in a script"
            return _Service(name, None, env, cwd, timeout, why_not)
        try:
            command = exec_command(starts[0].value, env)
        except ExecError as exc:
            return _Service(name, None, env, cwd, timeout, f"line {starts[0].line}: {exc}")
        self.note(name, starts[0], "argv: " + " ".join(command.argv))
        for said in command.notes:
            self.note(name, starts[0], said, imported=False)
        return _Service(name, command, env, cwd, timeout, None)

    def zone(self, timer: _Timer, calendar: CalendarSpec | None) -> tuple[str, str]:
        if calendar is not None and calendar.zone is not None:
            return calendar.zone, "from OnCalendar="
        if self.zone_given is not None:
            return self.zone_given, self.zone_from
        if calendar is None:
            return "UTC", "elapsed time: its zone changes nothing"
        setting = next(s for s, c in timer.calendars if c.zone is None)
        raise TimerError(
            f"{timer.file}: line {setting.line}: OnCalendar={setting.value} names no zone; give --zone ZONE, "
            "the zone of the machine the timer ran on (e.g. --zone Europe/Berlin)"
        )

    def timer(self, file: str, text: str) -> None:
        self.result.files.append(file)
        timer = self.read_timer(file, text)
        service = self.read_service(timer)
        command = service.command
        calendars = merge_calendars([c for _, c in timer.calendars])
        zones = [self.zone(timer, c) for c in calendars]
        if command is None:
            first = timer.calendars[0][0] if timer.calendars else None
            line = first.line if first else timer.first_timer_line
            self.add(Note(file, line, f"runs {service.name}", f"{service.name}: {service.why_not}", False))
            return
        stem = file.rsplit("/", 1)[-1].removesuffix(".timer")
        task: dict[str, Any] = {"argv": command.argv}
        if service.cwd is not None:
            task["cwd"] = service.cwd
        if service.env:
            task["env"] = service.env
        task["timeout"] = service.timeout or _TIMEOUT
        title = timer.description or stem
        made: list[TimerSpec] = []
        for index, (calendar, (zone, zone_from)) in enumerate(zip(calendars, zones, strict=True)):
            document = self.calendar_document(timer, calendar, zone, title, task, index, len(calendars))
            if document is not None:
                why = self.why(timer, calendar, task=task)
                made.append(TimerSpec(self.spec(document, file, why), calendar, zone_from))
        for setting, kind in ((timer.active, Kind.INTERVAL), (timer.inactive, Kind.AFTER_COMPLETION)):
            if setting is not None:
                zone, zone_from = zones[0] if zones else self.zone(timer, None)
                document = self.elapsed_document(timer, setting, kind, zone, title, task)
                why = self.why(timer, None, setting, task=task)
                made.append(TimerSpec(self.spec(document, file, why), None, zone_from))
        for setting in (timer.persistent, timer.jitter):
            if setting is not None:
                self.note(file, setting, self.policy_said(setting))
        if made:
            self.result.timers.append(ImportedTimer(file, service.name, tuple(made), command))

    def policy_said(self, setting: Setting) -> str:
        if setting.key == "Persistent":
            if setting.value.lower() in _TRUE:
                return "misfirePolicy CATCH_UP_BOUNDED, maxCatchUp 1: a run missed while the machine was off runs once"
            return "misfirePolicy SKIP: nothing missed runs"
        return f"jitter {format_duration(_span(setting, ''))}"

    def spec_id(self, timer: _Timer, suffix: str) -> str:
        stem = timer.file.rsplit("/", 1)[-1].removesuffix(".timer")
        base = _slug(stem)[: 64 - len(suffix) - 4] + suffix
        candidate, n = base, 2
        while candidate in self.taken:
            candidate = f"{base}-{n}"
            n += 1
        self.taken.add(candidate)
        return candidate

    def common(self, timer: _Timer) -> dict[str, Any]:
        persistent = timer.persistent is not None and timer.persistent.value.lower() in _TRUE
        policies: dict[str, Any] = {}
        if persistent:
            policies["misfirePolicy"] = MisfirePolicy.CATCH_UP_BOUNDED.value
            policies["maxCatchUp"] = 1
        else:
            policies["misfirePolicy"] = MisfirePolicy.SKIP.value
        if timer.jitter is not None:
            jitter = _span(timer.jitter, timer.file)
            if jitter > timedelta(0):
                policies["jitter"] = format_duration(jitter)
        policies["overlapPolicy"] = OverlapPolicy.SKIP.value
        policies["retry"] = {"maxAttempts": 1}
        return policies

    def calendar_document(
        self,
        timer: _Timer,
        calendar: CalendarSpec,
        zone: str,
        title: str,
        task: dict[str, Any],
        index: int,
        count: int,
    ) -> dict[str, Any] | None:
        try:
            rule = calendar_rule(calendar)
        except CalendarError as exc:
            setting = timer.setting_of(calendar)
            self.add(Note(timer.file, setting.line, setting.text, str(exc), False))
            return None
        today = self.now.astimezone(get_zone(zone)).date()
        start = today
        if rule.first_year is not None and rule.first_year > today.year:
            start = date(rule.first_year, 1, 1)
        document: dict[str, Any] = {
            "schema": "scheduleSpec.v1",
            "scheduleId": self.spec_id(timer, "" if count == 1 else f"-{index + 1}"),
            "revision": 1,
            "title": title if count == 1 else f"{title} ({calendar.normalized})",
            "timeZone": zone,
            "rule": rule.rule,
            "start": fmt_local(datetime.combine(start, datetime.min.time())),
        }
        if rule.last_year is not None:
            if rule.last_year < today.year:
                setting = timer.setting_of(calendar)
                reason = f"its last year, {rule.last_year}, is past: it never runs again"
                self.add(Note(timer.file, setting.line, setting.text, reason, False))
                return None
            document["end"] = f"{rule.last_year}-12-31T23:59:59"
        document["gapPolicy"] = GapPolicy.SKIP.value
        document["foldPolicy"] = FoldPolicy.FIRST_ONLY.value
        return {**document, **self.common(timer), "task": task}

    def elapsed_document(
        self, timer: _Timer, setting: Setting, kind: Kind, zone: str, title: str, task: dict[str, Any]
    ) -> dict[str, Any]:
        span = _span(setting, timer.file)
        length = format_duration(span)
        document: dict[str, Any] = {
            "schema": "scheduleSpec.v1",
            "scheduleId": self.spec_id(timer, "-interval" if kind is Kind.INTERVAL else "-after-completion"),
            "revision": 1,
            "title": title,
            "timeZone": zone,
            "kind": kind.value,
        }
        if kind is Kind.INTERVAL:
            document["every"] = length
            document["anchor"] = self.now.strftime("%Y-%m-%dT%H:%M:%SZ")
            said = "interval: every run due a span after the import instant (systemd: after the last start)"
        else:
            document["delay"] = length
            document["start"] = fmt_local(self.now.astimezone(get_zone(zone)).replace(tzinfo=None, microsecond=0))
            said = "after_completion: the next run is due this long after the last one ends"
        self.note(timer.file, setting, said)
        return {**document, **self.common(timer), "task": task}

    def why(
        self,
        timer: _Timer,
        calendar: CalendarSpec | None,
        elapsed: Setting | None = None,
        *,
        task: dict[str, Any],
    ) -> dict[str, str]:
        why = dict(_WHY)
        persistent = timer.persistent
        if persistent is not None and persistent.value.lower() in _TRUE:
            why["misfirePolicy"] = f"{persistent.text}: a run missed while the machine was off runs once when it starts"
        else:
            why["misfirePolicy"] = "Persistent= is not set: systemd runs nothing missed while the machine was off"
        if timer.jitter is not None:
            why["jitter"] = f"{timer.jitter.text}: systemd delays each run by a random time up to it"
        if task["timeout"] == _TIMEOUT:
            why["task"] = (
                "systemd never stops a oneshot service: the timeout is a day (shorten it to what the job needs)"
            )
        else:
            why["task"] = "the timeout is the service's TimeoutStartSec="
        if calendar is not None:
            why["rule"] = f"OnCalendar={calendar.source} (systemd: {calendar.normalized})"
            why["gapPolicy"] = GAP_WHY
            why["foldPolicy"] = FOLD_WHY
        if elapsed is not None:
            why["kind"] = f"{elapsed.text}: " + (
                "systemd counts from the service's last start; the spec from its anchor"
                if elapsed.key == "OnUnitActiveSec"
                else "systemd counts from the moment the service last stopped"
            )
        return why

    def spec(self, document: dict[str, Any], file: str, why: dict[str, str]) -> ImportedSpec:
        file_name = f"{document['scheduleId']}.yaml"
        text = commented_yaml(document, f"Imported from {file}", why)
        return ImportedSpec(file_name, parse_spec(document, source=file_name), text, None)


def import_timers(
    timers: list[tuple[str, str]],
    *,
    zone: str | None,
    now: datetime,
    service_text: Callable[[str, str], str | None],
    zone_from: str = "from --zone",
) -> SystemdImport:
    """Read each ``(file name, text)`` timer with its service (``service_text(timer file, service
    name)``, None when there is none) and translate it; ``zone`` serves expressions naming none
    (``zone_from`` says where it came from). Raises :class:`TimerError` naming the file and line for a
    timer that cannot be read; nothing is imported then."""
    importer = _Importer(zone, now, service_text, zone_from)
    for file, text in timers:
        importer.timer(file, text)
    return importer.result
