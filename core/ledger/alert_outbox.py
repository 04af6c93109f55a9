"""The alert outbox: alerts written in the transaction of the state change they tell of.

:func:`enqueue` is called by :func:`core.ledger.events.append_many`, the one way
every event is written, so an occurrence that enters FAILED, UNKNOWN_EFFECT or
MISFIRE_EXPIRED (an :class:`OccurrenceTransitioned`) or a range of occurrences
expired at once (an :class:`OccurrencesExpired`) gets its alerts in the same
transaction, whoever moved it. Each (occurrence, kind, route) is one row, once:
a second write of it is ignored. The routes are the revision's ``alerts``, or
the ledger's default routes (``alert_routes``) when the spec has none.

A batch of events with nothing to tell costs one pass over the batch in memory
and no statement.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select, tuple_
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from core.enums import AlertKind
from core.identity import canonical
from core.ledger.event_types import NewEvent, OccurrencesExpired, OccurrenceTransitioned
from core.ledger.models import AlertOutbox, AlertRouteRow, Occurrence, Revision
from core.team.alert_routes import route_key
from core.time.formats import fmt_utc

_KINDS = frozenset(kind.value for kind in AlertKind)
_OUTBOX = AlertOutbox.metadata.tables[AlertOutbox.__tablename__]


@dataclass(frozen=True)
class Route:
    """One route and the kinds it hears of."""

    route: str
    kinds: frozenset[str]


def expired_range_id(schedule_id: str, revision: int, from_utc: datetime, to_utc: datetime) -> str:
    """The id an expired range's alert goes by (in place of an occurrence id), the same on every engine."""
    digest = hashlib.sha256(canonical([schedule_id, revision, fmt_utc(from_utc), fmt_utc(to_utc)]).encode())
    return "exp-" + digest.hexdigest()[:32]


def _told(batch: Iterable[NewEvent]) -> list[NewEvent]:
    """The events of ``batch`` that alerts tell of."""
    return [
        e
        for e in batch
        if (isinstance(e, OccurrenceTransitioned) and e.to.value in _KINDS)
        or (isinstance(e, OccurrencesExpired) and e.state.value in _KINDS)
    ]


def enqueue(session: Session, batch: Sequence[NewEvent]) -> int:
    """Write the alerts the events of ``batch`` call for; returns how many rows were offered."""
    told = _told(batch)
    if not told:
        return 0
    found = _occurrences(session, [e.occurrence_id for e in told if isinstance(e, OccurrenceTransitioned)])
    wanted = {(e.schedule_id, found[e.occurrence_id].revision) for e in told if e.occurrence_id in found}
    wanted |= {(e.schedule_id, e.revision) for e in told if isinstance(e, OccurrencesExpired)}
    routes = _routes(session, {k for k in wanted if k[0] is not None})  # type: ignore[misc]
    values: list[dict[str, Any]] = []
    for e in told:
        data = _data(e, found)
        if data is None:
            continue
        for route in routes.get((data["scheduleId"], data["revision"]), []):
            if data["state"] in route.kinds:
                values.append(_row(e, data, route.route))
    if values:
        _insert_ignoring_repeats(session, values)
    return len(values)


def _occurrences(session: Session, ids: list[str]) -> dict[str, Any]:
    """What an alert says of each of the occurrences ``ids``, by id; no statement when there are none
    (a batch that tells only of expired ranges)."""
    if not ids:
        return {}
    rows = session.execute(
        select(
            Occurrence.occurrence_id,
            Occurrence.revision,
            Occurrence.nominal_local,
            Occurrence.resolved_utc,
            Occurrence.attempt_count,
        ).where(Occurrence.occurrence_id.in_(ids))
    ).all()
    return {r.occurrence_id: r for r in rows}


def _data(e: NewEvent, found: dict[str, Any]) -> dict[str, Any] | None:
    """What the alert says, fixed now: None when its occurrence is not in the ledger."""
    if isinstance(e, OccurrencesExpired):
        return {
            "scheduleId": e.schedule_id,
            "revision": e.revision,
            "occurrenceId": expired_range_id(e.schedule_id, e.revision, e.from_utc, e.to_utc),
            "state": e.state.value,
            "reason": e.reason,
            "at": fmt_utc(e.at),
            "fromUtc": fmt_utc(e.from_utc),
            "toUtc": fmt_utc(e.to_utc),
            "occurrences": e.occurrences,
        }
    assert isinstance(e, OccurrenceTransitioned)
    row = found.get(e.occurrence_id)
    if row is None:
        return None
    return {
        "scheduleId": e.schedule_id,
        "revision": row.revision,
        "occurrenceId": e.occurrence_id,
        "state": e.to.value,
        "reason": e.reason,
        "at": fmt_utc(e.at),
        "attempt": e.attempt if e.attempt is not None else row.attempt_count,
        "nominalLocal": row.nominal_local,
        "scheduledUtc": fmt_utc(row.resolved_utc) if row.resolved_utc is not None else None,
    }


def _row(e: NewEvent, data: dict[str, Any], route: str) -> dict[str, Any]:
    return {
        "occurrence_id": data["occurrenceId"],
        "schedule_id": data["scheduleId"],
        "kind": data["state"],
        "route": route,
        "data": data,
        "created_at": e.at,
        "attempts": 0,
        "next_try_at": e.at,
    }


def _routes(session: Session, wanted: set[tuple[str, int]]) -> dict[tuple[str, int], list[Route]]:
    """The routes of each (schedule, revision): its spec's ``alerts``, else the ledger's defaults."""
    if not wanted:
        return {}
    specs = session.execute(
        select(Revision.schedule_id, Revision.revision, Revision.spec_json).where(
            tuple_(Revision.schedule_id, Revision.revision).in_(sorted(wanted))
        )
    ).all()
    out: dict[tuple[str, int], list[Route]] = {}
    defaults: list[Route] | None = None
    for sid, number, text in specs:
        alerts = json.loads(text).get("alerts")
        if alerts is None:
            if defaults is None:
                defaults = default_routes(session)
            out[(sid, number)] = defaults
        else:
            out[(sid, number)] = [Route(route_key(a["to"]), frozenset(a["on"])) for a in alerts]
    return out


def default_routes(session: Session) -> list[Route]:
    """The ledger's default routes, in route order."""
    rows = session.execute(select(AlertRouteRow.route, AlertRouteRow.kinds).order_by(AlertRouteRow.route)).all()
    return [Route(route, frozenset(kinds.split(","))) for route, kinds in rows]


def _insert_ignoring_repeats(session: Session, values: list[dict[str, Any]]) -> None:
    """Insert the rows; one already written (same occurrence, kind and route) is left as it is."""
    dialect = session.get_bind().dialect.name
    if dialect == "postgresql":
        stmt: Any = postgresql.insert(_OUTBOX).on_conflict_do_nothing(index_elements=["occurrence_id", "kind", "route"])
    else:
        stmt = sqlite.insert(_OUTBOX).on_conflict_do_nothing(index_elements=["occurrence_id", "kind", "route"])
    session.execute(stmt, values)
