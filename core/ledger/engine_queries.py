"""The engines a ledger has seen, for the window's Engines view: who runs each,
with which labels, trusting whom, which Tidemark, when it was last seen, and
which schedules it will not run and why, and which occurrences it runs now
(docs/ledger.md, "Teams", "Where a task runs"). A pure
read.

An engine's claims name its process, not its row: a claimed occurrence's
``lease_owner`` is ``host:pid:token`` (:class:`core.engine.engine.Engine`), and
the engine's row records the same host and pid. An occurrence DISPATCHING or
RUNNING under such a claim is counted for the freshest row of that host and pid
(an app that restarts its engine keeps its pid: the earlier, retired row runs
nothing)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.ledger.models import EngineRow, Occurrence, Revision, Schedule
from core.ledger.publishers import wants_columns, wants_of
from core.ledger.states import EngineKind, EnginePresence, OccurrenceState, ScheduleState
from core.team.placement import Placement, Wants, refusal


@dataclass(frozen=True)
class RunningNow:
    """An occurrence an engine has claimed and is starting or running."""

    occurrence_id: str
    schedule_id: str
    #: Its nominal wall time in the schedule's zone, ``2026-03-02T02:30:00``.
    nominal_local: str
    state: OccurrenceState


@dataclass(frozen=True)
class EngineView:
    """One engine's row, with the active schedules it refuses."""

    engine_id: str
    host: str
    kind: EngineKind
    state: EnginePresence
    live: bool
    last_seen: datetime
    #: None for an engine from before ledger migration 0008 (it runs everything).
    os_user: str | None
    labels: Mapping[str, str] | None
    trusts: tuple[str, ...] | None
    version: str | None
    #: (schedule, why) for each active schedule whose active revision it does not run.
    refuses: tuple[tuple[str, str], ...]
    #: What it has claimed and is starting or running now, by schedule and nominal time.
    running: tuple[RunningNow, ...] = ()


def _active_wants(session: Session) -> list[tuple[str, Wants]]:
    rows = session.execute(
        select(Schedule.id, *wants_columns(session))
        .join(Revision, (Revision.schedule_id == Schedule.id) & (Revision.revision == Schedule.active_revision))
        .where(Schedule.state == ScheduleState.ACTIVE)
        .order_by(Schedule.id)
    )
    return [(sid, wants_of(session, text, publisher, host)) for sid, text, publisher, host in rows]


def _running_by_process(session: Session) -> dict[str, list[RunningNow]]:
    """The occurrences starting or running now, by their claim's ``host:pid``."""
    rows = session.execute(
        select(
            Occurrence.lease_owner,
            Occurrence.occurrence_id,
            Occurrence.schedule_id,
            Occurrence.nominal_local,
            Occurrence.state,
        )
        .where(
            Occurrence.state.in_((OccurrenceState.DISPATCHING, OccurrenceState.RUNNING)),
            Occurrence.lease_owner.is_not(None),
        )
        .order_by(Occurrence.schedule_id, Occurrence.nominal_local, Occurrence.occurrence_id)
    )
    out: dict[str, list[RunningNow]] = {}
    for owner, occurrence_id, schedule_id, nominal, state in rows:
        process, _, _token = str(owner).rpartition(":")
        out.setdefault(process, []).append(RunningNow(occurrence_id, schedule_id, nominal, state))
    return out


def engine_views(session: Session, now: datetime, stale_after: timedelta) -> list[EngineView]:
    """Every engine the ledger remembers, live ones first, freshest first; live when it has not
    retired and beat within ``stale_after`` of ``now``."""
    wants = _active_wants(session)
    running = _running_by_process(session)
    out = []
    for row in session.scalars(
        select(EngineRow).order_by(EngineRow.last_heartbeat.desc(), EngineRow.host, EngineRow.engine_id)
    ):
        refuses: list[tuple[str, str]] = []
        if row.labels is not None:
            placement = Placement(dict(row.labels), frozenset(row.trusts or ()))
            refuses = [(sid, why) for sid, w in wants if (why := refusal(placement, w)) is not None]
        live = row.state is not EnginePresence.RETIRED and row.last_heartbeat >= now - stale_after
        trusts = tuple(row.trusts) if row.trusts is not None else None
        out.append(
            EngineView(
                row.engine_id,
                row.host,
                row.kind,
                row.state,
                live,
                row.last_heartbeat,
                row.os_user,
                row.labels,
                trusts,
                row.version,
                tuple(refuses),
                tuple(running.pop(f"{row.host}:{row.pid}", ())),  # the freshest row of the process takes them
            )
        )
    return sorted(out, key=lambda e: not e.live)
