"""The clock changes box: what the schedule does when a time does not exist
(clocks jump forward), when a time happens twice (clocks fall back) and when a
date does not exist (day 31 of a 30-day month).

Each choice is a radio button in plain words, followed by a consequence line
computed by the core (``core.explain.consequences``) for this rule in this zone, with
the next real date; the other choices say what they would do in their tooltips.
The lines are seen from the instant the preview starts from (its From, or
"now"), and each names a row the preview built with that choice lists.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QButtonGroup, QGroupBox, QLabel, QRadioButton, QVBoxLayout, QWidget

from core.enums import FoldPolicy, GapPolicy, InvalidDatePolicy, Kind
from core.errors import SpecError
from core.explain.consequences import (
    Consequences,
    FoldConsequence,
    GapConsequence,
    InvalidDateConsequence,
    consequences,
)
from core.spec.validation import parse_spec
from scheduler_gui.a11y import accessible, explain
from scheduler_gui.background import LatestOnly
from scheduler_gui.context import AppContext
from scheduler_gui.designer.notes import problem_label, show_problems
from scheduler_gui.preview.service import PreviewService
from scheduler_gui.workspace.document import SpecDocument

DEBOUNCE_MS = 60


@dataclass(frozen=True)
class Choice:
    value: str
    words: str
    meaning: str


GAP_CHOICES = (
    Choice(GapPolicy.SKIP.value, "Skip it", "No run at a time that does not exist."),
    Choice(GapPolicy.SHIFT_FORWARD.value, "Next valid time", "Run at the first time after the jump (e.g. 03:00)."),
    Choice(
        GapPolicy.SHIFT_BY_GAP.value,
        "Shift by the gap",
        "Run as much later as the clocks jumped (02:30 becomes 03:30 after a one-hour jump).",
    ),
)
FOLD_CHOICES = (
    Choice(FoldPolicy.FIRST_ONLY.value, "First only", "Run once, the first time the wall clock shows it."),
    Choice(FoldPolicy.SECOND_ONLY.value, "Second only", "Run once, the second time, after the clocks fell back."),
    Choice(FoldPolicy.BOTH.value, "Both", "Run twice, once at each reading."),
)
INVALID_CHOICES = (
    Choice(InvalidDatePolicy.OMIT.value, "Omit", "No run for a date the month lacks (the calendar standard)."),
    Choice(InvalidDatePolicy.BACKWARD.value, "Last valid day", "Run on the month's last day instead (April 30)."),
    Choice(
        InvalidDatePolicy.FORWARD.value, "First day of next month", "Run on the first day after it instead (May 1)."
    ),
)

Part = GapConsequence | FoldConsequence | InvalidDateConsequence


class PolicyGroup(QWidget):
    """One policy: a heading, its choices, the consequence line and the problems of its key."""

    def __init__(
        self,
        document: SpecDocument,
        key: str,
        title: str,
        choices: tuple[Choice, ...],
        parent: QWidget | None = None,
        *,
        default: str | None = None,
    ) -> None:
        super().__init__(parent)
        self._doc = document
        self.key = key
        self.default = default
        self.choices = choices
        self._title = title
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        self.heading = QLabel(f"<b>{title}</b>", self)
        layout.addWidget(self.heading)
        self.group = QButtonGroup(self)
        self.buttons: dict[str, QRadioButton] = {}
        for choice in choices:
            button = QRadioButton(choice.words, self)
            accessible(button, f"{title}: {choice.words}", f"{choice.meaning} ({key} {choice.value})")
            self.group.addButton(button)
            self.buttons[choice.value] = button
            layout.addWidget(button)
        self.group.buttonClicked.connect(self._clicked)
        self.line = QLabel(self)
        self.line.setWordWrap(True)
        accessible(self.line, f"{title}: what the chosen policy does", "Computed from the zone data for this rule")
        layout.addWidget(self.line)
        self.part: Part | None = None
        self.problem = problem_label(self, f"{title}: problem")
        layout.addWidget(self.problem)

    def _clicked(self, button: QRadioButton) -> None:
        for choice in self.choices:
            if self.buttons[choice.value] is button:
                self._doc.set_value(self.key, choice.value, label=f"{self._title}: {choice.words}")

    def chosen(self) -> str | None:
        """The document's value; the documented default when the key is absent (None if it has none)."""
        value = self._doc.value(self.key, self.default)
        return value if isinstance(value, str) and value in self.buttons else None

    def sync(self) -> None:
        """Show the document's value and the problems of this key (no signals back)."""
        value = self.chosen()
        self.group.setExclusive(False)
        for choice_value, button in self.buttons.items():
            button.blockSignals(True)
            button.setChecked(choice_value == value)
            button.blockSignals(False)
        self.group.setExclusive(True)
        show_problems(self.problem, self._doc.problems_for(self.key))

    def set_choices_visible(self, visible: bool) -> None:
        for button in self.buttons.values():
            button.setVisible(visible)

    def show_part(self, part: Part | None, empty: str, *, fold_away: bool = False) -> None:
        """The consequence line for the chosen value, and each choice's own line in its tooltip.

        ``fold_away``: with nothing to say and the default chosen, the choices are hidden.
        """
        self.part = part
        self.set_choices_visible(not (fold_away and part is None and self.chosen() == self.default))
        if part is None or not part.outcomes:
            text = part.line() if part is not None else empty
            self.line.setText(f"→ {text}")
            for choice in self.choices:
                explain(self.buttons[choice.value], f"{choice.meaning} ({self.key} {choice.value})")
            return
        lines = {choice.value: part.line(choice.value) for choice in self.choices}
        for choice in self.choices:
            explain(self.buttons[choice.value], f"{choice.meaning}\n{lines[choice.value]}\n({self.key} {choice.value})")
        chosen = self.chosen()
        if chosen is not None:
            self.line.setText(f"→ {lines[chosen]}")
        else:
            each = "; ".join(f"{c.words}: {_outcome_text(part, c.value)}" for c in self.choices)
            self.line.setText(f"→ Not chosen yet. {each}")

    def show_message(self, text: str) -> None:
        self.part = None
        self.line.setText(f"→ {text}")


def _outcome_text(part: Part, value: str) -> str:
    for policy, outcome in part.outcomes.items():
        if policy.value == value:
            return outcome.text
    return "touches none of its times from now on"


class ClockChangesBox(QGroupBox):
    """Gap, repeat and missing-date policies with their live consequences."""

    def __init__(
        self,
        document: SpecDocument,
        ctx: AppContext,
        parent: QWidget | None = None,
        preview: PreviewService | None = None,
    ) -> None:
        super().__init__("Clock changes", parent)
        self._doc = document
        self._ctx = ctx
        self._preview = preview
        accessible(
            self,
            "Clock changes",
            "What this schedule does when the clocks jump or fall back, and on dates a month lacks",
        )
        layout = QVBoxLayout(self)
        self.note = QLabel(self)
        self.note.setWordWrap(True)
        self.note.setAccessibleName("Clock changes: note")
        layout.addWidget(self.note)
        self.gap = PolicyGroup(document, "gapPolicy", "Missing time (clocks jump forward)", GAP_CHOICES, self)
        self.fold = PolicyGroup(document, "foldPolicy", "Repeated time (clocks fall back)", FOLD_CHOICES, self)
        self.invalid_date = PolicyGroup(
            document,
            "invalidDatePolicy",
            "Missing date (day 31 in a 30-day month)",
            INVALID_CHOICES,
            self,
            default=InvalidDatePolicy.OMIT.value,
        )
        for group in (self.gap, self.fold, self.invalid_date):
            layout.addWidget(group)
        layout.addStretch(1)
        self.latest: Consequences | None = None
        self._worker = LatestOnly(self)
        self._worker.done.connect(self._show)
        self._worker.failed.connect(self._show_failure)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(DEBOUNCE_MS)
        self._timer.timeout.connect(self.refresh_now)
        document.changed.connect(self._on_changed)
        if preview is not None:
            preview.startChanged.connect(self._timer.start)
        self._on_changed()
        self.refresh_now()

    def now(self) -> datetime:
        """The instant the consequences are seen from: the preview's start, else the clock's now."""
        return self._preview.start if self._preview is not None else self._ctx.clock.now()

    @property
    def pending(self) -> bool:
        """True from an edit until its consequences are shown (tests, screenshots)."""
        return self._timer.isActive() or self._worker.busy

    def wait(self, msecs: int = 30_000) -> bool:
        """Block until the consequences being computed are ready (tests, screenshots)."""
        return self._worker.wait(msecs)

    def _kind(self) -> str:
        kind = self._doc.value("kind", Kind.CALENDAR.value)
        return str(kind)

    def _on_changed(self) -> None:
        kind = self._kind()
        interval = kind == Kind.INTERVAL.value
        self.gap.setVisible(not interval)
        self.fold.setVisible(not interval)
        self.invalid_date.setVisible(kind == Kind.CALENDAR.value)
        for group in (self.gap, self.fold, self.invalid_date):
            group.sync()
        self._timer.start()

    def _spec_for_preview(self) -> Any:
        """The document's spec; with a missing gap or repeat choice stood in for, so that
        every choice's consequence shows before one is made. None when still incomplete."""
        if self._doc.spec is not None:
            return self._doc.spec
        data = dict(self._doc.data)
        if self._kind() != Kind.INTERVAL.value:
            data.setdefault("gapPolicy", GapPolicy.SKIP.value)
            data.setdefault("foldPolicy", FoldPolicy.FIRST_ONLY.value)
            if data.get("gapPolicy") not in {c.value for c in GAP_CHOICES}:
                data["gapPolicy"] = GapPolicy.SKIP.value
            if data.get("foldPolicy") not in {c.value for c in FOLD_CHOICES}:
                data["foldPolicy"] = FoldPolicy.FIRST_ONLY.value
        try:
            return parse_spec(data)
        except SpecError:
            return None

    def refresh_now(self) -> None:
        self._timer.stop()
        spec = self._spec_for_preview()
        if spec is None:
            self._worker.cancel()
            self._show_failure("Complete the schedule above to see what each choice does.")
            return
        now = self.now()
        self._worker.submit(lambda: consequences(spec, now))

    def _show(self, result: object) -> None:
        assert isinstance(result, Consequences)
        self.latest = result
        self.note.setText(result.note or "")
        self.note.setVisible(bool(result.note))
        if result.kind is Kind.INTERVAL:
            return
        if result.kind is Kind.AFTER_COMPLETION:
            # Only the first run reads the wall clock; the note says so when it meets no change.
            first_only = "The first run's time is not affected; later runs follow elapsed time."
            self.gap.show_part(result.gap, first_only)
            self.fold.show_part(result.fold, first_only)
            return
        quiet = f"{result.zone} has no clock changes ahead."
        self.gap.show_part(result.gap, quiet if result.note else "No gap in the next ten years.")
        self.fold.show_part(result.fold, quiet if result.note else "No repeated hour in the next ten years.")
        self.invalid_date.show_part(
            result.invalid_date, "This rule only names dates that every month has.", fold_away=True
        )

    def _show_failure(self, message: str) -> None:
        self.latest = None
        self.note.hide()
        for group in (self.gap, self.fold, self.invalid_date):
            group.set_choices_visible(True)
            group.show_message(message)
