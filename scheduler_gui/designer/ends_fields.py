"""The "Ends" and "Except" rows of the "When" box.

**Ends**: never, after N occurrences (COUNT in a calendar rule) or on a date.
An end date is written to the spec's ``end`` key as a local date (the whole
day included), never as UNTIL: ``end`` is local wall time like ``start`` and
works for every kind. A rule typed with its own UNTIL shows it as the end
date, with a note; choosing a date then moves it to ``end``.

**Except** takes local dates or date-times for ``exclude``; a date can also be
picked and added with one click.

The count, the end date and the exclusions reach the document only when their
whole text is a value; until then the message sits under the field.
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta
from typing import Any

from PySide6.QtWidgets import QButtonGroup, QLabel, QLineEdit, QRadioButton, QToolButton, QVBoxLayout, QWidget

from core.errors import ZoneError
from core.recurrence.form import rule_without_end, with_count
from core.recurrence.rules import RuleError, parse_rule
from core.time.formats import fmt_local, parse_instant, parse_local_or_date
from core.time.zones import get_zone
from scheduler_gui.a11y import accessible
from scheduler_gui.designer.field_problem import NOT_A_VALUE, ProblemLine
from scheduler_gui.designer.typed_inputs import CountSpin, DateTimeField
from scheduler_gui.designer.when_fields import field_row
from scheduler_gui.designer.when_state import WhenState
from scheduler_gui.designer.zone_picker import tabular

#: The name of the date picked to be added to the exclusions (its row reads "Except").
SKIP_DAY = "Except (date to skip)"


def _column(parent: QWidget) -> QVBoxLayout:
    layout = QVBoxLayout(parent)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.setSpacing(1)
    return layout


def parse_exclusions(text: str) -> list[str]:
    """Comma-separated local dates or date-times as the spec stores them; ValueError names the bad item."""
    out: list[str] = []
    for item in (i.strip() for i in text.split(",")):
        if not item:
            continue
        try:
            value = parse_local_or_date(item)
        except ValueError as exc:
            raise ValueError(f"{item!r}: {exc}") from None
        out.append(fmt_local(value) if isinstance(value, datetime) else value.isoformat())
    return out


def _exclusion_items(value: Any) -> list[str]:
    return [v.isoformat() if isinstance(v, (date, datetime)) else str(v) for v in value or []]


class EndsField(QWidget):
    """Never · after N times · on a date, with a note when the end comes from elsewhere."""

    def __init__(self, state: WhenState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._state = state
        self.end_never = QRadioButton("never", self)
        accessible(self.end_never, "Ends: never", "The schedule keeps running: it has no end")
        self.end_count_radio = QRadioButton("after", self)
        accessible(
            self.end_count_radio,
            "Ends after a number of runs",
            "Stop after the number of occurrences beside it (COUNT)",
        )
        self.end_count = CountSpin("the number of occurrences", 1, 100000, self)
        self.end_count.setSuffix(" times")
        accessible(self.end_count, "Ends after", "How many occurrences in all, then it ends (COUNT in the rule)")
        self.end_date_radio = QRadioButton("on", self)
        accessible(
            self.end_date_radio,
            "Ends on a date",
            "End on the date beside it, the last day the schedule runs (the spec's end)",
        )
        self.end_date = DateTimeField(
            "Ends on", "The last local day on which the schedule runs (included)", self, with_time=False
        )
        self.end_group = QButtonGroup(self)
        for button in (self.end_never, self.end_count_radio, self.end_date_radio):
            self.end_group.addButton(button)
        self.end_group.buttonClicked.connect(self._on_choice)
        self.end_hint = QLabel(self)
        self.end_hint.setWordWrap(True)
        self.end_hint.setEnabled(False)
        row = field_row(self.end_never, self.end_count_radio, self.end_count, self.end_date_radio, self.end_date)
        count_line = state.error_line(None, self, "Ends after")
        date_line = state.error_line("end", self, "Ends on")
        self._count = state.typed_spin(
            "endCount",
            "rule",
            count_line,
            self.end_count,
            current=self._rule_count,
            write=self._write_count,
            show=lambda count: self.end_count.setValue(count or 10),
        )
        self._date = state.typed(
            "endDate",
            "end",
            date_line,
            self.end_date.edit,
            parse=self.end_date.parse,
            current=self._shown_end,
            write=self._write_date,
            show=self._show_date,
        )
        layout = _column(self)
        layout.addWidget(row)
        layout.addWidget(count_line)
        layout.addWidget(self.end_hint)
        layout.addWidget(date_line)

    # --- the document's end ---------------------------------------------------------------------
    def _rule_end(self) -> tuple[int | None, date | None]:
        """COUNT and the UNTIL day of a calendar rule, when it has them."""
        if not self._state.is_calendar():
            return None, None
        try:
            parsed = parse_rule(self._state.rule_value())
            count = int(parsed.parts["COUNT"]) if "COUNT" in parsed.parts else None
            until = parsed.parts.get("UNTIL")
            return count, datetime.strptime(until[:8], "%Y%m%d").date() if until else None
        except (RuleError, ValueError):
            return None, None

    def _rule_count(self) -> int | None:
        return self._rule_end()[0]

    def _shown_end(self) -> date | None:
        """The end date shown: the spec's end or the rule's UNTIL, whichever comes first."""
        until_day = self._rule_end()[1]
        days = [d for d in (self.end_day(), until_day) if d is not None]
        return min(days) if days else None

    def _show_date(self, day: date | None) -> None:
        # With no end, the field offers a year after the start, to be picked with "on".
        self.end_date.set_value(day or (self._state.start_value() + timedelta(days=365)).date())

    def show_document(self, calendar: bool) -> None:
        """Show the document's end; the count only for calendar rules."""
        count, until_day = self._rule_end()
        end_value = self._state.doc.value("end")
        self.end_count_radio.setVisible(calendar)
        self.end_count.setVisible(calendar)
        hint = ""
        if count is not None:
            self.end_count_radio.setChecked(True)
        elif self._shown_end() is not None:
            self.end_date_radio.setChecked(True)
            if until_day is not None:
                hint = "The end comes from UNTIL in the rule; choosing a date here moves it to the spec's end."
            elif isinstance(end_value, str) and end_value.upper().endswith("Z"):
                hint = f"The spec ends at the instant {end_value}."
        else:
            self.end_never.setChecked(True)
        # A field the person cannot type into holds no unfinished text.
        if count is None:
            self._count.forget()
        if not self.end_date_radio.isChecked():
            self._date.forget()
        self._count.show_document()
        self._date.show_document()
        self.end_count.setEnabled(count is not None)
        self.end_date.setEnabled(self.end_date_radio.isChecked())
        self.end_hint.setText(hint)
        self.end_hint.setVisible(bool(hint))

    def end_day(self) -> date | None:
        """The last local day of the spec's ``end`` (an instant is read in the zone), or None."""
        value = self._state.doc.value("end")
        if isinstance(value, datetime):
            return value.date()
        if isinstance(value, date):
            return value
        if not isinstance(value, str):
            return None
        text = value.strip()
        try:
            if text.upper().endswith("Z") or re.search(r"[+-]\d{2}:?\d{2}$", text):
                instant = parse_instant(text)
                try:
                    return instant.astimezone(get_zone(self._state.zone_name())).date()
                except ZoneError:
                    return instant.date()
            found = parse_local_or_date(text)
        except ValueError:
            return None
        return found.date() if isinstance(found, datetime) else found

    # --- writing ----------------------------------------------------------------------------------
    def _on_choice(self) -> None:
        state = self._state
        if state.updating:
            return
        rule = state.rule_value()
        calendar = state.is_calendar()
        changes: dict[str, Any] = {}
        if calendar and rule:
            changes["rule"] = rule_without_end(rule)
        if self.end_never.isChecked():
            changes["end"] = None
            label = "Never ends"
        elif self.end_count_radio.isChecked():
            changes["end"] = None
            if calendar and rule:
                changes["rule"] = with_count(rule, self._typed_count())
            label = "Ends after a number of runs"
        else:
            day = self.end_day() or (state.start_value() + timedelta(days=365)).date()
            changes["end"] = day.isoformat()
            label = "Ends on a date"
        state.doc.set_values(changes, label=label)

    def _typed_count(self) -> int:
        """The count in the box when it is one, else 10."""
        try:
            return self.end_count.number(self.end_count.text())
        except NOT_A_VALUE:
            return 10

    def _write_count(self, count: int) -> None:
        if self.end_count_radio.isChecked():
            text = with_count(self._state.rule_value(), count)
            self._state.doc.set_values({"rule": text}, label="Number of occurrences", merge_key="form:count")

    def _write_date(self, day: date) -> None:
        state = self._state
        if not self.end_date_radio.isChecked():
            return
        changes: dict[str, Any] = {"end": day.isoformat()}
        rule = state.rule_value()
        if state.is_calendar() and rule:
            changes["rule"] = rule_without_end(rule)
        state.doc.set_values(changes, label="End date", merge_key="form:end")


class ExclusionsField(QWidget):
    """Dates to skip, typed as a list or picked one at a time."""

    def __init__(self, state: WhenState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._state = state
        self.exclude = QLineEdit(self)
        self.exclude.setPlaceholderText("dates to skip, e.g. 2026-12-25, 2027-01-01")
        self.exclude.setFont(tabular(self.exclude.font()))
        accessible(
            self.exclude,
            "Except",
            "Local dates (2026-12-25) or local date-times (2026-12-25T02:30) on which the schedule does not run, "
            "separated by commas",
        )
        self.exclude_day = DateTimeField(
            SKIP_DAY, "A local date to add to the exclusions with '+ skip'", self, with_time=False
        )
        self.exclude_add = QToolButton(self)
        self.exclude_add.setText("+ skip")
        accessible(self.exclude_add, "Add the date to skip", "Add the date beside it to the exclusions")
        self.exclude_add.clicked.connect(self._on_add)
        tomorrow = state.clock.now().date() + timedelta(days=1)
        self.exclude_day.set_value(tomorrow)
        # The date to skip is not part of the schedule until added: its problem only keeps "skip" waiting.
        self.exclude_day_line = ProblemLine(SKIP_DAY, self)
        self.exclude_day.edit.textChanged.connect(self._check_day)
        line = state.error_line("exclude", self, "Except")
        self._exclude = state.typed(
            "exclude",
            "exclude",
            line,
            self.exclude,
            parse=parse_exclusions,
            current=lambda: _exclusion_items(self._state.doc.value("exclude")),
            write=lambda items: state.doc.set_value("exclude", items or None, label="Exclusions", merge=True),
            show=lambda items: self.exclude.setText(", ".join(items)),
        )
        layout = _column(self)
        layout.addWidget(field_row(self.exclude, self.exclude_day, self.exclude_add, stretch_last=True))
        layout.addWidget(line)
        layout.addWidget(self.exclude_day_line)

    def show_document(self) -> None:
        """Show the document's exclusions, unless the text typed already means them (or is being fixed)."""
        self._exclude.show_document()

    def _check_day(self) -> None:
        try:
            self.exclude_day.parse(self.exclude_day.edit.text())
            message = None
        except ValueError as exc:
            message = str(exc)
        self.exclude_day_line.set_messages([message] if message else [])
        self.exclude_add.setEnabled(message is None)

    def _on_add(self) -> None:
        day = self.exclude_day.value()
        if not isinstance(day, date):
            return
        items = _exclusion_items(self._state.doc.value("exclude"))
        if day.isoformat() not in items:
            self._state.doc.set_value("exclude", [*items, day.isoformat()], label=f"Skip {day.isoformat()}")
