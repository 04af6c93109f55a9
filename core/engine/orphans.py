"""Attempts whose engine died: is their task still running, is their claimant gone?

An engine records itself on each attempt it opens (host, pid, start time, boot
id) and the task's process right after spawning it (pid and start time; the
task leads its own process group). With those, an engine on the same host can
tell for certain whether a claimant engine or an attempt's task still lives
(:mod:`core.engine.processes`); on another host it cannot, and leases decide.

The rule, written in docs/ledger.md ("A crash while a task runs"): an attempt
whose task still runs is never settled as lost and never retried beside
itself. The engine that finds it watches it (the occurrence stays RUNNING,
with "still running as pid N since …" as its reason), ends its process group
once it outlives its task's timeout, and settles the attempt by invariant 5
when it is gone.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import ColumnElement, or_, select
from sqlalchemy.orm import Session

from core.engine.processes import (
    START_TIME_TOLERANCE,
    Liveness,
    ProcessIdentity,
    boot_id,
    identify,
    liveness,
    start_time,
    this_host,
)
from core.engine.runner import KILL_GRACE_SECONDS
from core.engine.spawning import only_zombies
from core.ledger.models import Attempt, Occurrence
from core.ledger.states import OccurrenceState as _S
from core.time.formats import fmt_utc


@dataclass(frozen=True)
class Orphan:
    """An attempt's task process that still runs."""

    attempt_number: int
    process: ProcessIdentity

    def describe(self) -> str:
        """``still running as pid N since …`` (and where, when it is not this host)."""
        since = ""
        if self.process.started is not None:
            since = " since " + fmt_utc(datetime.fromtimestamp(self.process.started, UTC).replace(microsecond=0))
        host = "" if self.process.host == this_host() else f" on {self.process.host}"
        return f"attempt {self.attempt_number} is still running as pid {self.process.pid}{since}{host}"


def task_process(attempt: Attempt) -> ProcessIdentity | None:
    """The attempt's task process as recorded, or None when it was never spawned (or not recorded)."""
    if attempt.task_pid is None:
        return None
    return ProcessIdentity(attempt.worker_host, attempt.task_pid, attempt.task_started, attempt.boot_id)


def claimant(lease_owner: str | None, attempt: Attempt | None) -> ProcessIdentity | None:
    """The engine process that holds a claim, from its lease owner ``host:pid:token``.

    Its start time and boot come from the attempt row when that attempt was
    opened by the same process; without them a pid that exists is UNKNOWN."""
    if not lease_owner:
        return None
    host, _, _token = lease_owner.rpartition(":")
    host, _, pid_text = host.rpartition(":")
    if not host or not pid_text.isdigit():
        return None
    pid = int(pid_text)
    if attempt is not None and attempt.worker_host == host and attempt.worker_pid == pid:
        return ProcessIdentity(host, pid, attempt.worker_started, attempt.boot_id)
    return ProcessIdentity(host, pid, None, None)


def claimant_gone(lease_owner: str | None, attempt: Attempt | None) -> bool:
    """Whether the engine that holds a claim is certainly gone (same host only)."""
    who = claimant(lease_owner, attempt)
    return who is not None and liveness(who) is Liveness.GONE


def group_liveness(process: ProcessIdentity) -> Liveness:
    """Whether a task still runs: its group leader, or a process of its group after the leader ended.

    While any process of group N lives the kernel does not hand out pid N
    again, so when pid N is free but its group still has members, they are
    the task's (its children that outlived it)."""
    leader = liveness(process)
    if leader is not Liveness.GONE or process.host != this_host():
        return leader
    current = boot_id()
    if process.boot_id and current and process.boot_id != current:
        return Liveness.GONE  # another boot: group N is someone else's
    started = start_time(process.pid)  # still readable while the leader is a zombie
    if started is not None and (process.started is None or abs(started - process.started) > START_TIME_TOLERANCE):
        return Liveness.GONE  # pid N is another process now: the group is not ours
    try:
        os.killpg(process.pid, 0)
    except (ProcessLookupError, PermissionError):
        return Liveness.GONE
    return Liveness.GONE if only_zombies(process.pid) else Liveness.ALIVE


def by_attempt_id(attempt_id: str) -> ProcessIdentity | None:
    """The oldest live process on this host whose environment holds ``SCHED_ATTEMPT_ID=attempt_id``
    (the task, or a process it started), or None. Linux (/proc) only; a process of
    another user cannot be read and is not found."""
    needle = f"SCHED_ATTEMPT_ID={attempt_id}".encode()
    try:
        entries = os.listdir("/proc")
    except OSError:
        return None
    found: list[ProcessIdentity] = []
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                environ = f.read()
        except OSError:
            continue
        if needle in environ.split(b"\0"):
            identity = identify(int(entry))
            if identity.started is not None and liveness(identity) is Liveness.ALIVE:
                found.append(identity)
    return min(found, key=lambda p: p.started or 0.0, default=None)


def find(attempt: Attempt) -> Orphan | None:
    """The attempt's task if it still runs on this host, else None.

    An attempt whose task was not recorded yet (its engine died within moments
    of the spawn) is looked for by its SCHED_ATTEMPT_ID."""
    process = task_process(attempt)
    if process is None:
        if attempt.worker_host != this_host() or attempt.error_class not in (None, "lost"):
            return None
        process = by_attempt_id(attempt.attempt_id)
        return None if process is None else Orphan(attempt.attempt_number, process)
    if group_liveness(process) is not Liveness.ALIVE:
        return None
    return Orphan(attempt.attempt_number, process)


def live_attempt(session: Session, occurrence_id: str) -> Orphan | None:
    """An earlier attempt of the occurrence whose task still runs on this host.

    Only an attempt no engine saw end can still run: one not finished, or
    one settled as lost (by an engine on another host, or by lease rules)."""
    return _first_live(session, Attempt.occurrence_id == occurrence_id)


def live_settled_attempt(session: Session, schedule_id: str) -> tuple[str, Orphan] | None:
    """An occurrence of the schedule, settled as lost, whose attempt's task still runs here."""
    settled = select(Occurrence.occurrence_id).where(
        Occurrence.schedule_id == schedule_id, Occurrence.state.not_in((_S.DISPATCHING, _S.RUNNING))
    )
    for attempt in _candidates(session, Attempt.occurrence_id.in_(settled)):
        found = find(attempt)
        if found is not None:
            return attempt.occurrence_id, found
    return None


def _candidates(session: Session, where: ColumnElement[bool]) -> Sequence[Attempt]:
    return session.scalars(
        select(Attempt)
        .where(where, or_(Attempt.finished_at.is_(None), Attempt.error_class == "lost"))
        .order_by(Attempt.occurrence_id, Attempt.attempt_number)
    ).all()


def _first_live(session: Session, where: ColumnElement[bool]) -> Orphan | None:
    for attempt in _candidates(session, where):
        found = find(attempt)
        if found is not None:
            return found
    return None


def overdue(orphan: Orphan, timeout: timedelta, now: datetime) -> timedelta | None:
    """How long the orphan has outlived its task's timeout (None while within it, or unknown)."""
    if orphan.process.started is None:
        return None
    late = now - datetime.fromtimestamp(orphan.process.started, UTC) - timeout
    return late if late > timedelta(0) else None


def end_group(orphan: Orphan, late: timedelta) -> str:
    """Signal an overdue orphan's process group as the runner's timeout would have:
    SIGTERM, then SIGKILL once the grace period has passed. Returns what was done."""
    sig = signal.SIGKILL if late.total_seconds() > KILL_GRACE_SECONDS else signal.SIGTERM
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(orphan.process.pid, sig)
    return f"it outlived its timeout: its process group was sent {sig.name}"


def watched_reason(orphan: Orphan) -> str:
    """The occurrence's reason while an engine watches its orphaned task."""
    return f"{orphan.describe()}: its engine stopped; it is watched and settled when it ends"


__all__ = [
    "Orphan",
    "by_attempt_id",
    "claimant",
    "claimant_gone",
    "end_group",
    "find",
    "group_liveness",
    "live_attempt",
    "live_settled_attempt",
    "overdue",
    "task_process",
    "watched_reason",
]
