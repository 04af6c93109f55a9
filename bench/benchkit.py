"""Pieces the engine benchmarks share: a runner stand-in that succeeds at once,
and an engine that adds up the seconds spent in each of its steps."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from core.clock import Clock
from core.engine.engine import Engine
from core.engine.runner import PreparedCommand, RunResult


def instant_success(
    command: PreparedCommand,
    timeout: timedelta,
    clock: Clock,
    *,
    tail_bytes: int = 0,
    on_started: Callable[[int], None] | None = None,
) -> RunResult:
    """The runner's contract without a process: started, exited 0."""
    started = clock.now()
    if on_started is not None:
        on_started(0)
    return RunResult(started, clock.now(), 0, None, None, "", "", 0)


class TimingEngine(Engine):
    """The engine; subclasses wrap the steps they want timed with :meth:`_timed`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.spent: dict[str, float] = {}

    def _timed(self, name: str, call: Callable[[], Any]) -> Any:
        start = time.perf_counter()
        try:
            return call()
        finally:
            self.spent[name] = self.spent.get(name, 0.0) + time.perf_counter() - start
