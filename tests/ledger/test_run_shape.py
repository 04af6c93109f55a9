"""What one run costs the engine beside its task, counted, not timed: no file read
for the task's start time, the kept output's folder made once for all runs, and
nothing worked out for the output of a task that prints nothing. Every test runs
on SQLite and PostgreSQL."""

from __future__ import annotations

import math
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from core.clock import FixedClock
from core.engine import output_keep, processes
from core.engine.engine import Engine, EngineOptions
from core.ledger.db import Ledger
from core.ledger.models import Attempt
from core.ledger.publish import publish
from core.spec.validation import parse_spec

#: Four runs due at the fixture's 12:00: 11:57, 11:58, 11:59 and 12:00, none of them late.
FOUR_DUE: dict[str, Any] = {
    "schema": "scheduleSpec.v1",
    "scheduleId": "run-shape",
    "revision": 1,
    "timeZone": "UTC",
    "kind": "interval",
    "every": "PT1M",
    "anchor": "2026-03-01T11:57:00Z",
    "cutoverAt": "2026-03-01T11:57:00Z",
    "latenessWindow": "PT30M",
    "horizon": "PT1H",
}
BOOT = 1_772_000_000.0


def run_four(ledger: Ledger, clock: FixedClock, argv: list[str]) -> list[Attempt]:
    with ledger.write() as session:
        publish(session, parse_spec({**FOUR_DUE, "task": {"argv": argv, "effect": "idempotent"}}), clock)
    Engine(ledger, clock, EngineOptions(max_workers=1)).run_once()
    with ledger.read() as session:
        return list(session.scalars(select(Attempt).order_by(Attempt.started_at)))


@pytest.fixture
def boot_clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[float]]:
    """The clock read around each spawn, 1 ms apart from one reading to the next (every
    spawn narrow enough to stand for its start); yields the readings handed out."""
    given: list[float] = []

    def reading() -> float:
        given.append(5_000.0 + len(given) * 0.001)
        return given[-1]

    monkeypatch.setattr(processes, "boot_clock", reading)
    monkeypatch.setattr(processes, "boot_time", lambda: BOOT)
    yield given


def counting(monkeypatch: pytest.MonkeyPatch, owner: object, name: str) -> list[tuple[Any, ...]]:
    calls: list[tuple[Any, ...]] = []
    real: Callable[..., Any] = getattr(owner, name)

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, counted)
    return calls


def test_a_tasks_start_time_is_the_clock_around_its_spawn_with_no_file_read(
    ledger: Ledger, clock: FixedClock, boot_clock: list[float], monkeypatch: pytest.MonkeyPatch
) -> None:
    reads = counting(monkeypatch, processes, "read_file")
    done = run_four(ledger, clock, ["/bin/true"])
    assert [a.exit_status for a in done] == [0, 0, 0, 0]
    own = f"/proc/{os.getpid()}/stat"  # the engine's own identity, read once as it starts
    assert [path for (path,) in reads if path.endswith("/stat") and path not in ("/proc/stat", own)] == []
    befores = boot_clock[0::2]  # each spawn reads the clock before and after
    assert len(boot_clock) == 8
    assert sorted(a.task_started for a in done) == [BOOT + math.floor(b * 100) / 100 for b in befores]


def test_the_kept_outputs_folder_is_made_once_for_all_runs(
    ledger: Ledger, clock: FixedClock, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    made = counting(monkeypatch, Path, "mkdir")
    done = run_four(ledger, clock, ["/bin/echo", "started"])
    assert [a.stdout_tail for a in done] == ["started\n"] * 4
    assert made == [(output_keep.keep_folder(),)]
    assert list(output_keep.keep_folder().iterdir()) == []  # each run's file went with its end


def test_a_task_that_prints_nothing_has_no_kept_file_worked_out(
    ledger: Ledger, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = counting(monkeypatch, output_keep, "kept_path")
    done = run_four(ledger, clock, ["/bin/true"])
    assert [a.exit_status for a in done] == [0, 0, 0, 0]
    assert paths == []
