"""The first start of a new Tidemark version on a ledger: before the engine
materializes anything, it compares the materialized future with what its own
code computes (:func:`core.ledger.shadow.shadow`), and each schedule that
differs waits for a person (:func:`core.ledger.drift_attention.record_shadow`).
The rows stay as they are: the occurrences already in the ledger run as
recorded, and nothing is materialized again unless a person republishes
(docs/ledger.md, "A new Tidemark version: shadow first").

``ledger_meta.engine_version`` says which version last did this. The stage
runs once per engine (its first pass) and does its work once per version per
ledger: the comparison, its events and the new version are one write
transaction under the write lock, so two engines of the new version starting
together compare once. A version older than the recorded one does not lower it
(a log line says so); the first engine ever on a ledger records its version
and compares nothing (no older code computed anything).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from enum import StrEnum

from core.clock import Clock
from core.ledger.db import Ledger, lock_for_write
from core.ledger.drift_attention import record_shadow
from core.ledger.engine_version import ledger_engine_version, record_engine_version
from core.ledger.shadow import shadow
from core.version import is_newer, version_key

_log = logging.getLogger(__name__)


class Finding(StrEnum):
    """What the stage did on this engine's first pass."""

    FIRST = "first"
    """No engine had recorded a version: this one was recorded, nothing compared."""
    SAME = "same"
    """This version (or an uncomparable one) ran here before: nothing to do."""
    SHADOWED = "shadowed"
    """A newer version: compared, each differing schedule recorded, the version recorded."""
    OLDER = "older"
    """An older version than the ledger's: the ledger's is kept (said in the log)."""


@dataclass
class FirstStart:
    """Whether this engine has looked at the ledger's version yet, and what it found."""

    done: bool = False
    found: Finding | None = None
    #: The version the ledger recorded before (None: none).
    previous: str | None = None
    #: Schedules recorded as computed otherwise.
    differing: tuple[str, ...] = ()


def _compare(version: str, previous: str | None) -> Finding:
    if previous is None:
        return Finding.FIRST
    newer = is_newer(version, previous)
    if newer:
        return Finding.SHADOWED
    return Finding.OLDER if newer is not None and is_newer(previous, version) else Finding.SAME


def shadow_new_version(ledger: Ledger, clock: Clock, version: str, state: FirstStart) -> FirstStart:
    """On this engine's first pass (``state.done`` false), compare its ``version`` with the
    ledger's and, when it is newer, shadow the materialized future before anything is
    materialized (see the module). Later passes return ``state`` unchanged."""
    if state.done:
        return state
    if version_key(version) is None:  # run from a source tree never installed: no version to compare
        state.done, state.found = True, Finding.SAME
        return state
    with ledger.read() as session:
        previous = ledger_engine_version(session)
    state.previous = previous
    state.found = _compare(version, previous)
    if state.found in (Finding.FIRST, Finding.SHADOWED):  # a write: decided again under the write lock
        with ledger.write() as session:
            lock_for_write(session)  # two engines starting together: the second sees the first's version
            previous = state.previous = ledger_engine_version(session)
            state.found = _compare(version, previous)
            if state.found is Finding.SHADOWED:
                assert previous is not None
                report = shadow(session, clock)
                state.differing = tuple(record_shadow(session, clock.now(), report, version, previous))
            if state.found in (Finding.FIRST, Finding.SHADOWED):
                record_engine_version(session, version)
    state.done = True
    if state.found is Finding.OLDER:
        _log.warning(
            "this is Tidemark %s; Tidemark %s has run an engine on this ledger: its version stays recorded",
            version,
            previous,
        )
    elif state.found is Finding.SHADOWED:
        _log.info(
            "first start of Tidemark %s on this ledger (last %s): %d schedule(s) computed otherwise, "
            "kept as materialized until a person decides (schedctl drift)",
            version,
            previous,
            len(state.differing),
        )
        for sid in state.differing:
            _log.warning(
                "schedule %s: Tidemark %s computes its materialized future otherwise; kept as it is", sid, version
            )
    return state
