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
every schedule of its ledger), its compiled form and, once someone asked for
it, its parsed spec, so each entry is kept small: it is found by a digest of
the revision's text, not by the text; a compiled form keeps the few values
expansion reads, not the spec's models; a revision the engine runs keeps what
its runs read (:func:`stored_run`: the task, not the whole spec, which the
engine never asks for); and the parsed models share their
record of which keys were given and their immutable values (:func:`_compact`).
"""

from __future__ import annotations

import hashlib
import json
import threading
import zlib
from datetime import datetime, timedelta
from enum import Enum

from pydantic import BaseModel

from core.errors import ComputeLimitError, SpecError, ZoneError, first_line
from core.ledger.models import Revision
from core.recurrence.compile import CompiledSchedule, compile_schedule
from core.spec.facts import RunFacts, SpecFacts
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
#: about 1-2 KiB without its spec's models: docs/benchmarks.md), so that a pass over every
#: live schedule never misses, while a process that reads revision after revision still
#: has a bound (the oldest entry goes first).
CACHED_REVISIONS = 65_536


class _Entry:
    """What the cache keeps of one revision: its compiled form, made the first time it is asked
    for, and its parsed spec, kept once :func:`stored_spec` was asked for it (the compiled form
    keeps none). A pinned revision's compiled form has an entry of its own (its key digests the
    zone's rules too)."""

    __slots__ = ("compiled", "facts", "run", "spec")

    def __init__(self) -> None:
        self.spec: ScheduleSpec | None = None
        self.compiled: CompiledSchedule | None = None
        self.facts: SpecFacts | None = None
        self.run: RunFacts | None = None


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
    key = _value_key(value)
    found = _SHARED.get(key)
    if found is not None:
        return found
    if len(_SHARED) < _SHARED_MOST:
        _SHARED.setdefault(key, value)
    return value


def _value_key(value: object) -> tuple[object, ...]:
    """What tells ``value`` from another equal to it: its type, its fold (a naive wall time read a
    second time), a float's spelling (``-0.0`` is not ``0.0``), an instant's zone."""
    spelled = repr(value) if isinstance(value, float) else value
    return (type(value), spelled, getattr(value, "fold", None), getattr(value, "tzinfo", None))


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
    for name, value in model.__dict__.items():
        for item in value if isinstance(value, (list, tuple)) else (value,):
            if isinstance(item, BaseModel):
                _compact(item)
        if isinstance(value, BaseModel):
            model.__dict__[name] = _shared_model(value)


#: What a model whose values are all plain may hold to be shared whole (:func:`_shared_model`).
_PLAIN = (str, int, float, bool, timedelta, datetime, Enum, type(None))


def _shared_model(model: BaseModel) -> BaseModel:
    """One instance of a frozen model whose values are all plain (a spec's ``retry``, most often
    its defaults) for every parsed spec that holds an equal one, with the same keys given; a
    model that holds a list or another model stays its own."""
    values = model.__dict__
    if not all(isinstance(value, _PLAIN) for value in values.values()):
        return model
    key = (
        type(model),
        frozenset(model.__pydantic_fields_set__),
        tuple((name, *_value_key(value)) for name, value in values.items()),
    )
    found = _SHARED.get(key)
    if found is not None:
        assert isinstance(found, BaseModel)
        return found
    if len(_SHARED) < _SHARED_MOST:
        _SHARED.setdefault(key, model)
    return model


def stored_spec(spec_json: str) -> ScheduleSpec:
    """A published revision's spec, parsed once per process (cached: revisions never change),
    however many readers ask (the engine's stages, the queries, the window)."""
    entry = _entry(_digest(spec_json, None))
    spec = entry.spec
    if spec is None:
        spec = entry.spec = _parsed(spec_json)
    return spec


def stored_facts(spec_json: str) -> SpecFacts:
    """What expansion and the misfire step read of a published revision's spec (cached), without
    keeping the spec's models: the compiled form's facts when the revision is compiled here."""
    entry = _entry(_digest(spec_json, None))
    facts = entry.facts
    if facts is None:
        if entry.compiled is not None:
            facts = entry.compiled.facts
        else:
            facts = SpecFacts.of(entry.spec if entry.spec is not None else _parsed(spec_json))
        entry.facts = facts
    return facts


def stored_run(spec_json: str) -> RunFacts:
    """What claiming, settling and recovering a published revision's runs read of its spec
    (cached), without keeping the spec's models beyond its task: an engine reads this of every
    revision it runs, and the whole spec of none."""
    entry = _entry(_digest(spec_json, None))
    run = entry.run
    if run is None:
        run = entry.run = RunFacts.of(entry.spec if entry.spec is not None else _parsed(spec_json))
    return run


def _parsed(spec_json: str) -> ScheduleSpec:
    spec = parse_spec(json.loads(spec_json), check_rule=False)
    _compact(spec)
    return spec


#: What most stored revisions' texts have in common (the keys in their order, the defaults), so that
#: a revision's text compresses to a few dozen bytes (zlib's preset dictionary): only a different
#: wording costs more bytes, never a wrong spec.
_TYPICAL_TEXT = (
    b'{"schema": "scheduleSpec.v1", "scheduleId": "", "revision": 1, "title": null, "timeZone": "Europe/", '
    b'"tzdbVersion": "2026", "tzdbPolicy": "FOLLOW", "kind": "interval", "every": "PT1M", '
    b'"anchor": "2026-01-01T00:00:00Z", '
    b'"delay": "PT5M", "holidayPolicy": "SKIP", '
    b'"timeZone": "UTC", "tzdbPolicy": "PIN", "kind": "calendar", "rule": "FREQ=DAILY;BYHOUR=6;BYMINUTE=0", '
    b'"start": "2026-01-01T00:00:00", "end": null, "exclude": [], "gapPolicy": "SHIFT_FORWARD", '
    b'"foldPolicy": "FIRST_ONLY", "invalidDatePolicy": "OMIT", "misfirePolicy": "CATCH_UP_BOUNDED", "maxCatchUp": 1, '
    b'"latenessWindow": "PT15M", "catchUpWindow": null, "jitter": "PT0S", "overlapPolicy": "SKIP", '
    b'"retry": {"maxAttempts": 3, "initialBackoff": "PT30S", "multiplier": 2.0, "maxBackoff": "PT10M"}, '
    b'"cutoverAt": "2026-01-01T00:00:00Z", "horizon": "P14D", "businessPeriod": null, "wakeSystem": false, '
    b'"task": {"kind": "command", "argv": ["/bin/true"], "cwd": null, "env": {}, "timeout": "PT10M", '
    b'"effect": "non_idempotent", "verify": null}}'
)


class _Reload:
    """How a compiled revision has its spec again once it let the models go: the revision's text,
    compressed against :data:`_TYPICAL_TEXT` (50-100 bytes where the text is 800), read back
    through :func:`stored_spec` when someone asks."""

    __slots__ = ("_packed",)

    def __init__(self, spec_json: str) -> None:
        packer = zlib.compressobj(zdict=_TYPICAL_TEXT)
        self._packed = packer.compress(spec_json.encode()) + packer.flush()

    def __call__(self) -> ScheduleSpec:
        unpacker = zlib.decompressobj(zdict=_TYPICAL_TEXT)
        return stored_spec((unpacker.decompress(self._packed) + unpacker.flush()).decode())


def compiled_revision(spec_json: str, tzif: bytes | None = None) -> CompiledSchedule:
    """The compiled form of a stored revision, in its pinned zone when ``tzif`` is given (cached).

    The entry keeps what expansion reads (:class:`~core.spec.facts.SpecFacts`), not the spec's
    models: an engine compiles every live revision and reads the whole spec only of those it
    runs (:func:`stored_spec` keeps those). ``compiled.spec`` still gives the whole spec."""
    entry = _entry(_digest(spec_json, tzif))
    compiled = entry.compiled
    if compiled is None:
        known = _ENTRIES.get(_digest(spec_json, None)) if tzif is not None else entry
        spec = known.spec if known is not None and known.spec is not None else _parsed(spec_json)
        compiled = compile_schedule(spec, pinned_zone(spec.time_zone, tzif) if tzif is not None else None)
        compiled.release_spec(_Reload(spec_json))
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
