"""LatestOnly: work off the GUI thread, only the newest answer delivered, failures always reported."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator

import pytest

from core.errors import SpecError, UserError, ZoneError
from scheduler_gui.background import LatestOnly, Superseded, describe_exception

GATE_TIMEOUT = 10.0


class Gate:
    """Work that holds the worker until released, so the test decides when it finishes."""

    def __init__(self, result: object) -> None:
        self.result = result
        self.entered = threading.Event()
        self._open = threading.Event()

    def __call__(self) -> object:
        self.entered.set()
        if not self._open.wait(GATE_TIMEOUT):
            raise TimeoutError("the gate was never opened")
        return self.result

    def release(self) -> None:
        self._open.set()


@pytest.fixture
def runner(qtbot) -> Iterator[LatestOnly]:
    worker = LatestOnly()
    yield worker
    worker.cancel()
    assert worker.wait(int(GATE_TIMEOUT * 1000) + 1000)


def record(runner: LatestOnly) -> dict[str, list[object]]:
    seen: dict[str, list[object]] = {"done": [], "failed": [], "busy": [], "order": []}
    runner.done.connect(lambda r: (seen["done"].append(r), seen["order"].append("done")))
    runner.failed.connect(lambda m: (seen["failed"].append(m), seen["order"].append("failed")))
    runner.busyChanged.connect(lambda b: (seen["busy"].append(b), seen["order"].append(f"busy={b}")))
    return seen


def test_result_arrives_on_the_gui_thread_after_busy_clears(runner: LatestOnly, qtbot) -> None:
    seen = record(runner)
    threads: list[int] = []

    def work() -> int:
        threads.append(threading.get_ident())
        return 42

    with qtbot.waitSignal(runner.done, timeout=5000) as blocker:
        runner.submit(work)
        assert runner.busy
    assert blocker.args == [42]
    assert threads and threads[0] != threading.get_ident()
    assert not runner.busy
    assert seen["order"] == ["busy=True", "busy=False", "done"]


def test_an_older_answer_is_dropped(runner: LatestOnly, qtbot) -> None:
    seen = record(runner)
    old = Gate("old")
    runner.submit(old)
    assert old.entered.wait(GATE_TIMEOUT)
    with qtbot.waitSignal(runner.done, timeout=5000) as blocker:
        runner.submit(lambda: "new")
        old.release()
    assert blocker.args == ["new"]
    assert seen["done"] == ["new"]
    assert seen["busy"] == [True, False]


def test_a_request_stale_before_its_turn_never_runs(runner: LatestOnly, qtbot) -> None:
    ran: list[str] = []
    first = Gate("first")
    runner.submit(first)
    assert first.entered.wait(GATE_TIMEOUT)

    def middle() -> str:
        ran.append("middle")
        return "middle"

    runner.submit(middle)
    with qtbot.waitSignal(runner.done, timeout=5000) as blocker:
        runner.submit(lambda: "last")
        first.release()
    assert blocker.args == ["last"]
    assert ran == []


@pytest.mark.parametrize(
    ("error", "message"),
    [
        pytest.param(UserError("the outage ends too late"), "the outage ends too late", id="user_error"),
        pytest.param(ZoneError("unknown time zone 'Mars/Olympus'"), "unknown time zone 'Mars/Olympus'", id="subclass"),
        pytest.param(ValueError("bad value"), "unexpected error: ValueError: bad value", id="bug_with_message"),
        pytest.param(KeyError("start"), "unexpected error: KeyError: 'start'", id="key_error"),
        pytest.param(RuntimeError(), "unexpected error: RuntimeError", id="bug_without_message"),
    ],
)
def test_describe_exception(error: Exception, message: str) -> None:
    assert describe_exception(error) == message


def test_a_spec_error_names_every_problem() -> None:
    from core.errors import Problem

    error = SpecError([Problem("rule", "FREQ is required"), Problem("timeZone", "required")])
    assert describe_exception(error) == "rule: FREQ is required\ntimeZone: required"


def _raise(error: Exception) -> Callable[[], object]:
    def work() -> object:
        raise error

    return work


def test_a_user_error_is_reported_as_its_message_without_a_log(
    runner: LatestOnly, qtbot, caplog: pytest.LogCaptureFixture
) -> None:
    seen = record(runner)
    with (
        caplog.at_level(logging.ERROR, logger="scheduler_gui.background"),
        qtbot.waitSignal(runner.failed, timeout=5000) as blocker,
    ):
        runner.submit(_raise(UserError("an end before the start")))
    assert blocker.args == ["an end before the start"]
    assert seen["order"] == ["busy=True", "busy=False", "failed"]
    assert caplog.records == []


def test_work_that_stops_for_a_newer_request_delivers_nothing_and_logs_nothing(
    runner: LatestOnly, qtbot, caplog: pytest.LogCaptureFixture
) -> None:
    seen = record(runner)
    older = Gate(None)

    def stopped() -> object:
        older()
        raise Superseded

    with (
        caplog.at_level(logging.ERROR, logger="scheduler_gui.background"),
        qtbot.waitSignal(runner.done, timeout=5000) as blocker,
    ):
        runner.submit(stopped)  # running when the newer request comes
        assert older.entered.wait(GATE_TIMEOUT)
        runner.submit(lambda: "new")
        older.release()
    assert blocker.args == ["new"]
    assert seen["done"] == ["new"] and seen["failed"] == []
    assert caplog.records == []


def test_a_bug_is_reported_with_its_type_and_logged(
    runner: LatestOnly, qtbot, caplog: pytest.LogCaptureFixture
) -> None:
    with (
        caplog.at_level(logging.ERROR, logger="scheduler_gui.background"),
        qtbot.waitSignal(runner.failed, timeout=5000) as blocker,
    ):
        runner.submit(_raise(ZeroDivisionError("division by zero")))
    assert blocker.args == ["unexpected error: ZeroDivisionError: division by zero"]
    assert [r.exc_info[0] for r in caplog.records if r.exc_info] == [ZeroDivisionError]
    assert not runner.busy


def test_a_custom_description_is_used(qtbot) -> None:
    runner = LatestOnly(describe=lambda exc: f"the ledger cannot be read ({exc})")
    with qtbot.waitSignal(runner.failed, timeout=5000) as blocker:
        runner.submit(_raise(OSError("database is locked")))
    assert blocker.args == ["the ledger cannot be read (database is locked)"]
    assert runner.wait(5000)


def test_cancel_drops_the_pending_answer(runner: LatestOnly, qtbot) -> None:
    seen = record(runner)
    gate = Gate("late")
    runner.submit(gate)
    assert gate.entered.wait(GATE_TIMEOUT)
    runner.cancel()
    assert not runner.busy
    gate.release()
    assert runner.wait(5000)
    with qtbot.waitSignal(runner.done, timeout=5000) as blocker:
        runner.submit(lambda: "after cancel")
    assert blocker.args == ["after cancel"]
    assert seen["done"] == ["after cancel"]
    assert seen["busy"] == [True, False, True, False]


def test_wait_reports_whether_the_worker_finished(runner: LatestOnly, qtbot) -> None:
    gate = Gate(1)
    runner.submit(gate)
    assert gate.entered.wait(GATE_TIMEOUT)
    assert runner.wait(20) is False
    gate.release()
    assert runner.wait(5000) is True
    qtbot.waitUntil(lambda: not runner.busy, timeout=5000)


def test_submit_numbers_requests_upwards(runner: LatestOnly, qtbot) -> None:
    first = runner.submit(lambda: 1)
    with qtbot.waitSignal(runner.done, timeout=5000):
        second = runner.submit(lambda: 2)
    assert second > first
