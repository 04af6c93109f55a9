"""Engine presence: every engine on a ledger announces itself, beats, and retires.

The desktop app's embedded engine and ``schedctl engine run`` (in another
process, or on another machine sharing a PostgreSQL ledger) each keep one row
in the ``engines`` table. A row whose last heartbeat is older than
``stale_after`` belongs to an engine that stopped without retiring (killed,
crashed, machine off) and is not counted as live.

Each row also records its process (pid, start time, boot id; see
:mod:`core.engine.processes`). A row on this host whose process is gone (the
pid free, reused by another process, or from an earlier boot) is dead at once,
however fresh its heartbeat: it is not counted as live, and the next engine to
announce itself retires it with an ``engine.found_gone`` event. A row of
another host cannot be looked at and goes by its heartbeat alone.

Staleness is judged on the reader's clock, so machines sharing a ledger need
roughly synchronized clocks (NTP), as they already do for leases.

Nothing here reads the system clock: every function takes a :class:`Clock` or
an instant.
"""

from __future__ import annotations

import threading
import uuid
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import NewType

from sqlalchemy import delete, func, select, update
from sqlalchemy.orm import Session

from core.clock import Clock
from core.engine.processes import Liveness, ProcessIdentity, identify, liveness
from core.errors import LedgerError
from core.ledger.access import reading
from core.ledger.db import Ledger
from core.ledger.events import EngineFoundGone, EngineStarted, EngineStopped, append
from core.ledger.models import EngineRow, Occurrence, Schedule
from core.ledger.states import EngineKind, EnginePresence, OccurrenceState, ScheduleState
from core.team.placement import Placement
from core.time.formats import fmt_utc
from core.version import tidemark_version

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
    process_started: float | None = None
    boot_id: str | None = None

    @property
    def process(self) -> ProcessIdentity:
        """The engine's process as recorded."""
        return ProcessIdentity(self.host, self.pid, self.process_started, self.boot_id)

    def gone(self) -> bool:
        """True when this host can tell the engine's process no longer runs."""
        return liveness(self.process) is Liveness.GONE

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
        EngineId(row.engine_id),
        row.host,
        row.pid,
        row.kind,
        row.state,
        row.started_at,
        row.last_heartbeat,
        row.process_started,
        row.boot_id,
    )


def live_engines(
    session: Session, now: datetime, stale_after: timedelta = STALE_AFTER, *, exclude: str | None = None
) -> list[EngineInfo]:
    """Engines that have not retired, beat within ``stale_after`` of ``now`` and whose
    process is not known to be gone, freshest first."""
    stmt = (
        select(EngineRow)
        .where(EngineRow.state != EnginePresence.RETIRED, EngineRow.last_heartbeat >= now - stale_after)
        .order_by(EngineRow.last_heartbeat.desc(), EngineRow.engine_id)
    )
    if exclude is not None:
        stmt = stmt.where(EngineRow.engine_id != exclude)
    return [info for info in map(_info, session.scalars(stmt)) if not info.gone()]


def retire_gone(session: Session, now: datetime) -> list[EngineInfo]:
    """Retire every unretired engine whose process this host knows to be gone, each with an
    ``engine.found_gone`` event, in the session's (write) transaction; return them."""
    rows = session.scalars(select(EngineRow).where(EngineRow.state != EnginePresence.RETIRED))
    gone = [info for info in map(_info, rows) if info.gone()]
    for info in gone:
        session.execute(
            update(EngineRow)
            .where(EngineRow.engine_id == info.engine_id, EngineRow.state != EnginePresence.RETIRED)
            .values(state=EnginePresence.RETIRED, retired_at=now)
        )
        append(
            session,
            EngineFoundGone(
                at=now,
                engine=info.engine_id,
                engine_kind=info.kind,
                host=info.host,
                pid=info.pid,
                last_heartbeat=info.last_heartbeat,
            ),
        )
    return gone


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
    process: ProcessIdentity | None = None,
    placement: Placement | None = None,
) -> EngineId:
    """Record a new engine on the ledger and return its id.

    With ``exclusive``, refuse (:class:`EngineRunningError`, nothing written)
    when another live engine is dispatching; the check and the insert are one
    write transaction, so two engines starting together cannot both pass it.
    Engines of this host whose process is gone are retired first
    (:func:`retire_gone`), and rows of engines retired or silent for longer
    than :data:`FORGET_AFTER` are removed on the way.

    The engine is recorded as ``process`` (default: this process, or ``pid``
    on this host, named ``host`` when given), with ``placement``'s OS user,
    labels and trusted publishers (default: this process's; with the database
    role it logs in as, :meth:`~core.team.placement.Placement.trusting_role`), and
    this Tidemark's version.
    """
    now = clock.now()
    engine_id = EngineId(str(uuid.uuid4()))
    placement = (placement or Placement.of()).trusting_role(ledger.role())
    if process is None:
        process = identify(pid)
        if host is not None:
            process = replace(process, host=host)
    with ledger.write() as session:  # holds the write lock: check and insert are one step
        retire_gone(session, now)
        if exclusive:
            other = other_dispatcher(session, now, stale_after)
            if other is not None:
                raise EngineRunningError(other, now)
        session.execute(delete(EngineRow).where(EngineRow.last_heartbeat < now - FORGET_AFTER))
        session.add(
            EngineRow(
                engine_id=engine_id,
                host=process.host,
                pid=process.pid,
                process_started=process.started,
                boot_id=process.boot_id,
                kind=EngineKind(kind),
                state=state,
                started_at=now,
                last_heartbeat=now,
                retired_at=None,
                os_user=placement.user,
                labels=dict(placement.labels),
                trusts=sorted(placement.trusts),
                version=tidemark_version(),
            )
        )
        append(
            session,
            EngineStarted(at=now, engine=engine_id, engine_kind=EngineKind(kind), host=process.host, pid=process.pid),
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
    """Record that the engine stopped (idempotent: the first retire writes its event)."""
    now = clock.now()
    with ledger.write() as session:
        result = session.execute(
            update(EngineRow)
            .where(EngineRow.engine_id == engine_id, EngineRow.state != EnginePresence.RETIRED)
            .values(state=EnginePresence.RETIRED, retired_at=now, last_heartbeat=now)
        )
        if getattr(result, "rowcount", 0):
            append(session, EngineStopped(at=now, engine=engine_id))


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


# --- one call, one read: for a front end that holds a Ledger, not a session ------------------------


def engine_outlook(ledger: Ledger, lease_owner: str | None) -> Outlook:
    """:func:`outlook` in a read transaction of its own."""
    with reading(ledger) as session:
        return outlook(session, lease_owner)


def dispatcher_besides(ledger: Ledger, clock: Clock, engine_id: str | None) -> EngineInfo | None:
    """:func:`other_dispatcher` now, other than ``engine_id``, in a read transaction of its own."""
    with reading(ledger) as session:
        return other_dispatcher(session, clock.now(), exclude=engine_id)
