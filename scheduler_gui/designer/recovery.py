"""When things go wrong: missed runs (misfire), a run still going when the next
comes due (overlap), failed runs (retry), spread-out starts (jitter) and who is
told (alerts, :mod:`scheduler_gui.designer.alert_routes`).

Each setting has a one-line meaning in words under it. Durations are typed as a
person would say them (see :mod:`scheduler_gui.designer.duration_text`); the
document always receives the ISO form the spec file holds. Every typed value
reaches the document only once its whole text is one (a 0 in "Attempts at
most" says it must be at least 1 instead of turning back into 1).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QCheckBox, QComboBox, QFormLayout, QGroupBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from core.engine.backoff import backoff
from core.enums import MisfirePolicy, OverlapPolicy
from core.time.durations import human_duration
from scheduler_gui.a11y import accessible, buddy
from scheduler_gui.context import AppContext
from scheduler_gui.designer.alert_routes import AlertRoutesBox
from scheduler_gui.designer.duration_text import DurationField
from scheduler_gui.designer.field_problem import FieldProblem, TypedField
from scheduler_gui.designer.notes import meaning_label, problem_label, show_problems
from scheduler_gui.designer.typed_inputs import CountSpin, RatioSpin
from scheduler_gui.workspace.document import SpecDocument

#: The wake checkbox's text and accessible name.
WAKE = "Wake this computer for each run"
MISFIRE_CHOICES = (
    (MisfirePolicy.CATCH_UP_BOUNDED.value, "Run only the newest few"),
    (MisfirePolicy.CATCH_UP_ALL.value, "Run every missed run"),
    (MisfirePolicy.SKIP.value, "Skip missed runs"),
)
OVERLAP_CHOICES = (
    (OverlapPolicy.SKIP.value, "Skip the new run"),
    (OverlapPolicy.QUEUE_ONE.value, "Let one wait, skip the rest"),
    (OverlapPolicy.QUEUE_ALL.value, "Let them all wait, in order"),
    (OverlapPolicy.ALLOW.value, "Run both at once"),
)


#: The name of the number of missed runs to make up: its label ("newest") sits just before it.
CATCH_UP = "Newest (how many missed runs to make up)"


def _choices(parent: QWidget, choices: tuple[tuple[str, str], ...]) -> QComboBox:
    """A combo box of ``(value, words)`` pairs: it shows the words and holds the value."""
    combo = QComboBox(parent)
    for value, words in choices:
        combo.addItem(words, value)
    return combo


def _row(form: QFormLayout, label: QLabel) -> QLabel:
    """``label`` (a problem or a meaning) as a whole row of ``form``."""
    form.addRow(label)
    return label


class RecoveryPanel(QWidget):
    """Misfire, overlap, retry and jitter settings of the document, each with its meaning."""

    def __init__(self, document: SpecDocument, ctx: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._doc = document
        self._ctx = ctx
        self._syncing = False
        accessible(self, "When things go wrong", "Missed runs, overlapping runs, retries, jitter and who is told")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self._missed_runs_box())
        layout.addWidget(self._overlap_box())
        layout.addWidget(self._retry_box())
        layout.addWidget(self._jitter_box())
        self.alerts = AlertRoutesBox(document, ctx, self)
        layout.addWidget(self.alerts)
        layout.addStretch(1)

        self.misfire.activated.connect(self._misfire_chosen)
        self.wake.clicked.connect(self._wake_chosen)
        self.overlap.activated.connect(self._overlap_chosen)
        document.changed.connect(self.sync)
        self.sync()

    # --- building -----------------------------------------------------------------
    def _missed_runs_box(self) -> QGroupBox:
        """The misfire policy and how many missed runs to make up, lateness and the oldest run ever made up."""
        box = QGroupBox("Missed runs (computer off, engine stopped)", self)
        form = QFormLayout(box)
        form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)
        self.wake = QCheckBox(WAKE, box)
        accessible(
            self.wake,
            WAKE,
            "Wake this computer from sleep 30 seconds before each run, where the system allows it (wakeSystem); "
            "the summary says when it cannot",
        )
        form.addRow(self.wake)
        self._add_outage_row(box, form)
        self.lateness = self._duration(
            box,
            form,
            "latenessWindow",
            "Missed when late by",
            "A run that starts later than its time plus this counts as missed",
            "15 min (default)",
        )
        self.catch_up_window = self._duration(
            box,
            form,
            "catchUpWindow",
            "Never run if older than",
            "Missed runs older than this are never run, whatever the policy; empty means no limit",
            "no limit",
        )
        self.misfire_problem = _row(form, problem_label(box, "Missed runs: problem"))
        self.misfire_meaning = _row(form, meaning_label(box, "Missed runs: meaning"))
        return box

    def _add_outage_row(self, box: QGroupBox, form: QFormLayout) -> None:
        """The "After an outage" row: the policy, then "newest" and how many (bounded catch-up only); its problem."""
        self.misfire = _choices(box, MISFIRE_CHOICES)
        accessible(
            self.misfire,
            "After an outage",
            "What happens to runs that were missed while nothing was running (misfirePolicy)",
        )
        self.max_catch_up = CountSpin("the number of missed runs to make up", 1, 1000, box)
        accessible(
            self.max_catch_up,
            CATCH_UP,
            "The newest this many missed runs are made up; older ones expire (maxCatchUp)",
        )
        row = QHBoxLayout()
        row.addWidget(self.misfire, 1)
        row.addWidget(buddy(QLabel("newest", box), self.max_catch_up))
        row.addWidget(self.max_catch_up)
        form.addRow(buddy(QLabel("After an outage", box), self.misfire), row)
        self.max_catch_up_problem = _row(form, problem_label(box, f"{CATCH_UP}: problem"))
        self._catch_up = self._typed(
            self.max_catch_up,
            "maxCatchUp",
            self.max_catch_up_problem,
            current=self._catch_up_value,
            write=self._write_catch_up,
        )

    def _overlap_box(self) -> QGroupBox:
        """The overlap policy and its meaning."""
        box = QGroupBox("A run is due while the previous one still runs", self)
        form = QFormLayout(box)
        self.overlap = _choices(box, OVERLAP_CHOICES)
        accessible(
            self.overlap,
            "Then",
            "What happens when a run comes due while the previous one still runs (overlapPolicy)",
        )
        form.addRow("Then", self.overlap)
        self.overlap_meaning = _row(form, meaning_label(box, "Overlap: meaning"))
        return box

    def _retry_box(self) -> QGroupBox:
        """Attempts, the first wait, the multiplier and the longest wait, with their problems and meaning."""
        box = QGroupBox("A run fails", self)
        form = QFormLayout(box)
        self._add_attempts(box, form)
        self.initial_backoff = self._duration(
            box,
            form,
            "retry.initialBackoff",
            "First wait",
            "The wait after the first failure (retry.initialBackoff)",
            "30 s (default)",
        )
        self._add_multiplier(box, form)
        self.max_backoff = self._duration(
            box,
            form,
            "retry.maxBackoff",
            "Longest wait",
            "No wait is longer than this (retry.maxBackoff)",
            "10 min (default)",
        )
        self.retry_problem = _row(form, problem_label(box, "Retry: problem"))
        self.retry_meaning = _row(form, meaning_label(box, "Retry: meaning"))
        return box

    def _add_attempts(self, box: QGroupBox, form: QFormLayout) -> None:
        self.max_attempts = CountSpin("the number of attempts", 1, 100, box)
        accessible(
            self.max_attempts,
            "Attempts at most",
            "How many times a run is tried in all, the first included (retry.maxAttempts)",
        )
        form.addRow("Attempts at most", self.max_attempts)
        self.max_attempts_problem = _row(form, problem_label(box, "Attempts at most: problem"))
        self._attempts = self._typed(
            self.max_attempts,
            "retry.maxAttempts",
            self.max_attempts_problem,
            current=lambda: self._number("retry.maxAttempts", 3),
            write=lambda v: self._write("retry.maxAttempts", v, "Edit attempts at most", merge=True),
        )

    def _add_multiplier(self, box: QGroupBox, form: QFormLayout) -> None:
        self.multiplier = RatioSpin("the wait multiplier", 1.0, 100.0, box)
        self.multiplier.setSingleStep(0.5)
        self.multiplier.setDecimals(1)
        accessible(self.multiplier, "Each wait ×", "Each wait is this many times the one before (retry.multiplier)")
        form.addRow("Each wait ×", self.multiplier)
        self.multiplier_problem = _row(form, problem_label(box, "Each wait ×: problem"))
        self._multiplier = self._typed(
            self.multiplier,
            "retry.multiplier",
            self.multiplier_problem,
            current=lambda: float(self._number("retry.multiplier", 2.0)),
            write=lambda v: self._write("retry.multiplier", round(v, 1), "Edit wait multiplier", merge=True),
        )

    def _jitter_box(self) -> QGroupBox:
        """The jitter and its meaning."""
        box = QGroupBox("Spread out starts", self)
        form = QFormLayout(box)
        self.jitter = self._duration(
            box,
            form,
            "jitter",
            "Start up to",
            "Each run starts up to this much late, by a delay fixed per occurrence (jitter)",
            "none",
        )
        self.jitter_meaning = _row(form, meaning_label(box, "Jitter: meaning"))
        return box

    def _duration(
        self, box: QGroupBox, form: QFormLayout, key: str, name: str, tooltip: str, placeholder: str
    ) -> DurationField:
        """A duration field for ``key`` in a row of ``form``, captioned with its accessible ``name``."""
        field = DurationField(self._doc, key, name, tooltip, placeholder, box)
        form.addRow(name, field)
        return field

    def _typed(self, spin: CountSpin | RatioSpin, key: str, line: QLabel, *, current: Any, write: Any) -> TypedField:
        """A number box that writes ``key`` only when its text is a number it may hold; else says why on ``line``."""
        problem = FieldProblem(self._doc, key, key, lambda: show_problems(line, [m for m in [problem.message] if m]))
        return TypedField.for_spin(problem, spin, current=current, write=write, busy=lambda: self._syncing)

    def _number(self, key: str, default: float) -> float:
        """The document's number at ``key``; ``default`` while it holds none of the right kind."""
        value = self._doc.value(key, default)
        kinds = (int,) if isinstance(default, int) else (int, float)
        return value if isinstance(value, kinds) and not isinstance(value, bool) else default

    # --- writing ------------------------------------------------------------------
    def _write(self, key: str, value: Any, label: str, *, merge: bool = False) -> None:
        if not self._syncing:
            self._doc.set_value(key, value, label=label, merge=merge)

    def _catch_up_value(self) -> int:
        return int(self._number("maxCatchUp", 1))

    def _misfire_chosen(self, index: int) -> None:
        value = self.misfire.itemData(index)
        bounded = value == MisfirePolicy.CATCH_UP_BOUNDED.value
        # maxCatchUp belongs to the bounded policy only: set it with it, drop it otherwise.
        changes = {"misfirePolicy": value, "maxCatchUp": self._catch_up_value() if bounded else None}
        self._doc.set_values(changes, label=f"Missed runs: {self.misfire.itemText(index)}")

    def _write_catch_up(self, value: int) -> None:
        if self._syncing:
            return
        self._doc.set_values(
            {"misfirePolicy": MisfirePolicy.CATCH_UP_BOUNDED.value, "maxCatchUp": value},
            label="Edit missed runs to make up",
            merge_key="maxCatchUp",
        )

    def _wake_chosen(self, checked: bool) -> None:
        # false is the default: unticking takes the key out of the file rather than writing it.
        self._write("wakeSystem", True if checked else None, WAKE if checked else f"Do not {WAKE[0].lower()}{WAKE[1:]}")

    def _overlap_chosen(self, index: int) -> None:
        self._write("overlapPolicy", self.overlap.itemData(index), f"Overlap: {self.overlap.itemText(index)}")

    # --- reading ------------------------------------------------------------------
    def sync(self) -> None:
        """Show the document's values, problems and meanings (without writing back)."""
        doc = self._doc
        self._syncing = True
        try:
            misfire = doc.value("misfirePolicy", MisfirePolicy.CATCH_UP_BOUNDED.value)
            self._select(self.misfire, misfire)
            bounded = misfire == MisfirePolicy.CATCH_UP_BOUNDED.value
            self.max_catch_up.setEnabled(bounded)
            if not bounded:
                self._catch_up.forget()  # a box that cannot be typed into holds no unfinished text
            self._select(self.overlap, doc.value("overlapPolicy", OverlapPolicy.SKIP.value))
            self.wake.setChecked(doc.value("wakeSystem", False) is True)
            for number in (self._catch_up, self._attempts, self._multiplier):
                number.show_document()
        finally:
            self._syncing = False
        for duration in (self.lateness, self.catch_up_window, self.initial_backoff, self.max_backoff, self.jitter):
            duration.sync()
        show_problems(self.misfire_problem, doc.problems_for("misfirePolicy") + doc.problems_for("maxCatchUp"))
        retry = [m for k in ("retry.maxAttempts", "retry.multiplier") for m in doc.problems_for(k)]
        show_problems(self.retry_problem, retry)
        self._meanings()

    @staticmethod
    def _select(combo: QComboBox, value: Any) -> None:
        index = combo.findData(value)
        combo.setCurrentIndex(index if index >= 0 else 0)

    def _meanings(self) -> None:
        spec = self._doc.spec
        if spec is None:
            text = "Fix the problems above to see what this means."
            for label in (self.misfire_meaning, self.overlap_meaning, self.retry_meaning, self.jitter_meaning):
                label.setText(text)
            return
        late = human_duration(spec.lateness_window)
        if spec.misfire_policy is MisfirePolicy.SKIP:
            misfire = f"A run missed by more than {late} is not made up."
        elif spec.misfire_policy is MisfirePolicy.CATCH_UP_ALL:
            misfire = f"Every run missed by more than {late} is made up after an outage, oldest first, one at a time."
        else:
            n = spec.effective_max_catch_up or 1
            runs = "run is" if n == 1 else f"{n:,} runs are"
            misfire = f"After an outage the newest missed {runs} made up; older missed runs expire."
        if spec.catch_up_window is not None:
            misfire += f" Nothing older than {human_duration(spec.catch_up_window)} is ever run."
        self.misfire_meaning.setText(misfire)
        self.overlap_meaning.setText(
            {
                OverlapPolicy.ALLOW: "The new run starts even while the previous one still runs.",
                OverlapPolicy.SKIP: "The new run is recorded as skipped; the running one carries on.",
                OverlapPolicy.QUEUE_ONE: "One new run waits for the running one to end; further ones are skipped.",
                OverlapPolicy.QUEUE_ALL: "New runs wait and start one after another, in order.",
            }[spec.overlap_policy]
        )
        retry = spec.retry
        if retry.max_attempts == 1:
            self.retry_meaning.setText("A failed run is not tried again.")
        else:
            waits = [human_duration(backoff(retry, n)) for n in range(1, min(retry.max_attempts, 5))]
            more = ", …" if retry.max_attempts > 5 else ""
            self.retry_meaning.setText(
                f"A failed run is tried up to {retry.max_attempts} times in all, waiting {', then '.join(waits)}{more} "
                "between attempts. A run whose outcome is unknown is only retried when its effect allows it."
            )
        if spec.jitter > timedelta(0):
            self.jitter_meaning.setText(
                f"Each run starts up to {human_duration(spec.jitter)} after its time, by a delay fixed per occurrence "
                "(the same on every engine)."
            )
        else:
            self.jitter_meaning.setText("Runs start at their time, without added delay.")
        for label in (self.misfire_meaning, self.overlap_meaning, self.retry_meaning, self.jitter_meaning):
            label.setTextFormat(Qt.TextFormat.PlainText)
