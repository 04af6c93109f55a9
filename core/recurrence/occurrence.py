"""One row of an expansion: an occurrence that exists, with its identity,
nominal and resolved times kept apart, its status and the reason for it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from core.enums import Status
from core.time.formats import fmt_local, fmt_utc
from core.time.zones import format_offset


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
        return dict(zip(ROW_KEYS, self.json_values(), strict=True))

    def json_values(self) -> tuple[Any, ...]:
        """The values of :meth:`to_json`, in the order of :data:`ROW_KEYS` (what the renderers write)."""
        offset = self.offset
        resolved_utc = self.resolved_utc
        status = self.status
        if self.resolved is None or offset is None:
            local = utc_offset = None
        else:
            utc_offset = format_offset(offset)
            # A SCHEDULED row runs at its nominal wall time: no arithmetic to find it again.
            wall = self.nominal_local if status is Status.SCHEDULED else fmt_local(self.resolved + offset)
            local = wall + utc_offset
        if resolved_utc is not None and self.position == self.resolved:
            position = resolved_utc  # the same instant, already written
        else:
            position = fmt_utc(self.position)
        dispatch = resolved_utc if not self.dispatch_delay else fmt_utc(d) if (d := self.dispatch) else None
        return (
            self.occurrence_id,
            self.logical_slot_id,
            self.nominal_local,
            self.fold_ordinal,
            status._value_,  # the plain text, without the enum's property
            resolved_utc,
            local,
            utc_offset,
            position,
            self.reason,
            self.period,
            dispatch,
        )


#: The keys of :meth:`Occurrence.to_json`, in order.
ROW_KEYS = (
    "occurrenceId",
    "logicalSlotId",
    "nominalLocal",
    "foldOrdinal",
    "status",
    "resolvedUtc",
    "resolvedLocal",
    "utcOffset",
    "positionUtc",
    "reason",
    "businessPeriod",
    "dispatchUtc",
)
