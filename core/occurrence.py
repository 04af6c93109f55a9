"""One row of an expansion: an occurrence that exists, with its identity,
nominal and resolved times kept apart, its status and the reason for it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from core.enums import Status
from core.timefmt import fmt_local, fmt_utc
from core.zones import format_offset


@dataclass(slots=True)
class Occurrence:
    """A row of docs/contract.md §2. Times: ``nominal`` naive wall time; ``resolved`` and
    ``position`` aware UTC; ``offset``/``abbreviation`` of the resolved instant."""

    schedule_id: str
    revision: int
    nominal: datetime
    fold_ordinal: int
    status: Status
    resolved: datetime | None
    position: datetime
    offset: timedelta | None
    abbreviation: str | None
    reason: str | None
    occurrence_id: str
    logical_slot_id: str | None
    nominal_local: str
    resolved_utc: str | None
    period: str | None = None
    dispatch_delay: int = 0  # seconds of jitter, from the occurrence id

    @property
    def runnable(self) -> bool:
        return self.status.runnable

    @property
    def resolved_local(self) -> datetime | None:
        """The resolved instant on the zone's wall clock (naive)."""
        if self.resolved is None or self.offset is None:
            return None
        return (self.resolved + self.offset).replace(tzinfo=None)

    @property
    def dispatch(self) -> datetime | None:
        if self.resolved is None:
            return None
        return self.resolved + timedelta(seconds=self.dispatch_delay)

    def sort_key(self) -> tuple[datetime, str, int]:
        return (self.position, self.nominal_local, self.fold_ordinal)

    def to_json(self) -> dict[str, Any]:
        """The preview.v1 shape of this row."""
        local = self.resolved_local
        return {
            "occurrenceId": self.occurrence_id,
            "logicalSlotId": self.logical_slot_id,
            "nominalLocal": self.nominal_local,
            "foldOrdinal": self.fold_ordinal,
            "status": self.status.value,
            "resolvedUtc": self.resolved_utc,
            "resolvedLocal": fmt_local(local) + format_offset(self.offset) if local is not None else None,
            "utcOffset": format_offset(self.offset) if local is not None else None,
            "positionUtc": fmt_utc(self.position),
            "reason": self.reason,
            "businessPeriod": self.period,
            "dispatchUtc": fmt_utc(d) if (d := self.dispatch) is not None else None,
        }
