"""The engine loop: each pass runs the stages in order, then workers claim and
run what is due (docs/contract.md §4; docs/ledger.md, "The engine, stage by
stage").

The stages are functions in their own modules: :mod:`core.engine.plan`
(unreadable revisions, materialization), :mod:`core.engine.first_start` (a new
version shadows the ledger's future first), :mod:`core.engine.drift_check`, :mod:`core.engine.promote`,
:mod:`core.engine.recover`, :mod:`core.engine.claim`, :mod:`core.engine.run`
and :mod:`core.engine.settle`; the worker loops that run what a pass hands them are
in :mod:`core.engine.workers`. :class:`Engine` holds the loop, the dispatch and the
workers' lifecycle. One class serves ``schedctl engine run`` and the
desktop app. Time comes from the injected clock; nothing here calls
``datetime.now``. Every state change is a short write transaction with its
event; commands run outside transactions.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
import uuid
from collections import defaultdict
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import wait as wait_futures

from sqlalchemy.orm import Session

from core.clock import Clock
from core.desktop.wake.alarms import WakeBackend
from core.engine import claim as claim_stage
from core.engine import drift_check, first_start, plan, processes, promote, recover, run, statements
from core.engine.activity import Activity
from core.engine.alerts import AlertSender
from core.engine.context import OUTLIVE_ENV, Claim, Context, EngineOptions, PassReport
from core.engine.group_commit import GroupCommit
from core.engine.jobs import Job, Jobs
from core.engine.leases import LeaseKeeper
from core.engine.statements import Gate
from core.engine.wake import WakeKeeper
from core.engine.workers import WORKER_RESTARTS, Seen, Workers
from core.ledger.db import Ledger
from core.ledger.states import OccurrenceState
from core.team.placement import Placement

__all__ = ["OUTLIVE_ENV", "WORKER_RESTARTS", "Engine", "EngineOptions", "PassReport"]

#: Workers' writes (claims, outcomes) committed together at most, on SQLite (:mod:`core.engine.group_commit`).
GROUP_COMMIT_LIMIT = 16

_log = logging.getLogger(__name__)


class Engine(Workers):
    """Drives one ledger. ``run_once`` is a full pass; ``run_forever`` repeats it."""

    def __init__(
        self,
        ledger: Ledger,
        clock: Clock,
        options: EngineOptions | None = None,
        *,
        placement: Placement | None = None,
        engine_id: str | None = None,
        wake: WakeBackend | None = None,
    ) -> None:
        """``placement``: the engine's labels and whom it trusts (default: this process's
        user and host, trusting only that user). It also trusts the database role it logs in
        as (:meth:`core.team.placement.Placement.trusting_role`). ``engine_id``: the engine's
        presence row (:func:`core.engine.presence.announce`); with it, engines sharing the
        ledger split materialization between them (:mod:`core.engine.share`). ``wake``: the
        host's wake backend (:func:`core.desktop.wake.probe.host_backend`); with it, the engine keeps an
        alarm for each ``wakeSystem`` schedule it runs (:mod:`core.engine.wake`)."""
        self.ledger = ledger
        self.clock = clock
        self.options = options or EngineOptions()
        self.process = processes.identify()
        self.host = self.process.host
        self.pid = self.process.pid
        self.worker = f"{self.host}:{self.pid}:{uuid.uuid4().hex[:8]}"
        keeper: LeaseKeeper[Claim] = LeaseKeeper(
            lambda running: run.mark_running(self.ledger, self.context, running),
            lambda running: run.renew_leases(self.ledger, self.context, running),
            running_after=self.options.running_after.total_seconds(),
            renew_every=max(self.options.lease.total_seconds() / 3, 0.05),
            key=lambda claim: claim.occurrence_id,
        )
        self.context = Context(clock, self.options, self.process, self.worker, keeper)
        self.context.placement = (placement or self.context.placement).trusting_role(ledger.role())
        """What the stages see of this engine (who it is, what it runs now)."""
        self.context.share.engine_id = engine_id
        self._workers: dict[str, int] = {}  # schedule -> workers of this engine on it
        # schedule -> its due occurrences and gate as the dispatch read them, for its worker
        self._seen: dict[str, Seen] = {}
        self._futures: list[Future[None]] = []
        self._stop = threading.Event()
        self._held = threading.local()  # a worker's held write transactions (Ledger.writer)
        self.group = GroupCommit(GROUP_COMMIT_LIMIT) if ledger.dialect == "sqlite" else None
        """Joins the workers' claims and outcomes into shared commits (SQLite; None on PostgreSQL)."""
        self.activity = Activity()
        """What workers started and finished, not yet told on a pass's report."""
        self.wake = WakeKeeper(wake) if wake is not None else None
        """The alarms that wake the machine for ``wakeSystem`` schedules (None: none kept)."""
        self.alerts = AlertSender(ledger, clock, self.worker, timeout=self.options.alert_timeout)
        """Delivers the alert outbox: after a pass that waits, else on its own thread."""

    # --- the pass -----------------------------------------------------------------

    def run_once(self, *, wait: bool = True) -> PassReport:
        """Materialize, promote, recover, and run everything due. With ``wait``,
        return only when the tasks started by this pass have finished."""
        report = PassReport()
        ctx = self.context
        ctx.base_env = dict(os.environ)  # read once a pass: tasks of this pass see the same environment
        plan.hold_unreadable(self.ledger, self.clock, ctx.unreadable, report)
        plan.hold_refused(self.ledger, ctx.placement, ctx.refusals, report, now=self.clock.now())
        hold = ctx.held_schedules
        first_start.shadow_new_version(self.ledger, self.clock, self.options.version, ctx.first_start)
        sweep = plan.select_sweep(self.ledger, self.clock, hold=hold, share=ctx.share, everything=not ctx.swept)
        plan.catch_up(
            self.ledger, self.clock, sweep, report, fill_rows=self.options.fill_rows_per_pass, unreadable=ctx.unreadable
        )
        ctx.swept = True
        hold = ctx.held_schedules  # with those whose materialization failed
        drift_check.check_drift(self.ledger, self.clock, ctx.drift, hold=hold)
        promote.promote_due(self.ledger, self.clock.now(), report, hold=hold, first=ctx.share.owns)
        recover.recover_lost(self.ledger, ctx, report)
        self._dispatch(report, wait=wait)  # what is due starts before the far rows are written
        plan.fill(self.ledger, self.clock, sweep, report, unreadable=ctx.unreadable)
        if self.wake is not None:
            self.wake.keep(self.ledger, ctx, self.clock.now(), wait=wait)
        if wait and self.options.deliver_alerts:
            self.alerts.deliver_due()  # after the tasks: never on their claim or dispatch path
        return self.activity.tell(report)

    def run_forever(self, *, poll_seconds: float = 1.0, on_pass: Callable[[PassReport], None] | None = None) -> None:
        """Repeat passes until :meth:`stop`. Tasks run in the background between passes,
        and alerts are sent on a thread of their own."""
        if self.options.deliver_alerts:
            self.alerts.start(self._stop, max(poll_seconds, 0.05))
        while not self._stop.is_set():
            report = self.run_once(wait=False)
            if on_pass is not None:
                on_pass(report)
            self._stop.wait(poll_seconds)

    def stop(self, *, kill: bool = False) -> None:
        """Ask :meth:`run_forever` to return after the current pass. Workers claim
        nothing more: the tasks running now end and are recorded.

        With ``kill``, the process groups of the tasks running now are ended too
        (SIGTERM, then SIGKILL after a grace period), and only those: their
        attempts are recorded as killed by a signal, a lost outcome settled by
        invariant 5."""
        self._stop.set()
        if kill:
            run.end_tasks(self.context)

    def interrupt(self) -> None:
        """A second Ctrl-C: :meth:`stop` with ``kill``."""
        self.stop(kill=True)

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Wait for the tasks this engine started; True when none is left running."""
        with self.context.lock:
            pending = list(self._futures)
        done, not_done = wait_futures(pending, timeout=timeout)
        for f in done:
            f.result()  # surface a worker's crash as a bug, not silence
        return not not_done

    def busy(self) -> bool:
        """Whether a task started by this engine is still running."""
        with self.context.lock:
            return any(not f.done() for f in self._futures)

    # --- workers --------------------------------------------------------------------------

    def _dispatch(self, report: PassReport, *, wait: bool) -> None:
        """Start one worker per schedule with something due. A schedule whose
        worker is still busy from an earlier pass gets its overlap policy
        applied to what came due meanwhile instead."""
        ctx = self.context
        queues: dict[str, list[tuple[str, OccurrenceState]]] = defaultdict(list)
        with self.ledger.read() as session:
            ready = claim_stage.claimable(
                session, self.clock.now(), unreadable=ctx.unreadable.revisions, refused=ctx.refusals.revisions
            )
            for sid, occ_id, state in ready:
                queues[sid].append((occ_id, state))
            gates = statements.gates(session) if ready else {}
            waiting = self._waiting_behind_others(session, queues)
        if not queues:
            return
        jobs: list[tuple[str, list[str] | None]] = []
        for sid, seen in queues.items():
            with ctx.lock:
                busy = self._workers.get(sid, 0) > 0
                busy_since = ctx.busy.get(sid, self.clock.now())
            if not busy:
                if sid not in waiting:
                    jobs.append((sid, None))
            else:
                ids = [occ_id for occ_id, _ in seen]
                with self.ledger.write() as session:
                    extra = claim_stage.overlap_while_busy(session, sid, ids, busy_since, self.clock.now(), report)
                if extra:
                    jobs.append((sid, extra))
        if not jobs:
            return
        firsts = {sid: seen[0] for sid, seen in queues.items()}
        claims, taken = self._claim_together(jobs, firsts, gates)
        # Claimed ones first, so that each starts at once; none of what another engine holds.
        # On PostgreSQL the rest in this engine's own order too (:meth:`_spread`): engines side by side
        # walk the backlog in different orders instead of racing for the same schedule each time.
        jobs = sorted(
            (job for job in jobs if job[0] not in taken), key=lambda job: (job[0] not in claims, self._spread(job[0]))
        )
        if not jobs:
            return
        self._hand_over(jobs, queues, gates, claims)
        started = self.clock.now()
        for sid, _ in jobs:
            with ctx.lock:
                if not self._workers.get(sid):
                    ctx.busy[sid] = started
                self._workers[sid] = self._workers.get(sid, 0) + 1
        # One job per schedule, with only what the queue needs: a loop makes its report when it
        # takes it (:meth:`_work_job`), so a pass holds as many reports as loops, not one per job.
        loops = min(self.options.max_workers, len(jobs))
        pending = Jobs((Job(sid, only, claims.get(sid)) for sid, only in jobs), loops=loops)
        pool = ThreadPoolExecutor(max_workers=loops, thread_name_prefix="tidemark-task")
        futures = [pool.submit(self._work_jobs, pending) for _ in range(loops)]
        with ctx.lock:
            self._futures = [f for f in self._futures if not f.done()] + futures
        if wait:
            for f in futures:
                f.result()
        pool.shutdown(wait=wait)

    def _waiting_behind_others(
        self, session: Session, queues: dict[str, list[tuple[str, OccurrenceState]]]
    ) -> set[str]:
        """Schedules this engine does not run now whose due occurrences all wait for a run in
        flight (another engine's; :func:`core.engine.claim.waiting_behind_others`): no worker
        is started for them, instead of one walking their backlog with careful claims."""
        with self.context.lock:
            idle = {sid: [oid for oid, _ in seen] for sid, seen in queues.items() if not self._workers.get(sid)}
        return claim_stage.waiting_behind_others(session, self.context, idle) if idle else set()

    def _hand_over(
        self,
        jobs: list[tuple[str, list[str] | None]],
        queues: dict[str, list[tuple[str, OccurrenceState]]],
        gates: dict[str, Gate],
        claims: dict[str, Claim],
    ) -> None:
        """Keep what the dispatch read of each schedule (its due occurrences, its gate) for the
        worker it starts, which then claims without reading them again; what changed meanwhile
        makes the compare-and-set fail, and the worker takes the careful path."""
        with self.context.lock:
            for sid, only in jobs:
                if only is None and sid in gates:
                    first = claims.get(sid)
                    rest = [seen for seen in queues[sid] if first is None or seen[0] != first.occurrence_id]
                    self._seen[sid] = (rest, gates[sid])

    def _claim_together(
        self,
        jobs: list[tuple[str, list[str] | None]],
        firsts: dict[str, tuple[str, OccurrenceState]],
        gates: dict[str, Gate],
    ) -> tuple[dict[str, Claim], set[str]]:
        """Claim the first due occurrence of as many schedules as the pass has workers, in
        one transaction (:func:`core.engine.claim.claim_together`). Returns the claims, and
        the schedules another engine holds (no worker is started for those)."""
        candidates = [
            (gates[sid], *firsts[sid]) for sid, only in jobs if only is None and sid in gates and sid in firsts
        ]
        candidates.sort(key=lambda seen: self._spread(seen[0].schedule_id))  # each engine starts on others
        candidates = candidates[: self.options.max_workers]
        if not candidates or self._stop.is_set():
            return {}, set()
        return claim_stage.claim_together(lambda: self.ledger.write(serialize=False), self.context, candidates)

    def _spread(self, schedule_id: str) -> bytes:
        """Where a schedule comes in this engine's order of a pass's jobs (PostgreSQL, where
        engines run side by side: a hash of the engine and the schedule, so that each engine
        starts on different schedules and walks the rest in an order of its own; elsewhere
        the same for all, keeping the order read)."""
        if self.ledger.dialect != "postgresql":
            return b""
        own = b"0" if self.context.share.owns(schedule_id) else b"1"  # its own share first
        return own + hashlib.blake2b(f"{self.worker} {schedule_id}".encode(), digest_size=8).digest()
