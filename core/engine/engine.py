"""The engine loop: each pass runs the stages in order, then workers claim and
run what is due (docs/contract.md §4; docs/ledger.md, "The engine, stage by
stage").

The stages are functions in their own modules: :mod:`core.engine.plan`
(unreadable revisions, materialization), :mod:`core.engine.first_start` (a new
version shadows the ledger's future first), :mod:`core.engine.drift_check`, :mod:`core.engine.promote`,
:mod:`core.engine.recover`, :mod:`core.engine.claim`, :mod:`core.engine.run`
and :mod:`core.engine.settle`. :class:`Engine` holds only the loop, the
workers and their lifecycle. One class serves ``schedctl engine run`` and the
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
from collections import defaultdict, deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import wait as wait_futures
from contextlib import AbstractContextManager, ExitStack, nullcontext

from sqlalchemy.orm import Session

from core.clock import Clock
from core.desktop.wake.alarms import WakeBackend
from core.engine import claim as claim_stage
from core.engine import drift_check, first_start, plan, processes, promote, recover, run, settle, statements
from core.engine.activity import Activity
from core.engine.alerts import AlertSender
from core.engine.context import OUTLIVE_ENV, Claim, Context, EngineOptions, PassReport
from core.engine.group_commit import GroupCommit
from core.engine.jobs import Job, Jobs
from core.engine.leases import LeaseKeeper
from core.engine.runner import RunResult, describe_error
from core.engine.statements import Gate
from core.engine.wake import WakeKeeper
from core.ledger import events
from core.ledger.db import Ledger
from core.ledger.states import OccurrenceState
from core.team.placement import Placement

__all__ = ["OUTLIVE_ENV", "WORKER_RESTARTS", "Engine", "EngineOptions", "PassReport"]

#: Workers' writes (claims, outcomes) committed together at most, on SQLite (:mod:`core.engine.group_commit`).
GROUP_COMMIT_LIMIT = 16

#: Times a worker killed by an exception is restarted within one pass; after that the
#: next pass starts a new one.
WORKER_RESTARTS = 3

#: Jobs waiting with nothing claimed that a loop looks at together, before it starts one, for
#: what another engine took since the dispatch (:meth:`Engine._taken_elsewhere`): one read for
#: them, not one claim each; bounded, so that a pass with many schedules does not read them all
#: again before each job.
_LOOKED_AHEAD = 16

_log = logging.getLogger(__name__)

#: A schedule's due occurrences with the state each was seen in, and its gate, as a dispatch read them.
Seen = tuple[list[tuple[str, OccurrenceState]], Gate]


class Engine:
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
        pending = Jobs()

        def queued(sid: str, only: list[str] | None) -> Callable[[PassReport], Future[None]]:
            def add(own: PassReport) -> Future[None]:
                job = Job(sid, only, own, claims.get(sid))
                pending.add(job)
                return job.done

            return add

        # Each job writes a report of its own, told on this pass's report or a later one.
        futures = [self.activity.start(sid, queued(sid, only)) for sid, only in jobs]
        with ctx.lock:
            self._futures = [f for f in self._futures if not f.done()] + futures
        loops = min(self.options.max_workers, len(jobs))
        pool = ThreadPoolExecutor(max_workers=loops, thread_name_prefix="tidemark-task")
        for _ in range(loops):
            pool.submit(self._work_jobs, pending)
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

    def _work_jobs(self, pending: Jobs) -> None:
        """A worker loop: one write connection held (:meth:`Ledger.writer`) for the jobs it takes,
        one after the other, until none is left. A job whose worker died goes on with a connection
        of its own, and so does every later job of this loop."""
        held = ExitStack()
        try:
            self._held.loop = held.enter_context(self.ledger.writer(serialize=False))
        except Exception as exc:
            self._held.loop = None
            _log.debug("a worker loop could not hold a write connection: %s", describe_error(exc))
        self._held.jobs, self._held.next = pending, None
        with held:
            try:
                while (job := self._held.next or pending.take()) is not None:
                    self._held.next = None
                    if self._taken_elsewhere(job, pending):
                        continue
                    self._held.job, self._held.again = job, False
                    if job.run(self._work_job):
                        job.first, job.again = None, True
                        pending.add(job)  # its schedule is read again once the others had their turn
            finally:
                self._held.loop = self._held.jobs = self._held.job = None

    def _work_job(self, job: Job) -> bool:
        """One job of a worker loop; True when it is to be queued again (see :meth:`_finish`)."""
        if job.again and not self._read_again(job):
            return False
        self.work_schedule(job.schedule_id, job.only, job.report, job.first)
        return bool(self._held.again)

    def _read_again(self, job: Job) -> bool:
        """What came due meanwhile, for ``job`` and every other job queued again, in one read.
        Those with something due go on (``job`` here; the others back in the queue, their
        reading handed over as the dispatch's is); the others end. Whether ``job`` goes on."""
        jobs: Jobs = self._held.jobs
        batch = [job, *jobs.take_again()]
        ctx = self.context
        wanted = {j.schedule_id for j in batch}
        queues: dict[str, list[tuple[str, OccurrenceState]]] = defaultdict(list)
        try:
            with self.ledger.read() as session:
                ready = claim_stage.claimable(
                    session, self.clock.now(), unreadable=ctx.unreadable.revisions, refused=ctx.refusals.revisions
                )
                for sid, occ_id, state in ready:
                    if sid in wanted:
                        queues[sid].append((occ_id, state))
                gates = statements.gates(session) if queues else {}
        except Exception as exc:  # each reads its own schedule then, as a worker does (restarted if that fails)
            _log.debug("could not read the schedules queued again together: %s", describe_error(exc))
            for j in batch:
                j.again = False
                if j is not job:
                    jobs.put_back(j)
            return True
        goes_on = False
        for j in batch:
            j.again = False
            if j.schedule_id in queues and j.schedule_id in gates:
                with ctx.lock:
                    self._seen[j.schedule_id] = (queues[j.schedule_id], gates[j.schedule_id])
                if j is job:
                    goes_on = True
                else:
                    jobs.put_back(j)
                continue
            self._release_worker(j.schedule_id)
            if j is not job:
                j.done.set_result(None)
        return goes_on

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

    def _crowded(self) -> bool:
        """Whether this pass met another engine's work: a claim found an occurrence another engine
        claimed since the dispatch read it (``Context.elsewhere``). Until then the loops claim
        without the read: alone, or while engines work on different schedules, it finds nothing."""
        with self.context.lock:
            return bool(self.context.elsewhere)

    def _taken_elsewhere(self, job: Job, pending: Jobs) -> bool:
        """Before a loop starts a job the dispatch claimed nothing for: which of it and the next
        jobs waiting so (:data:`_LOOKED_AHEAD` in all) another engine took since the dispatch
        read them (one read, :func:`core.engine.claim.taken_elsewhere`). Those end here with no
        claim tried, as a worker's claim that lost its race ends them, and the next dispatch
        reads them again. Whether ``job`` is one of them. Only when :meth:`_crowded`."""
        if job.first is not None or job.only is not None or job.again or not self._crowded():
            return False
        batch = [job, *pending.unclaimed()[: _LOOKED_AHEAD - 1]]
        with self.context.lock:
            queued = {
                j.schedule_id: [oid for oid, _ in self._seen[j.schedule_id][0]]
                for j in batch
                if j.schedule_id in self._seen
            }
        try:
            with self.ledger.read() as session:
                taken = claim_stage.taken_elsewhere(session, self.context, queued)
        except Exception as exc:  # the claims find out, one at a time, as before
            _log.debug("could not read what other engines took: %s", describe_error(exc))
            return False
        if not taken:
            return False
        ended = pending.drop(taken - {job.schedule_id})
        if job.schedule_id in taken:
            ended.append(job)
        for j in ended:
            with self.context.lock:
                self._seen.pop(j.schedule_id, None)
                self.context.elsewhere.add(j.schedule_id)
            self._release_worker(j.schedule_id)
            j.done.set_result(None)
        return job.schedule_id in taken

    def work_schedule(
        self, schedule_id: str, only: list[str] | None, report: PassReport, first: Claim | None = None
    ) -> None:
        """A worker: run a schedule's due occurrences one at a time, oldest first,
        until none is left (caught-up runs never overlap each other). ``only``
        limits it to those occurrences (an extra worker under overlapPolicy ALLOW).
        ``first``: the schedule's first occurrence, claimed already by the dispatch.

        Each attempt's outcome is recorded in the same transaction as the next
        claim, so a run of due occurrences costs one write transaction each.

        An exception that kills the worker is logged and recorded as an event, and
        the worker restarts (at most WORKER_RESTARTS times a pass), first recording
        the attempt it had in hand."""
        self._held.pending = (first, None) if first is not None else None
        self._held.fresh = first
        try:
            for restarts in range(WORKER_RESTARTS + 1):
                loop = getattr(self._held, "loop", None)
                own = nullcontext(loop) if loop is not None else self.ledger.writer(serialize=False)
                try:
                    with own as transaction:
                        self._held.transaction = transaction
                        self._work_queue(schedule_id, only, report)
                    return
                except Exception as exc:
                    self._held.transaction = None
                    self._held.loop = None  # the loop's connection may be what failed: a fresh one from now on
                    self._worker_died(schedule_id, exc, restarts < WORKER_RESTARTS)
        finally:
            self._held.transaction = None
            self._release_worker(schedule_id)

    def _release_worker(self, schedule_id: str) -> None:
        """One worker of this engine on ``schedule_id`` has ended."""
        with self.context.lock:
            left = self._workers.get(schedule_id, 1) - 1
            if left <= 0:
                self._workers.pop(schedule_id, None)
                self.context.busy.pop(schedule_id, None)
            else:
                self._workers[schedule_id] = left

    def _write(self) -> AbstractContextManager[Session]:
        """A write transaction: on the worker's held connection when there is one."""
        transaction = getattr(self._held, "transaction", None)
        own = transaction if transaction is not None else lambda: self.ledger.write(serialize=False)
        return own() if self.group is None else self.group.transaction(own)

    def _worker_died(self, schedule_id: str, exc: Exception, restarted: bool) -> None:
        """A log line and an event about a worker an exception killed. When it is not
        restarted, its claim in hand is left to recovery (its lease is no longer kept)."""
        pending: tuple[Claim, RunResult | None] | None = self._held.pending
        held = pending[0] if pending is not None else None
        why = describe_error(exc)
        then = (
            "restarted" if restarted else f"not restarted after {WORKER_RESTARTS} restarts (the next pass starts one)"
        )
        _log.error("the engine's worker for schedule %s died: %s; %s", schedule_id, why, then)
        _log.debug("how the worker for schedule %s died", schedule_id, exc_info=exc)
        if not restarted and held is not None:
            self._held.pending = None
            self.context.release(held.occurrence_id)
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
        ctx = self.context
        pending: tuple[Claim, RunResult | None] | None = self._held.pending
        fresh: Claim | None = self._held.fresh  # claimed by the dispatch, not run yet
        self._held.fresh = None
        if pending is not None and fresh is None:  # what a worker that died had in hand: run it or record its end
            self._settle_held(*pending, report)
        while True:
            queue: settle.Queue
            gate: Gate | None = None
            with ctx.lock:
                seen = self._seen.pop(schedule_id, None) if only is None else None
            if only is not None:
                queue = deque((oid, None) for oid in only)
            elif seen is not None:  # the dispatch's reading, handed over (the first loop only)
                queue, gate = deque(seen[0]), seen[1]
            else:
                with self.ledger.read() as session:
                    ready = claim_stage.claimable(
                        session,
                        self.clock.now(),
                        unreadable=ctx.unreadable.revisions,
                        refused=ctx.refusals.revisions,
                        schedule_id=schedule_id,
                    )
                    queue = deque((oid, state) for _, oid, state in ready)
                    gate = claim_stage.gate(session, schedule_id) if queue else None
            progressed = False
            claim = fresh if fresh is not None else self._claim_first(queue, report, gate)
            fresh = None
            while claim is not None:
                progressed = True
                self._held.pending = (claim, None)
                result = run.run_claim(ctx, claim, report)
                self._held.pending = (claim, result)
                claim = self._finish(claim, result, report, queue, gate)
                self._held.pending = None
                if claim is not None and claim.schedule_id != schedule_id:
                    if only is None:
                        self._read_later(schedule_id)
                    return
            if only is not None or not progressed:
                return
            job: Job | None = getattr(self._held, "job", None)
            if job is not None and job.schedule_id == schedule_id:
                self._read_later(schedule_id)
                return

    def _read_later(self, schedule_id: str) -> None:
        """A loop's job ran what was handed to it: what came due meanwhile is read when the job
        comes round again, with the others queued again (:meth:`_read_again`); till then the
        schedule counts as busy."""
        with self.context.lock:
            self._workers[schedule_id] = self._workers.get(schedule_id, 0) + 1
        self._held.again = True

    def _finish(
        self, claim: Claim, result: RunResult, report: PassReport, queue: settle.Queue, gate: Gate | None
    ) -> Claim | None:
        """Record the outcome with the next claim in one transaction: the schedule's next due
        occurrence, else (SQLite, a worker loop's job) the first one of the next schedule waiting
        for a worker, which this loop then runs (``_held.next``) at once: a task starts only once
        its claim is committed, and a run costs one transaction, not two."""
        jobs: Jobs | None = getattr(self._held, "jobs", None)
        taken: list[tuple[Job, Seen | None]] = []
        then = self._chain(jobs, taken) if jobs is not None and self.group is not None else None
        try:
            following = settle.finish(
                self._write, self.context, claim, result, report, queue=queue, gate=gate, stop=self._stop, then=then
            )
        except BaseException:
            assert jobs is not None or not taken
            for job, seen in taken:  # its claim was rolled back with the rest: its worker claims again
                if seen is not None:
                    with self.context.lock:
                        self._seen[job.schedule_id] = seen
                if jobs is not None:
                    jobs.put_back(job)
            raise
        if taken and following is not None:
            job = taken[0][0]
            job.first = following
            self._held.next = job
        return following

    def _chain(self, jobs: Jobs, taken: list[tuple[Job, Seen | None]]) -> settle.Then:
        """Claims, in an outcome's transaction, the first due occurrence of the next job waiting,
        from what the dispatch read of it (kept in ``taken`` with that reading)."""

        def claim_next(session: Session, pending: list[events.NewEvent]) -> Claim | None:
            job = jobs.take_unclaimed()
            if job is None:
                return None
            with self.context.lock:
                seen = self._seen.pop(job.schedule_id, None)
            taken.append((job, seen))  # given back as it was if the transaction fails
            claimed = None
            rest = deque(seen[0]) if seen is not None else deque()
            while seen is not None and rest and claimed is None:
                occ_id, state = rest.popleft()
                now = self.clock.now()
                claimed = claim_stage.claim_in(session, self.context, occ_id, now, job.report, seen[1], state, pending)
            if seen is not None:
                with self.context.lock:
                    self._seen[job.schedule_id] = (list(rest), seen[1])
            if claimed is None:
                taken.pop()
                jobs.put_back(job)
            return claimed

        return claim_next

    def _settle_held(self, claim: Claim, result: RunResult | None, report: PassReport) -> None:
        """Run (if it never ran) and record the claim a worker had in hand when it died."""
        if result is None:
            self._held.pending = (claim, None)
            result = run.run_claim(self.context, claim, report)
        self._held.pending = (claim, result)
        settle.finish(self._write, self.context, claim, result, report)
        self._held.pending = None

    def _claim_first(self, queue: settle.Queue, report: PassReport, gate: Gate | None) -> Claim | None:
        while queue and not self._stop.is_set():
            occ_id, state = queue.popleft()
            claim = claim_stage.claim(self._write, self.context, occ_id, report, gate=gate, state=state)
            if claim is not None:
                return claim
        return None
