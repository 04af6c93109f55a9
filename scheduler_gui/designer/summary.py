"""The summary: the whole schedule in plain words, always visible above the
designer, rewritten after every edit. One short sentence first (what and when,
in bold), then each policy on a line of its own.

The words are the core's own (``core.explain.summary.summarize``, whose sentences
``schedctl explain`` prints as one paragraph), computed off the GUI thread from
the instant the preview starts from (its From, or "now"), so that the dates
they name are those of the preview's rows. While the document is invalid the
first problem is shown instead, in words ("Not complete: choose a gap policy").
"""

from __future__ import annotations

from datetime import datetime
from functools import partial
from html import escape

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget

from core.desktop.wake.probe import host_backend
from core.errors import Problem
from core.explain.summary import Summary, summarize
from core.spec.model import ScheduleSpec
from scheduler_gui.a11y import accessible
from scheduler_gui.context import AppContext
from scheduler_gui.preview.service import PreviewService
from scheduler_gui.workspace.document import SpecDocument
from scheduler_gui.workspace.spec_follower import SpecFollower

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


def _words(spec: ScheduleSpec, now: datetime) -> Summary:
    """The summary (off the GUI thread): with ``wakeSystem``, the host's wake backend is probed
    here, once per process, so that the summary says whether this computer can be woken."""
    return summarize(spec, now, wake=host_backend() if spec.wake_system else None)


class SummaryLine(QLabel):
    """The schedule in words; the first problem in words while the spec is invalid.

    ``preview``: the designer's preview service, whose start the words are seen
    from (without one, the clock's now).
    """

    updated = Signal(str)
    """The text now shown, as plain text (one line each)."""

    def __init__(
        self,
        document: SpecDocument,
        ctx: AppContext,
        parent: QWidget | None = None,
        preview: PreviewService | None = None,
    ) -> None:
        super().__init__(parent)
        self._doc = document
        self._ctx = ctx
        self._preview = preview
        self.summary: Summary | None = None
        self._plain = ""
        self.setObjectName("summaryLine")
        self.setWordWrap(True)
        self.setTextFormat(Qt.TextFormat.RichText)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Minimum)
        accessible(self, "Schedule summary", "What this schedule will do, in words; it follows every edit")
        self.setMargin(4)
        self._follow = SpecFollower(document, lambda spec: partial(_words, spec, self.now()), DEBOUNCE_MS, self)
        self._follow.done.connect(self._show)
        self._follow.failed.connect(self._show_problem_text)
        self._follow.incomplete.connect(
            lambda first: self._show_problem_text(problem_in_words(first) if first is not None else "Not complete.")
        )
        if preview is not None:
            preview.startChanged.connect(self._follow.schedule_refresh)
        self.refresh_now()

    def now(self) -> datetime:
        """The instant the words are seen from: the preview's start, else the clock's now."""
        return self._preview.start if self._preview is not None else self._ctx.clock.now()

    def plain_text(self) -> str:
        """What is shown, without markup: the sentence, then one line per policy."""
        return self._plain

    def refresh_now(self) -> None:
        """Rebuild the words for the document as it is now."""
        self._follow.refresh_now()

    @property
    def pending(self) -> bool:
        """True from an edit until its words are shown (tests, screenshots)."""
        return self._follow.pending

    def wait(self, msecs: int = 30_000) -> bool:
        """Block until the words being built are ready (tests, screenshots)."""
        return self._follow.wait(msecs)

    def _show(self, result: object) -> None:
        assert isinstance(result, Summary)
        self.summary = result
        self.setProperty("incomplete", False)
        lines = "".join(f"<br>{escape(line)}" for line in result.lines)
        self._set(f"<b>{escape(result.headline)}</b>{lines}", "\n".join((result.headline, *result.lines)))

    def _show_problem_text(self, text: str) -> None:
        self.summary = None
        self.setProperty("incomplete", True)
        plain = text if text.startswith("Not complete") else f"Not complete: {text}"
        self._set(escape(plain), plain)

    def _set(self, html: str, plain: str) -> None:
        self._plain = plain
        self.setText(html)
        self.setAccessibleDescription(plain)
        self.updated.emit(plain)
