"""Publishing several specs at once (a team's workspace): all of them, or none.

:func:`publish_all` publishes each spec as its schedule's next revision, with
:func:`core.ledger.publish.publish` (each revision its own row, its events,
its cancellations), inside the caller's one write transaction. Every spec is
tried, each in a savepoint, so that every refusal is reported at once; the
caller rolls the transaction back when any spec was refused, and nothing is
published. A crash part-way leaves nothing either: a rerun publishes them all.

A spec whose revision is already published with the same content is
*unchanged*: nothing is written for it, so applying a workspace again
publishes only the files whose revision moved on. The same number with other
content is refused, as one spec's publish refuses it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select, tuple_
from sqlalchemy.orm import Session

from core.clock import Clock
from core.errors import PublishError
from core.ledger.models import Revision
from core.ledger.publish import PublishResult, RevisionSource, publish
from core.spec import ScheduleSpec
from core.spec_canonical import canonical_dict
from core.timefmt import parse_instant

#: (schedule, revision) pairs looked up per statement.
_LOOKUP = 500


@dataclass(frozen=True)
class Item:
    """One spec to publish: the name of the file it was read from (for messages), the spec,
    and the file its revision records (None: not known, e.g. standard input)."""

    name: str
    spec: ScheduleSpec
    source: RevisionSource | None = None


@dataclass(frozen=True)
class Outcome:
    """What became of one item: published (``result``), unchanged, or refused (``refused``)."""

    item: Item
    result: PublishResult | None = None
    refused: PublishError | None = None

    @property
    def unchanged(self) -> bool:
        return self.result is None and self.refused is None


def _published_texts(session: Session, items: Sequence[Item]) -> dict[tuple[str, int], dict[str, Any]]:
    """The stored canonical text of each item's revision, where it is published already."""
    pairs = sorted({(i.spec.schedule_id, i.spec.revision) for i in items})
    found: dict[tuple[str, int], dict[str, Any]] = {}
    for start in range(0, len(pairs), _LOOKUP):
        stmt = select(Revision.schedule_id, Revision.revision, Revision.spec_json).where(
            tuple_(Revision.schedule_id, Revision.revision).in_(pairs[start : start + _LOOKUP])
        )
        found.update({(sid, number): json.loads(text) for sid, number, text in session.execute(stmt)})
    return found


def same_as_published(spec: ScheduleSpec, stored: dict[str, Any]) -> bool:
    """Whether ``spec`` says what the published revision ``stored`` says: the values publishing
    filled in (cutoverAt, tzdbVersion) are the stored ones when the spec leaves them out."""
    mine = canonical_dict(spec, cutover_at=parse_instant(stored["cutoverAt"]), fill_tzdb=False)
    if not mine.get("tzdbVersion"):
        mine["tzdbVersion"] = stored.get("tzdbVersion")
    return mine == stored


def publish_all(session: Session, items: Sequence[Item], clock: Clock, *, check_task: bool = True) -> list[Outcome]:
    """Publish every item in the caller's transaction (see the module), in order; one outcome each.

    The caller rolls back when any outcome is refused. Two items with one schedule id
    are the caller's to refuse before (which of them would win is no choice to make here).
    """
    published = _published_texts(session, items)
    outcomes: list[Outcome] = []
    for item in items:
        stored = published.get((item.spec.schedule_id, item.spec.revision))
        if stored is not None and same_as_published(item.spec, stored):
            outcomes.append(Outcome(item))
            continue
        try:
            # No savepoint: publish refuses before it writes, and a refusal rolls everything back.
            result = publish(session, item.spec, clock, check_task=check_task, source=item.source)
        except PublishError as exc:
            outcomes.append(Outcome(item, refused=exc))
            continue
        outcomes.append(Outcome(item, result))
    return outcomes
