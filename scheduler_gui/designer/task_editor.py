"""The task editor: what runs, as an argv list (never a shell string), where,
with which environment, for how long, on which engines, what running it twice
would mean, and how to check whether it happened. A test run starts the command once, off the
GUI thread, with the SCHED_* variables of the schedule's next run, and shows
how it ended.

The pieces live beside it: the list fields in
:mod:`scheduler_gui.designer.task_fields`, "Runs on" in
:mod:`scheduler_gui.designer.runs_on`, the test run in
:mod:`scheduler_gui.designer.trial_run`; this module puts them together and
keeps them in step with the document.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from core.enums import Effect
from core.spec.model import Task
from scheduler_gui.a11y import accessible, buddy, explain
from scheduler_gui.context import AppContext
from scheduler_gui.designer.duration_text import DurationField
from scheduler_gui.designer.field_problem import FieldProblem
from scheduler_gui.designer.notes import meaning_label, problem_label, show_problems
from scheduler_gui.designer.runs_on import RunsOnBox
from scheduler_gui.designer.task_fields import EFFECTS, ArgvList, EnvTable, env_pairs, read_argv, read_env
from scheduler_gui.designer.trial_run import TrialRun, sample_identity
from scheduler_gui.designer.trust import TrustKeeper, TrustPrompt, TrustStore
from scheduler_gui.status_style import VERMILLION
from scheduler_gui.workspace.document import SpecDocument


class TaskEditor(QWidget):
    """Edits the document's ``task`` and test-runs it."""

    testRunStarted = Signal(int)
    """The test command started, with its process id."""
    testRunFinished = Signal(object)
    """A :class:`scheduler_gui.designer.trial_run.TrialOutcome`."""

    def __init__(self, document: SpecDocument, ctx: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._doc = document
        self._ctx = ctx
        self._syncing = False
        accessible(self, "Task", "What runs at each occurrence")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.keeper = TrustKeeper(document, TrustStore(ctx.settings), self)
        self.trust_prompt = TrustPrompt(self.keeper, document, self)
        layout.addWidget(self.trust_prompt)
        layout.addWidget(self._command_box(document))
        self.runs_on = RunsOnBox(document, ctx, self)
        layout.addWidget(self.runs_on)
        layout.addWidget(self._twice_box())
        self._build_trial()
        layout.addWidget(self.trial)
        layout.addStretch(1)
        self._connect(document)
        self.sync()

    # --- building -----------------------------------------------------------------
    def _command_box(self, document: SpecDocument) -> QGroupBox:
        """The command, its folder, its environment and its timeout, each with its problem."""
        box = QGroupBox("Command", self)
        form = QFormLayout(box)
        self.argv = ArgvList("Run", "The program first, then its arguments (task.argv)", box, what="Command")
        form.addRow("Run", self.argv)
        self.argv_problem = problem_label(box, "Command: problem")
        form.addRow(self.argv_problem)
        hint = QLabel("Placeholders: {occurrenceId} {period} {nominalLocal} {scheduledUtc}", box)
        hint.setWordWrap(True)
        hint.setStyleSheet("color: palette(placeholder-text);")
        hint.setAccessibleName("Command: placeholders")
        form.addRow(hint)
        self._add_folder_row(box, form)
        self.env_table = EnvTable(box)
        self.env = self.env_table.table
        form.addRow("Environment", self.env_table)
        self.env_problem = problem_label(box, "Environment: problem")
        form.addRow(self.env_problem)
        self.secret_note = meaning_label(box, "Environment: secret")
        self.secret_note.hide()
        form.addRow(self.secret_note)
        self.timeout = DurationField(
            document, "task.timeout", "Stop after", "The command is stopped after this long", "10 min (default)", box
        )
        form.addRow("Stop after", self.timeout)
        return box

    def _add_folder_row(self, box: QGroupBox, form: QFormLayout) -> None:
        """The "In folder" row: the working folder and a Browse button, and its problem."""
        folder = QHBoxLayout()
        self.cwd = QLineEdit(box)
        self.cwd.setPlaceholderText("the engine's own folder")
        accessible(self.cwd, "In folder", "The folder the command runs in (task.cwd); empty means the engine's own")
        folder.addWidget(self.cwd, 1)
        self.browse = QPushButton("Browse…", box)
        accessible(self.browse, "Browse for the working folder", "Pick the folder the command runs in")
        self.browse.clicked.connect(self._browse)
        folder.addWidget(self.browse)
        form.addRow(buddy(QLabel("In folder", box), self.cwd), folder)
        self.cwd_problem = problem_label(box, "In folder: problem")
        form.addRow(self.cwd_problem)

    def _twice_box(self) -> QGroupBox:
        """What running the command twice would mean, and the probe that checks whether it ran."""
        box = QGroupBox("If it runs twice", self)
        form = QFormLayout(box)
        self.effect = QComboBox(box)
        for value, words, _meaning in EFFECTS:
            self.effect.addItem(words, value)
        accessible(
            self.effect,
            "Effect",
            "What running the command twice would mean; decides what happens after a lost outcome",
        )
        form.addRow("Effect", self.effect)
        self.effect_meaning = QLabel(box)
        self.effect_meaning.setWordWrap(True)
        self.effect_meaning.setAccessibleName("Effect: meaning")
        form.addRow(self.effect_meaning)
        self.verify = ArgvList(
            "Check with",
            "Optional check: exit 0 = it happened, 1 = it did not, other = unknown (task.verify)",
            box,
            what="Verify probe",
        )
        form.addRow("Check with", self.verify)
        self.verify_problem = problem_label(box, "Verify probe: problem")
        form.addRow(self.verify_problem)
        return box

    def _build_trial(self) -> None:
        """The test run; its buttons, status and output are the editor's too."""
        self.trial = TrialRun(self)
        self.run_button = self.trial.run_button
        self.stop_button = self.trial.stop_button
        self.run_status = self.trial.run_status
        self.output = self.trial.output

    def _connect(self, document: SpecDocument) -> None:
        """The test run's signals, the fields' edits to the document, and the document and the trust back here."""
        self.trial.runStarted.connect(self.testRunStarted)
        self.trial.runEnded.connect(self._update_run_button)
        self.trial.runFinished.connect(self.testRunFinished)
        # The lists reach the document only when every row is a value (see task_fields.read_argv, read_env).
        self._argv_problem = FieldProblem(document, "task.argv", "task.argv", self._show_problems)
        self._verify_problem = FieldProblem(document, "task.verify", "task.verify", self._show_problems)
        self._env_problem = FieldProblem(document, "task.env", "task.env", self._show_problems)
        self.argv.edited.connect(
            lambda values: self._edited(self._argv_problem, lambda: read_argv(values, required=True), "Edit command")
        )
        self.verify.edited.connect(
            lambda values: self._edited(
                self._verify_problem, lambda: read_argv(values, required=False), "Edit verify probe"
            )
        )
        self.env_table.edited.connect(
            lambda rows: self._edited(self._env_problem, lambda: read_env(rows), "Edit environment")
        )
        self.env_table.storeAsSecret.connect(self.store_as_secret)
        # Any folder name is a value (one that is not a folder here gets a note, not a refusal).
        self.cwd.textEdited.connect(lambda text: self._write("task.cwd", text or None, "Edit working folder", True))
        self.effect.activated.connect(
            lambda i: self._write("task.effect", self.effect.itemData(i), f"Effect: {self.effect.itemText(i)}")
        )
        self.run_button.clicked.connect(self.start_test_run)
        document.changed.connect(self.sync)
        self.keeper.changed.connect(self._update_run_button)

    # --- writing ------------------------------------------------------------------
    def _write(self, key: str, value: Any, label: str, merge: bool = False) -> None:
        if self._syncing:
            return
        self._doc.set_value(key, value, label=label, merge=merge)

    def _edited(self, problem: FieldProblem, read: Callable[[], Any], label: str) -> None:
        """A list changed here: written when it is a value, else its problem under it."""
        if self._syncing:
            return
        try:
            value = read()
        except ValueError as exc:
            problem.set(str(exc), self._doc.value(problem.key))
            return
        problem.clear()
        self._write(problem.key, value, label)

    def _env_add(self) -> None:
        self.env_table.add()

    def store_as_secret(self, row: int) -> None:
        """Keep row ``row``'s value as a secret on this computer (as ``schedctl secret set`` does, named
        like the variable) and put the reference in its place in the document, as one undoable edit."""
        from core.team.secrets import SecretError, Store, secrets_file, store

        rows = self.env_table.rows()
        if not 0 <= row < len(rows):
            return
        var, value = rows[row]
        env = self._doc.value("task.env")
        if not isinstance(value, str) or not value or not isinstance(env, dict) or env.get(var) != value:
            return  # only a value the document holds in clear
        try:
            kept = store(var, value, replace=False)
        except SecretError as exc:
            self._say_secret(str(exc), problem=True)
            return
        where = f"the file {secrets_file()}" if kept is Store.FILE else "this computer's keyring"
        self._write("task.env", {**env, var: {"secret": var}}, f"Store {var} as a secret")
        self._say_secret(
            f"{var} is kept as the secret {var} in {where}; the schedule holds only {{secret: {var}}}. "
            f"An engine on another computer needs it there too: schedctl secret set {var}"
        )

    def _say_secret(self, text: str, *, problem: bool = False) -> None:
        self.secret_note.setText(("⚠ " if problem else "") + text)
        self.secret_note.setAccessibleDescription(text)
        self.secret_note.setStyleSheet(f"color: {VERMILLION};" if problem else "color: palette(placeholder-text);")
        self.secret_note.show()

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
            # A list still being fixed keeps its rows while the document holds the value it was made from.
            argv = doc.value("task.argv")
            if not self._argv_problem.holds(argv):
                self.argv.set_values(_as_list(argv))
            verify = doc.value("task.verify")
            if not self._verify_problem.holds(verify):
                self.verify.set_values(_as_list(verify))
            cwd = doc.value("task.cwd") or ""
            if self.cwd.text() != str(cwd):
                self.cwd.setText(str(cwd))
            env = doc.value("task.env")
            if not self._env_problem.holds(env):
                self.env_table.set_pairs(env_pairs(env))
            effect = doc.value("task.effect", Effect.NON_IDEMPOTENT.value)
            index = self.effect.findData(effect)
            self.effect.setCurrentIndex(index if index >= 0 else 2)
        finally:
            self._syncing = False
        self.timeout.sync()
        meaning = next((m for v, _w, m in EFFECTS if v == self.effect.currentData()), "")
        self.effect_meaning.setText(meaning)
        self._show_problems()

    def _show_problems(self) -> None:
        """Each list's own problem, else the document's problems for its key; the run button follows."""
        doc = self._doc

        def lines(problem: FieldProblem, *keys: str) -> list[str]:
            return [problem.message] if problem.message else [m for k in keys for m in doc.problems_for(k)]

        show_problems(self.argv_problem, lines(self._argv_problem, "task.argv", "task.kind"))
        cwd = doc.value("task.cwd") or ""
        cwd_notes = doc.problems_for("task.cwd")
        if cwd and not cwd_notes and not Path(str(cwd)).is_dir():
            cwd_notes = [f"{cwd} is not a folder on this computer; the command will not start here"]
        show_problems(self.cwd_problem, cwd_notes)
        show_problems(self.env_problem, lines(self._env_problem, "task.env"))
        show_problems(self.verify_problem, lines(self._verify_problem, "task.verify"))
        self._update_run_button()

    def _update_run_button(self) -> None:
        if self.trial.running:
            self.run_button.setEnabled(False)
            return
        if self.keeper.needs_trust():
            self.run_button.setEnabled(False)
            explain(self.run_button, "This file came from elsewhere: check its task and trust it first (above)")
            if self.run_status.text() == "Not run yet.":
                self.run_status.setText("Not run yet. Trust this file first (above).")
            return
        if self.run_status.text().startswith("Not run yet."):
            self.run_status.setText("Not run yet.")
        task = self._task()
        self.run_button.setEnabled(isinstance(task, Task))
        explain(
            self.run_button,
            "Run the command once now, with the SCHED_* variables of the next run"
            if isinstance(task, Task)
            else f"Cannot run yet: {task}",
        )

    def _task(self) -> Task | str:
        """The document's task, validated on its own (the rest of the schedule may be unfinished); while a
        task field holds text that is not a value, what the person sees is not what would run: why not."""
        for problem in (self._argv_problem, self._env_problem, self._verify_problem, self.timeout.field.problem):
            if problem.message:
                return f"{problem.key}: {problem.message}"
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
        return self.trial.running

    def start_test_run(self) -> bool:
        """Start the command once; False (with the reason shown) when it may not or cannot run."""
        if self.trial.running:
            return False
        if self.keeper.needs_trust():
            self.run_status.setText("Trust this file first: its task came from elsewhere.")
            return False
        task = self._task()
        if not isinstance(task, Task):
            self.run_status.setText(f"Cannot run yet: {task}")
            return False
        identity = sample_identity(self._doc.spec, self._doc.data, self._ctx.clock.now())
        return self.trial.start(task, identity, self._ctx.clock)

    def stop_test_run(self) -> None:
        """Ask the running command (its whole group) to stop; kill it if it does not."""
        self.trial.stop()

    def wait(self, msecs: int = 30_000) -> bool:
        """Block until the test run has ended and the live engines are read (tests, screenshots)."""
        return self.trial.wait(msecs) and self.runs_on.wait(msecs)


def _as_list(value: Any) -> list[str]:
    """A stored argv (or anything in its place) as the rows to show."""
    if value is None:
        return []
    return [str(a) for a in value] if isinstance(value, list) else [str(value)]
