"""A stored revision's compiled schedule, cached: the text of a revision never changes.

Materialization, the queries that show a schedule's next run, the engine's
admin actions, drift and the future diff all read revisions this way. It sits
apart from :mod:`core.ledger.materialize` so that the queries can use it
without importing materialization (which reads the queries' filters).

A revision published with ``tzdbPolicy: PIN`` stores its zone's TZif bytes
(``revisions.tzif``): pass them as ``tzif`` and the schedule resolves with
those rules, whatever tzdata is installed. Without them (FOLLOW) it resolves
with the installed tzdata.

The cache holds one entry for every live revision a process reads (an engine:
every schedule of its ledger), its parsed spec and compiled form together, so
each entry is kept small: it is found by a digest of the revision's text, not
by the text, and the parsed models share their record of which keys were given
and their immutable values (:func:`_compact`).
"""

from __future__ import annotations

import hashlib
import json
import threading
from datetime import datetime, timedelta

from pydantic import BaseModel

from core.errors import ComputeLimitError, SpecError, ZoneError, first_line
from core.ledger.models import Revision
from core.recurrence.compile import CompiledSchedule, compile_schedule
from core.spec.model import ScheduleSpec
from core.spec.validation import parse_spec
from core.time.zones import pinned_zone, tzdb_version

#: What reading or expanding one stored revision can raise: its text refused by this
#: Tidemark, its pinned rules unreadable, an expansion's bound reached (a business
#: calendar with no business day within reach). Each holds that revision's schedule,
#: never the others (the engine, shadow, drift and the queries catch exactly these).
REVISION_ERRORS: tuple[type[Exception], ...] = (SpecError, ZoneError, ComputeLimitError, ValueError)


def revision_problems(exc: Exception) -> list[str]:
    """The lines saying why a stored revision cannot be read or expanded (one of REVISION_ERRORS)."""
    return exc.lines() if isinstance(exc, SpecError) else [first_line(exc)]


#: Revisions kept compiled at most: far above any catalogue a ledger holds (each costs
#: about 4 KiB, its parsed spec included: docs/benchmarks.md), so that a pass over every
#: live schedule never misses, while a process that reads revision after revision still
#: has a bound (the oldest entry goes first).
CACHED_REVISIONS = 65_536


class _Entry:
    """What the cache keeps of one revision: its parsed spec and its compiled form, each made
    the first time it is asked for. A pinned revision's compiled form has an entry of its own
    (its key digests the zone's rules too), whose spec is the unpinned entry's."""

    __slots__ = ("compiled", "spec")

    def __init__(self) -> None:
        self.spec: ScheduleSpec | None = None
        self.compiled: CompiledSchedule | None = None


#: One entry per revision, found by a 16-byte digest of its text (and pinned rules), never
#: by the text: an entry keeps no copy of it.
_ENTRIES: dict[bytes, _Entry] = {}
_ENTRIES_LOCK = threading.Lock()


def _digest(text: str, tzif: bytes | None) -> bytes:
    digest = hashlib.blake2b(text.encode(), digest_size=16)
    if tzif is not None:
        digest.update(b"\0pinned\0" + tzif)
    return digest.digest()


def _entry(key: bytes) -> _Entry:
    """The entry for ``key``, made (and the oldest one dropped past the bound) if there is none."""
    entry = _ENTRIES.get(key)
    if entry is not None:
        return entry
    with _ENTRIES_LOCK:
        entry = _ENTRIES.get(key)
        if entry is None:
            while len(_ENTRIES) >= CACHED_REVISIONS:
                del _ENTRIES[next(iter(_ENTRIES))]
            entry = _ENTRIES[key] = _Entry()
        return entry


#: One set of given keys per distinct set (:func:`_compact`).
_GIVEN: dict[frozenset[str], set[str]] = {}
_GIVEN_LOCK = threading.Lock()
#: Values the parsed specs share (:func:`_shared`), bounded: past it a value is kept as parsed.
_SHARED: dict[tuple[object, ...], object] = {}
_SHARED_MOST = 4096
_SHAREABLE = (str, timedelta, float, datetime)


def _shared(value: object) -> object:
    """One instance of ``value`` for every parsed spec that holds an equal one (a zone's name, a
    rule, ``PT15M``, a start): immutable values only, found by their type and fold too (a float
    equal to an int, or a naive time at its second fold, is not the same value)."""
    if type(value) not in _SHAREABLE or (isinstance(value, datetime) and value.tzinfo is not None):
        return value
    key = (type(value), value, getattr(value, "fold", None))
    found = _SHARED.get(key)
    if found is not None:
        return found
    if len(_SHARED) < _SHARED_MOST:
        _SHARED.setdefault(key, value)
    return value


def _compact(model: BaseModel) -> None:
    """Let ``model`` and the models in it share the record of which keys were given, and their
    immutable values (:func:`_shared`), with every other parsed spec that has the same. The
    models are frozen, so neither is ever changed in place; a copy makes its own."""
    given = model.__pydantic_fields_set__
    with _GIVEN_LOCK:
        shared = _GIVEN.setdefault(frozenset(given), given)
        object.__setattr__(model, "__pydantic_fields_set__", shared)
        fields = model.__dict__
        for name, value in fields.items():
            fields[name] = _shared(value)
            if isinstance(value, list):
                value[:] = [_shared(item) for item in value]
    for value in model.__dict__.values():
        for item in value if isinstance(value, (list, tuple)) else (value,):
            if isinstance(item, BaseModel):
                _compact(item)


def stored_spec(spec_json: str) -> ScheduleSpec:
    """A published revision's spec, parsed once per process (cached: revisions never change),
    however many readers ask (the engine's stages, the queries, compiling it)."""
    entry = _entry(_digest(spec_json, None))
    spec = entry.spec
    if spec is None:
        spec = parse_spec(json.loads(spec_json), check_rule=False)
        _compact(spec)
        entry.spec = spec
    return spec


def compiled_revision(spec_json: str, tzif: bytes | None = None) -> CompiledSchedule:
    """The compiled form of a stored revision, in its pinned zone when ``tzif`` is given (cached)."""
    entry = _entry(_digest(spec_json, tzif))
    compiled = entry.compiled
    if compiled is None:
        spec = stored_spec(spec_json)
        compiled = compile_schedule(spec, pinned_zone(spec.time_zone, tzif) if tzif is not None else None)
        entry.compiled = compiled
    return compiled


def forget_compiled() -> None:
    """Drop every cached spec and compiled revision (after the zone data in use changed, in tests)."""
    with _ENTRIES_LOCK:
        _ENTRIES.clear()


def cached_revisions() -> int:
    """How many compiled revisions the cache holds now."""
    return sum(entry.compiled is not None for entry in list(_ENTRIES.values()))


def revision_schedule(revision: Revision) -> CompiledSchedule:
    """The compiled form of a stored revision row, in its pinned zone under ``tzdbPolicy: PIN``."""
    return compiled_revision(revision.spec_json, revision.tzif)


def resolving_tzdb(revision: Revision) -> str:
    """The tz database release the revision's occurrences resolve with: the pinned one, else the installed one."""
    return revision.tzdb_version if revision.tzif is not None else tzdb_version()
