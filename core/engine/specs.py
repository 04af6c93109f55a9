"""Published revisions read as specs. Revisions never change, so each is parsed once."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.ledger.compiled import stored_spec
from core.ledger.models import Revision
from core.spec import ScheduleSpec


def active_spec(session: Session, schedule_id: str) -> ScheduleSpec:
    """The spec of the schedule's newest revision."""
    text = session.scalar(
        select(Revision.spec_json)
        .where(Revision.schedule_id == schedule_id)
        .order_by(Revision.revision.desc())
        .limit(1)
    )
    assert text is not None
    return stored_spec(text)


class Specs:
    """One engine's specs by (schedule, revision), read from its ledger once each."""

    def __init__(self) -> None:
        self._specs: dict[tuple[str, int], ScheduleSpec] = {}

    def of(self, session: Session, schedule_id: str, revision: int) -> ScheduleSpec:
        """The spec of one revision."""
        spec = self._specs.get((schedule_id, revision))
        if spec is None:
            text = session.scalar(
                select(Revision.spec_json).where(Revision.schedule_id == schedule_id, Revision.revision == revision)
            )
            assert text is not None
            spec = self._specs[(schedule_id, revision)] = stored_spec(text)
        return spec
