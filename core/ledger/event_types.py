"""The ledger's events as typed, frozen classes: one class per :class:`EventKind`.

An event is a fact, named in the past tense. Each class holds what its kind
records; :func:`stored_data` is the one place that turns an event into the
``data`` JSON the ``events`` table keeps. Its keys are the fields' names in
camelCase (``cutover_at`` is ``cutoverAt``, ``from_`` is ``from``); instants
are written as ``YYYY-MM-DDTHH:MM:SSZ`` and enums as their values. A field
may name its own key in its metadata (``kind``, which the class itself uses
for its :class:`EventKind`) or be left out while it is None; every other field
is always written, None as null.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from datetime import datetime
from enum import Enum, StrEnum
from typing import Any, ClassVar

from core.ledger.states import EngineKind, OccurrenceKind, OccurrenceState, ScheduleState
from core.time.formats import fmt_utc


class EventKind(StrEnum):
    """What happened. Past tense: an event is a fact. Each kind's data is its class's fields."""

    SCHEDULE_PUBLISHED = "schedule.published"
    """A revision was applied (:class:`SchedulePublished`)."""
    SCHEDULE_PAUSED = "schedule.paused"
    """:class:`SchedulePaused`."""
    SCHEDULE_RESUMED = "schedule.resumed"
    """:class:`ScheduleResumed`."""
    SCHEDULE_DISABLED = "schedule.disabled"
    """:class:`ScheduleDisabled`."""
    SCHEDULE_UNREADABLE = "schedule.unreadable"
    """A published revision this Tidemark cannot read (published by an older one that
    accepted it, or its pinned zone rules damaged) or cannot expand (a business calendar
    no move can serve): the engine holds the schedule (:class:`ScheduleUnreadable`)."""
    SCHEDULE_DRIFT_FOUND = "schedule.drift_found"
    """The installed tz database would move materialized future occurrences of a schedule;
    they stay as they are and the schedule waits for a person (:class:`ScheduleDriftFound`)."""
    SCHEDULE_DRIFT_KEPT = "schedule.drift_kept"
    """A person chose to keep a schedule's drifted occurrences as materialized
    (:class:`ScheduleDriftKept`)."""
    SCHEDULE_SHADOW_DIFFERS = "schedule.shadow_differs"
    """On the first start of a newer Tidemark on the ledger, the shadow comparison found that
    it computes a schedule's materialized future otherwise; the rows stay as they are and the
    schedule waits for a person (:class:`ScheduleShadowDiffers`)."""
    OCCURRENCES_MATERIALIZED = "occurrences.materialized"
    """A batch of new occurrences (:class:`OccurrencesMaterialized`)."""
    OCCURRENCES_EXPIRED = "occurrences.expired"
    """A long stretch of missed occurrences recorded as one expired range (they were
    never materialized one by one) (:class:`OccurrencesExpired`)."""
    OCCURRENCE_TRANSITIONED = "occurrence.transitioned"
    """One occurrence changed state (:class:`OccurrenceTransitioned`)."""
    OCCURRENCE_CREATED = "occurrence.created"
    """An occurrence made outside materialization: run now, backfill, or the next
    appointment of an after_completion schedule (:class:`OccurrenceCreated`)."""
    OCCURRENCE_ACKNOWLEDGED = "occurrence.acknowledged"
    """A person dealt with a FAILED occurrence and it left the attention queue
    (:class:`OccurrenceAcknowledged`)."""
    ATTEMPT_IGNORED = "attempt.ignored"
    """A late result of a superseded claim, recorded and otherwise ignored (:class:`AttemptIgnored`)."""
    ATTEMPT_ORPHANED = "attempt.orphaned"
    """The engine of an attempt died while its task still runs; another engine on the same
    host found it and watches it (:class:`AttemptOrphaned`)."""
    LEDGER_FENCED = "ledger.fenced"
    """The execution epoch was bumped: claims of older epochs are void (:class:`LedgerFenced`)."""
    ENGINE_WORKER_DIED = "engine.worker_died"
    """An exception killed an engine's worker for a schedule (:class:`EngineWorkerDied`)."""
    ENGINE_FOUND_GONE = "engine.found_gone"
    """An engine's process was found gone on its own host (it crashed or was killed without
    retiring) and its row was retired at once (:class:`EngineFoundGone`)."""
    ENGINE_STARTED = "engine.started"
    """An engine announced itself on the ledger (:class:`EngineStarted`)."""
    ENGINE_STOPPED = "engine.stopped"
    """An engine retired: it stopped (:class:`EngineStopped`)."""


#: Each kind's class (filled as the classes are defined; one each, see NewEvent.__init_subclass__).
EVENT_CLASSES: dict[EventKind, type[NewEvent]] = {}

#: Field metadata: the stored key, where it is not the field's name in camelCase.
_KEY = "key"
#: Field metadata: leave the key out while the field is None (True), or while the
#: field it names is None (a reconciliation's note goes with its decision).
_OMIT = "omit"
_ABSENT_WHEN_NONE = {_OMIT: True}


def _stored_key(name: str) -> str:
    """``cutover_at`` -> ``cutoverAt``; ``from_`` -> ``from``."""
    head, *rest = name.rstrip("_").split("_")
    return head + "".join(part.title() for part in rest)


@dataclass(frozen=True, kw_only=True)
class NewEvent:
    """An event to append: where and when it happened. Its kind and data are its class's."""

    kind: ClassVar[EventKind]

    at: datetime
    schedule_id: str | None = None
    occurrence_id: str | None = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "kind" in cls.__dict__:
            if cls.kind in EVENT_CLASSES:
                raise TypeError(f"{cls.kind} already has a class: {EVENT_CLASSES[cls.kind].__name__}")
            EVENT_CLASSES[cls.kind] = cls


def _layout(cls: type[NewEvent]) -> tuple[tuple[str, str, bool | str | None], ...]:
    """(attribute, stored key, when to leave it out) for each of the class's data fields."""
    header = {f.name for f in dataclasses.fields(NewEvent)}
    return tuple(
        (f.name, f.metadata.get(_KEY) or _stored_key(f.name), f.metadata.get(_OMIT))
        for f in dataclasses.fields(cls)
        if f.name not in header
    )


def stored_data(event: NewEvent) -> dict[str, Any]:
    """The ``data`` JSON of ``event``, as the ``events`` table stores it."""
    data: dict[str, Any] = {}
    for name, key, omit in _LAYOUTS[event.kind]:
        value = getattr(event, name)
        if value is None:
            if omit is True or (isinstance(omit, str) and getattr(event, omit) is None):
                continue
        elif isinstance(value, Enum):
            value = value.value
        elif isinstance(value, datetime):
            value = fmt_utc(value)
        data[key] = value
    return data


# --- schedules --------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class SchedulePublished(NewEvent):
    """A revision was applied; ``cancelled`` counts the older revisions' occurrences it cancelled."""

    kind = EventKind.SCHEDULE_PUBLISHED
    schedule_id: str
    revision: int
    cutover_at: datetime
    tzdb_version: str
    cancelled: int


@dataclass(frozen=True, kw_only=True)
class _GateChanged(NewEvent):
    """A schedule's gate moved ``from_`` a state; ``gate_version`` is its count of moves."""

    schedule_id: str
    from_: ScheduleState
    note: str | None
    gate_version: int


@dataclass(frozen=True, kw_only=True)
class SchedulePaused(_GateChanged):
    """Dispatching stopped (materialization goes on)."""

    kind = EventKind.SCHEDULE_PAUSED


@dataclass(frozen=True, kw_only=True)
class ScheduleResumed(_GateChanged):
    """A paused or disabled schedule is active again."""

    kind = EventKind.SCHEDULE_RESUMED


@dataclass(frozen=True, kw_only=True)
class ScheduleDisabled(_GateChanged):
    """Materializing and dispatching stopped; ``disable_generation`` counts the disables
    (so that claims racing the disable lose)."""

    kind = EventKind.SCHEDULE_DISABLED
    disable_generation: int


@dataclass(frozen=True, kw_only=True)
class ScheduleUnreadable(NewEvent):
    """The engine holds a schedule whose ``revision`` it cannot read or expand, for these ``problems``."""

    kind = EventKind.SCHEDULE_UNREADABLE
    schedule_id: str
    revision: int
    problems: list[str]


@dataclass(frozen=True, kw_only=True)
class ScheduleDriftFound(NewEvent):
    """Under the installed ``tzdb_version``, ``occurrences`` materialized future occurrences
    (resolved under the releases ``from_tzdb``) would move, the farthest by ``largest_shift``
    seconds (None when none of them keeps an instant: each leaves or enters a gap)."""

    kind = EventKind.SCHEDULE_DRIFT_FOUND
    schedule_id: str
    tzdb_version: str
    from_tzdb: list[str]
    occurrences: int
    largest_shift: int | None
    #: The installed holidays data's release, when the schedule has a business calendar
    #: (a newer one raises the item again even under the same tz release).
    holidays_version: str | None = field(default=None, metadata=_ABSENT_WHEN_NONE)


@dataclass(frozen=True, kw_only=True)
class ScheduleDriftKept(NewEvent):
    """A person kept the ``occurrences`` drifted under ``tzdb_version`` as materialized."""

    kind = EventKind.SCHEDULE_DRIFT_KEPT
    schedule_id: str
    tzdb_version: str
    occurrences: int
    note: str | None
    #: The Tidemark version whose shadow comparison differed, when that is what was kept
    #: (a :class:`ScheduleShadowDiffers` item); left out for tz database drift.
    engine_version: str | None = field(default=None, metadata=_ABSENT_WHEN_NONE)


@dataclass(frozen=True, kw_only=True)
class ScheduleShadowDiffers(NewEvent):
    """Tidemark ``engine_version`` (with the installed ``tzdb_version``), starting first on a
    ledger last run by ``from_engine_version``, computes ``occurrences`` materialized future
    occurrences of the schedule otherwise: ``differences`` fields differ in all."""

    kind = EventKind.SCHEDULE_SHADOW_DIFFERS
    schedule_id: str
    engine_version: str
    from_engine_version: str
    tzdb_version: str
    occurrences: int
    differences: int


# --- occurrences ------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class OccurrencesMaterialized(NewEvent):
    """``inserted`` occurrences of ``revisions`` positioned in [from_utc, to_utc); ``states``
    counts them by state value."""

    kind = EventKind.OCCURRENCES_MATERIALIZED
    schedule_id: str
    revisions: list[int]
    from_utc: datetime
    to_utc: datetime
    inserted: int
    states: dict[str, int]


@dataclass(frozen=True, kw_only=True)
class OccurrencesExpired(NewEvent):
    """One expired range of ``revision``: what made its occurrences certain to expire
    (``policy``, a misfirePolicy value or ``catchUpWindow``) and how many there were
    (``occurrences``, None when not counted)."""

    kind = EventKind.OCCURRENCES_EXPIRED
    schedule_id: str
    revision: int
    from_utc: datetime
    to_utc: datetime
    state: OccurrenceState
    policy: str
    reason: str
    occurrences: int | None


@dataclass(frozen=True, kw_only=True)
class OccurrenceTransitioned(NewEvent):
    """One occurrence moved ``from_`` one state ``to`` another.

    With the claim's ``attempt`` (and the claiming ``worker``) when an attempt
    moves it, the new ``revision`` when a publish cancels it, and a person's
    ``decision`` and ``note`` when a reconciliation settles it.
    """

    kind = EventKind.OCCURRENCE_TRANSITIONED
    schedule_id: str
    occurrence_id: str
    from_: OccurrenceState
    to: OccurrenceState
    reason: str | None
    attempt: int | None = field(default=None, metadata=_ABSENT_WHEN_NONE)
    worker: str | None = field(default=None, metadata=_ABSENT_WHEN_NONE)
    revision: int | None = field(default=None, metadata=_ABSENT_WHEN_NONE)
    decision: str | None = field(default=None, metadata=_ABSENT_WHEN_NONE)
    note: str | None = field(default=None, metadata={_OMIT: "decision"})


@dataclass(frozen=True, kw_only=True)
class OccurrenceCreated(NewEvent):
    """An occurrence made outside materialization, of this ``kind``; a backfill names the
    occurrence it runs again (``of``)."""

    kind = EventKind.OCCURRENCE_CREATED
    schedule_id: str
    occurrence_id: str
    occurrence_kind: OccurrenceKind = field(metadata={_KEY: "kind"})
    reason: str
    of: str | None = field(default=None, metadata=_ABSENT_WHEN_NONE)


@dataclass(frozen=True, kw_only=True)
class OccurrenceAcknowledged(NewEvent):
    """A person dealt with a FAILED occurrence: ``action`` is ``acknowledged`` or ``retried``
    (then ``retried_as`` names the new run); ``state`` is the occurrence's, unchanged."""

    kind = EventKind.OCCURRENCE_ACKNOWLEDGED
    schedule_id: str
    occurrence_id: str
    action: str
    note: str | None
    state: OccurrenceState
    retried_as: str | None = field(default=None, metadata=_ABSENT_WHEN_NONE)


# --- attempts, the ledger and engines ----------------------------------------------


@dataclass(frozen=True, kw_only=True)
class AttemptIgnored(NewEvent):
    """A late result of ``attempt`` arrived while the occurrence stood in ``state`` under a newer claim."""

    kind = EventKind.ATTEMPT_IGNORED
    schedule_id: str
    occurrence_id: str
    attempt: int
    state: OccurrenceState
    reason: str


@dataclass(frozen=True, kw_only=True)
class AttemptOrphaned(NewEvent):
    """The task of ``attempt`` (process ``pid`` on ``host``, started at ``started`` seconds
    since the epoch when known) outlived its engine and is watched by another."""

    kind = EventKind.ATTEMPT_ORPHANED
    schedule_id: str
    occurrence_id: str
    attempt: int
    host: str
    pid: int
    started: float | None
    reason: str


@dataclass(frozen=True, kw_only=True)
class LedgerFenced(NewEvent):
    """The execution epoch became ``epoch``."""

    kind = EventKind.LEDGER_FENCED
    epoch: int
    note: str | None


@dataclass(frozen=True, kw_only=True)
class EngineWorkerDied(NewEvent):
    """An exception (``error``) killed ``worker`` for a schedule; the occurrence (and its
    ``attempt``) is the one it had in hand, if any."""

    kind = EventKind.ENGINE_WORKER_DIED
    schedule_id: str
    worker: str
    error: str
    restarted: bool
    attempt: int | None = field(default=None, metadata=_ABSENT_WHEN_NONE)


@dataclass(frozen=True, kw_only=True)
class EngineFoundGone(NewEvent):
    """Engine ``engine`` (of this ``engine_kind``, process ``pid`` on ``host``) was found gone."""

    kind = EventKind.ENGINE_FOUND_GONE
    engine: str
    engine_kind: EngineKind = field(metadata={_KEY: "kind"})
    host: str
    pid: int
    last_heartbeat: datetime


@dataclass(frozen=True, kw_only=True)
class EngineStarted(NewEvent):
    """Engine ``engine`` (of this ``engine_kind``, process ``pid`` on ``host``) announced itself."""

    kind = EventKind.ENGINE_STARTED
    engine: str
    engine_kind: EngineKind = field(metadata={_KEY: "kind"})
    host: str
    pid: int


@dataclass(frozen=True, kw_only=True)
class EngineStopped(NewEvent):
    """Engine ``engine`` retired."""

    kind = EventKind.ENGINE_STOPPED
    engine: str


#: Each kind's (attribute, stored key, when to leave it out), worked out once.
_LAYOUTS = {kind: _layout(cls) for kind, cls in EVENT_CLASSES.items()}

_text = json.encoder.encode_basestring_ascii
#: The opening of a transition's JSON, by its two states (``{"from": "due", "to": …, "reason": ``).
_OPENINGS = {
    (old, new): '{"from": ' + _text(old.value) + ', "to": ' + _text(new.value) + ', "reason": '
    for old in OccurrenceState
    for new in OccurrenceState
}


def stored_json(event: NewEvent) -> str:
    """:func:`stored_data` as the JSON text the ``events`` table keeps (``json.dumps``'s).

    The engine writes a transition on every claim and outcome: its text is put together from
    pieces worked out once (its opening by the two states; the rest in the order of its
    fields), the same text, key by key, as the dictionary's. Every other event, and a
    transition with a value of an unexpected type, goes through :func:`stored_data`."""
    if type(event) is OccurrenceTransitioned:
        reason, attempt, worker = event.reason, event.attempt, event.worker
        if (
            event.revision is None
            and event.decision is None
            and event.note is None
            and type(reason) in _TEXT_OR_NONE
            and type(attempt) in _INT_OR_NONE
            and type(worker) in _TEXT_OR_NONE
        ):
            opening = _OPENINGS.get((event.from_, event.to))
            if opening is not None:
                text = opening + ("null" if reason is None else _text(reason))
                if attempt is not None:
                    text += ', "attempt": ' + int.__repr__(attempt)
                if worker is not None:
                    text += ', "worker": ' + _text(worker)
                return text + "}"
    return json.dumps(stored_data(event))


_TEXT_OR_NONE = frozenset({str, type(None)})
_INT_OR_NONE = frozenset({int, type(None)})
