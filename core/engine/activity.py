"""What the engine's workers started and finished, told once each on a pass's report.

A running engine's pass starts workers and returns while their tasks run
(``run_once(wait=False)``): what they start and what ends is known only
later. A worker loop writes a report of its own for each job it works on
(:meth:`Activity.begin`), alone; the next pass's report gets what every job
did since the previous report was made (:meth:`Activity.tell`), so a line
per pass says what started and what finished meanwhile, each run once. A
pass that waits for its tasks tells all of theirs on its own report.

A job's report exists only while a loop works on it: when the job ends
(:meth:`Activity.end`) what it did and was not told yet is added to one
report kept for the next tell, and the job's own is dropped. A pass that
starts hundreds of jobs holds as many reports as it has loops, not one per
job.
"""

from __future__ import annotations

import threading
from collections import Counter

from core.engine.context import PassReport


class _Job:
    """One job's report, and how much of it was told already."""

    __slots__ = ("outcomes", "report", "schedule_id", "skipped", "started")

    def __init__(self, schedule_id: str, report: PassReport) -> None:
        self.schedule_id = schedule_id
        self.report = report
        self.started = 0
        self.skipped = 0
        self.outcomes: Counter[str] = Counter()


class Activity:
    """The workers' reports not yet told in full. Safe to use from any thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._jobs: dict[int, _Job] = {}  # id of a running job's report -> the job
        self._ended = PassReport()
        """What jobs that have ended did and was not told yet."""

    def begin(self, schedule_id: str) -> PassReport:
        """A report for a job on ``schedule_id``, for its worker alone to write; what it
        writes is told from then on, until :meth:`end`."""
        report = PassReport()
        with self._lock:
            self._jobs[id(report)] = _Job(schedule_id, report)
        return report

    def end(self, report: PassReport) -> None:
        """The job writing ``report`` has ended (called by its worker, which writes no more):
        what it did and was not told yet is kept for the next :meth:`tell`, the report dropped."""
        with self._lock:
            job = self._jobs.pop(id(report), None)
            if job is not None:
                _tell_job(job, self._ended)

    def tell(self, into: PassReport) -> PassReport:
        """Add to ``into`` what the workers did since the last call: tasks started (by
        schedule), runs that ended (by outcome and schedule), occurrences skipped for overlap."""
        with self._lock:
            ended, self._ended = self._ended, PassReport()
            _add(ended, into)
            for job in self._jobs.values():
                _tell_job(job, into)
        return into


def _add(told: PassReport, into: PassReport) -> None:
    """What ended jobs did (``told``, which nobody writes any more), added to ``into``."""
    into.started += told.started
    into.skipped_overlap += told.skipped_overlap
    into.ran.update(told.ran)
    into.outcomes.update(told.outcomes)
    for state, by in told.finished.items():
        into.finished.setdefault(state, Counter()).update(by)


def _tell_job(job: _Job, into: PassReport) -> None:
    """What one job did since it was last told. Its worker may be writing its report now:
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
