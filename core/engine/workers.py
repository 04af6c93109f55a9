"""The engine's worker loops: what a pass's due schedules are handed to (docs/contract.md §4;
docs/ledger.md, "The engine, stage by stage").

A pass's dispatch (:meth:`core.engine.engine.Engine._dispatch`) queues one
:class:`~core.engine.jobs.Job` per schedule with something due and starts at most
``max_workers`` loops (:meth:`Workers._work_jobs`). Each loop holds one write connection and
takes the jobs one after the other; a job is a worker (:meth:`Workers.work_schedule`) that
claims, runs and records its schedule's due occurrences one at a time, the outcome and the next
claim in one transaction, restarted when an exception kills it (:mod:`core.engine.restarts`).
:class:`Workers` holds these methods; :class:`~core.engine.engine.Engine` is one, with the
state they share.
"""

from __future__ import annotations

import logging
import threading
from collections import defaultdict, deque
from contextlib import AbstractContextManager, ExitStack, nullcontext
from typing import Any

from sqlalchemy.orm import Session

from core.clock import Clock
from core.engine import claim as claim_stage
from core.engine import plan, run, settle, statements
from core.engine.activity import Activity
from core.engine.context import Claim, Context, EngineOptions, PassReport
from core.engine.group_commit import GroupCommit
from core.engine.jobs import Job, Jobs
from core.engine.restarts import WORKER_RESTARTS, worker_died
from core.engine.runner import RunResult, describe_error
from core.engine.statements import Gate
from core.ledger import events
from core.ledger.db import Ledger
from core.ledger.states import OccurrenceState

__all__ = ["WORKER_RESTARTS", "Seen", "Workers"]

#: Jobs waiting with nothing claimed that a loop looks at together, before it starts one, for
#: what another engine took since the dispatch (:meth:`Workers._taken_elsewhere`): one read for
#: them, not one claim each; bounded, so that a pass with many schedules does not read them all
#: again before each job.
_LOOKED_AHEAD = 16

_log = logging.getLogger(__name__)

#: A schedule's due occurrences with the state each was seen in, and its gate, as a dispatch read them.
Seen = tuple[list[tuple[str, OccurrenceState]], Gate]


def _hand_back() -> None:
    """After the last worker loop of a pass: the C allocator's free pages handed back to the system
    (glibc's ``malloc_trim``). The runs' claims, outcomes and the loops' connections leave the heap
    with holes that later passes would not fill; kept, each pass that runs tasks raised the
    engine's resident memory a little further (1.2 MiB over ten steady passes at 1,000 minute-mix
    schedules). A trim takes 0.03-3 ms, on a loop's thread, once per pass that ran something."""
    trim = plan.malloc_trim()
    if trim is not None:
        trim(0)


class Workers:
    """The worker loops of an engine and the workers they run. The engine's state they share is
    declared here and set by :class:`~core.engine.engine.Engine`."""

    ledger: Ledger
    clock: Clock
    options: EngineOptions
    worker: str
    context: Context
    activity: Activity
    group: GroupCommit | None
    _stop: threading.Event
    _held: Any  # a thread's own: its loop's connection, its jobs, the claim in hand
    _seen: dict[str, Seen]
    _workers: dict[str, int]

    def _work_jobs(self, pending: Jobs) -> None:
        """A worker loop: one write connection held (:meth:`Ledger.writer`) for the jobs it takes,
        one after the other, until none is left. A job whose worker died goes on with a connection
        of its own, and so does every later job of this loop. An exception that escaped a job ends
        only that job; the loop goes on with the others and raises the first such exception at its
        end (the engine waits for the loops: a worker's crash is surfaced as a bug, not silence)."""
        held = ExitStack()
        try:
            self._held.loop = held.enter_context(self.ledger.writer(serialize=False))
        except Exception as exc:
            self._held.loop = None
            _log.debug("a worker loop could not hold a write connection: %s", describe_error(exc))
        self._held.jobs, self._held.next = pending, None
        crashed: Exception | None = None
        with held:
            try:
                while (job := self._held.next or pending.take()) is not None:
                    self._held.next = None
                    if self._taken_elsewhere(job, pending):
                        continue
                    self._held.job, self._held.again = job, False
                    try:
                        again = self._work_job(job)
                    except Exception as exc:
                        crashed = crashed or exc
                        continue
                    if again:
                        job.first, job.again = None, True
                        pending.add(job)  # its schedule is read again once the others had their turn
            finally:
                self._held.loop = self._held.jobs = self._held.job = None
                if pending.loop_ended():
                    _hand_back()
        if crashed is not None:
            raise crashed

    def _work_job(self, job: Job) -> bool:
        """One job of a worker loop, with a report of its own while it runs; True when it is to be
        queued again (see :meth:`_finish`)."""
        if job.again and not self._read_again(job):
            return False
        report = self.activity.begin(job.schedule_id)
        try:
            self.work_schedule(job.schedule_id, job.only, report, job.first)
        finally:
            self.activity.end(report)
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
        return goes_on

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
        """Tell and record a worker's death (:func:`core.engine.restarts.worker_died`) with the claim
        it had in hand, which is dropped when it is not restarted."""
        pending: tuple[Claim, RunResult | None] | None = self._held.pending
        held = pending[0] if pending is not None else None
        if not restarted and held is not None:
            self._held.pending = None
        worker_died(self.ledger, self.context, schedule_id, held, exc, restarted)

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
        then = self._chain(jobs, taken, report) if jobs is not None and self.group is not None else None
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

    def _chain(self, jobs: Jobs, taken: list[tuple[Job, Seen | None]], report: PassReport) -> settle.Then:
        """Claims, in an outcome's transaction, the first due occurrence of the next job waiting,
        from what the dispatch read of it (kept in ``taken`` with that reading). What the claim
        counts (occurrences skipped for overlap) goes on ``report``, the one this loop writes now."""

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
                claimed = claim_stage.claim_in(session, self.context, occ_id, now, report, seen[1], state, pending)
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
