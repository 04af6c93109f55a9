"""What the engine's workers started and finished, told once each on a pass's report.

A running engine's pass starts workers and returns while their tasks run
(``run_once(wait=False)``): what they start and what ends is known only
later. Each worker writes a report of its own (:meth:`Activity.start`),
alone; the next pass's report gets what every worker did since the previous
report was made (:meth:`Activity.tell`), so a line per pass says what started
and what finished meanwhile, each run once. A pass that waits for its tasks
tells all of theirs on its own report.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field

from core.engine.context import PassReport


@dataclass
class _Job:
    """One worker's report, and how much of it was told already."""

    schedule_id: str
    report: PassReport
    done: Callable[[], bool]
    started: int = 0
    skipped: int = 0
    outcomes: Counter[str] = field(default_factory=Counter)


class Activity:
    """The workers' reports not yet told in full. Safe to use from any thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._jobs: list[_Job] = []

    def start(self, schedule_id: str, submit: Callable[[PassReport], Future[None]]) -> Future[None]:
        """``submit(report)`` starts a worker on ``schedule_id`` that writes ``report``, alone;
        what it writes is told from then on, until the worker has ended and been told."""
        report = PassReport()
        future = submit(report)
        with self._lock:
            self._jobs.append(_Job(schedule_id, report, future.done))
        return future

    def tell(self, into: PassReport) -> PassReport:
        """Add to ``into`` what the workers did since the last call: tasks started (by
        schedule), runs that ended (by outcome and schedule), occurrences skipped for overlap.
        Reports of workers that have ended are then forgotten."""
        with self._lock:
            left = []
            for job in self._jobs:
                ended = job.done()  # asked first: the counts read after it are then final
                _tell_job(job, into)
                if not ended:
                    left.append(job)
            self._jobs = left
        return into


def _tell_job(job: _Job, into: PassReport) -> None:
    """What one worker did since it was last told. Its worker may be writing its report now:
    the counts are read once each (a number, and a copy of the outcomes made in one step)."""
    report = job.report
    started, skipped, outcomes = report.started, report.skipped_overlap, Counter(dict(report.outcomes))
    if started > job.started:
        into.started += started - job.started
        into.ran[job.schedule_id] += started - job.started
    into.skipped_overlap += skipped - job.skipped
    for state, n in (outcomes - job.outcomes).items():
        into.outcomes[state] += n
        into.finished.setdefault(state, Counter())[job.schedule_id] += n
    job.started, job.skipped, job.outcomes = started, skipped, outcomes
