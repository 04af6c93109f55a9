"""What an engine that died left behind: the attempts it started and never finished itself.

When the desktop app closes unexpectedly, its embedded engine dies with it.
The attempts it was running lose their outcome; a later engine settles each
one by invariant 5 once its claim lapses (recorded as ``error_class`` ``lost``).
The next start of the app asks :func:`attempts_left_by` for the attempts of
that engine process (host and pid, started during its session) that are
unfinished or were settled as lost, and shows them to the person.

Like :mod:`core.ledger.monitor_queries`, functions take a session and return
frozen values; nothing here reads a clock.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import or_, select
from sqlalchemy.orm import Session

from core.ledger.models import Attempt, Occurrence
from core.ledger.monitor_queries import AttemptView, _attempt
from core.ledger.states import OccurrenceState
from core.time.formats import fmt_utc

#: At most this many attempts are listed (a window runs a handful of tasks at once).
LIMIT = 200


@dataclass(frozen=True)
class LeftAttempt:
    """One attempt a dead engine left, and where its occurrence stands now."""

    attempt: AttemptView
    schedule_id: str
    occurrence_state: OccurrenceState

    @property
    def recovered(self) -> bool:
        """Whether an engine has settled it (its outcome recorded as lost)."""
        return self.attempt.finished_at is not None

    def describe(self) -> str:
        """One line: which schedule and attempt, when it started, and what recovery did."""
        head = f"{self.schedule_id}: attempt {self.attempt.attempt_number}, started {fmt_utc(self.attempt.started_at)}"
        if self.recovered:
            settled = self.attempt.outcome.value if self.attempt.outcome is not None else "no outcome"
            return f"{head}: lost, settled as {settled}"
        return (
            f"{head}: not settled yet (the engine settles it once its claim lapses; "
            f"the occurrence is {self.occurrence_state.value})"
        )


def attempts_left_by(
    session: Session, host: str, pid: int, since: datetime, until: datetime, *, limit: int = LIMIT
) -> list[LeftAttempt]:
    """Attempts engine process ``pid`` on ``host`` started in [since, until] that it did not
    finish itself (still unfinished, or settled as lost by recovery), oldest first.

    ``since`` is when that process's session began (an earlier process with the same pid
    is not it); ``until`` is when it was last seen alive.
    """
    stmt = (
        select(Attempt, Occurrence.schedule_id, Occurrence.state)
        .join(Occurrence, Occurrence.occurrence_id == Attempt.occurrence_id)
        .where(
            Attempt.worker_host == host,
            Attempt.worker_pid == pid,
            Attempt.started_at >= since,
            Attempt.started_at <= until,
            or_(Attempt.finished_at.is_(None), Attempt.error_class == "lost"),
        )
        .order_by(Attempt.started_at, Attempt.attempt_id)
        .limit(limit)
    )
    return [LeftAttempt(_attempt(a), schedule_id, state) for a, schedule_id, state in session.execute(stmt)]
