"""Which schedules an engine materializes when several share a ledger.

Every live engine (:func:`core.engine.presence.live_engines`) takes the schedules
whose id hashes to its place among them (CRC-32 of the id modulo their number, in
engine id order), so two engines do not redo each other's work. A schedule just
published (no ``materialize_at`` yet) is taken by whichever engine comes first,
and one left behind longer than :data:`~core.engine.presence.STALE_AFTER` (its
engine died, or does not run it: labels, trust) by any: materialization is
idempotent (rows are keyed by occurrence id, the cursor moves by compare-and-set),
so two engines that do meet write each row once.

The live engines are read once per :data:`~core.engine.presence.HEARTBEAT_EVERY`
of the engine's clock, not every pass.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from datetime import datetime

from core.engine.presence import HEARTBEAT_EVERY, STALE_AFTER, live_engines
from core.ledger.db import Ledger


@dataclass
class Share:
    """One engine's share of the schedules to materialize."""

    engine_id: str | None = None
    """This engine's presence row (None: not announced; it takes every schedule)."""
    engines: tuple[str, ...] = ()
    """The live engines as last read, in id order."""
    read_at: datetime | None = None

    def refresh(self, ledger: Ledger, now: datetime) -> None:
        """Read the live engines again when :data:`HEARTBEAT_EVERY` has passed since the last read."""
        if self.engine_id is None or (self.read_at is not None and now - self.read_at < HEARTBEAT_EVERY):
            return
        with ledger.read() as session:
            self.engines = tuple(sorted(info.engine_id for info in live_engines(session, now)))
        self.read_at = now

    def takes(self, schedule_id: str, materialize_at: datetime | None, now: datetime) -> bool:
        """Whether this engine materializes ``schedule_id`` now (see the module)."""
        if materialize_at is None or materialize_at <= now - STALE_AFTER:
            return True  # just published, or its engine left it behind
        return self.owns(schedule_id)

    def beside_others(self) -> bool:
        """Whether other live engines share the ledger with this one, as last read."""
        return self.engine_id in self.engines and len(self.engines) >= 2

    def owns(self, schedule_id: str) -> bool:
        """Whether ``schedule_id`` hashes to this engine's place (True when it is alone or not
        announced). The dispatch also starts on these first (:meth:`core.engine.engine.Engine._spread`)."""
        if not self.beside_others():
            return True
        return self.engines[zlib.crc32(schedule_id.encode()) % len(self.engines)] == self.engine_id
