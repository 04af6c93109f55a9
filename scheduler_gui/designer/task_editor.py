"""The task editor: what runs, as an argv list (never a shell string), where,
with which environment, for how long, what running it twice would mean, and
how to check whether it happened. A test run starts the command once, off the
GUI thread, with the SCHED_* variables of the schedule's next run, and shows
how it ended.
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
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from core.clock import Clock
from core.durations import human_duration
from core.engine.runner import RunResult, TaskIdentity, prepare, run_command
from core.enums import Effect
from core.errors import UserError
from core.recurrence.compile import compile_schedule
from core.recurrence.expand import iter_rows
from core.spec import ScheduleSpec, Task
from scheduler_gui.background import LatestOnly
from scheduler_gui.context import AppContext
from scheduler_gui.designer.recovery import DurationField
from scheduler_gui.designer.trust import TrustKeeper, TrustPrompt, TrustStore
from scheduler_gui.document import SpecDocument
from scheduler_gui.status_style import BLUISH_GREEN, VERMILLION

#: Rows looked at for the first runnable one whose identity a test run borrows.
_ROW_SCAN = 10_000
#: After Stop's SIGTERM, how long the command gets before SIGKILL.
STOP_GRACE_MS = 2000
#: Lines of each output stream shown after a test run.
TAIL_LINES = 40

EFFECTS = (
    (
        Effect.NONE.value,
        "Changes nothing (none)",
        "It changes nothing outside itself: when a run's outcome is lost (killed, engine crash), it simply runs again.",
    ),
    (
        Effect.IDEMPOTENT.value,
        "Safe to repeat (idempotent)",
        "Running it twice has the effect of running it once: a run whose outcome is lost is retried.",
    ),
    (
        Effect.NON_IDEMPOTENT.value,
        "Must not run twice (non_idempotent)",
        "Running it twice does it twice (two emails, two payments): a run whose outcome is lost is never re-sent "
        "blindly; the verify probe decides, or a person does.",
    ),
)


def _mono(widget: QWidget) -> None:
    widget.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))


def _problem_label(parent: QWidget, name: str) -> QLabel:
    label = QLabel(parent)
    label.setWordWrap(True)
    label.setStyleSheet(f"color: {VERMILLION};")
    label.setAccessibleName(name)
    label.hide()
    return label


def _show_problems(label: QLabel, messages: list[str]) -> None:
    label.setText("\n".join(f"⚠ {m}" for m in messages))
    label.setVisible(bool(messages))


class ArgvList(QWidget):
    """An argv list: one argument per row, added, removed, edited and reordered."""

    edited = Signal(list)
    """The whole list after a change made here."""

    def __init__(self, name: str, tooltip: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._name = name
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.list = QListWidget(self)
        self.list.setAccessibleName(name)
        self.list.setToolTip(f"{tooltip}\nOne argument per row, passed as is: no shell, no quoting needed.")
        self.list.setEditTriggers(
            QAbstractItemView.EditTrigger.DoubleClicked
            | QAbstractItemView.EditTrigger.EditKeyPressed
            | QAbstractItemView.EditTrigger.AnyKeyPressed
        )
        self.list.setMaximumHeight(90)
        _mono(self.list)
        layout.addWidget(self.list, 1)
        buttons = QVBoxLayout()
        self.add_button = self._button("Add", f"Add an argument to {name.lower()}", self.add)
        self.remove_button = self._button("Remove", "Remove the selected argument", self.remove)
        self.up_button = self._button("Up", "Move the selected argument up", lambda: self.move_selected(-1))
        self.down_button = self._button("Down", "Move the selected argument down", lambda: self.move_selected(1))
        for button in (self.add_button, self.remove_button, self.up_button, self.down_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        layout.addLayout(buttons)
        self.list.itemChanged.connect(lambda _item: self._emit())
        self.list.currentRowChanged.connect(lambda _row: self._update_buttons())
        self._update_buttons()

    def _button(self, text: str, tip: str, slot: Any) -> QPushButton:
        button = QPushButton(text, self)
        button.setToolTip(tip)
        button.setAccessibleName(f"{self._name}: {text.lower()}")
        button.clicked.connect(slot)
        return button

    def values(self) -> list[str]:
        return [self.list.item(i).text() for i in range(self.list.count())]

    def set_values(self, values: list[str]) -> None:
        """Show ``values`` (no signal); the selection stays on the same row when it can."""
        if values == self.values():
            return
        row = self.list.currentRow()
        self.list.blockSignals(True)
        self.list.clear()
        for value in values:
            self.list.addItem(self._item(value))
        self.list.setCurrentRow(min(row, len(values) - 1))
        self.list.blockSignals(False)
        self._update_buttons()

    @staticmethod
    def _item(text: str) -> QListWidgetItem:
        item = QListWidgetItem(text)
        item.setFlags(item.flags() | Qt.ItemFlag.ItemIsEditable)
        return item

    def add(self, text: str = "") -> None:
        self.list.blockSignals(True)
        item = self._item(text if isinstance(text, str) else "")
        self.list.addItem(item)
        self.list.setCurrentItem(item)
        self.list.blockSignals(False)
        self._emit()
        self.list.editItem(item)

    def remove(self) -> None:
        row = self.list.currentRow()
        if row < 0:
            return
        self.list.blockSignals(True)
        self.list.takeItem(row)
        self.list.blockSignals(False)
        self._emit()

    def move_selected(self, step: int) -> None:
        row = self.list.currentRow()
        target = row + step
        if row < 0 or not 0 <= target < self.list.count():
            return
        self.list.blockSignals(True)
        item = self.list.takeItem(row)
        self.list.insertItem(target, item)
        self.list.setCurrentRow(target)
        self.list.blockSignals(False)
        self._emit()

    def _update_buttons(self) -> None:
        row = self.list.currentRow()
        self.remove_button.setEnabled(row >= 0)
        self.up_button.setEnabled(row > 0)
        self.down_button.setEnabled(0 <= row < self.list.count() - 1)

    def _emit(self) -> None:
        self._update_buttons()
        self.edited.emit(self.values())


# --- the test run ---------------------------------------------------------------------------


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


# --- the editor ------------------------------------------------------------------------------


class TaskEditor(QWidget):
    """Edits the document's ``task`` and test-runs it."""

    testRunStarted = Signal(int)
    """The test command started, with its process id."""
    testRunFinished = Signal(object)
    """A :class:`TrialOutcome`."""

    def __init__(self, document: SpecDocument, ctx: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._doc = document
        self._ctx = ctx
        self._syncing = False
        self._running = False
        self.setAccessibleName("Task")
        self.setToolTip("What runs at each occurrence")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)

        self.keeper = TrustKeeper(document, TrustStore(ctx.settings), self)
        self.trust_prompt = TrustPrompt(self.keeper, document, self)
        layout.addWidget(self.trust_prompt)

        box = QGroupBox("Command", self)
        form = QFormLayout(box)
        self.argv = ArgvList("Command", "The program first, then its arguments (task.argv)", box)
        form.addRow("Run", self.argv)
        self.argv_problem = _problem_label(box, "Command: problem")
        form.addRow(self.argv_problem)
        hint = QLabel("Placeholders: {occurrenceId} {period} {nominalLocal} {scheduledUtc}", box)
        hint.setWordWrap(True)
        hint.setStyleSheet("color: palette(placeholder-text);")
        hint.setAccessibleName("Command: placeholders")
        form.addRow(hint)
        folder = QHBoxLayout()
        self.cwd = QLineEdit(box)
        self.cwd.setPlaceholderText("the engine's own folder")
        self.cwd.setAccessibleName("Working folder")
        self.cwd.setToolTip("The folder the command runs in (task.cwd); empty means the engine's own")
        folder.addWidget(self.cwd, 1)
        self.browse = QPushButton("Browse…", box)
        self.browse.setAccessibleName("Choose the working folder")
        self.browse.setToolTip("Pick the working folder")
        self.browse.clicked.connect(self._browse)
        folder.addWidget(self.browse)
        form.addRow("In folder", folder)
        self.cwd_problem = _problem_label(box, "Working folder: problem")
        form.addRow(self.cwd_problem)
        self.env = QTableWidget(0, 2, box)
        self.env.setHorizontalHeaderLabels(["Name", "Value"])
        self.env.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.env.verticalHeader().hide()
        self.env.setMaximumHeight(110)
        self.env.setAccessibleName("Environment variables")
        self.env.setToolTip("Variables added to the command's environment (task.env); SCHED_* are added for you")
        env_row = QHBoxLayout()
        env_row.addWidget(self.env, 1)
        env_buttons = QVBoxLayout()
        self.env_add = QPushButton("Add", box)
        self.env_add.setAccessibleName("Environment: add")
        self.env_add.setToolTip("Add an environment variable")
        self.env_add.clicked.connect(self._env_add)
        self.env_remove = QPushButton("Remove", box)
        self.env_remove.setAccessibleName("Environment: remove")
        self.env_remove.setToolTip("Remove the selected environment variable")
        self.env_remove.clicked.connect(self._env_remove)
        env_buttons.addWidget(self.env_add)
        env_buttons.addWidget(self.env_remove)
        env_buttons.addStretch(1)
        env_row.addLayout(env_buttons)
        form.addRow("Environment", env_row)
        self.env_problem = _problem_label(box, "Environment: problem")
        form.addRow(self.env_problem)
        self.timeout = DurationField(
            document, "task.timeout", "Timeout", "The command is stopped after this long", "10 min (default)", box
        )
        form.addRow("Stop after", self.timeout)
        layout.addWidget(box)

        box = QGroupBox("If it runs twice", self)
        form = QFormLayout(box)
        self.effect = QComboBox(box)
        for value, words, _meaning in EFFECTS:
            self.effect.addItem(words, value)
        self.effect.setAccessibleName("Effect")
        self.effect.setToolTip("What running the command twice would mean; decides what happens after a lost outcome")
        form.addRow("Effect", self.effect)
        self.effect_meaning = QLabel(box)
        self.effect_meaning.setWordWrap(True)
        self.effect_meaning.setAccessibleName("Effect: meaning")
        form.addRow(self.effect_meaning)
        self.verify = ArgvList(
            "Verify probe", "Optional check: exit 0 = it happened, 1 = it did not, other = unknown (task.verify)", box
        )
        form.addRow("Check with", self.verify)
        self.verify_problem = _problem_label(box, "Verify probe: problem")
        form.addRow(self.verify_problem)
        layout.addWidget(box)

        box = QGroupBox("Test run", self)
        col = QVBoxLayout(box)
        row = QHBoxLayout()
        self.run_button = QPushButton("Test run", box)
        self.run_button.setAccessibleName("Test run")
        self.stop_button = QPushButton("Stop", box)
        self.stop_button.setAccessibleName("Stop the test run")
        self.stop_button.setToolTip("Stop the running test command (and everything it started)")
        self.stop_button.setEnabled(False)
        self.run_status = QLabel("Not run yet.", box)
        self.run_status.setAccessibleName("Test run: result")
        self.run_status.setWordWrap(True)
        row.addWidget(self.run_button)
        row.addWidget(self.stop_button)
        row.addWidget(self.run_status, 1)
        col.addLayout(row)
        self.output = QPlainTextEdit(box)
        self.output.setReadOnly(True)
        self.output.setAccessibleName("Test run: output")
        self.output.setToolTip("The command as run, its SCHED_* identity, and the end of its output")
        self.output.setPlaceholderText("The output of a test run shows here.")
        self.output.setMinimumHeight(120)
        _mono(self.output)
        col.addWidget(self.output)
        layout.addWidget(box)
        layout.addStretch(1)

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

        self.argv.edited.connect(lambda values: self._write("task.argv", values, "Edit command"))
        self.verify.edited.connect(lambda values: self._write("task.verify", values or None, "Edit verify probe"))
        self.cwd.textEdited.connect(lambda text: self._write("task.cwd", text or None, "Edit working folder", True))
        self.env.itemChanged.connect(lambda _item: self._write_env())
        self.effect.activated.connect(
            lambda i: self._write("task.effect", self.effect.itemData(i), f"Effect: {self.effect.itemText(i)}")
        )
        self.run_button.clicked.connect(self.start_test_run)
        self.stop_button.clicked.connect(self.stop_test_run)
        document.changed.connect(self.sync)
        self.keeper.changed.connect(self._update_run_button)
        self.sync()

    # --- writing ------------------------------------------------------------------
    def _write(self, key: str, value: Any, label: str, merge: bool = False) -> None:
        if self._syncing:
            return
        self._doc.set_value(key, value, label=label, merge=merge)

    def _env_rows(self) -> list[tuple[str, str]]:
        rows = []
        for r in range(self.env.rowCount()):
            name, value = self.env.item(r, 0), self.env.item(r, 1)
            rows.append((name.text() if name else "", value.text() if value else ""))
        return rows

    def _write_env(self) -> None:
        env = {name: value for name, value in self._env_rows() if name}
        self._write("task.env", env or None, "Edit environment")

    def _env_add(self) -> None:
        self.env.blockSignals(True)
        row = self.env.rowCount()
        self.env.insertRow(row)
        self.env.setItem(row, 0, QTableWidgetItem(""))
        self.env.setItem(row, 1, QTableWidgetItem(""))
        self.env.blockSignals(False)
        self.env.setCurrentCell(row, 0)
        item = self.env.item(row, 0)
        if item is not None:
            self.env.editItem(item)

    def _env_remove(self) -> None:
        row = self.env.currentRow()
        if row >= 0:
            self.env.removeRow(row)
            self._write_env()

    def _browse(self) -> None:
        start = self.cwd.text() or str(self._ctx.workspace)
        chosen = QFileDialog.getExistingDirectory(self, "Working folder", start)
        if chosen:
            self.cwd.setText(chosen)
            self._write("task.cwd", chosen, "Choose working folder")

    # --- reading ------------------------------------------------------------------
    def sync(self) -> None:
        """Show the document's task, problems and meanings (without writing back)."""
        doc = self._doc
        self._syncing = True
        try:
            argv = doc.value("task.argv") or []
            self.argv.set_values([str(a) for a in argv] if isinstance(argv, list) else [str(argv)])
            verify = doc.value("task.verify") or []
            self.verify.set_values([str(a) for a in verify] if isinstance(verify, list) else [str(verify)])
            cwd = doc.value("task.cwd") or ""
            if self.cwd.text() != str(cwd):
                self.cwd.setText(str(cwd))
            env = doc.value("task.env") or {}
            pairs = [(str(k), str(v)) for k, v in env.items()] if isinstance(env, dict) else []
            shown = [(n, v) for n, v in self._env_rows() if n]
            if pairs != shown:
                self.env.setRowCount(0)
                for name, value in pairs:
                    r = self.env.rowCount()
                    self.env.insertRow(r)
                    self.env.setItem(r, 0, QTableWidgetItem(name))
                    self.env.setItem(r, 1, QTableWidgetItem(value))
            effect = doc.value("task.effect", Effect.NON_IDEMPOTENT.value)
            index = self.effect.findData(effect)
            self.effect.setCurrentIndex(index if index >= 0 else 2)
        finally:
            self._syncing = False
        self.timeout.sync()
        meaning = next((m for v, _w, m in EFFECTS if v == self.effect.currentData()), "")
        self.effect_meaning.setText(meaning)
        _show_problems(self.argv_problem, doc.problems_for("task.argv") + doc.problems_for("task.kind"))
        cwd_notes = doc.problems_for("task.cwd")
        if cwd and not cwd_notes and not Path(str(cwd)).is_dir():
            cwd_notes = [f"{cwd} is not a folder on this computer; the command will not start here"]
        _show_problems(self.cwd_problem, cwd_notes)
        _show_problems(self.env_problem, doc.problems_for("task.env"))
        _show_problems(self.verify_problem, doc.problems_for("task.verify"))
        self._update_run_button()

    def _update_run_button(self) -> None:
        if self._running:
            self.run_button.setEnabled(False)
            return
        if self.keeper.needs_trust():
            self.run_button.setEnabled(False)
            self.run_button.setToolTip("This file came from elsewhere: check its task and trust it first (above)")
            if self.run_status.text() == "Not run yet.":
                self.run_status.setText("Not run yet. Trust this file first (above).")
            return
        if self.run_status.text().startswith("Not run yet."):
            self.run_status.setText("Not run yet.")
        task = self._task()
        self.run_button.setEnabled(isinstance(task, Task))
        self.run_button.setToolTip(
            "Run the command once now, with the SCHED_* variables of the next run"
            if isinstance(task, Task)
            else f"Cannot run yet: {task}"
        )

    def _task(self) -> Task | str:
        """The document's task, validated on its own (the rest of the schedule may be unfinished)."""
        raw = self._doc.value("task")
        if raw is None:
            return "there is no command"
        try:
            return Task.model_validate(raw)
        except ValidationError as exc:
            first = exc.errors(include_url=False)[0]
            where = ".".join(str(p) for p in first["loc"])
            return f"task.{where}: {first['msg']}" if where else str(first["msg"])

    # --- test run -----------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self._running

    def start_test_run(self) -> bool:
        """Start the command once; False (with the reason shown) when it may not or cannot run."""
        if self._running:
            return False
        if self.keeper.needs_trust():
            self.run_status.setText("Trust this file first: its task came from elsewhere.")
            return False
        task = self._task()
        if not isinstance(task, Task):
            self.run_status.setText(f"Cannot run yet: {task}")
            return False
        identity = sample_identity(self._doc.spec, self._doc.data, self._ctx.clock.now())
        self._running = True
        self._process.pid = None
        self.stop_button.setEnabled(True)
        self._update_run_button()
        self.run_status.setText("Running…")
        self.run_status.setStyleSheet("")
        self.output.setPlainText("$ " + shlex.join(task.argv) + "\n")
        clock, on_started = self._ctx.clock, self._started_relay.started.emit
        self._worker.submit(lambda: _trial(task, identity, clock, on_started))
        return True

    def stop_test_run(self) -> None:
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
        self.testRunStarted.emit(pid)

    def _ended(self) -> None:
        self._running = False
        self._process.pid = None
        self._kill_timer.stop()
        self.stop_button.setEnabled(False)
        self._update_run_button()

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
            + (f" (timeout {human_duration(self._timeout())})" if result.error_class == "timeout" else ""),
            "--- stdout ---",
            _tail(result.stdout_tail) or "(nothing)",
            "--- stderr ---",
            _tail(result.stderr_tail) or "(nothing)",
        ]
        self.output.setPlainText("\n".join(lines))
        self.testRunFinished.emit(outcome)

    def _timeout(self) -> timedelta:
        task = self._task()
        return task.timeout if isinstance(task, Task) else timedelta(0)
