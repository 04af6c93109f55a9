"""The "Ends" and "Except" rows of the "When" box.

**Ends**: never, after N occurrences (COUNT in a calendar rule) or on a date.
An end date is written to the spec's ``end`` key as a local date (the whole
day included), never as UNTIL: ``end`` is local wall time like ``start`` and
works for every kind. A rule typed with its own UNTIL shows it as the end
date, with a note; choosing a date then moves it to ``end``.

**Except** takes local dates or date-times for ``exclude``; a date can also be
picked and added with one click.
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta
from typing import Any

from PySide6.QtCore import QDate
from PySide6.QtWidgets import (
    QButtonGroup,
    QDateEdit,
    QLabel,
    QLineEdit,
    QRadioButton,
    QSpinBox,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from core.errors import ZoneError
from core.recurrence.form import rule_without_end, with_count
from core.recurrence.rules import RuleError, parse_rule
from core.timefmt import fmt_local, parse_instant, parse_local_or_date
from core.zones import get_zone
from scheduler_gui.designer.when_fields import field_row, tip
from scheduler_gui.designer.when_state import WhenState
from scheduler_gui.designer.zone_picker import tabular


def _date_edit(parent: QWidget) -> QDateEdit:
    edit = QDateEdit(parent)
    edit.setDisplayFormat("yyyy-MM-dd")
    edit.setCalendarPopup(True)
    edit.setFont(tabular(edit.font()))
    return edit


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
        tip(self.end_never, "Ends: never", "The schedule keeps running")
        self.end_count_radio = QRadioButton("after", self)
        tip(self.end_count_radio, "Ends after a number of runs", "Stop after this many occurrences (COUNT)")
        self.end_count = QSpinBox(self)
        self.end_count.setRange(1, 100000)
        self.end_count.setSuffix(" times")
        tip(self.end_count, "Number of occurrences", "How many occurrences in all (COUNT in the rule)")
        self.end_date_radio = QRadioButton("on", self)
        tip(self.end_date_radio, "Ends on a date", "The last day the schedule runs, included (the spec's end)")
        self.end_date = _date_edit(self)
        tip(self.end_date, "End date", "The last local day on which the schedule runs (included)")
        self.end_group = QButtonGroup(self)
        for button in (self.end_never, self.end_count_radio, self.end_date_radio):
            self.end_group.addButton(button)
        self.end_group.buttonClicked.connect(self._on_choice)
        self.end_count.valueChanged.connect(self._on_count)
        self.end_date.dateChanged.connect(self._on_date)
        self.end_hint = QLabel(self)
        self.end_hint.setWordWrap(True)
        self.end_hint.setEnabled(False)
        row = field_row(self.end_never, self.end_count_radio, self.end_count, self.end_date_radio, self.end_date)
        layout = _column(self)
        layout.addWidget(row)
        layout.addWidget(self.end_hint)
        layout.addWidget(state.error_line("end", self))

    def show_document(self, calendar: bool) -> None:
        """Show the document's end; the count only for calendar rules."""
        count: int | None = None
        until_day: date | None = None
        if calendar:
            try:
                parsed = parse_rule(self._state.rule_value())
                count = int(parsed.parts["COUNT"]) if "COUNT" in parsed.parts else None
                until = parsed.parts.get("UNTIL")
                until_day = datetime.strptime(until[:8], "%Y%m%d").date() if until else None
            except (RuleError, ValueError):
                pass
        end_day = self.end_day()
        end_value = self._state.doc.value("end")
        self.end_count_radio.setVisible(calendar)
        self.end_count.setVisible(calendar)
        hint = ""
        if count is not None:
            self.end_count_radio.setChecked(True)
            self.end_count.setValue(count)
        elif end_day is not None or until_day is not None:
            self.end_date_radio.setChecked(True)
            shown = min(d for d in (end_day, until_day) if d is not None)
            self.end_date.setDate(QDate(shown.year, shown.month, shown.day))
            if until_day is not None:
                hint = "The end comes from UNTIL in the rule; choosing a date here moves it to the spec's end."
            elif isinstance(end_value, str) and end_value.upper().endswith("Z"):
                hint = f"The spec ends at the instant {end_value}."
        else:
            self.end_never.setChecked(True)
            later = self._state.start_value() + timedelta(days=365)
            self.end_date.setDate(QDate(later.year, later.month, later.day))
        if count is None:
            self.end_count.setValue(10)
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
                changes["rule"] = with_count(rule, self.end_count.value())
            label = "Ends after a number of runs"
        else:
            day = self.end_day() or (state.start_value() + timedelta(days=365)).date()
            changes["end"] = day.isoformat()
            label = "Ends on a date"
        state.doc.set_values(changes, label=label)

    def _on_count(self, value: int) -> None:
        if self._state.updating or not self.end_count_radio.isChecked():
            return
        text = with_count(self._state.rule_value(), value)
        self._state.doc.set_values({"rule": text}, label="Number of occurrences", merge_key="form:count")

    def _on_date(self, value: QDate) -> None:
        state = self._state
        if state.updating or not self.end_date_radio.isChecked():
            return
        changes: dict[str, Any] = {"end": date(value.year(), value.month(), value.day()).isoformat()}
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
        tip(
            self.exclude,
            "Exclusions",
            "Local dates (2026-12-25) or local date-times (2026-12-25T02:30) on which the schedule does not run, "
            "separated by commas",
        )
        self.exclude.textEdited.connect(self._on_text)
        self.exclude_day = _date_edit(self)
        tip(self.exclude_day, "Date to skip", "Pick a local date, then press 'skip' to add it to the exclusions")
        self.exclude_add = QToolButton(self)
        self.exclude_add.setText("+ skip")
        tip(self.exclude_add, "Add the date to skip", "Add the picked date to the exclusions")
        self.exclude_add.clicked.connect(self._on_add)
        tomorrow = state.clock.now().date() + timedelta(days=1)
        self.exclude_day.setDate(QDate(tomorrow.year, tomorrow.month, tomorrow.day))
        layout = _column(self)
        layout.addWidget(field_row(self.exclude, self.exclude_day, self.exclude_add, stretch_last=True))
        layout.addWidget(state.error_line("exclude", self))

    def show_document(self) -> None:
        """Show the document's exclusions, unless the text typed already means them."""
        items = _exclusion_items(self._state.doc.value("exclude"))
        try:
            same = parse_exclusions(self.exclude.text()) == items
        except ValueError:
            same = False
        if not same:
            self.exclude.setText(", ".join(items))

    def _on_text(self, text: str) -> None:
        if self._state.updating:
            return
        try:
            items = parse_exclusions(text)
        except ValueError as exc:
            self._state.set_local_error("exclude", str(exc))
            return
        self._state.set_local_error("exclude", None)
        self._state.doc.set_value("exclude", items or None, label="Exclusions", merge=True)

    def _on_add(self) -> None:
        d = self.exclude_day.date()
        day = date(d.year(), d.month(), d.day()).isoformat()
        items = _exclusion_items(self._state.doc.value("exclude"))
        if day not in items:
            self._state.doc.set_value("exclude", [*items, day], label=f"Skip {day}")
