"""The task's "Runs on": which engines may run the schedule (the spec's ``runsOn``,
docs/spec.md), and under it which live engines match right now.

Three choices: this machine (``runsOn`` left out: engines on the host it is
published from), any engine (``runsOn: {any: true}``), or engines with labels
(``KEY=VALUE`` rows, every one of which an engine must have). Each choice and
each finished row is one undoable edit of the document; rows that are not
labels yet stay in the list with their problem under it, and the document
(and so Save and Publish) waits, as the other list fields do.

The line under it reads the engines the ledger has seen off the GUI thread
(:func:`core.ledger.monitor_reads.engines_seen`) and asks
:func:`core.team.runs_on_match.engine_match` which would run the schedule were it
published now by the person at the window; it is read again when the choice
changes, when the field is shown and every few seconds while it is (engines
come and go).
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QTimer
from PySide6.QtGui import QHideEvent, QShowEvent
from PySide6.QtWidgets import QGroupBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from core.spec.model import ANY_ENGINE
from core.team.actor import current_actor
from core.team.placement import HOST_LABEL
from core.team.runs_on_match import engine_match, label_rows, read_label_rows
from scheduler_gui.background import LatestOnly
from scheduler_gui.context import AppContext
from scheduler_gui.designer.choice_buttons import choice_buttons
from scheduler_gui.designer.field_problem import FieldProblem
from scheduler_gui.designer.notes import meaning_label, problem_label, show_problems
from scheduler_gui.designer.task_fields import ArgvList
from scheduler_gui.workspace.document import SpecDocument

#: The spec's key, and the field name its rows' problem is kept under in the document.
KEY = "runsOn"
#: How often the live engines are read again while the field is shown; sooner while the window is
#: still opening the ledger (or could not), so the line speaks once it can.
REFRESH_MS = 15_000
NO_LEDGER_REFRESH_MS = 2_000

THIS_MACHINE, ANY, LABELS = "this machine", "any engine", "labels"
#: (choice, words on its button, what it means).
CHOICES = (
    (THIS_MACHINE, "This machine (where it is published from)", "Runs only on engines on the host it is published "
     "from ({host}); runsOn is left out"),
    (ANY, "Any engine", "Runs on any engine of the ledger that trusts its publisher (runsOn: {{any: true}})"),
    (LABELS, "Engines with labels", "Runs on engines that have every label below, KEY=VALUE (runsOn); an engine "
     "has host and user, and the labels given with schedctl engine run --label"),
)  # fmt: skip


def choice_of(runs_on: Any) -> str:
    """Which choice a stored ``runsOn`` is (anything but absent or ``{any: true}`` is labels)."""
    if runs_on is None:
        return THIS_MACHINE
    return ANY if runs_on == {ANY_ENGINE: True} else LABELS


class RunsOnBox(QGroupBox):
    """Edits the document's ``runsOn`` and says which live engines match it."""

    def __init__(self, document: SpecDocument, ctx: AppContext, parent: QWidget | None = None) -> None:
        super().__init__("Runs on", parent)
        self._doc = document
        self._ctx = ctx
        self._syncing = False
        layout = QVBoxLayout(self)
        host = current_actor().host
        choices = [(choice, words, meaning.format(host=host)) for choice, words, meaning in CHOICES]
        self.group, self.buttons = choice_buttons(self, layout, "Runs on", choices, self.choose)
        rows = QHBoxLayout()
        rows.setContentsMargins(24, 0, 0, 0)  # under "Engines with labels", whose rows they are
        self.labels = ArgvList("Runs on labels", "Labels an engine must have, one KEY=VALUE per row", self,
                               what="Labels")  # fmt: skip
        self.labels.up_button.hide()  # the order of labels means nothing
        self.labels.down_button.hide()
        rows.addWidget(self.labels)
        layout.addLayout(rows)
        self.problem_line = problem_label(self, "Runs on: problem")
        layout.addWidget(self.problem_line)
        self.meaning = meaning_label(self, "Runs on: meaning")
        layout.addWidget(self.meaning)
        self.engines_line = QLabel(self)  # the consequence: in the text's own colour, not a quiet note
        self.engines_line.setWordWrap(True)
        self.engines_line.setAccessibleName("Runs on: live engines")
        layout.addWidget(self.engines_line)

        self.problem = FieldProblem(document, KEY, KEY, self._problem_changed)
        self.labels.edited.connect(self._rows_edited)
        self._reader = LatestOnly(self)
        self._reader.done.connect(self._show_engines)
        self._reader.failed.connect(lambda message: self._say_engines(f"Cannot tell which engines match: {message}"))
        self._timer = QTimer(self)
        self._timer.setInterval(REFRESH_MS)
        self._timer.timeout.connect(self.refresh)
        self._shown_runs_on: Any = object()  # what the engines line was last read for
        document.changed.connect(self.sync)
        self.sync()

    # --- writing ------------------------------------------------------------------
    def choose(self, choice: str) -> None:
        """Make ``choice`` the document's ``runsOn`` (labels: the rows shown, or this host to start from)."""
        if self._syncing or (choice == LABELS and self.problem.message):
            return  # the rows being fixed are the labels already
        self.problem.clear()
        if choice == THIS_MACHINE:
            self._doc.set_value(KEY, None, label="Runs on: this machine")
        elif choice == ANY:
            self._doc.set_value(KEY, {ANY_ENGINE: True}, label="Runs on: any engine")
        else:
            try:
                labels = read_label_rows(self.labels.values())
            except ValueError:
                labels = {HOST_LABEL: current_actor().host}
            self._doc.set_value(KEY, labels, label="Runs on: engines with labels")
        self.sync()

    def _rows_edited(self, rows: list[str]) -> None:
        """A row changed: written when every row is a label, else the problem under the list."""
        if self._syncing:
            return
        try:
            labels = read_label_rows(rows)
        except ValueError as exc:
            self.problem.set(str(exc), self._doc.value(KEY))
            return
        self.problem.clear()
        self._doc.set_value(KEY, labels, label="Edit the labels it runs on")

    # --- reading ------------------------------------------------------------------
    def sync(self) -> None:
        """Show the document's ``runsOn`` (rows still being fixed stay while the document is unchanged)."""
        runs_on = self._doc.value(KEY)
        held = self.problem.holds(runs_on)
        choice = LABELS if held else choice_of(runs_on)
        self._syncing = True
        try:
            self.buttons[choice].setChecked(True)
            if not held:
                self.labels.set_values(label_rows(runs_on))
        finally:
            self._syncing = False
        self.labels.setVisible(choice == LABELS)
        meaning = next(m for c, _w, m in CHOICES if c == choice)
        self.meaning.setText(meaning.format(host=current_actor().host))
        self._show_problems()
        if runs_on != self._shown_runs_on:
            self.refresh()

    def _problem_changed(self) -> None:
        self._show_problems()
        self.refresh()

    def _show_problems(self) -> None:
        own = self.problem.message
        show_problems(self.problem_line, [own] if own else self._doc.problems_for(KEY))

    def refresh(self) -> None:
        """Read which live engines match, off the GUI thread (without an open ledger: say it cannot tell)."""
        runs_on = self._doc.value(KEY)
        self._shown_runs_on = runs_on
        if self.problem.message or self._doc.problems_for(KEY):
            self._reader.cancel()
            self._say_engines("Fix the labels to see which engines match.")
            return
        self._timer.setInterval(REFRESH_MS if self._ctx.ledger_open else NO_LEDGER_REFRESH_MS)
        if not self._ctx.ledger_open:
            self._reader.cancel()
            self._say_engines("Cannot tell which engines match: no ledger is open.")
            return
        ctx, me = self._ctx, current_actor()

        def work() -> str:
            from core.engine.presence import STALE_AFTER
            from core.ledger.monitor_reads import engines_seen

            now = ctx.clock.now()
            publisher = me.with_role(ctx.ledger.role())  # on PostgreSQL engines trust the role
            return engine_match(runs_on, publisher, engines_seen(ctx.ledger, now, STALE_AFTER)).text(now)

        self._reader.submit(work)

    @property
    def reading(self) -> bool:
        """True while the engines are being read for the line."""
        return self._reader.busy

    def wait(self, msecs: int = 30_000) -> bool:
        """Block until the engines are read (tests, screenshots); the line changes through the event loop."""
        return self._reader.wait(msecs)

    def _show_engines(self, text: object) -> None:
        self._say_engines(str(text))

    def _say_engines(self, text: str) -> None:
        self.engines_line.setText(text)
        self.engines_line.setAccessibleDescription(text)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.refresh()
        self._timer.start()

    def hideEvent(self, event: QHideEvent) -> None:
        super().hideEvent(event)
        self._timer.stop()
