"""Published revisions as the engine reads them. Revisions never change, so each is parsed once."""

from __future__ import annotations

from collections.abc import Collection

from sqlalchemy import bindparam, func, select
from sqlalchemy.orm import Session

from core.ledger.compiled import stored_facts, stored_run
from core.ledger.id_lists import among
from core.ledger.models import Revision
from core.ledger.prepared import Prepared
from core.spec.facts import RunFacts, SpecFacts


def active_run(session: Session, schedule_id: str) -> RunFacts:
    """What runs read of the schedule's newest revision (:func:`stored_run`)."""
    text = session.scalar(
        select(Revision.spec_json)
        .where(Revision.schedule_id == schedule_id)
        .order_by(Revision.revision.desc())
        .limit(1)
    )
    assert text is not None
    return stored_run(text)


def active_specs(session: Session, schedule_ids: Collection[str]) -> dict[str, SpecFacts]:
    """What the misfire step reads of these schedules' newest revisions (their policies and
    windows), in one statement; the spec's models are not kept for it (:func:`stored_facts`)."""
    if not schedule_ids:
        return {}
    newest = (
        select(Revision.schedule_id, func.max(Revision.revision).label("revision"))
        .where(among(session, Revision.schedule_id, schedule_ids))
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
    """What one engine's claims, outcomes and recovery read of each revision it runs, by
    (schedule, revision), read from its ledger once each: :class:`~core.spec.facts.RunFacts`,
    never the whole spec (whoever rarely needs that reads it again:
    :func:`core.ledger.compiled.stored_spec`)."""

    def __init__(self) -> None:
        self._runs: dict[tuple[str, int], RunFacts] = {}

    def of(self, session: Session, schedule_id: str, revision: int) -> RunFacts:
        """What runs read of one revision."""
        run = self._runs.get((schedule_id, revision))
        if run is None:
            row = _SPEC_TEXT.first(session, {"p_schedule": schedule_id, "p_revision": revision})
            assert row is not None
            run = self._runs[(schedule_id, revision)] = stored_run(row[0])
        return run
