"""Published revisions read as specs. Revisions never change, so each is parsed once."""

from __future__ import annotations

from collections.abc import Collection

from sqlalchemy import bindparam, func, select
from sqlalchemy.orm import Session

from core.ledger.compiled import stored_facts, stored_spec
from core.ledger.models import Revision
from core.ledger.prepared import Prepared
from core.spec.facts import SpecFacts
from core.spec.model import ScheduleSpec


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


def active_specs(session: Session, schedule_ids: Collection[str]) -> dict[str, SpecFacts]:
    """What the misfire step reads of these schedules' newest revisions (their policies and
    windows), in one statement; the spec's models are not kept for it (:func:`stored_facts`)."""
    if not schedule_ids:
        return {}
    newest = (
        select(Revision.schedule_id, func.max(Revision.revision).label("revision"))
        .where(Revision.schedule_id.in_(schedule_ids))
        .group_by(Revision.schedule_id)
        .subquery()
    )
    rows = session.execute(
        select(Revision.schedule_id, Revision.spec_json).join(
            newest, (Revision.schedule_id == newest.c.schedule_id) & (Revision.revision == newest.c.revision)
        )
    )
    return {sid: stored_facts(text) for sid, text in rows}


#: One revision's text, built once (an engine's first pass reads every revision it runs).
_SPEC_TEXT = Prepared(
    select(Revision.spec_json).where(
        Revision.schedule_id == bindparam("p_schedule"), Revision.revision == bindparam("p_revision")
    )
)


class Specs:
    """One engine's specs by (schedule, revision), read from its ledger once each."""

    def __init__(self) -> None:
        self._specs: dict[tuple[str, int], ScheduleSpec] = {}

    def of(self, session: Session, schedule_id: str, revision: int) -> ScheduleSpec:
        """The spec of one revision."""
        spec = self._specs.get((schedule_id, revision))
        if spec is None:
            row = _SPEC_TEXT.first(session, {"p_schedule": schedule_id, "p_revision": revision})
            assert row is not None
            spec = self._specs[(schedule_id, revision)] = stored_spec(row[0])
        return spec
