"""What a pass with many schedules due at once keeps per job while it runs them (both databases),
counted rather than measured: a job's report exists only while a loop works on it, and the
engine waits for its loops, not for a future per job. The first pass over a thousand
schedules starts hundreds of jobs at once; each used to hold a report and a future of its own
until the pass was told, which set the engine's peak memory."""

from __future__ import annotations

import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import pytest

from core.clock import FixedClock
from core.engine import plan
from core.engine.activity import Activity
from core.engine.context import PassReport
from core.engine.engine import Engine, EngineOptions
from core.ledger.db import Ledger

from .test_pass_hand_over import due_at_once


@pytest.mark.parametrize(("schedules", "workers"), [(12, 1), (12, 3)], ids=["one_loop", "three"])
def test_a_pass_holds_a_report_per_loop_not_per_job(
    ledger: Ledger, clock: FixedClock, monkeypatch: pytest.MonkeyPatch, schedules: int, workers: int
) -> None:
    due_at_once(ledger, clock, schedules)
    engine = Engine(ledger, clock, EngineOptions(max_workers=workers))
    lock = threading.Lock()
    live: set[int] = set()
    most = [0]
    begin, end = Activity.begin, Activity.end

    def counted_begin(self: Activity, schedule_id: str) -> PassReport:
        report = begin(self, schedule_id)
        with lock:
            live.add(id(report))
            most[0] = max(most[0], len(live))
        return report

    def counted_end(self: Activity, report: PassReport) -> None:
        with lock:
            live.discard(id(report))
        end(self, report)

    monkeypatch.setattr(Activity, "begin", counted_begin)
    monkeypatch.setattr(Activity, "end", counted_end)
    submitted = [0]
    submit = ThreadPoolExecutor.submit

    def counted_submit(self: ThreadPoolExecutor, *args: Any, **kwargs: Any) -> Future[Any]:
        submitted[0] += 1
        return submit(self, *args, **kwargs)

    monkeypatch.setattr(ThreadPoolExecutor, "submit", counted_submit)
    report = engine.run_once()
    assert report.outcomes == {"SUCCEEDED": schedules}
    assert sum(report.ran.values()) == schedules and set(report.ran.values()) == {1}
    assert 1 <= most[0] <= workers
    assert not live
    # The engine waits for its loops: one future each, not one per schedule.
    assert submitted[0] == workers
    assert not engine.busy() and engine.wait_idle(timeout=0)


def test_the_last_loop_of_a_pass_that_ran_tasks_hands_free_memory_back(
    ledger: Ledger, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once per pass that ran something, by the last of its loops; not by a pass with nothing due."""
    due_at_once(ledger, clock, 6)
    engine = Engine(ledger, clock, EngineOptions(max_workers=3))
    by_loops: list[str] = []

    def trim(pad: int) -> int:
        name = threading.current_thread().name
        if name.startswith("tidemark-task"):
            by_loops.append(name)
        return 0

    monkeypatch.setattr(plan, "malloc_trim", lambda: trim)
    assert engine.run_once().outcomes == {"SUCCEEDED": 6}
    assert len(by_loops) == 1
    assert engine.run_once().started == 0
    assert len(by_loops) == 1
