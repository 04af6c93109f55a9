"""The drift check: now and then, the engine asks whether the installed tz
database would move materialized future occurrences (:func:`core.ledger.materialize.drift`).
It moves none of them: each schedule with drift is recorded once as waiting for a
person (:func:`core.ledger.drift_attention.record_drift`), who keeps them or
republishes (docs/ledger.md, "Drift: a new tz release and the materialized future").

The expansion it needs is not free, so it runs at most once per
:data:`DRIFT_EVERY` of the engine's clock; the first pass of an engine checks.
"""

from __future__ import annotations

import logging
from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime, timedelta

from core.clock import Clock
from core.ledger.db import Ledger
from core.ledger.drift_attention import record_drift
from core.ledger.materialize import drift

#: How often an engine looks for drift, in clock time.
DRIFT_EVERY = timedelta(hours=1)

_log = logging.getLogger(__name__)


@dataclass
class DriftWatch:
    """When this engine last looked for drift (None: not yet)."""

    checked_at: datetime | None = None


def check_drift(ledger: Ledger, clock: Clock, watch: DriftWatch, *, hold: Collection[str] = ()) -> list[str] | None:
    """Look for drift when :data:`DRIFT_EVERY` has passed since the last look (None:
    not looked this time). Schedules in ``hold`` (their revision cannot be read, or
    this engine does not run them) are left out. Returns the schedules newly
    recorded as drifted."""
    now = clock.now()
    if watch.checked_at is not None and now - watch.checked_at < DRIFT_EVERY:
        return None
    watch.checked_at = now
    with ledger.read() as session:
        items = [item for item in drift(session, clock) if item.schedule_id not in hold]
    if not items:
        return []
    with ledger.write() as session:
        recorded = record_drift(session, now, items)
    for sid in recorded:
        _log.warning("schedule %s: the installed tz database would move materialized runs; kept as they are", sid)
    return recorded
