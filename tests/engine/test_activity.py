"""What workers started and finished is told on a pass's report once each, whenever it happened."""

from __future__ import annotations

import gc
import threading
import weakref
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime

import pytest

from core.cli.engine_commands import after_last_pass, pass_summary
from core.engine.activity import Activity
from core.engine.context import PassReport

#: (step, what each worker's report holds after it, what the report made after the step tells:
#: started, by schedule, outcomes, outcomes by schedule)
STEPS = [
    (
        "one_started_nothing_finished",
        [("backup", 1, {}), ("report", 0, {})],
        (1, {"backup": 1}, {}, {}),
    ),
    (
        "the_start_told_earlier_is_not_told_again",
        [("backup", 1, {"SUCCEEDED": 1}), ("report", 2, {"FAILED": 1})],
        (2, {"report": 2}, {"SUCCEEDED": 1, "FAILED": 1}, {"SUCCEEDED": {"backup": 1}, "FAILED": {"report": 1}}),
    ),
    (
        "only_what_is_new",
        [("backup", 1, {"SUCCEEDED": 1}), ("report", 2, {"FAILED": 1, "SUCCEEDED": 1})],
        (0, {}, {"SUCCEEDED": 1}, {"SUCCEEDED": {"report": 1}}),
    ),
    (
        "nothing_new_nothing_told",
        [("backup", 1, {"SUCCEEDED": 1}), ("report", 2, {"FAILED": 1, "SUCCEEDED": 1})],
        (0, {}, {}, {}),
    ),
]


def test_each_start_and_each_outcome_is_told_once_on_the_next_report() -> None:
    activity = Activity()
    reports = {sid: activity.begin(sid) for sid in ("backup", "report")}
    for name, writes, (started, ran, outcomes, finished) in STEPS:
        for sid, n, ended in writes:
            reports[sid].started = n
            reports[sid].outcomes = Counter(ended)
        told = activity.tell(PassReport())
        assert (told.started, told.ran, told.outcomes, told.finished) == (started, ran, outcomes, finished), name


def test_a_worker_that_ended_is_told_one_last_time_and_then_forgotten() -> None:
    activity = Activity()
    own = activity.begin("backup")
    own.started, own.skipped_overlap = 2, 1
    own.outcomes["SUCCEEDED"] += 1
    assert activity.tell(PassReport()).started == 2  # told while it runs, then only what is new
    own.outcomes["SUCCEEDED"] += 1
    activity.end(own)
    told = activity.tell(PassReport(materialized=4))
    assert (told.materialized, told.started, told.skipped_overlap, told.outcomes) == (4, 0, 0, {"SUCCEEDED": 1})
    own.started = 99  # written after its end: nobody reads it any more
    assert activity.tell(PassReport()) == PassReport()


def test_an_ended_job_keeps_no_report_of_its_own() -> None:
    """What an ended job did waits in one report for the next tell; its own is let go, so a pass
    that ran hundreds of jobs holds no report of each until the pass is told."""
    activity = Activity()
    own = activity.begin("backup")
    own.started = 1
    gone = weakref.ref(own)
    activity.end(own)
    del own
    gc.collect()
    assert gone() is None
    assert activity.tell(PassReport()).ran == {"backup": 1}


def test_workers_writing_while_passes_tell_lose_nothing_and_tell_nothing_twice() -> None:
    """Eight workers, each running 2,000 tasks and recording their outcomes, while passes tell
    what they did as fast as they can: the reports told add up to exactly what was done."""
    activity = Activity()
    workers, runs = 8, 2000
    go = threading.Barrier(workers + 1)

    def work(schedule_id: str) -> None:
        go.wait()
        for turn in range(2):  # a job queued again: a report for each turn
            report = activity.begin(schedule_id)
            for i in range(turn, runs, 2):
                report.started += 1
                report.outcomes["SUCCEEDED" if i % 3 else "FAILED"] += 1
            activity.end(report)

    pool = ThreadPoolExecutor(max_workers=workers)
    futures = [pool.submit(work, f"s{w}") for w in range(workers)]
    go.wait()
    total = PassReport()
    lines = 0
    while not all(f.done() for f in futures):
        _add(total, activity.tell(PassReport()))
        lines += 1
    pool.shutdown()
    _add(total, activity.tell(PassReport()))
    failed = len(range(0, runs, 3))
    assert total.started == workers * runs
    assert total.ran == {f"s{w}": runs for w in range(workers)}
    assert total.outcomes == {"FAILED": workers * failed, "SUCCEEDED": workers * (runs - failed)}
    assert total.finished["FAILED"] == {f"s{w}": failed for w in range(workers)}
    assert activity.tell(PassReport()) == PassReport()
    assert lines >= 1


def _add(total: PassReport, told: PassReport) -> None:
    total.started += told.started
    total.ran.update(told.ran)
    total.outcomes.update(told.outcomes)
    for state, by in told.finished.items():
        total.finished.setdefault(state, Counter()).update(by)


def _told(ran: dict[str, int], finished: dict[str, dict[str, int]]) -> PassReport:
    report = PassReport(started=sum(ran.values()), ran=Counter(ran))
    for state, by in finished.items():
        report.outcomes[state] = sum(by.values())
        report.finished[state] = Counter(by)
    return report


@pytest.mark.parametrize(
    ("ran", "finished", "words"),
    [
        pytest.param({}, {}, "started 0, skipped for overlap 0; nothing finished", id="nothing"),
        pytest.param(
            {"backup": 2, "report": 1},
            {},
            "started 3 (backup 2, report), skipped for overlap 0; nothing finished",
            id="a_count_only_above_one",
        ),
        pytest.param(
            {},
            {"SUCCEEDED": {"backup": 2}, "FAILED": {"report": 1}},
            "started 0, skipped for overlap 0; outcomes: FAILED 1 (report), SUCCEEDED 2 (backup 2)",
            id="outcomes_by_state_then_schedule",
        ),
        pytest.param(
            {f"s{i}": 1 for i in range(8)},
            {},
            "started 8 (s0, s1, s2, s3, s4 and 3 more schedules), skipped",
            id="five_named_the_rest_counted",
        ),
        pytest.param(
            {f"s{i}": 1 for i in range(6)},
            {"SUCCEEDED": {f"s{i}": 1 for i in range(6)}},
            "outcomes: SUCCEEDED 6 (s0, s1, s2, s3, s4 and 1 more schedule)",
            id="one_more_schedule",
        ),
    ],
)
def test_the_pass_line_names_the_schedules(
    ran: dict[str, int], finished: dict[str, dict[str, int]], words: str
) -> None:
    line = pass_summary(_told(ran, finished), datetime(2026, 3, 2, 7, 30, 1, tzinfo=UTC))
    assert line.startswith("pass at 2026-03-02T07:30:01Z: materialized 0, ")
    assert words in line, line


def test_after_the_last_pass_is_said_only_when_something_happened() -> None:
    assert after_last_pass(PassReport()) is None
    assert after_last_pass(_told({}, {"SUCCEEDED": {"backup": 1}})) == (
        "after the last pass: started 0; outcomes: SUCCEEDED 1 (backup)"
    )
