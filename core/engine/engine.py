"""The engine loop: materialize, promote (and apply the misfire policy), recover
lost attempts, then claim and run what is due (docs/contract.md §4).

One class serves ``schedctl engine run`` and the desktop app. Time comes from
the injected clock; nothing here calls ``datetime.now``. Every state change is
a short write transaction with its event; commands run outside transactions.
"""

from __future__ import annotations

import hashlib
import logging
import os
import signal
import threading
import uuid
from collections import Counter, defaultdict, deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import wait as wait_futures
from contextlib import AbstractContextManager, suppress
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import lru_cache

from sqlalchemy import String, func, literal_column, select, type_coerce, update
from sqlalchemy.orm import Session

from core.clock import Clock
from core.engine import claims, orphans, processes
from core.engine.claims import Claimed, Gate, Held
from core.engine.leases import LeaseKeeper
from core.engine.misfire import Action, Due, certain_expiry, plan_recovery
from core.engine.outcomes import Outcome, Verdict, decide, verdict_from_exit
from core.engine.runner import (
    KILL_GRACE_SECONDS,
    PreparedCommand,
    RunResult,
    TaskIdentity,
    describe_error,
    prepare,
    run_command,
)
from core.engine.tether import TETHER
from core.enums import Kind, OverlapPolicy
from core.ledger import events
from core.ledger.db import Ledger
from core.ledger.materialize import materialize_all, unreadable_revisions, warm_counts
from core.ledger.models import Attempt, Event, LedgerMeta, Occurrence, Revision, Schedule
from core.ledger.states import CLAIMABLE, OccurrenceKind, OccurrenceState, ScheduleState, check_transition
from core.spec import ScheduleSpec, Task
from core.spec_validation import parse_spec
from core.timefmt import fmt_utc

_S = OccurrenceState
IN_FLIGHT = (_S.DISPATCHING, _S.RUNNING)
#: Rows changed by one bulk statement.
_BULK = 2000
#: ``state || '' = 'PLANNED'``: compared row by row, never looked up in the state index.
_STILL_PLANNED = type_coerce(Occurrence.state, String).concat(literal_column("''")) == literal_column("'PLANNED'")
#: Materialization calls per pass at most (each inserts up to its max_rows).
_MATERIALIZE_ROUNDS = 1000
#: The first materialization of a pass reaches this far ahead (or the horizon, if
#: nearer): everything that can come due before the next pass.
_LEAD = timedelta(hours=1)
#: Rows per transaction when filling the horizon, so that workers recording
#: outcomes never wait long for the write lock.
_FILL_CHUNK = 10_000
#: Times a worker killed by an exception is restarted within one pass; after that the
#: next pass starts a new one.
WORKER_RESTARTS = 3

_log = logging.getLogger(__name__)


@lru_cache(maxsize=256)
def stored_spec(spec_json: str) -> ScheduleSpec:
    """A published revision's spec (cached: revisions never change)."""
    import json

    return parse_spec(json.loads(spec_json), check_rule=False)


#: Set to 1, tasks are not tied to their engine's life (a diagnostic and test switch).
OUTLIVE_ENV = "TIDEMARK_TASKS_OUTLIVE_ENGINE"


@dataclass
class EngineOptions:
    """How an engine behaves; the defaults suit a desktop."""

    lease: timedelta = timedelta(minutes=2)
    """A claim not renewed for this long is considered lost (its engine died)."""
    max_workers: int = 4
    """Schedules whose tasks may run at the same time."""
    tail_bytes: int = 8192
    fill_rows_per_pass: int = 20_000
    """Rows a pass materializes beyond the next hour, toward the horizon. After a
    long outage or a new dense schedule the horizon fills over a few passes, and
    what is due runs first."""
    running_after: timedelta = timedelta(milliseconds=250)
    """A task still running this long after its start is recorded RUNNING at once; one
    that ends sooner has its RUNNING recorded with its outcome, in one transaction."""
    tasks_die_with_engine: bool = field(default_factory=lambda: os.environ.get(OUTLIVE_ENV) != "1")
    """A running task's process group is ended when its engine process dies (see
    :mod:`core.engine.tether`). ``TIDEMARK_TASKS_OUTLIVE_ENGINE=1`` turns it off
    (tasks then outlive a crash, and the next engine finds them as orphans)."""


@dataclass
class PassReport:
    """What one pass did, for logs and tests."""

    materialized: int = 0
    promoted: int = 0
    expired: int = 0
    """Occurrences expired: MISFIRE_EXPIRED rows, plus those counted in expired ranges."""
    expired_ranges: int = 0
    """Long stretches of missed occurrences recorded as one range each (core.ledger.expired)."""
    recovered: int = 0
    orphans: int = 0
    """Attempts whose engine died while their task still runs: watched, not settled."""
    started: int = 0
    skipped_overlap: int = 0
    outcomes: Counter[str] = field(default_factory=Counter)
    held: dict[str, str] = field(default_factory=dict)
    """Schedules left alone because a published revision cannot be read, with why."""


@dataclass(frozen=True)
class _Claim:
    occurrence_id: str
    schedule_id: str
    generation: int
    epoch: int
    attempt_id: str
    attempt_number: int
    task: Task
    spec: ScheduleSpec
    identity: TaskIdentity
    command: PreparedCommand  # rendered once at claim time: its digest is on the attempt row
    unprepared: str | None = None  # why the command could not be rendered: recorded as a spawn error, never run

    def held(self, task: tuple[int, float | None] | None = None) -> Held:
        pid, started = task or (None, None)
        return Held(
            self.schedule_id,
            self.occurrence_id,
            self.generation,
            self.attempt_number,
            self.epoch,
            self.attempt_id,
            pid,
            started,
        )


#: Occurrences a worker will try to claim, oldest first, with the state each was seen in (None: unknown).
_Queue = deque[tuple[str, OccurrenceState | None]]


class Engine:
    """Drives one ledger. ``run_once`` is a full pass; ``run_forever`` repeats it."""

    def __init__(self, ledger: Ledger, clock: Clock, options: EngineOptions | None = None) -> None:
        self.ledger = ledger
        self.clock = clock
        self.options = options or EngineOptions()
        self.process = processes.identify()
        self.host = self.process.host
        self.pid = self.process.pid
        self.worker = f"{self.host}:{self.pid}:{uuid.uuid4().hex[:8]}"
        self._mine: set[str] = set()  # occurrences this engine is running now
        self._workers: dict[str, int] = {}  # schedule -> workers of this engine on it
        self._busy: dict[str, datetime] = {}  # schedule -> when its running task started
        self._futures: list[Future[None]] = []
        self._tasks: dict[str, tuple[int, float | None]] = {}  # attempt -> its task's pid and start time
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._interrupted = False  # running tasks' groups were ended (interrupt)
        self._groups: dict[str, int] = {}  # occurrence -> process group of its running task
        self._specs: dict[tuple[str, int], ScheduleSpec] = {}  # revisions never change
        self._readable: set[tuple[str, int]] = set()  # revisions read without a problem
        self._unreadable: dict[tuple[str, int], tuple[bool, list[str]]] = {}  # revisions held this pass
        self._held_schedules: set[str] = set()  # schedules whose newest revision cannot be read
        self._told: set[tuple[str, int]] = set()  # unreadable revisions already logged and recorded
        self._base_env: dict[str, str] | None = None  # None: read os.environ at each claim
        self._held = threading.local()  # a worker's held write transactions (Ledger.writer)
        self._keeper: LeaseKeeper[_Claim] = LeaseKeeper(
            self._mark_running,
            self._renew_leases,
            running_after=self.options.running_after.total_seconds(),
            renew_every=max(self.options.lease.total_seconds() / 3, 0.05),
            key=lambda claim: claim.occurrence_id,
        )

    # --- the pass -----------------------------------------------------------------

    def run_once(self, *, wait: bool = True) -> PassReport:
        """Materialize, promote, recover, and run everything due. With ``wait``,
        return only when the tasks started by this pass have finished."""
        report = PassReport()
        self._base_env = dict(os.environ)  # read once a pass: tasks of this pass see the same environment
        self._hold_unreadable(report)
        self._materialize(report)
        self._promote(report)
        self._recover_lost(report)
        self._dispatch(report, wait=wait)
        return report

    def run_forever(self, *, poll_seconds: float = 1.0, on_pass: Callable[[PassReport], None] | None = None) -> None:
        """Repeat passes until :meth:`stop`. Tasks run in the background between passes."""
        while not self._stop.is_set():
            report = self.run_once(wait=False)
            if on_pass is not None:
                on_pass(report)
            self._stop.wait(poll_seconds)

    def stop(self) -> None:
        """Ask :meth:`run_forever` to return after the current pass. Workers claim
        nothing more: the tasks running now end and are recorded."""
        self._stop.set()

    def interrupt(self) -> None:
        """Stop, and end the process groups of the tasks running now (SIGTERM, then
        SIGKILL after a grace period), a second Ctrl-C. Their attempts are recorded
        as killed by a signal: a lost outcome, settled by invariant 5."""
        self._stop.set()
        with self._lock:
            self._interrupted = True
            groups = list(self._groups.values())
        for pgid in groups:
            _signal_group(pgid, signal.SIGTERM)
        if groups:
            timer = threading.Timer(KILL_GRACE_SECONDS, self._kill_left, (set(groups),))
            timer.daemon = True
            timer.start()

    def _kill_left(self, groups: set[int]) -> None:
        with self._lock:
            left = groups & set(self._groups.values())
        for pgid in left:
            _signal_group(pgid, signal.SIGKILL)

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Wait for the tasks this engine started; True when none is left running."""
        with self._lock:
            pending = list(self._futures)
        done, not_done = wait_futures(pending, timeout=timeout)
        for f in done:
            f.result()  # surface a worker's crash as a bug, not silence
        return not not_done

    def busy(self) -> bool:
        """Whether a task started by this engine is still running."""
        with self._lock:
            return any(not f.done() for f in self._futures)

    # --- revisions this Tidemark cannot read ------------------------------------------------

    def _hold_unreadable(self, report: PassReport) -> None:
        """Find published revisions this Tidemark refuses to read (an older one accepted
        them). What needs one is held this pass: a schedule whose newest revision it is
        is neither materialized nor promoted, and no occurrence of such a revision is
        claimed or settled. Each is said once in the log and once as an event."""
        with self.ledger.read() as session:
            self._unreadable = unreadable_revisions(session, self._readable)
        self._held_schedules = {sid for (sid, _), (newest, _) in self._unreadable.items() if newest}
        now = self.clock.now()
        for (sid, number), (_, problems) in sorted(self._unreadable.items()):
            why = f"revision {number} cannot be read by this Tidemark: {'; '.join(problems)}"
            report.held.setdefault(sid, why)
            if (sid, number) in self._told:
                continue
            self._told.add((sid, number))
            _log.error("schedule %s: %s; publish a corrected revision", sid, why)
            with self.ledger.write() as session:
                said = session.scalars(
                    select(Event.data).where(
                        Event.schedule_id == sid, Event.kind == events.EventKind.SCHEDULE_UNREADABLE.value
                    )
                ).all()
                if any(data.get("revision") == number for data in said):
                    continue  # recorded by an earlier engine
                events.append(
                    session,
                    events.ScheduleUnreadable(at=now, schedule_id=sid, revision=number, problems=problems),
                )

    # --- materialization ----------------------------------------------------------------

    def _materialize(self, report: PassReport) -> None:
        """First everything up to the next hour, recording long stretches of missed
        occurrences that are certain to expire as expired ranges; then a bounded
        number of rows toward each horizon. Each call is bounded (max_rows), so a
        long outage never holds the write lock for long."""
        with self.ledger.read() as session:
            warm_counts(session)  # a new COUNT rule's first walk, outside the write lock
        for _ in range(_MATERIALIZE_ROUNDS):
            with self.ledger.write() as session:
                results = materialize_all(
                    session,
                    self.clock,
                    max_rows=_FILL_CHUNK,
                    lead=_LEAD,
                    expire=certain_expiry,
                    hold=self._held_schedules,
                )
            report.materialized += sum(r.inserted for r in results)
            report.expired_ranges += sum(r.expired_ranges for r in results)
            report.expired += sum(r.expired_in_ranges for r in results)
            if not any(r.more for r in results):
                break
        left = self.options.fill_rows_per_pass
        for _ in range(_MATERIALIZE_ROUNDS):
            if left <= 0:
                break
            with self.ledger.write() as session:
                results = materialize_all(
                    session, self.clock, max_rows=min(left, _FILL_CHUNK), hold=self._held_schedules
                )
            inserted = sum(r.inserted for r in results)
            report.materialized += inserted
            left -= max(inserted, 1)
            if not any(r.more for r in results):
                break

    # --- promotion and misfires ----------------------------------------------------------

    def _promote(self, report: PassReport) -> None:
        """PLANNED occurrences whose time has come become DUE, or, when they come
        due later than their lateness window (the engine was not running), go
        through the misfire policy: made up late, or MISFIRE_EXPIRED.

        Done in bulk: after a long outage this can be hundreds of thousands of
        rows, so states change by one UPDATE per reason and chunk, and their
        events go in by one INSERT per chunk, all in the same transaction.
        """
        now = self.clock.now()
        with self.ledger.write() as session:
            rows = session.execute(
                select(Occurrence.schedule_id, Occurrence.occurrence_id, Occurrence.due_at)
                .where(Occurrence.state == _S.PLANNED, Occurrence.due_at <= now)
                .order_by(Occurrence.schedule_id, Occurrence.due_at)
            ).all()
            by_schedule: dict[str, list[Due]] = defaultdict(list)
            for sid, occ_id, due_at in rows:
                by_schedule[sid].append(Due(occ_id, _aware(due_at)))
            for sid, due in by_schedule.items():
                if sid in self._held_schedules:
                    continue
                spec = self._active_spec(session, sid)
                decisions = plan_recovery(
                    due,
                    now,
                    spec.misfire_policy,
                    max_catch_up=spec.effective_max_catch_up,
                    lateness_window=spec.lateness_window,
                    catch_up_window=spec.catch_up_window,
                )
                groups: dict[tuple[OccurrenceState, str | None], list[str]] = defaultdict(list)
                for d in decisions:
                    target = _S.MISFIRE_EXPIRED if d.action is Action.EXPIRE else _S.DUE
                    groups[(target, d.reason)].append(d.occurrence_id)
                for (target, reason), ids in groups.items():
                    for chunk in _chunks(ids, _BULK):
                        values: dict[str, object] = {"state": target, "updated_at": now}
                        if reason is not None:
                            values["reason"] = reason
                        if target is _S.MISFIRE_EXPIRED:
                            values["finished_at"] = now
                        session.execute(
                            update(Occurrence)
                            # state || '': compared, not looked up, so that SQLite walks the ids
                            # by primary key instead of every PLANNED row of its state index.
                            .where(Occurrence.occurrence_id.in_(chunk), _STILL_PLANNED)
                            .values(**values)
                            .execution_options(synchronize_session=False)
                        )
                        events.append_many(
                            session,
                            (
                                events.OccurrenceTransitioned(
                                    at=now,
                                    schedule_id=sid,
                                    occurrence_id=oid,
                                    from_=_S.PLANNED,
                                    to=target,
                                    reason=reason,
                                )
                                for oid in chunk
                            ),
                        )
                    if target is _S.MISFIRE_EXPIRED:
                        report.expired += len(ids)
                    else:
                        report.promoted += len(ids)

    def _active_spec(self, session: Session, schedule_id: str) -> ScheduleSpec:
        text = session.scalar(
            select(Revision.spec_json)
            .where(Revision.schedule_id == schedule_id)
            .order_by(Revision.revision.desc())
            .limit(1)
        )
        assert text is not None
        return stored_spec(text)

    def _spec_of(self, session: Session, schedule_id: str, revision: int) -> ScheduleSpec:
        spec = self._specs.get((schedule_id, revision))
        if spec is None:
            text = session.scalar(
                select(Revision.spec_json).where(Revision.schedule_id == schedule_id, Revision.revision == revision)
            )
            assert text is not None
            spec = self._specs[(schedule_id, revision)] = stored_spec(text)
        return spec

    # --- recovery of lost attempts ---------------------------------------------------------

    def _epoch(self, session: Session) -> int:
        value = session.scalar(select(LedgerMeta.execution_epoch))
        return int(value or 1)

    def _recover_lost(self, report: PassReport) -> None:
        """Attempts whose engine stopped (lease expired, fenced by a newer epoch, or
        its process seen gone on this host) have lost their outcome: settle them by
        invariant 5, unless their task still runs (then it is watched: see
        :mod:`core.engine.orphans`)."""
        now = self.clock.now()
        with self.ledger.read() as session:
            epoch = self._epoch(session)
            candidates = session.execute(
                select(
                    Occurrence.occurrence_id,
                    Occurrence.lease_expires_at,
                    Occurrence.lease_owner,
                    Occurrence.schedule_id,
                    Occurrence.revision,
                ).where(Occurrence.state.in_(IN_FLIGHT))
            ).all()
            fenced = set(
                session.scalars(
                    select(Attempt.occurrence_id).where(Attempt.finished_at.is_(None), Attempt.execution_epoch != epoch)
                ).all()
            )
        with self._lock:
            mine = set(self._mine)
        for occ_id, lease, owner, sid, revision in candidates:
            if occ_id in mine or (sid, revision) in self._unreadable:
                continue
            watched = owner == self.worker  # an orphan this engine watches: looked at every pass
            held = lease is not None and _aware(lease) > now and occ_id not in fenced
            if held and not watched and not self._claimant_gone(occ_id, owner):
                continue
            settled = self._settle_lost(occ_id, now)
            if settled is None:
                report.orphans += 1
            elif settled:
                report.recovered += 1

    def _claimant_gone(self, occurrence_id: str, owner: str | None) -> bool:
        """Whether the engine holding a live lease is certainly dead (on this host only)."""
        if owner is None or not owner.startswith(self.host + ":"):
            return False  # another host: its lease decides
        with self.ledger.read() as session:
            return orphans.claimant_gone(owner, self._last_attempt(session, occurrence_id))

    def _last_attempt(self, session: Session, occurrence_id: str) -> Attempt | None:
        return session.scalar(
            select(Attempt)
            .where(Attempt.occurrence_id == occurrence_id)
            .order_by(Attempt.attempt_number.desc())
            .limit(1)
        )

    def _settle_lost(self, occurrence_id: str, now: datetime) -> bool | None:
        """Settle a lost attempt; False when someone else did, None when its task still runs."""
        with self.ledger.read() as session:
            occ = session.get(Occurrence, occurrence_id)
            if occ is None or occ.state not in IN_FLIGHT:
                return False
            spec = self._spec_of(session, occ.schedule_id, occ.revision)
            attempt = self._last_attempt(session, occurrence_id)
            generation = occ.claim_generation
            identity = _identity(occ, attempt.attempt_id if attempt else "", attempt.attempt_number if attempt else 0)
        task = spec.task
        assert task is not None
        orphan = orphans.find(attempt) if attempt is not None else None
        if orphan is not None:
            self._watch(occurrence_id, generation, orphan, task.timeout, now)
            return None
        number = attempt.attempt_number if attempt is not None else 1
        outcome = decide(
            exit_status=None,
            error_class="lost",
            effect=task.effect,
            retry=spec.retry,
            attempt_number=number,
            probe=self._probe(task, identity) if task.verify else None,
        )
        with self.ledger.write() as session:
            occ = session.get(Occurrence, occurrence_id, populate_existing=True)
            if occ is None or occ.state not in IN_FLIGHT or occ.claim_generation != generation:
                return False  # someone settled it meanwhile
            if attempt is not None:
                row = session.get(Attempt, attempt.attempt_id, populate_existing=True)
                if row is not None and row.finished_at is None:
                    row.finished_at = now
                    row.error_class = "lost"
                if row is not None and row.outcome is None:
                    row.outcome = outcome.state
            self._apply(session, occ, outcome, now, spec)
        return True

    def _watch(
        self, occurrence_id: str, generation: int, orphan: orphans.Orphan, timeout: timedelta, now: datetime
    ) -> None:
        """Keep an orphaned task's occurrence RUNNING under this engine's lease, say
        so, and end its group once it outlives its timeout."""
        late = orphans.overdue(orphan, timeout, now)
        ended = orphans.end_group(orphan, late) if late is not None else None
        reason = orphans.watched_reason(orphan) + (f"; {ended}" if ended else "")
        with self.ledger.write() as session:
            occ = session.get(Occurrence, occurrence_id, populate_existing=True)
            if occ is None or occ.state not in IN_FLIGHT or occ.claim_generation != generation:
                return
            found = occ.lease_owner != self.worker
            row = session.scalar(
                select(Attempt).where(
                    Attempt.occurrence_id == occurrence_id, Attempt.attempt_number == orphan.attempt_number
                )
            )
            if row is not None and row.task_pid is None:  # found by its SCHED_ATTEMPT_ID: recorded now
                row.task_pid, row.task_started = orphan.process.pid, orphan.process.started
            occ.lease_owner = self.worker
            occ.lease_expires_at = now + self.options.lease
            if occ.state is _S.DISPATCHING:
                events.transition(session, occ, _S.RUNNING, now, reason, {"attempt": orphan.attempt_number})
            elif found or ended:
                occ.reason = reason
                occ.updated_at = now
            if found or ended:
                orphaned = events.AttemptOrphaned(
                    at=now,
                    schedule_id=occ.schedule_id,
                    occurrence_id=occurrence_id,
                    attempt=orphan.attempt_number,
                    host=orphan.process.host,
                    pid=orphan.process.pid,
                    started=orphan.process.started,
                    reason=reason,
                )
                events.append(session, orphaned)

    # --- dispatch -------------------------------------------------------------------------

    def _claimable(self, schedule_id: str | None = None) -> list[tuple[str, str, OccurrenceState]]:
        """(schedule, occurrence, state) ready to claim, oldest first per schedule (none of
        a revision held this pass)."""
        now = self.clock.now()
        query = (
            select(Occurrence.schedule_id, Occurrence.occurrence_id, Occurrence.state, Occurrence.revision)
            .join(Schedule, Schedule.id == Occurrence.schedule_id)
            .where(
                Schedule.state == ScheduleState.ACTIVE,
                (Occurrence.state == _S.DUE) | ((Occurrence.state == _S.RETRY_WAIT) & (Occurrence.retry_at <= now)),
            )
            .order_by(Occurrence.schedule_id, Occurrence.due_at, Occurrence.position_utc, Occurrence.occurrence_id)
        )
        if schedule_id is not None:
            query = query.where(Occurrence.schedule_id == schedule_id)
        with self.ledger.read() as session:
            rows = session.execute(query).all()
        # Occurrences of a revision this Tidemark cannot read wait for a corrected one.
        return [(sid, oid, state) for sid, oid, state, revision in rows if (sid, revision) not in self._unreadable]

    def _gate(self, schedule_id: str) -> Gate | None:
        with self.ledger.read() as session:
            return claims.gates(session, schedule_id).get(schedule_id)

    def _dispatch(self, report: PassReport, *, wait: bool) -> None:
        """Start one worker per schedule with something due. A schedule whose
        worker is still busy from an earlier pass gets its overlap policy
        applied to what came due meanwhile instead."""
        queues: dict[str, list[str]] = defaultdict(list)
        for sid, occ_id, _state in self._claimable():
            queues[sid].append(occ_id)
        if not queues:
            return
        jobs: list[tuple[str, list[str] | None]] = []
        for sid, ids in queues.items():
            with self._lock:
                busy = self._workers.get(sid, 0) > 0
                busy_since = self._busy.get(sid, self.clock.now())
            if not busy:
                jobs.append((sid, None))
            else:
                extra = self._overlap_while_busy(sid, ids, busy_since, report)
                if extra:
                    jobs.append((sid, extra))
        if not jobs:
            return
        started = self.clock.now()
        for sid, _ in jobs:
            with self._lock:
                if not self._workers.get(sid):
                    self._busy[sid] = started
                self._workers[sid] = self._workers.get(sid, 0) + 1
        pool = ThreadPoolExecutor(max_workers=self.options.max_workers, thread_name_prefix="tidemark-task")
        futures = [pool.submit(self._work_schedule, sid, only, report) for sid, only in jobs]
        with self._lock:
            self._futures = [f for f in self._futures if not f.done()] + futures
        if wait:
            for f in futures:
                f.result()
            pool.shutdown(wait=True)
        else:
            pool.shutdown(wait=False)

    def _overlap_while_busy(self, schedule_id: str, ids: list[str], since: datetime, report: PassReport) -> list[str]:
        """Occurrences that came due while this engine runs the schedule's task.
        Returns the ones to start at once (overlapPolicy ALLOW).

        Only what came due after the run started (``due_at > since``) overlaps it:
        an occurrence due at or before that instant belongs to the run itself,
        which is about to claim it (its worker may not have got to it yet; on a
        clock that does not move, ``due_at == since``)."""
        now = self.clock.now()
        with self.ledger.write() as session:
            spec = self._active_spec(session, schedule_id)
            fresh = [
                o
                for o in session.scalars(
                    select(Occurrence)
                    .where(Occurrence.occurrence_id.in_(ids), Occurrence.state == _S.DUE, Occurrence.due_at > since)
                    .order_by(Occurrence.due_at, Occurrence.occurrence_id)
                    .execution_options(populate_existing=True)
                )
            ]
            policy = spec.overlap_policy
            if policy is OverlapPolicy.ALLOW:
                return [o.occurrence_id for o in fresh]
            if policy is OverlapPolicy.QUEUE_ALL:
                return []
            keep = 1 if policy is OverlapPolicy.QUEUE_ONE else 0
            for occ in fresh[keep:]:
                why = f"the previous run was still going (overlapPolicy {policy.value})"
                events.transition(session, occ, _S.SKIPPED_OVERLAP, now, why)
                occ.finished_at = now
                report.skipped_overlap += 1
        return []

    def _work_schedule(self, schedule_id: str, only: list[str] | None, report: PassReport) -> None:
        """Run a schedule's due occurrences one at a time, oldest first, until none
        is left (caught-up runs never overlap each other). ``only`` limits it to
        those occurrences (an extra worker under overlapPolicy ALLOW).

        Each attempt's outcome is recorded in the same transaction as the next
        claim, so a run of due occurrences costs one write transaction each.

        An exception that kills the worker is logged and recorded as an event, and
        the worker restarts (at most WORKER_RESTARTS times a pass), first recording
        the attempt it had in hand."""
        self._held.pending = None
        try:
            for restarts in range(WORKER_RESTARTS + 1):
                try:
                    with self.ledger.writer() as transaction:
                        self._held.transaction = transaction
                        self._work_queue(schedule_id, only, report)
                    return
                except Exception as exc:
                    self._held.transaction = None
                    self._worker_died(schedule_id, exc, restarts < WORKER_RESTARTS)
        finally:
            self._held.transaction = None
            with self._lock:
                left = self._workers.get(schedule_id, 1) - 1
                if left <= 0:
                    self._workers.pop(schedule_id, None)
                    self._busy.pop(schedule_id, None)
                else:
                    self._workers[schedule_id] = left

    def _write(self) -> AbstractContextManager[Session]:
        """A write transaction: on the worker's held connection when there is one."""
        transaction = getattr(self._held, "transaction", None)
        return transaction() if transaction is not None else self.ledger.write()

    def _worker_died(self, schedule_id: str, exc: Exception, restarted: bool) -> None:
        """A log line and an event about a worker an exception killed. When it is not
        restarted, its claim in hand is left to recovery (its lease is no longer kept)."""
        pending: tuple[_Claim, RunResult | None] | None = self._held.pending
        held = pending[0] if pending is not None else None
        why = describe_error(exc)
        then = (
            "restarted" if restarted else f"not restarted after {WORKER_RESTARTS} restarts (the next pass starts one)"
        )
        _log.error("the engine's worker for schedule %s died: %s; %s", schedule_id, why, then)
        _log.debug("how the worker for schedule %s died", schedule_id, exc_info=exc)
        if not restarted and held is not None:
            self._held.pending = None
            with self._lock:
                self._mine.discard(held.occurrence_id)
        try:
            with self.ledger.write() as session:
                events.append(
                    session,
                    events.EngineWorkerDied(
                        at=self.clock.now(),
                        schedule_id=schedule_id,
                        occurrence_id=held.occurrence_id if held is not None else None,
                        worker=self.worker,
                        error=why,
                        restarted=restarted,
                        attempt=held.attempt_number if held is not None else None,
                    ),
                )
        except Exception as again:
            _log.error(
                "could not record the death of the worker for schedule %s: %s", schedule_id, describe_error(again)
            )

    def _work_queue(self, schedule_id: str, only: list[str] | None, report: PassReport) -> None:
        pending: tuple[_Claim, RunResult | None] | None = self._held.pending
        if pending is not None:  # what a worker that died had in hand: run it or record its end first
            self._settle_held(*pending, report)
        while True:
            queue: _Queue
            gate: Gate | None = None
            if only is not None:
                queue = deque((oid, None) for oid in only)
            else:
                queue = deque((oid, state) for _, oid, state in self._claimable(schedule_id))
                gate = self._gate(schedule_id) if queue else None
            progressed = False
            claim = self._claim_first(queue, report, gate)
            while claim is not None:
                progressed = True
                self._held.pending = (claim, None)
                result = self._run(claim, report)
                self._held.pending = (claim, result)
                claim = self._finish(claim, result, report, queue=queue, gate=gate)
                self._held.pending = None
            if only is not None or not progressed:
                return

    def _settle_held(self, claim: _Claim, result: RunResult | None, report: PassReport) -> None:
        """Run (if it never ran) and record the claim a worker had in hand when it died."""
        if result is None:
            self._held.pending = (claim, None)
            result = self._run(claim, report)
        self._held.pending = (claim, result)
        self._finish(claim, result, report)
        self._held.pending = None

    def _claim_first(self, queue: _Queue, report: PassReport, gate: Gate | None) -> _Claim | None:
        while queue and not self._stop.is_set():
            occ_id, state = queue.popleft()
            claim = self._claim(occ_id, report, gate=gate, state=state)
            if claim is not None:
                return claim
        return None

    def _claim(
        self,
        occurrence_id: str,
        report: PassReport,
        *,
        gate: Gate | None = None,
        state: OccurrenceState | None = None,
    ) -> _Claim | None:
        """Compare-and-set DUE|RETRY_WAIT -> DISPATCHING on the schedule's gate and
        the ledger's epoch, in one write transaction (invariants 2 and 3).
        ``gate`` and ``state`` are what the engine saw; with them the claim is
        one statement, and anything that changed since sends it the careful way."""
        with self._write() as session:
            return self._claim_in(session, occurrence_id, report, gate, state)

    def _claim_in(
        self,
        session: Session,
        occurrence_id: str,
        report: PassReport,
        gate: Gate | None,
        state: OccurrenceState | None,
        pending: list[events.NewEvent] | None = None,
    ) -> _Claim | None:
        """Claim in ``session``'s transaction. Events of the one-statement claim go to
        ``pending`` when given (the caller appends them all at once)."""
        now = self.clock.now()
        if gate is not None and state in CLAIMABLE:
            assert state is not None
            claimed = claims.try_claim(session, occurrence_id, state, gate, now, self.worker, now + self.options.lease)
            if claimed is not None:
                claim, event = self._open_attempt(session, claimed, gate.epoch, now)
                if pending is None:
                    events.append(session, event)
                else:
                    pending.append(event)
                return claim
        if pending:
            events.append_many(session, pending)  # in order, before whatever the careful path records
            pending.clear()
        return self._claim_careful(session, occurrence_id, report, now)

    def _open_attempt(
        self, session: Session, claimed: Claimed, epoch: int, now: datetime
    ) -> tuple[_Claim, events.NewEvent]:
        """The attempt row of a claim made by :func:`claims.try_claim`, and the claim's event."""
        spec = self._spec_of(session, claimed.schedule_id, claimed.revision)
        task = spec.task
        assert task is not None  # publishing refuses a revision without a task
        attempt_id = str(uuid.uuid4())
        identity = TaskIdentity(
            schedule_id=claimed.schedule_id,
            revision=claimed.revision,
            occurrence_id=claimed.occurrence_id,
            logical_slot_id=claimed.logical_slot_id,
            nominal_local=claimed.nominal_local,
            scheduled_utc=fmt_utc(claimed.resolved_utc) if claimed.resolved_utc is not None else None,
            business_period=claimed.business_period,
            attempt_id=attempt_id,
            attempt_number=claimed.attempt_number,
        )
        command, unprepared = self._prepare(task, identity)
        event = claims.add_attempt(session, claimed, epoch, self.process, now, command.digest, self.worker, attempt_id)
        with self._lock:
            self._mine.add(claimed.occurrence_id)
        claim = _Claim(
            claimed.occurrence_id,
            claimed.schedule_id,
            claimed.generation,
            epoch,
            attempt_id,
            claimed.attempt_number,
            task,
            spec,
            identity,
            command,
            unprepared,
        )
        return claim, event

    def _claim_careful(self, session: Session, occurrence_id: str, report: PassReport, now: datetime) -> _Claim | None:
        """The claim read step by step: used when the one-statement claim did not
        apply, to find out why (and apply the overlap policy) or to claim anyway."""
        occ = session.get(Occurrence, occurrence_id, populate_existing=True)
        if occ is None or occ.state not in CLAIMABLE:
            return None
        if occ.state is _S.RETRY_WAIT and (occ.retry_at is None or _aware(occ.retry_at) > now):
            return None
        schedule = session.get(Schedule, occ.schedule_id, populate_existing=True, with_for_update=True)
        if schedule is None or schedule.state is not ScheduleState.ACTIVE:
            return None
        if occ.kind is OccurrenceKind.SCHEDULED and not self._governs(session, occ):
            return None
        spec = self._spec_of(session, occ.schedule_id, occ.revision)
        if spec.task is None:
            return None
        if not self._overlap_allows(session, occ, spec, now, report):
            return None
        epoch = self._epoch(session)
        number = occ.attempt_count + 1
        attempt_id = str(uuid.uuid4())
        identity = _identity(occ, attempt_id, number)
        command, unprepared = self._prepare(spec.task, identity)
        occ.claim_generation += 1
        occ.attempt_count = number
        occ.lease_owner = self.worker
        occ.lease_expires_at = now + self.options.lease
        events.transition(session, occ, _S.DISPATCHING, now, None, {"attempt": number, "worker": self.worker})
        session.add(
            Attempt(
                attempt_id=attempt_id,
                occurrence_id=occurrence_id,
                attempt_number=number,
                claim_generation=occ.claim_generation,
                execution_epoch=epoch,
                worker_host=self.host,
                worker_pid=self.pid,
                worker_started=self.process.started,
                boot_id=self.process.boot_id,
                started_at=now,
                input_digest=command.digest,
            )
        )
        with self._lock:
            self._mine.add(occurrence_id)
        return _Claim(
            occurrence_id,
            occ.schedule_id,
            occ.claim_generation,
            epoch,
            attempt_id,
            number,
            spec.task,
            spec,
            identity,
            command,
            unprepared,
        )

    def _prepare(self, task: Task, identity: TaskIdentity) -> tuple[PreparedCommand, str | None]:
        """The attempt's command; or, when it cannot even be rendered, a stand-in and why
        (the attempt is then recorded as a spawn error and nothing runs)."""
        try:
            return prepare(task.argv, task.cwd, task.env, identity, self._base_env), None
        except Exception as exc:
            names = tuple(sorted(task.env))
            # Printable whatever the task holds, and without the environment's values.
            digest = hashlib.sha256(ascii([task.argv, task.cwd, names]).encode("ascii")).hexdigest()
            stand_in = PreparedCommand(list(task.argv), task.cwd, {}, digest, names)
            return stand_in, f"cannot prepare the command: {describe_error(exc)}"

    def _governs(self, session: Session, occ: Occurrence) -> bool:
        """The occurrence's revision still governs its position (cutover gate)."""
        newest = session.scalar(
            select(Revision.revision)
            .where(Revision.schedule_id == occ.schedule_id, Revision.cutover_at <= occ.position_utc)
            .order_by(Revision.revision.desc())
            .limit(1)
        )
        return newest == occ.revision

    def _overlap_allows(
        self, session: Session, occ: Occurrence, spec: ScheduleSpec, now: datetime, report: PassReport
    ) -> bool:
        found = session.execute(
            select(Occurrence.occurrence_id, Occurrence.due_at, func.max(Attempt.started_at))
            .outerjoin(Attempt, Attempt.occurrence_id == Occurrence.occurrence_id)
            .where(
                Occurrence.schedule_id == occ.schedule_id,
                Occurrence.state.in_(IN_FLIGHT),
                Occurrence.occurrence_id != occ.occurrence_id,
            )
            .group_by(Occurrence.occurrence_id, Occurrence.due_at)
            .limit(1)
        ).first()
        if found is None or spec.overlap_policy is OverlapPolicy.ALLOW:
            return True
        running, running_due, running_started = found
        started = running_started or running_due
        if occ.state is _S.RETRY_WAIT or spec.overlap_policy is OverlapPolicy.QUEUE_ALL:
            return False  # waits for the running one to end
        if started is not None and occ.due_at is not None and occ.due_at < started:
            return False  # a backlog item (e.g. a catch-up) due before that run began: it waits its turn
        if spec.overlap_policy is OverlapPolicy.QUEUE_ONE:
            oldest = session.scalar(
                select(Occurrence.occurrence_id)
                .where(Occurrence.schedule_id == occ.schedule_id, Occurrence.state == _S.DUE)
                .order_by(Occurrence.due_at, Occurrence.occurrence_id)
                .limit(1)
            )
            if oldest == occ.occurrence_id:
                return False  # the one kept waiting
        why = f"{running} was still running (overlapPolicy {spec.overlap_policy.value})"
        events.transition(session, occ, _S.SKIPPED_OVERLAP, now, why)
        occ.finished_at = now
        report.skipped_overlap += 1
        return False

    # --- execution ------------------------------------------------------------------------

    def _execute(self, claim: _Claim, report: PassReport) -> None:
        """Run a claimed occurrence's task and record how it ended."""
        self._finish(claim, self._run(claim, report), report)

    def _run(self, claim: _Claim, report: PassReport) -> RunResult:
        """Run the task (no transaction is open meanwhile); the lease keeper watches it.

        Never raises: a task that could not be prepared or started is a spawn error,
        and one the runner lost track of after its start has its group killed and
        its outcome lost (invariant 5)."""
        report.started += 1
        start = self.clock.now()
        with self._lock:
            self._busy[claim.schedule_id] = start
        if claim.unprepared is not None:
            return RunResult(start, self.clock.now(), None, None, "spawn_error", "", claim.unprepared)
        pids: list[int] = []
        try:
            return run_command(
                claim.command,
                claim.task.timeout,
                self.clock,
                tail_bytes=self.options.tail_bytes,
                on_started=lambda pid: self._started(claim, pid, pids),
            )
        except Exception as exc:
            why = describe_error(exc)
            if not pids:
                return RunResult(start, self.clock.now(), None, None, "spawn_error", "", f"cannot start it: {why}")
            _signal_group(pids[0], signal.SIGKILL)
            return RunResult(
                start, self.clock.now(), None, None, "lost", "", f"the engine lost track of it ({why})", pids[0]
            )
        finally:
            with self._lock:
                self._groups.pop(claim.occurrence_id, None)
            self._keeper.forget(claim)
            with self._lock:
                task = self._tasks.get(claim.attempt_id)
            if task is not None and self.options.tasks_die_with_engine:
                TETHER.release(task[0])

    def _started(self, claim: _Claim, pid: int, pids: list[int]) -> None:
        """The task's process exists: its group is known (to interrupt it), its identity
        kept for the attempt row (written with RUNNING by the lease keeper, or with the
        outcome), and its lease kept.

        No write here: most tasks end within moments, and a transaction per spawn
        would double the ledger's work per task. Until RUNNING is recorded the
        next engine finds a task by its SCHED_ATTEMPT_ID (see core.engine.orphans)."""
        pids.append(pid)
        started = processes.start_time(pid)
        with self._lock:
            self._groups[claim.occurrence_id] = pid
            self._tasks[claim.attempt_id] = (pid, started)
            interrupted = self._interrupted
        if self.options.tasks_die_with_engine:
            TETHER.hold(pid, started)
        if interrupted:  # started just as the engine was interrupted
            _signal_group(pid, signal.SIGTERM)
        self._keeper.track(claim)

    def _finish(
        self,
        claim: _Claim,
        result: RunResult,
        report: PassReport,
        *,
        queue: _Queue | None = None,
        gate: Gate | None = None,
    ) -> _Claim | None:
        """Record an attempt's end and, in the same transaction, claim the next
        occurrence of ``queue``. Returns that claim, if any."""
        probe = None
        if result.outcome_lost and claim.task.verify:
            probe = self._probe(claim.task, claim.identity)
        outcome = decide(
            exit_status=result.exit_status,
            error_class=result.error_class,
            effect=claim.task.effect,
            retry=claim.spec.retry,
            attempt_number=claim.attempt_number,
            probe=probe,
        )
        following: _Claim | None = None
        try:
            with self._write() as session:
                pending = self._record(session, claim, result, outcome, self.clock.now())
                while queue and following is None and not self._stop.is_set():
                    occ_id, state = queue.popleft()
                    following = self._claim_in(session, occ_id, report, gate, state, pending)
                events.append_many(session, pending)
        except BaseException:
            if following is not None:  # its claim was rolled back with the rest
                with self._lock:
                    self._mine.discard(following.occurrence_id)
            raise
        with self._lock:
            self._mine.discard(claim.occurrence_id)
        report.outcomes[outcome.state.value] += 1
        return following

    def _record(
        self, session: Session, claim: _Claim, result: RunResult, outcome: Outcome, now: datetime
    ) -> list[events.NewEvent]:
        """Store the attempt's end; move the occurrence to its outcome if the claim still holds it.
        Returns the events of that, for the caller to append in the same transaction."""
        with self._lock:
            task_pid, task_started = self._tasks.pop(claim.attempt_id, (result.pid, None))
        ended: dict[str, object] = {
            "task_pid": task_pid,
            "task_started": task_started,
            "finished_at": result.finished,
            "exit_status": result.exit_status,
            "error_class": result.error_class,
            "stdout_tail": result.stdout_tail,
            "stderr_tail": result.stderr_tail,
        }
        standing = claims.standing(session, claim.occurrence_id)
        assert standing is not None
        if standing.generation != claim.generation or standing.state not in IN_FLIGHT or standing.epoch != claim.epoch:
            # A newer claim (or a fence) took over: record what happened, change nothing else.
            claims.finish_attempt(session, claim.attempt_id, ended)
            ignored = events.AttemptIgnored(
                at=now,
                schedule_id=claim.schedule_id,
                occurrence_id=claim.occurrence_id,
                attempt=claim.attempt_number,
                state=standing.state,
                reason=f"late result of attempt {claim.attempt_number} ignored: a newer claim holds it",
            )
            return [ignored]
        claims.finish_attempt(session, claim.attempt_id, ended | {"outcome": outcome.state})
        new = outcome.state
        values: dict[str, object] = {
            "reason": outcome.reason,
            "updated_at": now,
            "lease_owner": None,
            "lease_expires_at": None,
            "retry_at": now + outcome.retry_after if outcome.retry_after is not None else None,
        }
        if new in (_S.SUCCEEDED, _S.FAILED):
            values["finished_at"] = now
        recorded: list[events.NewEvent] = []
        previous = standing.state
        if previous is _S.DISPATCHING and result.pid is not None:
            # It ended before the lease keeper recorded it running: RUNNING goes in now, with its start time.
            recorded.append(
                events.OccurrenceTransitioned(
                    at=result.started,
                    schedule_id=claim.schedule_id,
                    occurrence_id=claim.occurrence_id,
                    from_=_S.DISPATCHING,
                    to=_S.RUNNING,
                    reason=None,
                    attempt=claim.attempt_number,
                )
            )
            check_transition(_S.DISPATCHING, _S.RUNNING, claim.occurrence_id)
            previous = _S.RUNNING
        check_transition(previous, new, claim.occurrence_id)
        claims.settle(session, claim.occurrence_id, standing.state, new, values)
        recorded.append(
            events.OccurrenceTransitioned(
                at=now,
                schedule_id=claim.schedule_id,
                occurrence_id=claim.occurrence_id,
                from_=previous,
                to=new,
                reason=outcome.reason,
            )
        )
        if new in (_S.SUCCEEDED, _S.FAILED) and claim.spec.kind is Kind.AFTER_COMPLETION:
            from core.engine.chain import schedule_next

            events.append_many(session, recorded)  # before the next appointment's own event
            occ = session.get(Occurrence, claim.occurrence_id, populate_existing=True)
            assert occ is not None
            schedule_next(session, occ, claim.spec, now)
            return []
        return recorded

    def _mark_running(self, running: Sequence[_Claim]) -> None:
        with self.ledger.write() as session:
            with self._lock:
                held = [c.held(self._tasks.get(c.attempt_id)) for c in running]
            claims.mark_running(session, held, self.clock.now())

    def _renew_leases(self, running: Sequence[_Claim]) -> None:
        with self.ledger.write() as session:
            claims.renew_leases(session, [c.held() for c in running], self.clock.now() + self.options.lease)

    def _probe(self, task: Task, identity: TaskIdentity) -> Callable[[], Verdict]:
        assert task.verify is not None
        verify = task.verify

        def run() -> Verdict:
            try:
                command = prepare(verify, task.cwd, task.env, identity)
                result = run_command(command, task.timeout, self.clock, tail_bytes=1024)
            except Exception:  # a probe that cannot run cannot tell
                return Verdict.UNKNOWN
            return verdict_from_exit(result.exit_status if result.error_class is None else None)

        return run

    def _apply(self, session: Session, occ: Occurrence, outcome: Outcome, now: datetime, spec: ScheduleSpec) -> None:
        events.transition(session, occ, outcome.state, now, outcome.reason)
        occ.lease_owner = None
        occ.lease_expires_at = None
        if outcome.state is _S.RETRY_WAIT:
            assert outcome.retry_after is not None
            occ.retry_at = now + outcome.retry_after
        else:
            occ.retry_at = None
        if outcome.state in (_S.SUCCEEDED, _S.FAILED):
            occ.finished_at = now
            if spec.kind is Kind.AFTER_COMPLETION:
                from core.engine.chain import schedule_next

                schedule_next(session, occ, spec, now)


def _signal_group(pgid: int, sig: int) -> None:
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def _identity(occ: Occurrence, attempt_id: str, attempt_number: int) -> TaskIdentity:
    return TaskIdentity(
        schedule_id=occ.schedule_id,
        revision=occ.revision,
        occurrence_id=occ.occurrence_id,
        logical_slot_id=occ.logical_slot_id,
        nominal_local=occ.nominal_local,
        scheduled_utc=fmt_utc(_aware(occ.resolved_utc)) if occ.resolved_utc is not None else None,
        business_period=occ.business_period,
        attempt_id=attempt_id,
        attempt_number=attempt_number,
    )


def _aware(value: datetime | None) -> datetime:
    assert value is not None
    return value


def _chunks(items: list[str], size: int) -> Iterator[list[str]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]
