"""The wake stage: one alarm per ``wakeSystem`` schedule, at its next due run
minus the lead (:mod:`core.desktop.wake`; docs/ledger.md, "Waking the machine").

After each pass, the engine works out when each schedule it runs with
``wakeSystem: true`` is next due (one statement for all of them, none when there
are none) and moves, sets or removes alarms where that changed. Which schedules
ask for it is read again only when the ledger's revision mark moves (a publish,
a disable, an enable), so a pass over a catalogue without ``wakeSystem`` costs
nothing more. The OS calls run on a thread of their own, never on the claim
path, each with a timeout; on its first pass the engine reads the backend's
listing, so that alarms left by an earlier engine are kept when right and
removed when not.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.desktop.wake.alarms import WakeBackend, WakeError, wake_at
from core.engine.context import Context
from core.ledger.compiled import stored_spec
from core.ledger.db import Ledger
from core.ledger.models import Occurrence, Revision, Schedule
from core.ledger.states import OccurrenceState, ScheduleState

_log = logging.getLogger(__name__)

#: How ``wakeSystem: true`` reads in a revision's canonical text (``json.dumps``'s separators).
_ASKS = '%"wakeSystem": true%'


@dataclass
class WakeKeeper:
    """One engine's alarms: which schedules ask, and what it has armed."""

    backend: WakeBackend
    asking: dict[str, timedelta] = field(default_factory=dict)
    """Schedules this engine runs whose newest revision asks to wake the machine -> their jitter."""
    mark: tuple[object, ...] | None = None
    """The revision mark ``asking`` was read at."""
    armed: dict[str, datetime] = field(default_factory=dict)
    """Schedule -> when its alarm fires, as this engine set it (or found it set)."""
    listed: bool = False
    """Whether the backend's listing was read (on the first pass)."""
    _job: Future[None] | None = None
    _pool: ThreadPoolExecutor = field(
        default_factory=lambda: ThreadPoolExecutor(max_workers=1, thread_name_prefix="tidemark-wake")
    )

    def keep(self, ledger: Ledger, ctx: Context, now: datetime, *, wait: bool) -> None:
        """Bring the alarms in line with the ledger at ``now``; with ``wait``, return once the OS has them."""
        if self.backend.cannot is not None:
            return
        if self._job is not None and not self._job.done():
            return  # the last pass's calls are still under way: the next pass looks again
        wanted = self._wanted(ledger, ctx, now)
        if not self.listed:
            self.listed = True
            self._job = self._pool.submit(_logged, self._adopt, ledger, wanted)
        else:
            changes = {sid: at for sid, at in wanted.items() if self.armed.get(sid) != at}
            gone = [sid for sid in self.armed if sid not in wanted]
            if not changes and not gone:
                return
            for sid in gone:
                self.armed.pop(sid)
            self.armed.update(changes)
            self._job = self._pool.submit(_logged, self._apply, changes, gone)
        if wait:
            self._job.result()

    def _wanted(self, ledger: Ledger, ctx: Context, now: datetime) -> dict[str, datetime]:
        """Schedule -> when its alarm should fire; read with at most two statements."""
        if ctx.refusals.mark != self.mark or self.mark is None:
            with ledger.read() as session:
                self.asking = asking(session, ctx)
            self.mark = ctx.refusals.mark
        if not self.asking:
            return {}
        with ledger.read() as session:
            due = next_due(session, self.asking, now)
        alarms = {sid: wake_at(at) for sid, at in due.items()}
        return {sid: at for sid, at in alarms.items() if at > now}

    def _adopt(self, ledger: Ledger, wanted: dict[str, datetime]) -> None:
        """The first pass: keep the listed alarms that are right, set the missing ones, and
        remove those of this ledger's schedules that no longer ask (an alarm of a schedule
        this ledger does not know is another ledger's, and is left alone)."""
        try:
            listed = {a.schedule_id: a.at for a in self.backend.listing() if a.schedule_id is not None}
        except WakeError as exc:
            _log.warning("%s", exc)
            listed = {}
        self.armed = dict(wanted)
        changes = {sid: at for sid, at in wanted.items() if listed.get(sid) != at}
        others = [sid for sid in listed if sid not in wanted]
        if others:
            with ledger.read() as session:
                others = sorted(session.scalars(select(Schedule.id).where(Schedule.id.in_(others))))
        self._apply(changes, others)

    def _apply(self, changes: dict[str, datetime], gone: list[str]) -> None:
        for sid in gone:
            self._call(self.backend.disarm, sid)
        for sid, at in sorted(changes.items()):
            self._call(self.backend.arm, sid, at)

    @staticmethod
    def _call(call: Callable[..., None], *args: object) -> None:
        try:
            call(*args)
        except WakeError as exc:  # logged; the schedule still runs by its misfire policy
            _log.warning("%s", exc)

    def close(self) -> None:
        """Finish the calls under way; the alarms stay armed for the next engine."""
        self._pool.shutdown(wait=True)


def _logged(work: Callable[..., None], *args: object) -> None:
    """Run ``work`` on the keeper's thread: whatever goes wrong there is logged, never raised into a pass
    (the schedules still run by their misfire policy)."""
    try:
        work(*args)
    except Exception:
        _log.exception("the wake alarms could not be brought in line; the next change tries again")


def asking(session: Session, ctx: Context) -> dict[str, timedelta]:
    """Schedules whose newest revision asks for ``wakeSystem`` and that this engine runs -> jitter."""
    newest = (
        select(Revision.schedule_id, Revision.revision, Revision.spec_json)
        .join(Schedule, (Schedule.id == Revision.schedule_id) & (Schedule.active_revision == Revision.revision))
        .where(Schedule.state != ScheduleState.DISABLED, Revision.spec_json.like(_ASKS))
    )
    held = ctx.held_schedules
    found: dict[str, timedelta] = {}
    for sid, number, text in session.execute(newest):
        if sid in held or ctx.refusals.decided.get((sid, number)) is not None:
            continue
        spec = stored_spec(text)
        if spec.wake_system:
            found[sid] = spec.jitter
    return found


def next_due(session: Session, schedules: dict[str, timedelta], now: datetime) -> dict[str, datetime]:
    """The next planned run's dispatch time of each active schedule among ``schedules``, in one
    statement (each by the index on schedule and position)."""
    low = now - max(schedules.values(), default=timedelta(0))
    first = (
        select(Occurrence.due_at)
        .where(
            Occurrence.schedule_id == Schedule.id,
            Occurrence.state == OccurrenceState.PLANNED,
            Occurrence.position_utc >= low,
        )
        .order_by(Occurrence.position_utc)
        .limit(1)
        .correlate(Schedule)
        .scalar_subquery()
    )
    rows = session.execute(
        select(Schedule.id, first).where(Schedule.id.in_(schedules), Schedule.state == ScheduleState.ACTIVE)
    )
    return {sid: due for sid, due in rows if due is not None}
