"""The run stage: render a claim's command, run its task outside any
transaction, know its process while it runs, and ask a verify probe
(docs/ledger.md, "Tasks" and "Leases and RUNNING").

The engine keeps the process group of every task it runs in its
:class:`~core.engine.context.Context`, so that stopping with ``kill`` can end
exactly those groups (:func:`end_tasks`), and the lease keeper records
RUNNING and renews leases (:func:`mark_running`, :func:`renew_leases`).
"""

from __future__ import annotations

import hashlib
import os
import signal
import threading
from collections.abc import Callable, Sequence
from contextlib import suppress
from datetime import datetime
from typing import Protocol

from core.clock import Clock
from core.engine import commands, processes, statements
from core.engine.context import Claim, Context, PassReport
from core.engine.outcomes import Verdict, verdict_from_exit
from core.engine.output_keep import OutputKeeper
from core.engine.runner import (
    KILL_GRACE_SECONDS,
    PreparedCommand,
    RunResult,
    TaskIdentity,
    describe_error,
    measured_start,
    prepare,
    run_command,
)
from core.engine.tether import TETHER
from core.ledger.db import Ledger
from core.spec.model import Task
from core.team.secrets import SecretError
from core.time.formats import fmt_utc

__all__ = [
    "Slot",
    "TaskIdentity",
    "end_tasks",
    "identity",
    "mark_running",
    "prepare_command",
    "probe",
    "renew_leases",
    "run_claim",
    "signal_group",
    "started",
]


class Slot(Protocol):
    """What a task is told about its occurrence: a loaded row, or a claim's RETURNING."""

    @property
    def schedule_id(self) -> str: ...
    @property
    def revision(self) -> int: ...
    @property
    def occurrence_id(self) -> str: ...
    @property
    def logical_slot_id(self) -> str | None: ...
    @property
    def nominal_local(self) -> str: ...
    @property
    def resolved_utc(self) -> datetime | None: ...
    @property
    def business_period(self) -> str | None: ...


def identity(occ: Slot, attempt_id: str, attempt_number: int) -> TaskIdentity:
    """What a task of ``occ``'s attempt is told about itself (its SCHED_* variables)."""
    return TaskIdentity(
        schedule_id=occ.schedule_id,
        revision=occ.revision,
        occurrence_id=occ.occurrence_id,
        logical_slot_id=occ.logical_slot_id,
        nominal_local=occ.nominal_local,
        scheduled_utc=fmt_utc(occ.resolved_utc) if occ.resolved_utc is not None else None,
        business_period=occ.business_period,
        attempt_id=attempt_id,
        attempt_number=attempt_number,
    )


def prepare_command(
    task: Task, identity: TaskIdentity, base_env: dict[str, str] | None
) -> tuple[PreparedCommand, str | None]:
    """The attempt's command; or, when it cannot even be rendered, a stand-in and why
    (the attempt is then recorded as a spawn error and nothing runs).

    Secrets are looked up here, on the engine's host as the task starts: one that
    is missing or unreadable is such a spawn error, its reason naming the secret.

    What does not depend on the occurrence is prepared once per revision (:mod:`core.engine.commands`)."""
    try:
        return commands.prepared(task, identity, base_env), None
    except Exception as exc:
        names = tuple(sorted(task.env))
        references = task.secret_names()
        # Printable whatever the task holds, and without the environment's values.
        held = [task.argv, task.cwd, names] + ([sorted(references.items())] if references else [])
        digest = hashlib.sha256(ascii(held).encode("ascii")).hexdigest()
        stand_in = PreparedCommand(list(task.argv), task.cwd, {}, digest, names)
        why = str(exc) if isinstance(exc, SecretError) else describe_error(exc)
        return stand_in, f"cannot prepare the command: {why}"


def run_claim(ctx: Context, claim: Claim, report: PassReport) -> RunResult:
    """Run the task (no transaction is open meanwhile); the lease keeper watches it.

    Never raises: a task that could not be prepared or started is a spawn error,
    and one the runner lost track of after its start has its group killed and
    its outcome lost (invariant 5)."""
    report.started += 1
    start = ctx.clock.now()
    with ctx.lock:
        ctx.busy[claim.schedule_id] = start
    if claim.unprepared is not None:
        return RunResult(start, ctx.clock.now(), None, None, "spawn_error", "", claim.unprepared)
    pids: list[int] = []
    keeper = OutputKeeper.for_attempt(claim.attempt_id)  # what it prints outlives a crash of this engine
    try:
        return run_command(
            claim.command,
            claim.task.timeout,
            ctx.clock,
            tail_bytes=ctx.options.tail_bytes,
            on_started=lambda pid: started(ctx, claim, pid, pids),
            keeper=keeper,
        )
    except Exception as exc:
        why = describe_error(exc)
        if not pids:
            return RunResult(start, ctx.clock.now(), None, None, "spawn_error", "", f"cannot start it: {why}")
        signal_group(pids[0], signal.SIGKILL)
        return RunResult(
            start, ctx.clock.now(), None, None, "lost", "", f"the engine lost track of it ({why})", pids[0]
        )
    finally:
        keeper.forget()
        with ctx.lock:
            ctx.groups.pop(claim.occurrence_id, None)
        ctx.keeper.forget(claim)
        with ctx.lock:
            task = ctx.tasks.get(claim.attempt_id)
        if task is not None and ctx.options.tasks_die_with_engine:
            TETHER.release(task[0])


def started(ctx: Context, claim: Claim, pid: int, pids: list[int]) -> None:
    """The task's process exists: its group is known (to interrupt it), its identity
    kept for the attempt row (written with RUNNING by the lease keeper, or with the
    outcome), and its lease kept.

    Its start time is the one the runner measured around the spawn
    (:func:`core.engine.runner.measured_start`), else read from the system
    (:func:`core.engine.processes.start_time`).

    No write here: most tasks end within moments, and a transaction per spawn
    would double the ledger's work per task. Until RUNNING is recorded the
    next engine finds a task by its SCHED_ATTEMPT_ID (see core.engine.orphans)."""
    pids.append(pid)
    began = measured_start(pid)
    if began is None:
        began = processes.start_time(pid)
    with ctx.lock:
        ctx.groups[claim.occurrence_id] = pid
        ctx.tasks[claim.attempt_id] = (pid, began)
        interrupted = ctx.interrupted
    if ctx.options.tasks_die_with_engine:
        TETHER.hold(pid, began)
    if interrupted:  # started just as the engine was interrupted
        signal_group(pid, signal.SIGTERM)
    ctx.keeper.track(claim)


def probe(task: Task, identity: TaskIdentity, clock: Clock) -> Callable[[], Verdict]:
    """The task's verify command, to ask whether a lost attempt's effect happened."""
    assert task.verify is not None
    verify = task.verify

    def ask() -> Verdict:
        try:
            command = prepare(verify, task.cwd, task.env, identity)
            result = run_command(command, task.timeout, clock, tail_bytes=1024)
        except Exception:  # a probe that cannot run cannot tell
            return Verdict.UNKNOWN
        return verdict_from_exit(result.exit_status if result.error_class is None else None)

    return ask


def mark_running(ledger: Ledger, ctx: Context, running: Sequence[Claim]) -> None:
    """DISPATCHING -> RUNNING for claims whose task has run a while (the lease keeper's call)."""
    with ledger.write(serialize=False) as session:
        with ctx.lock:
            held = [c.held(ctx.tasks.get(c.attempt_id)) for c in running]
        moved = statements.mark_running(session, held, ctx.clock.now())
    with ctx.lock:
        ctx.marked.update(moved)


def renew_leases(ledger: Ledger, ctx: Context, running: Sequence[Claim]) -> None:
    """Extend the leases of running claims (the lease keeper's call)."""
    with ledger.write(serialize=False) as session:
        statements.renew_leases(session, [c.held() for c in running], ctx.clock.now() + ctx.options.lease)


def end_tasks(ctx: Context) -> None:
    """End the process groups of the tasks running now: SIGTERM, then SIGKILL after
    a grace period to those still there. Tasks that start from now on are ended
    as they start. Only these groups are signalled, nothing else."""
    with ctx.lock:
        ctx.interrupted = True
        groups = list(ctx.groups.values())
    for pgid in groups:
        signal_group(pgid, signal.SIGTERM)
    if groups:
        timer = threading.Timer(KILL_GRACE_SECONDS, _kill_left, (ctx, set(groups)))
        timer.daemon = True
        timer.start()


def _kill_left(ctx: Context, groups: set[int]) -> None:
    with ctx.lock:
        left = groups & set(ctx.groups.values())
    for pgid in left:
        signal_group(pgid, signal.SIGKILL)


def signal_group(pgid: int, sig: int) -> None:
    """Send ``sig`` to a process group, if it is still there."""
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)
