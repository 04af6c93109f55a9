"""The interval and after-completion forms of the "When" box.

An interval schedule runs every fixed amount of elapsed time from an anchor:
the anchor is edited as a wall time in the schedule's zone and stored as the
UTC instant it is. An after-completion schedule runs a delay after the
previous run finished, from a first run given as a local start.
"""

from __future__ import annotations

from datetime import UTC, datetime

from PySide6.QtWidgets import QLabel, QWidget

from core.timefmt import fmt_local, fmt_utc, parse_instant
from core.zone_info import wall_time_hint
from scheduler_gui.designer.when_fields import (
    DurationField,
    WallTimeEdit,
    as_local,
    field_row,
    form_layout,
    row_label,
    stack,
    tip,
)
from scheduler_gui.designer.when_state import WhenState
from scheduler_gui.designer.zone_picker import tabular


def _hint_label(parent: QWidget, name: str) -> QLabel:
    label = QLabel(parent)
    label.setFont(tabular(label.font()))
    label.setAccessibleName(name)
    return label


class IntervalForm(QWidget):
    """``every`` as a number and a unit, and the anchor on the zone's wall clock."""

    def __init__(self, state: WhenState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._state = state
        self.setAccessibleName("Interval form")
        form = form_layout(self)
        self.every = DurationField("Every", "How much elapsed time between runs", self)
        self.every.number.valueChanged.connect(self._on_every)
        self.every.unit.activated.connect(self._on_every)
        form.addRow(row_label("Every"), stack(self.every, state.error_line("every", self)))
        self.anchor = WallTimeEdit(self)
        tip(self.anchor, "Anchor", "The first run, on the zone's wall clock; later runs are whole intervals after it")
        self.anchor.dateTimeChanged.connect(self._on_anchor)
        self.anchor_hint = _hint_label(self, "Anchor in UTC")
        form.addRow(
            row_label("From"), stack(field_row(self.anchor, self.anchor_hint), state.error_line("anchor", self))
        )

    def show_document(self) -> None:
        doc = self._state.doc
        self.every.set_value(doc.value("every"))
        anchor: datetime | None = None
        value = doc.value("anchor")
        try:
            anchor = parse_instant(value) if isinstance(value, str) else None
        except ValueError:
            anchor = None
        local = anchor.astimezone(self._state.zone()).replace(tzinfo=None) if anchor else self._state.now_local()
        self.anchor.set_naive(local)
        self.anchor_hint.setText(wall_time_hint(local, self._state.zone_name()) if anchor else "")

    def _on_every(self) -> None:
        if not self._state.updating:
            self._state.doc.set_value("every", self.every.value(), label="Every", merge=True)

    def _on_anchor(self) -> None:
        if self._state.updating:
            return
        instant = self.anchor.naive().replace(tzinfo=self._state.zone()).astimezone(UTC)
        self._state.doc.set_value("anchor", fmt_utc(instant), label="Anchor", merge=True)


class AfterCompletionForm(QWidget):
    """``delay`` as a number and a unit, and the first run as a local start."""

    def __init__(self, state: WhenState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._state = state
        self.setAccessibleName("After completion form")
        form = form_layout(self)
        self.delay = DurationField("Delay", "How long after the previous run finished the next one is due", self)
        self.delay.number.valueChanged.connect(self._on_delay)
        self.delay.unit.activated.connect(self._on_delay)
        form.addRow(row_label("Delay"), stack(self.delay, state.error_line("delay", self)))
        self.first = WallTimeEdit(self)
        tip(self.first, "First run", "The first appointment, on the zone's wall clock")
        self.first.dateTimeChanged.connect(self._on_first)
        self.first_hint = _hint_label(self, "First run in UTC")
        form.addRow(row_label("First"), stack(field_row(self.first, self.first_hint), state.error_line("start", self)))

    def show_document(self) -> None:
        doc = self._state.doc
        self.delay.set_value(doc.value("delay"))
        self.first.set_naive(self._state.start_value())
        self.first_hint.setText(wall_time_hint(as_local(doc.value("start")), self._state.zone_name()))

    def _on_delay(self) -> None:
        if not self._state.updating:
            self._state.doc.set_value("delay", self.delay.value(), label="Delay", merge=True)

    def _on_first(self) -> None:
        if not self._state.updating:
            self._state.doc.set_value("start", fmt_local(self.first.naive()), label="First run", merge=True)
