"""Publishing several specs at once (a team's workspace): checked whole, then written in short batches.

:func:`publish_all` first asks, in one read, everything publishing could
refuse of every spec (a missing task or program, a revision number that is
not above the published ones, pinned rules that are not here), before it
writes anything: when any spec would be refused, nothing is published and
every refusal is returned. Then it publishes each spec with
:func:`core.ledger.publish.publish` (each revision its own row, its events,
its cancellations), :data:`BATCH` specs per write transaction, so that no
transaction holds the write lock for long while a workspace of thousands of
specs is published and an engine or a ``schedctl`` command waits at most one
batch.

A spec whose revision is already published with the same content is
*unchanged*: nothing is written for it. So a crash part-way, or another
publisher's revision slipping in between the check and a batch (that batch
rolls back and the run stops, said as a refusal), leaves a state that running
the same apply again completes: what was published is then unchanged.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, select, tuple_
from sqlalchemy.orm import Session

from core.clock import Clock
from core.errors import PublishError
from core.ledger.db import Ledger
from core.ledger.models import Revision
from core.ledger.publish import PublishResult, RevisionSource, publish, refuse_number, refuse_pin, refuse_task
from core.spec.canonical import canonical_dict
from core.spec.model import ScheduleSpec
from core.team.actor import Actor
from core.time.formats import parse_instant

#: Specs published per write transaction (a few milliseconds each on SQLite: about 50 ms a batch).
BATCH = 10
#: Values looked up per statement.
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
    """What became of one item: published (``result``), refused (``refused``), left
    unpublished because another was refused (``left``), or else unchanged."""

    item: Item
    result: PublishResult | None = None
    refused: PublishError | None = None
    left: bool = False

    @property
    def unchanged(self) -> bool:
        return self.result is None and self.refused is None and not self.left


def same_as_published(spec: ScheduleSpec, stored: dict[str, Any]) -> bool:
    """Whether ``spec`` says what the published revision ``stored`` says: the values publishing
    filled in (cutoverAt, tzdbVersion) are the stored ones when the spec leaves them out."""
    mine = canonical_dict(spec, cutover_at=parse_instant(stored["cutoverAt"]), fill_tzdb=False)
    if not mine.get("tzdbVersion"):
        mine["tzdbVersion"] = stored.get("tzdbVersion")
    return mine == stored


def _ledger_state(session: Session, items: Sequence[Item]) -> tuple[dict[str, int], dict[tuple[str, int], Any]]:
    """Each schedule's highest published revision, and the stored text of each item's revision
    where it is published already (two statements per :data:`_LOOKUP` items)."""
    ids = sorted({i.spec.schedule_id for i in items})
    pairs = sorted({(i.spec.schedule_id, i.spec.revision) for i in items})
    latest: dict[str, int] = {}
    texts: dict[tuple[str, int], Any] = {}
    for start in range(0, len(ids), _LOOKUP):
        chunk = ids[start : start + _LOOKUP]
        stmt = select(Revision.schedule_id, func.max(Revision.revision)).where(Revision.schedule_id.in_(chunk))
        latest.update({sid: number for sid, number in session.execute(stmt.group_by(Revision.schedule_id))})
    for start in range(0, len(pairs), _LOOKUP):
        where = tuple_(Revision.schedule_id, Revision.revision).in_(pairs[start : start + _LOOKUP])
        rows = session.execute(select(Revision.schedule_id, Revision.revision, Revision.spec_json).where(where))
        texts.update({(sid, number): json.loads(text) for sid, number, text in rows})
    return latest, texts


def check_all(session: Session, items: Sequence[Item], *, check_task: bool = True) -> list[Outcome | None]:
    """Per item: unchanged (an outcome), refused (an outcome), or None: to publish. Reads only."""
    latest, texts = _ledger_state(session, items)
    checked: list[Outcome | None] = []
    for item in items:
        spec = item.spec
        stored = texts.get((spec.schedule_id, spec.revision))
        if stored is not None and same_as_published(spec, stored):
            checked.append(Outcome(item))
            continue
        try:
            refuse_task(spec, check_task=check_task)
            refuse_number(spec, latest.get(spec.schedule_id))
            refuse_pin(spec)
        except PublishError as exc:
            checked.append(Outcome(item, refused=exc))
            continue
        checked.append(None)
    return checked


def publish_all(
    ledger: Ledger, items: Sequence[Item], clock: Clock, *, check_task: bool = True, actor: Actor | None = None
) -> list[Outcome]:
    """Check every item, then publish those to publish in batches (see the module); one outcome each,
    in order. When any is refused by the check, nothing is written. Two items with one schedule id
    are the caller's to refuse before (which of them would win is no choice to make here)."""
    with ledger.read() as session:
        checked = check_all(session, items, check_task=check_task)
    if any(o is not None and o.refused is not None for o in checked):
        return [o if o is not None else Outcome(item, left=True) for item, o in zip(items, checked, strict=True)]
    todo = [i for i, o in enumerate(checked) if o is None]
    outcomes: dict[int, Outcome] = {}
    for start in range(0, len(todo), BATCH):
        batch = todo[start : start + BATCH]
        done: dict[int, PublishResult] = {}
        try:
            with ledger.write(actor) as session:
                for index in batch:
                    item = items[index]
                    done[index] = publish(session, item.spec, clock, check_task=False, source=item.source)
                    session.flush()
                    session.expunge_all()  # a long batch's flushes stay as cheap as its first
        except PublishError as exc:  # another publisher got in between the check and this batch
            failed = next(i for i in batch if i not in done)
            outcomes[failed] = Outcome(items[failed], refused=exc)
            break
        outcomes.update({index: Outcome(items[index], result) for index, result in done.items()})
    return [o if o is not None else outcomes.get(i, Outcome(items[i], left=True)) for i, o in enumerate(checked)]
