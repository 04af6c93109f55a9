"""Engine presence: every engine on a ledger announces itself, beats, and retires.

The desktop app's embedded engine and ``schedctl engine run`` (in another
process, or on another machine sharing a PostgreSQL ledger) each keep one row
in the ``engines`` table. A row whose last heartbeat is older than
``stale_after`` belongs to an engine that stopped without retiring (killed,
crashed, machine off) and is not counted as live.

Staleness is judged on the reader's clock, so machines sharing a ledger need
roughly synchronized clocks (NTP), as they already do for leases.

Nothing here reads the system clock: every function takes a :class:`Clock` or
an instant.
"""

from __future__ import annotations

import os
import socket
import threading
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import NewType

from sqlalchemy import delete, func, select, update
from sqlalchemy.orm import Session

from core.clock import Clock
from core.errors import LedgerError
from core.ledger.db import Ledger
from core.ledger.models import EngineKind, EnginePresence, EngineRow, Occurrence, Schedule
from core.ledger.states import OccurrenceState, ScheduleState
from core.timefmt import fmt_utc

EngineId = NewType("EngineId", str)

#: How often a running engine writes its heartbeat.
HEARTBEAT_EVERY = timedelta(seconds=5)
#: A heartbeat older than this means the engine is gone.
STALE_AFTER = timedelta(seconds=30)
#: Rows of retired or long-silent engines are removed after this long.
FORGET_AFTER = timedelta(days=7)


@dataclass(frozen=True)
class EngineInfo:
    """One engine's row, as another engine or the window sees it."""

    engine_id: EngineId
    host: str
    pid: int
    kind: EngineKind
    state: EnginePresence
    started_at: datetime
    last_heartbeat: datetime

    def describe(self, now: datetime) -> str:
        """One sentence naming the engine: where it runs and when it was last seen."""
        what = "the desktop app's engine" if self.kind is EngineKind.APP else "a headless engine (schedctl engine run)"
        ago = max(0, int((now - self.last_heartbeat).total_seconds()))
        paused = ", paused" if self.state is EnginePresence.PAUSED else ""
        return (
            f"{what} on {self.host} (pid {self.pid}{paused}), last seen {ago} s ago at {fmt_utc(self.last_heartbeat)}"
        )


class EngineRunningError(LedgerError):
    """Another live engine dispatches on this ledger and a second one was not allowed."""

    def __init__(self, other: EngineInfo, now: datetime) -> None:
        self.other = other
        super().__init__(
            f"another engine already runs on this ledger: {other.describe(now)}; "
            "stop it first, or pass --allow-second to run two dispatchers"
        )


def _info(row: EngineRow) -> EngineInfo:
    return EngineInfo(
        EngineId(row.engine_id), row.host, row.pid, row.kind, row.state, row.started_at, row.last_heartbeat
    )


def live_engines(
    session: Session, now: datetime, stale_after: timedelta = STALE_AFTER, *, exclude: str | None = None
) -> list[EngineInfo]:
    """Engines that have not retired and beat within ``stale_after`` of ``now``, freshest first."""
    stmt = (
        select(EngineRow)
        .where(EngineRow.state != EnginePresence.RETIRED, EngineRow.last_heartbeat >= now - stale_after)
        .order_by(EngineRow.last_heartbeat.desc(), EngineRow.engine_id)
    )
    if exclude is not None:
        stmt = stmt.where(EngineRow.engine_id != exclude)
    return [_info(row) for row in session.scalars(stmt)]


def other_dispatcher(
    session: Session, now: datetime, stale_after: timedelta = STALE_AFTER, *, exclude: str | None = None
) -> EngineInfo | None:
    """A live engine other than ``exclude`` that is dispatching (not paused), or None."""
    for info in live_engines(session, now, stale_after, exclude=exclude):
        if info.state is EnginePresence.RUNNING:
            return info
    return None


def announce(
    ledger: Ledger,
    clock: Clock,
    kind: EngineKind | str,
    *,
    exclusive: bool = False,
    state: EnginePresence = EnginePresence.RUNNING,
    stale_after: timedelta = STALE_AFTER,
    host: str | None = None,
    pid: int | None = None,
) -> EngineId:
    """Record a new engine on the ledger and return its id.

    With ``exclusive``, refuse (:class:`EngineRunningError`, nothing written)
    when another live engine is dispatching; the check and the insert are one
    write transaction, so two engines starting together cannot both pass it.
    Rows of engines retired or silent for longer than :data:`FORGET_AFTER` are
    removed on the way.
    """
    now = clock.now()
    engine_id = EngineId(str(uuid.uuid4()))
    with ledger.write() as session:  # holds the write lock: check and insert are one step
        if exclusive:
            other = other_dispatcher(session, now, stale_after)
            if other is not None:
                raise EngineRunningError(other, now)
        session.execute(delete(EngineRow).where(EngineRow.last_heartbeat < now - FORGET_AFTER))
        session.add(
            EngineRow(
                engine_id=engine_id,
                host=host if host is not None else socket.gethostname(),
                pid=pid if pid is not None else os.getpid(),
                kind=EngineKind(kind),
                state=state,
                started_at=now,
                last_heartbeat=now,
                retired_at=None,
            )
        )
    return engine_id


def heartbeat(ledger: Ledger, clock: Clock, engine_id: str, state: EnginePresence | None = None) -> bool:
    """Say the engine is still there (and, when given, whether it runs or is paused).

    Returns False when its row is gone or retired (nothing is written then).
    """
    if state is EnginePresence.RETIRED:
        raise ValueError("use retire() to retire an engine")
    values: dict[str, object] = {"last_heartbeat": clock.now()}
    if state is not None:
        values["state"] = state
    with ledger.write() as session:
        result = session.execute(
            update(EngineRow)
            .where(EngineRow.engine_id == engine_id, EngineRow.state != EnginePresence.RETIRED)
            .values(**values)
        )
        return bool(getattr(result, "rowcount", 0))


def retire(ledger: Ledger, clock: Clock, engine_id: str) -> None:
    """Record that the engine stopped (idempotent)."""
    now = clock.now()
    with ledger.write() as session:
        session.execute(
            update(EngineRow)
            .where(EngineRow.engine_id == engine_id, EngineRow.state != EnginePresence.RETIRED)
            .values(state=EnginePresence.RETIRED, retired_at=now, last_heartbeat=now)
        )


class Heartbeat:
    """A daemon thread that beats for one engine every ``every`` until :meth:`stop`.

    The interval is waited on a ``threading.Event`` (real time); the instant
    written comes from the clock. A failed beat (ledger locked for a while) is
    kept in :attr:`last_error` and retried at the next interval.
    """

    def __init__(
        self,
        ledger: Ledger,
        clock: Clock,
        engine_id: str,
        every: timedelta = HEARTBEAT_EVERY,
    ) -> None:
        self.ledger = ledger
        self.clock = clock
        self.engine_id = engine_id
        self.every = every
        self.state: EnginePresence = EnginePresence.RUNNING
        self.last_error: Exception | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="tidemark-presence", daemon=True)

    def start(self) -> Heartbeat:
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.wait(self.every.total_seconds()):
            try:
                heartbeat(self.ledger, self.clock, self.engine_id, self.state)
                self.last_error = None
            except Exception as exc:
                self.last_error = exc

    def stop(self) -> None:
        """Stop beating and wait for the thread (one beat at most)."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()


@dataclass(frozen=True)
class Outlook:
    """What an engine is doing and what comes next, for a status bar."""

    #: Occurrences this engine (its lease owner name) is starting or running now.
    tasks_running: int
    #: The earliest dispatch time of an active schedule's PLANNED, DUE or waiting retry.
    next_due_at: datetime | None
    next_due_schedule: str | None


def outlook(session: Session, lease_owner: str | None) -> Outlook:
    """The engine's running tasks and the ledger's next due occurrence (two small indexed reads)."""
    running = 0
    if lease_owner is not None:
        running = (
            session.scalar(
                select(func.count())
                .select_from(Occurrence)
                .where(
                    Occurrence.state.in_((OccurrenceState.DISPATCHING, OccurrenceState.RUNNING)),
                    Occurrence.lease_owner == lease_owner,
                )
            )
            or 0
        )
    # One ordered, limited read per state, so each walks the (state, due_at) index from its start
    # instead of sorting every pending row (a ledger can hold millions).
    best: tuple[datetime, str] | None = None
    for state, column in (
        (OccurrenceState.DUE, Occurrence.due_at),
        (OccurrenceState.PLANNED, Occurrence.due_at),
        (OccurrenceState.RETRY_WAIT, Occurrence.retry_at),
    ):
        row = session.execute(
            select(column, Occurrence.schedule_id)
            .join(Schedule, Schedule.id == Occurrence.schedule_id)
            .where(Occurrence.state == state, Schedule.state == ScheduleState.ACTIVE, column.is_not(None))
            .order_by(column)
            .limit(1)
        ).first()
        if row is None or row[0] is None:
            continue
        when: datetime = row[0]
        if best is None or when < best[0]:
            best = (when, row[1])
    if best is None:
        return Outlook(int(running), None, None)
    return Outlook(int(running), best[0], best[1])
