"""The task editor's test run: the command starts once, off the GUI thread, as
the engine would start it (with the SCHED_* variables of the schedule's next
run), can be stopped (its whole process group: SIGTERM, then SIGKILL after a
grace period), and the box shows how it ended with the end of its output.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shlex
import signal
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtWidgets import QGroupBox, QHBoxLayout, QLabel, QPlainTextEdit, QPushButton, QVBoxLayout, QWidget

from core.clock import Clock
from core.engine.runner import RunResult, TaskIdentity, prepare, run_command
from core.errors import UserError
from core.recurrence.compile import compile_schedule
from core.recurrence.expand import iter_rows
from core.spec.model import ScheduleSpec, Task
from core.time.durations import human_duration
from scheduler_gui.a11y import accessible
from scheduler_gui.background import LatestOnly
from scheduler_gui.designer.task_fields import mono
from scheduler_gui.status_style import BLUISH_GREEN, VERMILLION

#: Rows looked at for the first runnable one whose identity a test run borrows.
_ROW_SCAN = 10_000
#: After Stop's SIGTERM, how long the command gets before SIGKILL.
STOP_GRACE_MS = 2000
#: Lines of each output stream shown after a test run.
TAIL_LINES = 40


def sample_identity(spec: ScheduleSpec | None, data: dict[str, Any], now: datetime) -> TaskIdentity:
    """The identity of the schedule's first runnable row from ``now``, for a test run.

    Without a valid spec (or a runnable row) the values say where they came from.
    """
    attempt = f"test-run-{uuid.uuid4().hex[:12]}"
    if spec is not None:
        with contextlib.suppress(UserError):
            compiled = compile_schedule(spec)
            rows = itertools.islice(iter_rows(compiled, now), _ROW_SCAN)
            row = next((r for r in rows if r.runnable), None)
            if row is not None:
                return TaskIdentity(
                    spec.schedule_id,
                    spec.revision,
                    row.occurrence_id,
                    row.logical_slot_id,
                    row.nominal_local,
                    row.resolved_utc,
                    row.period,
                    attempt,
                    1,
                )
    schedule = str(data.get("scheduleId") or "untitled")
    revision = data.get("revision")
    return TaskIdentity(
        schedule, revision if isinstance(revision, int) else 1, "occ-test-run", None, "", None, None, attempt, 1
    )


@dataclass(frozen=True)
class TrialOutcome:
    """How a test run ended, with the identity it ran as and its elapsed seconds."""

    result: RunResult
    identity: TaskIdentity
    argv: list[str]
    seconds: float

    def status(self) -> str:
        r = self.result
        took = f"{self.seconds * 1000:.0f} ms" if self.seconds < 1 else f"{self.seconds:.2f} s"
        if r.error_class == "spawn_error":
            return "Could not start"
        if r.error_class == "timeout":
            return f"Timed out and was stopped · {took}"
        if r.error_class == "signal":
            name = signal.Signals(r.signal).name if r.signal else "a signal"
            return f"Stopped by {name} · {took}"
        return f"Exit {r.exit_status} · {took}"


class _Started(QObject):
    """Carries the test command's process id from the worker to the GUI thread."""

    started = Signal(int)


def _trial(task: Task, identity: TaskIdentity, clock: Clock, on_started: Callable[[int], None]) -> TrialOutcome:
    """Run the task once as the engine would (off the GUI thread); its outcome, timed."""
    command = prepare(task.argv, task.cwd, task.env, identity)
    began = time.monotonic()
    result = run_command(command, task.timeout, clock, on_started=on_started)
    return TrialOutcome(result, identity, command.argv, time.monotonic() - began)


class _Process:
    """The running test command's process group, killable from anywhere (also on teardown)."""

    def __init__(self) -> None:
        self.pid: int | None = None

    def signal(self, sig: int) -> None:
        if self.pid is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.pid, sig)


def _tail(text: str, lines: int = TAIL_LINES) -> str:
    parts = text.rstrip("\n").splitlines()
    if len(parts) <= lines:
        return "\n".join(parts)
    return f"[… {len(parts) - lines} earlier lines]\n" + "\n".join(parts[-lines:])


class TrialRun(QGroupBox):
    """The "Test run" box: Test run and Stop buttons, how the last run ended, and its output.

    It runs what it is given (:meth:`start`); whether a run is allowed (trust,
    a valid task) is the caller's decision, shown through :attr:`run_button`.
    """

    runStarted = Signal(int)
    """The test command started, with its process id."""
    runFinished = Signal(object)
    """A :class:`TrialOutcome`."""
    runEnded = Signal()
    """The run is over, however it ended (also when the command could not be prepared)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Test run", parent)
        self._running = False
        self._timeout = timedelta(0)
        col = QVBoxLayout(self)
        row = QHBoxLayout()
        self.run_button = QPushButton("Test run", self)
        # What it would do, or why it cannot, is said by the task editor as the document changes.
        accessible(self.run_button, "Test run", "Run the command once now, with the SCHED_* variables of the next run")
        self.stop_button = QPushButton("Stop", self)
        accessible(self.stop_button, "Stop the test run", "Stop the running test command (and everything it started)")
        self.stop_button.setEnabled(False)
        self.run_status = QLabel("Not run yet.", self)
        self.run_status.setAccessibleName("Test run: result")
        self.run_status.setWordWrap(True)
        row.addWidget(self.run_button)
        row.addWidget(self.stop_button)
        row.addWidget(self.run_status, 1)
        col.addLayout(row)
        self.output = QPlainTextEdit(self)
        self.output.setReadOnly(True)
        accessible(
            self.output, "Test run: output", "The command as run, its SCHED_* identity, and the end of its output"
        )
        self.output.setPlaceholderText("The output of a test run shows here.")
        self.output.setMinimumHeight(120)
        mono(self.output)
        col.addWidget(self.output)

        self._process = _Process()
        self._worker = LatestOnly(self)
        self._worker.done.connect(self._finished)
        self._worker.failed.connect(self._failed)
        self._started_relay = _Started(self)
        self._started_relay.started.connect(self._started)
        process = self._process
        # Never leave a test command running behind a closed editor (the worker waits for it).
        self.destroyed.connect(lambda *_: process.signal(signal.SIGKILL))
        self._kill_timer = QTimer(self)
        self._kill_timer.setSingleShot(True)
        self._kill_timer.setInterval(STOP_GRACE_MS)
        self._kill_timer.timeout.connect(lambda: self._process.signal(signal.SIGKILL))
        self.stop_button.clicked.connect(self.stop)

    @property
    def running(self) -> bool:
        return self._running

    def start(self, task: Task, identity: TaskIdentity, clock: Clock) -> bool:
        """Run ``task`` once as ``identity``; False when a run is already going."""
        if self._running:
            return False
        self._running = True
        self._timeout = task.timeout
        self._process.pid = None
        self.stop_button.setEnabled(True)
        self.run_button.setEnabled(False)
        self.run_status.setText("Running…")
        self.run_status.setStyleSheet("")
        self.output.setPlainText("$ " + shlex.join(task.argv) + "\n")
        on_started = self._started_relay.started.emit
        self._worker.submit(lambda: _trial(task, identity, clock, on_started))
        return True

    def stop(self) -> None:
        """Ask the running command (its whole group) to stop; kill it if it does not."""
        if not self._running:
            return
        self.run_status.setText("Stopping…")
        self._process.signal(signal.SIGTERM)
        self._kill_timer.start()

    def wait(self, msecs: int = 30_000) -> bool:
        """Block until the test run has ended (tests, screenshots)."""
        return self._worker.wait(msecs)

    def _started(self, pid: int) -> None:
        self._process.pid = pid
        self.runStarted.emit(pid)

    def _ended(self) -> None:
        self._running = False
        self._process.pid = None
        self._kill_timer.stop()
        self.stop_button.setEnabled(False)
        self.runEnded.emit()

    def _failed(self, message: str) -> None:
        """The command could not even be prepared (a placeholder it cannot fill, …): say why."""
        self._ended()
        self.run_status.setText(f"Could not run: {message}")
        self.run_status.setStyleSheet(f"color: {VERMILLION};")
        self.output.setPlainText(self.output.toPlainText().rstrip("\n") + f"\n# could not run: {message}")

    def _finished(self, outcome: object) -> None:
        assert isinstance(outcome, TrialOutcome)
        self._ended()
        result = outcome.result
        self.run_status.setText(outcome.status())
        colour = BLUISH_GREEN if result.succeeded else VERMILLION
        self.run_status.setStyleSheet(f"color: {colour};")
        ident = outcome.identity
        lines = [
            "$ " + shlex.join(outcome.argv),
            f"# as SCHED_OCCURRENCE_ID={ident.occurrence_id}",
            f"#    SCHED_NOMINAL_LOCAL={ident.nominal_local or '(none)'}",
            f"#    SCHED_SCHEDULED_UTC={ident.scheduled_utc or '(none)'}",
            f"# {outcome.status()}"
            + (f" (timeout {human_duration(self._timeout)})" if result.error_class == "timeout" else ""),
            "--- stdout ---",
            _tail(result.stdout_tail) or "(nothing)",
            "--- stderr ---",
            _tail(result.stderr_tail) or "(nothing)",
        ]
        self.output.setPlainText("\n".join(lines))
        self.runFinished.emit(outcome)
