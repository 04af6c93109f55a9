"""The summary: the whole schedule in one short paragraph of plain words, always
visible above the designer, rewritten after every edit.

The words are the core's own (``core.explain.explain``), computed off the GUI
thread; while the document is invalid the first problem is shown instead, in
words ("Not complete: choose a gap policy").
"""

from __future__ import annotations

from functools import partial

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget

from core.errors import Problem
from core.explain import explain
from scheduler_gui.context import AppContext
from scheduler_gui.document import SpecDocument
from scheduler_gui.spec_follower import SpecFollower

#: Milliseconds of quiet after an edit before the words are rebuilt.
DEBOUNCE_MS = 60

#: Spec keys in words, for "Not complete" messages.
KEY_WORDS = {
    "gapPolicy": "a gap policy (what happens when a time does not exist)",
    "foldPolicy": "a repeat policy (what happens when a time happens twice)",
    "rule": "the repeat rule",
    "start": "a start",
    "timeZone": "a time zone",
    "scheduleId": "a schedule id",
    "every": "how often it runs",
    "anchor": "an anchor instant",
    "delay": "the delay after each run",
    "maxCatchUp": "how many missed runs to catch up",
    "task.argv": "the command to run",
}


def problem_in_words(problem: Problem) -> str:
    """``Not complete: choose a gap policy (…)``, or ``Not complete: rule: <message>``."""
    key, message = problem.key, problem.message
    if message.startswith("required") and key in KEY_WORDS:
        verb = "choose" if key.endswith("Policy") else "give"
        return f"Not complete: {verb} {KEY_WORDS[key]}."
    where = f"{key}: " if key else ""
    return f"Not complete: {where}{message}."


class SummaryLine(QLabel):
    """The schedule in words; the first problem in words while the spec is invalid."""

    updated = Signal(str)
    """The text now shown."""

    def __init__(self, document: SpecDocument, ctx: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._doc = document
        self._ctx = ctx
        self.setObjectName("summaryLine")
        self.setWordWrap(True)
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Minimum)
        self.setAccessibleName("Schedule summary")
        self.setToolTip("What this schedule will do, in words; it follows every edit")
        font = self.font()
        font.setPointSizeF(font.pointSizeF() * 1.1)
        self.setFont(font)
        self.setMargin(4)
        self._follow = SpecFollower(document, lambda spec: partial(explain, spec, ctx.clock.now()), DEBOUNCE_MS, self)
        self._follow.done.connect(self._show)
        self._follow.failed.connect(self._show_problem_text)
        self._follow.incomplete.connect(
            lambda first: self._show_problem_text(problem_in_words(first) if first is not None else "Not complete.")
        )
        self.refresh_now()

    def refresh_now(self) -> None:
        """Rebuild the words for the document as it is now."""
        self._follow.refresh_now()

    def wait(self, msecs: int = 30_000) -> bool:
        """Block until the words being built are ready (tests, screenshots)."""
        return self._follow.wait(msecs)

    def _show(self, text: object) -> None:
        self.setProperty("incomplete", False)
        self._set(str(text))

    def _show_problem_text(self, text: str) -> None:
        self.setProperty("incomplete", True)
        self._set(text if text.startswith("Not complete") else f"Not complete: {text}")

    def _set(self, text: str) -> None:
        self.setText(text)
        self.setAccessibleDescription(text)
        self.updated.emit(text)
