"""Business periods kept with the cursor (migration 0013), so a new process resumes there.

A schedule with ``businessPeriod`` settles which row of each period runs from
its beginning (:mod:`core.recurrence.periods`). Materialization stores, with
the cursor, the state of its periods at the latest period start at or before
it: ``schedules.period_revision`` (the revision it is of) and
``schedules.period_state``, JSON text::

    {"at": "2026-03-02T14:00:00+00:00", "tzdb": "2025b", "holidays": "0.62",
     "winners": [["2026-03-02", "occ-…", "2026-03-02T09:00:00"], …]}

A state is a fact about one revision's expansion with one tz database and one
holidays release: read back under another (an upgrade), it is not used and the
expansion walks from the beginning, as before.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime

from core.recurrence.compile import CompiledSchedule
from core.recurrence.expand import nominal_floor
from core.recurrence.periods import Kept, PeriodMarks, PeriodState, pruned


@dataclass(frozen=True)
class StoredPeriods:
    """A period state as the ledger keeps it: of which revision, under which data."""

    revision: int
    state: PeriodState
    tzdb: str
    holidays: str | None

    def usable(self, revision: int, tzdb: str, holidays: str | None) -> PeriodState | None:
        """The state, when it is of ``revision`` under the data in use; else None."""
        if (self.revision, self.tzdb, self.holidays) != (revision, tzdb, holidays):
            return None
        return self.state


def dump_periods(stored: StoredPeriods) -> str:
    """``schedules.period_state``'s text for ``stored``."""
    winners = [[period, kept.occurrence_id, kept.nominal_local] for period, kept in stored.state.winners.items()]
    return json.dumps(
        {"at": stored.state.at.isoformat(), "tzdb": stored.tzdb, "holidays": stored.holidays, "winners": winners},
        separators=(",", ":"),
    )


def load_periods(revision: int | None, text: str | None) -> StoredPeriods | None:
    """The state stored with a schedule's cursor; None without one, or when it cannot be read
    (the expansion then walks from the beginning)."""
    if revision is None or not text:
        return None
    try:
        found = json.loads(text)
        at = datetime.fromisoformat(found["at"])
        winners = {str(p): Kept(str(occ), str(nominal)) for p, occ, nominal in found["winners"]}
        tzdb, holidays = str(found["tzdb"]), found["holidays"]
    except (ValueError, TypeError, KeyError):
        return None
    if at.tzinfo is None or not (holidays is None or isinstance(holidays, str)):
        return None
    return StoredPeriods(revision, PeriodState(at, winners), tzdb, holidays)


def periods_to_store(
    compiled: CompiledSchedule, marks: PeriodMarks, end: datetime, tzdb: str, holidays: str | None
) -> StoredPeriods | None:
    """What to store with a cursor at ``end``: the state at the latest period start at or before
    it, without the periods that can no longer come back; None when there is none to keep."""
    template = compiled.facts.business_period
    state = marks.state_before(end)
    if template is None or state is None:
        return None
    kept = pruned(state, template, nominal_floor(compiled, state.at))
    return StoredPeriods(compiled.facts.revision, kept, tzdb, holidays) if kept is not None else None
