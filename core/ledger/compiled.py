"""A stored revision's compiled schedule, cached: the text of a revision never changes.

Materialization, the queries that show a schedule's next run, the engine's
admin actions, drift and the future diff all read revisions this way. It sits
apart from :mod:`core.ledger.materialize` so that the queries can use it
without importing materialization (which reads the queries' filters).

A revision published with ``tzdbPolicy: PIN`` stores its zone's TZif bytes
(``revisions.tzif``): pass them as ``tzif`` and the schedule resolves with
those rules, whatever tzdata is installed. Without them (FOLLOW) it resolves
with the installed tzdata.
"""

from __future__ import annotations

import json
from functools import lru_cache

from core.errors import ComputeLimitError, SpecError, ZoneError, first_line
from core.ledger.models import Revision
from core.recurrence.compile import CompiledSchedule, compile_schedule
from core.spec import ScheduleSpec
from core.spec_validation import parse_spec
from core.zones import pinned_zone, tzdb_version

#: What reading or expanding one stored revision can raise: its text refused by this
#: Tidemark, its pinned rules unreadable, an expansion's bound reached (a business
#: calendar with no business day within reach). Each holds that revision's schedule,
#: never the others (the engine, shadow, drift and the queries catch exactly these).
REVISION_ERRORS: tuple[type[Exception], ...] = (SpecError, ZoneError, ComputeLimitError, ValueError)


def revision_problems(exc: Exception) -> list[str]:
    """The lines saying why a stored revision cannot be read or expanded (one of REVISION_ERRORS)."""
    return exc.lines() if isinstance(exc, SpecError) else [first_line(exc)]


#: Revisions kept compiled at most: far above any catalogue a ledger holds (each costs a
#: few KiB: docs/benchmarks.md), so that a pass over every live schedule never misses,
#: while a process that reads revision after revision still has a bound.
CACHED_REVISIONS = 65_536


@lru_cache(maxsize=CACHED_REVISIONS)
def stored_spec(spec_json: str) -> ScheduleSpec:
    """A published revision's spec, parsed once per process (cached: revisions never change),
    however many readers ask (the engine's stages, the queries, compiling it)."""
    return parse_spec(json.loads(spec_json), check_rule=False)


@lru_cache(maxsize=CACHED_REVISIONS)
def compiled_revision(spec_json: str, tzif: bytes | None = None) -> CompiledSchedule:
    """The compiled form of a stored revision, in its pinned zone when ``tzif`` is given (cached)."""
    spec = stored_spec(spec_json)
    return compile_schedule(spec, pinned_zone(spec.time_zone, tzif) if tzif is not None else None)


def revision_schedule(revision: Revision) -> CompiledSchedule:
    """The compiled form of a stored revision row, in its pinned zone under ``tzdbPolicy: PIN``."""
    return compiled_revision(revision.spec_json, revision.tzif)


def resolving_tzdb(revision: Revision) -> str:
    """The tz database release the revision's occurrences resolve with: the pinned one, else the installed one."""
    return revision.tzdb_version if revision.tzif is not None else tzdb_version()
