"""A running ``schedctl engine run`` says on its pass lines what started and what finished since
the line before, naming the schedules: a service's log shows what ran. A real engine process on
the real clock, a real task that waits for the test's word, on SQLite and PostgreSQL."""

from __future__ import annotations

import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from core.clock import FixedClock, SystemClock
from core.engine.admin import run_now
from core.ledger.db import Ledger
from core.ledger.publish import publish
from core.time.formats import fmt_utc

from . import spec

PY = sys.executable
SID = "daily-ops-summary"
#: How long a line may take to come (the engine polls every 0.1 s; a slow machine is slow).
LINE_WAIT = 60.0


def waiting_task(tmp_path: Path) -> dict[str, object]:
    """A task that says it started (a file), then waits until the test writes ``go``."""
    script = (
        "import pathlib, time\n"
        f"here = pathlib.Path({str(tmp_path)!r})\n"
        "(here / 'started').write_text('yes')\n"
        "while not (here / 'go').exists():\n"
        "    time.sleep(0.01)\n"
        "print('done')\n"
    )
    return {"argv": [PY, "-c", script], "effect": "idempotent", "timeout": "PT5M"}


class Lines:
    """An engine process's standard output, line by line, as it comes."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        assert proc.stdout is not None
        self.proc = proc
        self.seen: list[str] = []
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._reader = threading.Thread(target=self._read, args=(proc.stdout,), daemon=True)
        self._reader.start()

    def _read(self, stream: object) -> None:
        for line in stream:  # type: ignore[attr-defined]
            self._lines.put(line.rstrip("\n"))
        self._lines.put(None)

    def until(self, wanted: Callable[[str], bool], what: str) -> str:
        """The first line (from here on) for which ``wanted`` holds."""
        while True:
            try:
                line = self._lines.get(timeout=LINE_WAIT)
            except queue.Empty:
                pytest.fail(f"no line {what} within {LINE_WAIT} s; seen: {self.seen}")
            if line is None:
                pytest.fail(f"the engine ended before a line {what}; seen: {self.seen}")
            self.seen.append(line)
            if wanted(line):
                return line

    def close(self) -> None:
        """The process is ended (killed if need be) and its pipes closed."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self._reader.join(LINE_WAIT)
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()

    def rest(self) -> list[str]:
        """The lines left once the process has ended."""
        left = []
        while (line := self._lines.get(timeout=LINE_WAIT)) is not None:
            left.append(line)
        self.seen += left
        return left


def wait_for_file(path: Path, lines: Lines) -> None:
    """The task has started: an event (the file it writes first), waited for with a bound."""
    deadline = time.monotonic() + LINE_WAIT
    while not path.exists():
        assert time.monotonic() < deadline, f"the task never started; seen: {lines.seen}"
        time.sleep(0.01)


@pytest.fixture
def due_now(ledger: Ledger, clock: FixedClock, tmp_path: Path) -> str:
    """The schedule, published from now on (on the real clock) with the waiting task, and one run of it due now."""
    clock.set(SystemClock().now() - timedelta(seconds=1))
    cutover = fmt_utc(clock.now().replace(microsecond=0))
    with ledger.write() as session:
        publish(session, spec(task=waiting_task(tmp_path), cutoverAt=cutover), clock)
    return run_now(ledger, SID, clock)


def start_engine(ledger_url: str, poll: str) -> tuple[subprocess.Popen[str], Lines]:
    """``schedctl engine run`` on the ledger, passes every ``poll`` seconds, and its output as it comes."""
    proc = subprocess.Popen(
        [PY, "-m", "core.cli", "engine", "run", "--db", ledger_url, "--poll", poll, "--no-notify"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    return proc, Lines(proc)


@pytest.fixture
def engine(ledger_url: str, due_now: str) -> Iterator[tuple[subprocess.Popen[str], Lines]]:
    proc, lines = start_engine(ledger_url, "0.1")
    try:
        lines.until(lambda line: line.startswith("engine "), "announcing the engine")
        yield proc, lines
    finally:
        lines.close()


def test_the_pass_lines_say_what_started_and_then_what_finished(
    engine: tuple[subprocess.Popen[str], Lines], tmp_path: Path
) -> None:
    proc, lines = engine
    started = lines.until(lambda line: "started 1 " in line, f"telling that {SID} started")
    assert f"started 1 ({SID})," in started and started.endswith("; nothing finished"), started
    wait_for_file(tmp_path / "started", lines)  # the line may come before the task's own first write
    (tmp_path / "go").write_text("go")  # the task may end now, and only now
    finished = lines.until(lambda line: "outcomes: " in line, "telling that the run finished")
    assert finished.startswith("pass at ") and finished.endswith(f"; outcomes: SUCCEEDED 1 ({SID})"), finished
    assert ", started 0," in finished  # told once, on the line before
    proc.send_signal(signal.SIGTERM)
    assert lines.rest()[-1:] == ["engine stopped"]
    assert proc.wait(timeout=LINE_WAIT) == 0
    told = [line for line in lines.seen if line.startswith("pass at ")]
    assert sum(f"started 1 ({SID})" in line for line in told) == 1
    assert sum("outcomes: " in line for line in told) == 1


def test_what_finishes_after_the_last_pass_is_said_before_the_engine_stops(
    ledger_url: str, due_now: str, tmp_path: Path
) -> None:
    """Stopped (SIGTERM) while its task runs, the engine waits for it; its outcome has a line of its own."""
    # A long poll: after its first passes the engine sleeps, and the signal ends that sleep.
    proc, lines = start_engine(ledger_url, "600")
    try:
        first = lines.until(lambda line: line.startswith("pass at "), "for the first pass")
        wait_for_file(tmp_path / "started", lines)
        proc.send_signal(signal.SIGTERM)
        lines.until(lambda line: line.startswith("stopping: "), "saying the engine stops")
        (tmp_path / "go").write_text("go")
        rest = lines.rest()
        assert proc.wait(timeout=LINE_WAIT) == 0
    finally:
        lines.close()
    start_told_first = f"started 1 ({SID})" in first
    assert rest == [
        f"after the last pass: started {'0' if start_told_first else f'1 ({SID})'}; outcomes: SUCCEEDED 1 ({SID})",
        "engine stopped",
    ]
