"""The schedules a pass hands to its workers, waiting for one (docs/ledger.md, "The engine, stage by
stage").

A pass with many schedules due at once (the top of the minute: every rule that fires each
minute) used to start a thread's job per schedule, each opening its own write connection and
closing it again. Now it queues one :class:`Job` per schedule and starts at most
``max_workers`` worker loops; each loop holds one write connection and takes the jobs one
after the other until none is left (:meth:`Jobs.take`). The engine waits for the loops; a job
has a report of its own only while a loop works on it (:mod:`core.engine.activity`).
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Collection, Iterable
from dataclasses import dataclass

from core.engine.context import Claim


@dataclass(slots=True)
class Job:
    """One schedule's work in a pass: its due occurrences, oldest first, one at a time. Only what
    the queue needs: its report is made when a loop takes it (:meth:`core.engine.activity.Activity.begin`),
    and the pass waits for its loops, not for each job."""

    schedule_id: str
    only: list[str] | None
    """Only these occurrences (an extra worker under overlapPolicy ALLOW); None: whatever is due."""
    first: Claim | None = None
    """Its first occurrence, claimed already (by the dispatch, or with another job's outcome)."""
    again: bool = False
    """Queued again, to read its schedule for what came due while the others had their turn."""


class Jobs:
    """The jobs of one pass that no worker loop has taken yet. Safe to use from any thread."""

    def __init__(self, jobs: Iterable[Job] = (), *, loops: int = 1) -> None:
        self._lock = threading.Lock()
        self._queue: deque[Job] = deque(jobs)
        self._loops = loops  # the worker loops taking these jobs that have not ended yet

    def loop_ended(self) -> bool:
        """One of the worker loops taking these jobs has ended; whether it was the last one."""
        with self._lock:
            self._loops -= 1
            return self._loops == 0

    def add(self, job: Job) -> None:
        with self._lock:
            self._queue.append(job)

    def take(self) -> Job | None:
        """The next job, or None when every one was taken."""
        with self._lock:
            return self._queue.popleft() if self._queue else None

    def take_unclaimed(self) -> Job | None:
        """The next job with nothing claimed for it yet (and not limited to given occurrences),
        to claim its first occurrence together with another job's outcome; None when there is none."""
        with self._lock:
            for i, job in enumerate(self._queue):
                if job.first is None and job.only is None and not job.again:
                    del self._queue[i]
                    return job
        return None

    def unclaimed(self) -> list[Job]:
        """The jobs waiting with nothing claimed for them (what :meth:`take_unclaimed` could give)."""
        with self._lock:
            return [job for job in self._queue if job.first is None and job.only is None and not job.again]

    def drop(self, schedules: Collection[str]) -> list[Job]:
        """Take out the waiting jobs of these schedules with nothing claimed for them; returns
        those it took (a loop that took one meanwhile keeps it)."""
        with self._lock:
            dropped = [
                job
                for job in self._queue
                if job.schedule_id in schedules and job.first is None and job.only is None and not job.again
            ]
            out = {id(job) for job in dropped}
            self._queue = deque(job for job in self._queue if id(job) not in out)
        return dropped

    def take_again(self) -> list[Job]:
        """Every job waiting to have its schedule read again (read together, in one query)."""
        with self._lock:
            again = [job for job in self._queue if job.again]
            self._queue = deque(job for job in self._queue if not job.again)
        return again

    def put_back(self, job: Job) -> None:
        """A job taken to be claimed, first in line again (its claim was made, or not)."""
        with self._lock:
            self._queue.appendleft(job)

    def __len__(self) -> int:
        with self._lock:
            return len(self._queue)
