"""A stored revision's compiled schedule, cached: the text of a revision never changes.

Materialization, the queries that show a schedule's next run, the engine's
admin actions, drift and the future diff all read revisions this way. It sits
apart from :mod:`core.ledger.materialize` so that the queries can use it
without importing materialization (which reads the queries' filters).

A revision published with ``tzdbPolicy: PIN`` stores its zone's TZif bytes
(``revisions.tzif``): pass them as ``tzif`` and the schedule resolves with
those rules, whatever tzdata is installed. Without them (FOLLOW) it resolves
with the installed tzdata.

The caches hold an entry for every live revision a process reads (an engine:
every schedule of its ledger), so each entry is kept small: it is found by a
digest of the revision's text, not by the text, and the parsed models share
their record of which keys were given (:func:`_compact`).
"""

from __future__ import annotations

import hashlib
import json
import threading
from functools import lru_cache

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
#: about 5 KiB, its parsed spec included: docs/benchmarks.md), so that a pass over every
#: live schedule never misses, while a process that reads revision after revision still
#: has a bound.
CACHED_REVISIONS = 65_536


class _Text:
    """A revision's text (and pinned zone) as a cache key: equal by a digest of both. The
    text is dropped once its entry is made (:func:`_made`), so an entry keeps 16 bytes of
    digest, not a copy of the text."""

    __slots__ = ("_hash", "digest", "text", "tzif")

    def __init__(self, text: str, tzif: bytes | None = None) -> None:
        digest = hashlib.blake2b(text.encode(), digest_size=16)
        if tzif is not None:
            digest.update(b"\0pinned\0" + tzif)
        self.digest = digest.digest()
        self._hash = hash(self.digest)
        self.text: str | None = text
        self.tzif = tzif

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Text) and other.digest == self.digest


def _made(key: _Text) -> None:
    key.text = key.tzif = None


#: One set of given keys per distinct set (:func:`_compact`).
_GIVEN: dict[frozenset[str], set[str]] = {}
_GIVEN_LOCK = threading.Lock()


def _compact(model: BaseModel) -> None:
    """Let ``model`` and the models in it share the record of which keys were given with
    every other parsed spec that gave the same keys (a stored revision gives them all).
    The models are frozen, so the record is never added to; a copy makes its own."""
    given = model.__pydantic_fields_set__
    with _GIVEN_LOCK:
        shared = _GIVEN.setdefault(frozenset(given), given)
    object.__setattr__(model, "__pydantic_fields_set__", shared)
    for value in model.__dict__.values():
        for item in value if isinstance(value, (list, tuple)) else (value,):
            if isinstance(item, BaseModel):
                _compact(item)


@lru_cache(maxsize=CACHED_REVISIONS)
def _spec(key: _Text) -> ScheduleSpec:
    assert key.text is not None
    spec = parse_spec(json.loads(key.text), check_rule=False)
    _compact(spec)
    return spec


@lru_cache(maxsize=CACHED_REVISIONS)
def _compiled(key: _Text) -> CompiledSchedule:
    assert key.text is not None
    spec = stored_spec(key.text)
    return compile_schedule(spec, pinned_zone(spec.time_zone, key.tzif) if key.tzif is not None else None)


def stored_spec(spec_json: str) -> ScheduleSpec:
    """A published revision's spec, parsed once per process (cached: revisions never change),
    however many readers ask (the engine's stages, the queries, compiling it)."""
    key = _Text(spec_json)
    try:
        return _spec(key)
    finally:
        _made(key)


def compiled_revision(spec_json: str, tzif: bytes | None = None) -> CompiledSchedule:
    """The compiled form of a stored revision, in its pinned zone when ``tzif`` is given (cached)."""
    key = _Text(spec_json, tzif)
    try:
        return _compiled(key)
    finally:
        _made(key)


def forget_compiled() -> None:
    """Drop every cached spec and compiled revision (after the zone data in use changed, in tests)."""
    _spec.cache_clear()
    _compiled.cache_clear()


def cached_revisions() -> int:
    """How many compiled revisions the cache holds now."""
    return _compiled.cache_info().currsize


def revision_schedule(revision: Revision) -> CompiledSchedule:
    """The compiled form of a stored revision row, in its pinned zone under ``tzdbPolicy: PIN``."""
    return compiled_revision(revision.spec_json, revision.tzif)


def resolving_tzdb(revision: Revision) -> str:
    """The tz database release the revision's occurrences resolve with: the pinned one, else the installed one."""
    return revision.tzdb_version if revision.tzif is not None else tzdb_version()
