"""A short task wakes the runner once, for its exit: it does not sleep again for each pipe it closes.

The runner first waits for the exit alone (at most :data:`core.engine.runner.FIRST_WAIT_SECONDS`,
made long here so that the task surely ends within it), then reads what the pipes hold without waiting."""

from __future__ import annotations

import select
import sys
import types
from datetime import UTC, datetime, timedelta
from typing import Any, ClassVar

import pytest

from core.clock import FixedClock
from core.engine import runner, spawning
from core.engine.runner import TaskIdentity, prepare, run_command

CLOCK = FixedClock(datetime(2026, 12, 7, 21, 0, tzinfo=UTC))
WHO = TaskIdentity("wakes", 1, "occ-1", "slot-1", "2026-12-07T21:00:00", None, None, "att-1", 1)


class Recorded:
    """``select.poll``, each call's registered descriptors and its result kept."""

    calls: ClassVar[list[tuple[int, int]]] = []  # (descriptors watched, descriptors ready)

    def __init__(self) -> None:
        self.poller = select.poll()
        self.fds: set[int] = set()

    def register(self, fd: int, mask: int) -> None:
        self.fds.add(fd)
        self.poller.register(fd, mask)

    def unregister(self, fd: int) -> None:
        self.fds.discard(fd)
        self.poller.unregister(fd)

    def poll(self, timeout: Any = None) -> list[tuple[int, int]]:
        ready = self.poller.poll(timeout)
        Recorded.calls.append((len(self.fds), len(ready)))
        return ready


@pytest.fixture
def polls(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int]]:
    if spawning.open_pidfd(1) is None:
        pytest.skip("no pidfd on this system: the exit is polled for")
    Recorded.calls = []
    monkeypatch.setattr(runner, "select", types.SimpleNamespace(poll=Recorded, POLLIN=select.POLLIN))
    monkeypatch.setattr(runner, "FIRST_WAIT_SECONDS", 60.0)
    return Recorded.calls


@pytest.mark.parametrize(
    ("script", "stdout", "shape"),
    [
        pytest.param("pass", "", [(1, 1), (2, 2)], id="silent"),
        pytest.param("print('done')", "done\n", [(1, 1), (2, 2), (1, 1)], id="prints"),
    ],
)
def test_a_task_that_ends_at_once_is_waited_for_once(
    polls: list[tuple[int, int]], script: str, stdout: str, shape: list[tuple[int, int]]
) -> None:
    result = run_command(prepare([sys.executable, "-c", script], None, {}, WHO), timedelta(minutes=1), CLOCK)
    assert (result.exit_status, result.error_class, result.stdout_tail) == (0, None, stdout)
    assert polls == shape  # the exit alone, then both pipes ready at once (what remains, then the end)


def test_output_past_a_pipe_is_read_while_the_task_runs(
    polls: list[tuple[int, int]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A task that fills its pipe waits for the first wait's end, then is read to its end as before."""
    monkeypatch.setattr(runner, "FIRST_WAIT_SECONDS", 0.05)
    script = "import sys; sys.stdout.write('x' * 300000 + 'END')"
    result = run_command(prepare([sys.executable, "-c", script], None, {}, WHO), timedelta(minutes=1), CLOCK)
    assert (result.exit_status, result.error_class) == (0, None)
    assert result.stdout_tail.endswith("x" * 100 + "END")
    assert "291,811 earlier bytes not kept" in result.stdout_tail
    assert polls[0] == (1, 0)  # the exit did not come: the pipe was full
