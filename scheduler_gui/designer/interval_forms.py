"""The interval and after-completion forms of the "When" box.

An interval schedule runs every fixed amount of elapsed time from an anchor:
the anchor is edited as a wall time in the schedule's zone and stored as the
UTC instant it is. An after-completion schedule runs a delay after the
previous run finished, from a first run given as a local start.

Each field writes the document only when its text is a value (a number of at
least 1, a whole date and time); until then its message sits under it.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from PySide6.QtWidgets import QLabel, QWidget

from core.time.durations import format_duration, parse_duration
from core.time.formats import fmt_utc, parse_instant
from core.time.zone_info import wall_time_hint
from scheduler_gui.designer.field_problem import ProblemLine, TypedField
from scheduler_gui.designer.typed_inputs import DateTimeField
from scheduler_gui.designer.when_fields import DurationField, add_row, as_local, field_row, form_layout, stack
from scheduler_gui.designer.when_state import WhenState
from scheduler_gui.designer.zone_picker import tabular

#: The anchor's name: its row reads "From", like the preview's own "From", so it says which.
ANCHOR = "From (anchor)"


def _hint_label(parent: QWidget, name: str) -> QLabel:
    label = QLabel(parent)
    label.setFont(tabular(label.font()))
    label.setAccessibleName(name)
    return label


def _canonical(value: Any) -> Any:
    """A stored duration in its canonical ISO form (``PT60M`` → ``PT1H``), so equal lengths compare equal."""
    try:
        return format_duration(parse_duration(value)) if isinstance(value, str) else value
    except ValueError:
        return value


def duration_typed(state: WhenState, field: DurationField, key: str, line: ProblemLine, label: str) -> TypedField:
    """Couple a number-and-unit field to the document's ``key``."""
    typed = state.typed_spin(
        key,
        key,
        line,
        field.number,
        parse=field.read,
        current=lambda: _canonical(state.doc.value(key)),
        write=lambda value: state.doc.set_value(key, value, label=label, merge=True),
        show=field.set_value,
    )
    field.unit.activated.connect(lambda _index: None if state.updating else typed.check())
    return typed


class IntervalForm(QWidget):
    """``every`` as a number and a unit, and the anchor on the zone's wall clock."""

    def __init__(self, state: WhenState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._state = state
        self.setAccessibleName("Interval form")
        form = form_layout(self)
        self.every = DurationField("Every", "the interval", "How much elapsed time between runs", self)
        every_line = state.error_line("every", self, "Every")
        add_row(form, "Every", stack(self.every, every_line), self.every.number)
        self._every = duration_typed(state, self.every, "every", every_line, "Every")
        self.anchor = DateTimeField(
            ANCHOR,
            "The first run (the anchor), on the zone's wall clock; later runs are whole intervals after it",
            self,
        )
        self.anchor_hint = _hint_label(self, "Anchor in UTC")
        anchor_line = state.error_line("anchor", self, ANCHOR)
        add_row(form, "From", stack(field_row(self.anchor, self.anchor_hint), anchor_line), self.anchor)
        self._anchor = state.typed_date(
            "anchor", "anchor", anchor_line, self.anchor, current=self._anchor_local, write=self._write_anchor
        )

    def _anchor_instant(self) -> datetime | None:
        value = self._state.doc.value("anchor")
        try:
            return parse_instant(value) if isinstance(value, str) else None
        except ValueError:
            return None

    def _anchor_local(self) -> datetime:
        """The anchor on the zone's wall clock; now while there is none."""
        anchor = self._anchor_instant()
        return anchor.astimezone(self._state.zone()).replace(tzinfo=None) if anchor else self._state.now_local()

    def _write_anchor(self, local: datetime) -> None:
        instant = local.replace(tzinfo=self._state.zone()).astimezone(UTC)
        self._state.doc.set_value("anchor", fmt_utc(instant), label="Anchor", merge=True)

    def show_document(self) -> None:
        self._every.show_document()
        self._anchor.show_document()
        anchor = self._anchor_instant()
        self.anchor_hint.setText(wall_time_hint(self._anchor_local(), self._state.zone_name()) if anchor else "")

    def forget(self) -> None:
        """Not an interval schedule: the fields' unfinished text must not hold it back."""
        self._every.forget()
        self._anchor.forget()


class AfterCompletionForm(QWidget):
    """``delay`` as a number and a unit, and the first run as a local start."""

    def __init__(self, state: WhenState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._state = state
        self.setAccessibleName("After completion form")
        form = form_layout(self)
        self.delay = DurationField(
            "Delay", "the delay", "How long after the previous run finished the next one is due", self
        )
        delay_line = state.error_line("delay", self, "Delay")
        add_row(form, "Delay", stack(self.delay, delay_line), self.delay.number)
        self._delay = duration_typed(state, self.delay, "delay", delay_line, "Delay")
        self.first = DateTimeField("First run", "The first appointment, on the zone's wall clock", self)
        self.first_hint = _hint_label(self, "First run in UTC")
        first_line = state.error_line("start", self, "First run")
        add_row(form, "First", stack(field_row(self.first, self.first_hint), first_line), self.first)
        self._first = state.typed_start("first", first_line, self.first, "First run")

    def show_document(self) -> None:
        self._delay.show_document()
        self._first.show_document()
        self.first_hint.setText(wall_time_hint(as_local(self._state.doc.value("start")), self._state.zone_name()))

    def forget(self) -> None:
        """Not an after-completion schedule: the fields' unfinished text must not hold it back."""
        self._delay.forget()
        self._first.forget()
