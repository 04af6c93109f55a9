"""Publishing revisions and gating schedules.

:func:`publish` applies a validated spec as the schedule's next revision: the
canonical text (every default explicit, cutoverAt and tzdbVersion filled in)
is stored with the file it came from (:class:`RevisionSource`, when known), the
older revisions' not-yet-started occurrences at positions on or after the
cutover are cancelled (releasing their slots), and the materialization cursor
goes back to the cutover. :func:`pause`,
:func:`resume` and :func:`disable` move the schedule's gate with a note.

Each bumps the schedule's ``gate_version`` so that a claim racing with it
loses its compare-and-set, and writes its events in the same transaction.
The caller owns the session and commits (``with ledger.write() as session``).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from pathlib import Path

from sqlalchemy import func, select, text, update
from sqlalchemy.orm import Session

from core.calendar import holiday_codes
from core.clock import Clock
from core.enums import TzdbPolicy
from core.errors import LedgerError, PublishError, UnknownScheduleError, UserError, ZoneError, first_line
from core.ledger import events
from core.ledger.access import writing
from core.ledger.db import Ledger, NoActorError, lock_for_write, session_actor
from core.ledger.models import Occurrence, Revision, Schedule
from core.ledger.period_carry import carry_periods
from core.ledger.states import OccurrenceKind, OccurrenceState, ScheduleState
from core.os_text import string_problem
from core.spec.canonical import canonical_dict
from core.spec.model import ScheduleSpec, Task
from core.team.actor import Actor, current_actor
from core.time.formats import parse_instant
from core.time.zones import pinned_zone, tzdb_version, zone_tzif
from core.version import tidemark_version


@dataclass(frozen=True)
class PublishResult:
    """What a publish did."""

    schedule_id: str
    revision: int
    cutover_at: datetime
    tzdb_version: str
    #: Occurrences of older revisions cancelled at positions >= cutover_at.
    cancelled: tuple[str, ...]
    #: True when this was the schedule's first revision.
    created: bool


@dataclass(frozen=True)
class RevisionSource:
    """The spec file a revision was published from: its absolute path and the host it is on.

    Recorded with the revision so that a file is never mistaken for another
    file that carries the same schedule id (the app's sidebar and its publish
    confirmation read it back).
    """

    path: str
    host: str

    @classmethod
    def of_file(cls, path: str | os.PathLike[str]) -> RevisionSource | None:
        """``path`` made absolute (links resolved), on this host; None for a path whose name is not
        UTF-8 text, which the ledger cannot hold (the revision is published without its source)."""
        absolute = str(Path(path).expanduser().resolve())
        if string_problem(absolute):
            return None
        return cls(absolute, this_host())


def this_host() -> str:
    """This machine's name, as revisions record it."""
    return socket.gethostname()


@dataclass(frozen=True)
class GateChange:
    """What a pause, resume or disable did."""

    schedule_id: str
    old: ScheduleState
    new: ScheduleState

    @property
    def changed(self) -> bool:
        """False when the schedule already was in the asked-for state (nothing written)."""
        return self.old is not self.new


def get_schedule(session: Session, schedule_id: str, *, for_update: bool = False) -> Schedule:
    """The schedule row, or :class:`UnknownScheduleError`."""
    # Locking also rereads it: a row another engine changed since it was loaded must not look current.
    schedule = session.get(Schedule, schedule_id, with_for_update=for_update or None, populate_existing=for_update)
    if schedule is None:
        raise UnknownScheduleError(f"{schedule_id}: no such schedule in this ledger; publish it with schedctl apply")
    return schedule


def _program_problem(program: str, cwd: str | None) -> str | None:
    """Why ``program`` could not be started as argv[0], or None when it can."""
    if os.sep in program or (os.altsep and os.altsep in program):
        path = Path(program).expanduser()
        if not path.is_absolute():
            if cwd is None:
                return f"{program!r} is a relative path; give an absolute path, or a program name found on PATH"
            path = Path(cwd) / path
        if not path.exists():
            return f"{str(path)!r} does not exist"
        if not path.is_file():
            return f"{str(path)!r} is not a file"
        if not os.access(path, os.X_OK):
            return f"{str(path)!r} is not executable (chmod +x it)"
        return None
    if shutil.which(program) is None:
        return f"{program!r} is not found on PATH ({os.environ.get('PATH', '')})"
    return None


def check_programs(task: Task) -> list[str]:
    """Problems with the task's programs (``argv[0]`` and ``verify[0]``) and ``cwd``, each naming its key."""
    problems = []
    try:
        if task.cwd is not None and not Path(task.cwd).expanduser().is_dir():
            problems.append(f"task.cwd: {task.cwd!r} is not a directory")
    except OSError as exc:  # a directory above it that may not be read, a loop of links
        problems.append(f"task.cwd: {task.cwd!r} cannot be examined ({exc.strerror})")
    for key, argv in (("task.argv[0]", task.argv), ("task.verify[0]", task.verify)):
        if argv:
            try:
                problem = _program_problem(argv[0], task.cwd)
            except OSError as exc:
                problem = f"{argv[0]!r} cannot be examined ({exc.strerror})"
            if problem:
                problems.append(f"{key}: {problem}")
    return problems


def publish(
    session: Session,
    spec: ScheduleSpec,
    clock: Clock,
    *,
    check_task: bool = True,
    source: RevisionSource | None = None,
    actor: Actor | None = None,
) -> PublishResult:
    """Apply ``spec`` (already validated) as a new revision of its schedule.

    ``source`` is the file it was published from (None: not known, e.g. standard input).
    ``actor`` is who publishes (default: this process's user and host); the revision
    records it as its publisher, with the database role on PostgreSQL: engines run
    a revision only where its ``runsOn`` (default: the publisher's host) matches and
    when they trust its publisher (:mod:`core.team.placement`).

    Refuses (:class:`PublishError`, nothing written) a spec without ``task``, a
    program that is not there (unless ``check_task`` is false), and a revision
    number that is not higher than every published one. Revision r governs
    positions in [cutoverAt(r), cutoverAt of the next revision).
    """
    sid, number = spec.schedule_id, spec.revision
    where = f"{sid} revision {number}"
    refuse_task(spec, check_task=check_task)
    lock_for_write(session)
    now = clock.now()
    canonical = canonical_dict(spec, cutover_at=now)
    cutover = parse_instant(canonical["cutoverAt"])
    tzdb = str(canonical["tzdbVersion"])
    tzif = _pinned_rules(spec, tzdb, where)
    schedule = session.get(Schedule, sid, with_for_update=True)
    refuse_number(spec, session.scalar(select(func.max(Revision.revision)).where(Revision.schedule_id == sid)))
    created = schedule is None
    if schedule is None:
        schedule = Schedule(
            id=sid,
            state=ScheduleState.ACTIVE,
            active_revision=number,
            gate_version=0,
            disable_generation=0,
            cursor_utc=cutover,
            created_at=now,
            updated_at=now,
        )
        session.add(schedule)
    else:
        schedule.active_revision = number
        schedule.gate_version += 1
        # The new revision materializes from its cutover; an older one still
        # owns whatever lies between a lagging cursor and the cutover.
        if schedule.cursor_utc is None or schedule.cursor_utc > cutover:
            schedule.cursor_utc = cutover
        schedule.materialize_at = None  # materialized at the next pass, to the new revision's horizon
        schedule.updated_at = now
    session.flush()
    spec_json = json.dumps(canonical, sort_keys=False)
    session.add(
        Revision(
            schedule_id=sid,
            revision=number,
            spec_json=spec_json,
            cutover_at=cutover,
            tzdb_version=tzdb,
            tzif=tzif,
            engine_version=tidemark_version(),
            holidays_version=holiday_codes.holidays_version() if spec.business_calendar is not None else None,
            published_at=now,
            source_path=source.path if source is not None else None,
            source_host=source.host if source is not None else None,
            **_publisher(session, actor or _session_or_process_actor(session)),
        )
    )
    session.flush()
    # A new schedule has no earlier revision whose occurrences it would supersede.
    cancelled = [] if created else _cancel_superseded(session, sid, number, cutover, now)
    carry_periods(session, sid, number, spec_json, cutover, cancelled, tzdb, now)
    events.append(
        session,
        events.SchedulePublished(
            at=now, schedule_id=sid, revision=number, cutover_at=cutover, tzdb_version=tzdb, cancelled=len(cancelled)
        ),
    )
    return PublishResult(sid, number, cutover, tzdb, tuple(cancelled), created)


def refuse_task(spec: ScheduleSpec, *, check_task: bool = True) -> None:
    """:class:`PublishError` for a spec without ``task``, or (``check_task``) whose programs
    or ``cwd`` are not here."""
    where = f"{spec.schedule_id} revision {spec.revision}"
    if spec.task is None:
        raise PublishError(f"{where}: task: required to publish to a ledger (validate and preview work without it)")
    if check_task:
        problems = check_programs(spec.task)
        if problems:
            raise PublishError("\n".join(f"{where}: {p}" for p in problems))


def refuse_number(spec: ScheduleSpec, latest: int | None) -> None:
    """:class:`PublishError` when the spec's revision is not above ``latest``, the highest published."""
    number = spec.revision
    if latest is not None and number <= latest:
        why = "is already published" if number == latest else f"is older than the published revision {latest}"
        raise PublishError(
            f"{spec.schedule_id} revision {number}: revision {number} {why}; publish revision {latest + 1} or higher"
        )


def refuse_pin(spec: ScheduleSpec) -> None:
    """:class:`PublishError` for a PIN spec whose rules cannot be kept (see :func:`_pinned_rules`)."""
    _pinned_rules(spec, spec.tzdb_version or tzdb_version(), f"{spec.schedule_id} revision {spec.revision}")


def _pinned_rules(spec: ScheduleSpec, tzdb: str, where: str) -> bytes | None:
    """Under ``tzdbPolicy: PIN``, the zone's TZif bytes from the installed tzdata (the rules the
    revision keeps); None under FOLLOW. A PIN spec naming another tzdbVersion than the installed
    one is refused: those rules are not here to pin."""
    if spec.tzdb_policy is not TzdbPolicy.PIN:
        return None
    installed = tzdb_version()
    if tzdb != installed:
        raise PublishError(
            f"{where}: tzdbPolicy: PIN keeps the installed tz database's rules ({installed}), "
            f"but tzdbVersion says {tzdb}; leave tzdbVersion out, or publish where tzdata {tzdb} is installed"
        )
    tzif = zone_tzif(spec.time_zone)
    try:
        pinned_zone(spec.time_zone, tzif)  # every reader checks the stored bytes the same way
    except ZoneError as exc:
        raise PublishError(f"{where}: tzdbPolicy: PIN cannot keep the installed tzdata's rules: {exc}") from None
    return tzif


def _session_or_process_actor(session: Session) -> Actor:
    """Who publishes: the write transaction's actor (:meth:`Ledger.write`), else this process."""
    try:
        return session_actor(session)
    except NoActorError:
        return current_actor()


def _publisher(session: Session, actor: Actor) -> dict[str, str | None]:
    """The revision's publisher columns: the actor (what this client says), and the role the
    session logged in as. On PostgreSQL the database sets ``publisher_role`` itself, whatever is
    sent (migration 0011's trigger); sending the same value keeps the model's row true."""
    role = session.scalar(text("SELECT session_user")) if session.get_bind().dialect.name == "postgresql" else None
    return {"publisher_user": actor.user, "publisher_host": actor.host, "publisher_role": role}


def _cancel_superseded(session: Session, sid: str, number: int, cutover: datetime, now: datetime) -> list[str]:
    """Cancel older revisions' not-started occurrences at positions >= cutover (invariant 8).

    CANCELLED leaves the live-slot index, so the new revision's occurrence on
    the same instant can take the slot. One UPDATE per old state, so that each
    event can say where the occurrence came from.
    """
    reason = f"superseded by revision {number}"
    cancelled: list[str] = []
    new_events: list[events.NewEvent] = []
    for old in (OccurrenceState.PLANNED, OccurrenceState.DUE):
        stmt = (
            update(Occurrence)
            .where(
                Occurrence.schedule_id == sid,
                Occurrence.revision < number,
                Occurrence.kind == OccurrenceKind.SCHEDULED,
                Occurrence.state == old,
                Occurrence.position_utc >= cutover,
            )
            .values(state=OccurrenceState.CANCELLED, reason=reason, finished_at=now, updated_at=now)
            .returning(Occurrence.occurrence_id)
            .execution_options(synchronize_session="fetch")
        )
        ids = list(session.scalars(stmt))
        cancelled.extend(ids)
        new_events.extend(
            events.OccurrenceTransitioned(
                at=now,
                schedule_id=sid,
                occurrence_id=occ,
                from_=old,
                to=OccurrenceState.CANCELLED,
                reason=reason,
                revision=number,
            )
            for occ in ids
        )
    events.append_many(session, new_events)
    return sorted(cancelled)


_GATES: dict[ScheduleState, frozenset[ScheduleState]] = {
    # target: the states it may come from
    ScheduleState.PAUSED: frozenset({ScheduleState.ACTIVE}),
    ScheduleState.ACTIVE: frozenset({ScheduleState.PAUSED, ScheduleState.DISABLED}),
    ScheduleState.DISABLED: frozenset({ScheduleState.ACTIVE, ScheduleState.PAUSED}),
}


def _set_gate(session: Session, schedule_id: str, clock: Clock, target: ScheduleState, note: str | None) -> GateChange:
    lock_for_write(session)
    schedule = get_schedule(session, schedule_id, for_update=True)
    old = schedule.state
    if old is target:
        return GateChange(schedule_id, old, old)  # already there: nothing changes, nothing to record
    if old not in _GATES[target]:
        raise LedgerError(f"{schedule_id}: the schedule is {old.value}; resume it before pausing it")
    now = clock.now()
    schedule.state = target
    schedule.gate_version += 1
    if target is ScheduleState.DISABLED:
        schedule.disable_generation += 1
    schedule.note = note
    schedule.updated_at = now
    version = schedule.gate_version
    event: events.NewEvent
    if target is ScheduleState.DISABLED:
        generation = schedule.disable_generation
        event = events.ScheduleDisabled(
            at=now, schedule_id=schedule_id, from_=old, note=note, gate_version=version, disable_generation=generation
        )
    else:
        gate = events.SchedulePaused if target is ScheduleState.PAUSED else events.ScheduleResumed
        event = gate(at=now, schedule_id=schedule_id, from_=old, note=note, gate_version=version)
    events.append(session, event)
    return GateChange(schedule_id, old, target)


def pause(session: Session, schedule_id: str, clock: Clock, note: str | None = None) -> GateChange:
    """Stop dispatching (materialization goes on, so a resume sees what was missed)."""
    return _set_gate(session, schedule_id, clock, ScheduleState.PAUSED, note)


def resume(session: Session, schedule_id: str, clock: Clock, note: str | None = None) -> GateChange:
    """Make a paused or disabled schedule active again."""
    return _set_gate(session, schedule_id, clock, ScheduleState.ACTIVE, note)


def disable(session: Session, schedule_id: str, clock: Clock, note: str | None = None) -> GateChange:
    """Stop materializing and dispatching; bumps the disable generation so racing claims lose.

    Occurrences already claimed are not touched: they finish or get reconciled.
    """
    return _set_gate(session, schedule_id, clock, ScheduleState.DISABLED, note)


# --- one call, one transaction: for a front end that holds a Ledger, not a session ---------------


class Gate(StrEnum):
    """A move of a schedule's gate, as a person asks for it."""

    PAUSE = "pause"
    """Stop dispatching (:func:`pause`)."""
    RESUME = "resume"
    """Make it active again (:func:`resume`)."""
    DISABLE = "disable"
    """Stop materializing and dispatching (:func:`disable`)."""


_GATE_TARGETS = {
    Gate.PAUSE: ScheduleState.PAUSED,
    Gate.RESUME: ScheduleState.ACTIVE,
    Gate.DISABLE: ScheduleState.DISABLED,
}


def publish_to(
    ledger: Ledger,
    spec: ScheduleSpec,
    clock: Clock,
    *,
    check_task: bool = True,
    source: RevisionSource | None = None,
    actor: Actor | None = None,
) -> PublishResult:
    """:func:`publish` in a write transaction of its own (``actor``'s: :meth:`Ledger.write`):
    the revision and its events are written whole, or nothing."""
    with writing(ledger, actor) as session:
        return publish(session, spec, clock, check_task=check_task, source=source)


def change_gate(
    ledger: Ledger, schedule_id: str, gate: Gate, clock: Clock, note: str | None = None, actor: Actor | None = None
) -> GateChange:
    """:func:`pause`, :func:`resume` or :func:`disable` in a write transaction of its own (``actor``'s)."""
    with writing(ledger, actor) as session:
        return _set_gate(session, schedule_id, clock, _GATE_TARGETS[Gate(gate)], note)


@dataclass(frozen=True)
class Seeded:
    """What :func:`publish_new` did: the ids it published, and each spec it left out with why."""

    published: list[str]
    skipped: list[str]
    #: True when ``only_into_empty`` found schedules already there (nothing was published).
    had_schedules: bool = False


def publish_new(
    ledger: Ledger,
    specs: Sequence[tuple[ScheduleSpec, RevisionSource | None]],
    clock: Clock,
    *,
    check_task: bool = True,
    only_into_empty: bool = False,
    actor: Actor | None = None,
) -> Seeded:
    """Publish each spec whose schedule id the ledger does not hold yet, in one write transaction.

    With ``only_into_empty``, nothing is published into a ledger that holds any
    schedule, so a second call (or a second window) publishes nothing. A spec the
    ledger refuses (:class:`~core.errors.UserError`: a program missing here) is
    left out, and the others are published.
    """
    published: list[str] = []
    skipped: list[str] = []
    with writing(ledger, actor) as session:
        known = set(session.scalars(select(Schedule.id)))
        if only_into_empty and known:
            return Seeded([], [], had_schedules=True)
        for spec, source in specs:
            if spec.schedule_id in known:
                continue
            try:
                with session.begin_nested():
                    publish(session, spec, clock, check_task=check_task, source=source)
            except UserError as exc:
                skipped.append(f"{spec.schedule_id}: {first_line(exc)}")
                continue
            known.add(spec.schedule_id)
            published.append(spec.schedule_id)
    return Seeded(published, skipped)
